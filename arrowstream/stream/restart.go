package stream

import "errors"

// Writer options of the restart policy (TBLPROPERTIES of a streaming
// table, or DataStreamWriter.Option).
const (
	// OptRestartPolicy is "fail" (the default: a failure ends the query)
	// or "on-failure" (a retryable failure restarts the query from its
	// checkpoint).
	OptRestartPolicy = "restartPolicy"
	// OptRestartMaxAttempts bounds the consecutive restarts (default 3);
	// a committed epoch resets the count.
	OptRestartMaxAttempts = "restartMaxAttempts"
	// OptRestartBackoff is the wait before the first restart (default
	// "1 second"); each further consecutive restart waits twice as long,
	// at most MaxRestartBackoff.
	OptRestartBackoff = "restartBackoff"
)

// RestartOptionKeys are the writer options of the restart policy.
func RestartOptionKeys() []string {
	return []string{OptRestartPolicy, OptRestartMaxAttempts, OptRestartBackoff}
}

// ErrPermanent marks a failure that a restart cannot cure (bad data the
// source will serve again, a schema that no longer matches, a quota
// exceeded): a source, sink or operator wraps it (fmt.Errorf("...: %w",
// ErrPermanent)) and the query fails at once even under the
// "on-failure" restart policy.
var ErrPermanent = errors.New("permanent failure")
