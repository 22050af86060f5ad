package engine

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/internal/clip"
)

// MaxRestartBackoff caps the doubling wait between consecutive restarts.
const MaxRestartBackoff = 5 * time.Minute

// Defaults of the "on-failure" restart policy.
const (
	DefaultRestartMaxAttempts = 3
	DefaultRestartBackoff     = time.Second
)

// RestartPolicy says whether a failed micro-batch query restarts from its
// checkpoint. The zero value is the default: a failure ends the query.
type RestartPolicy struct {
	// MaxAttempts is how many consecutive restarts are allowed; 0 means
	// never restart. A committed epoch resets the count.
	MaxAttempts int
	// Backoff is the real-time wait before the first restart of a run of
	// failures; it doubles for each further one, up to MaxRestartBackoff.
	Backoff time.Duration
}

// RestartOptions reads the restart policy from writer options (keys
// case-insensitive; stream.RestartOptionKeys). The keys other than
// restartPolicy need restartPolicy 'on-failure'; a continuous trigger
// cannot restart.
func RestartOptions(opts map[string]string, continuous bool) (RestartPolicy, error) {
	get := func(key string) (string, bool) {
		for k, v := range opts {
			if strings.EqualFold(k, key) {
				return v, true
			}
		}
		return "", false
	}
	policy, _ := get(stream.OptRestartPolicy)
	attempts, hasAttempts := get(stream.OptRestartMaxAttempts)
	backoff, hasBackoff := get(stream.OptRestartBackoff)
	switch strings.ToLower(strings.TrimSpace(policy)) {
	case "", "fail":
		if hasAttempts || hasBackoff {
			return RestartPolicy{}, fmt.Errorf("arrowstream: %s and %s need %s 'on-failure' (the policy is '%s')",
				stream.OptRestartMaxAttempts, stream.OptRestartBackoff, stream.OptRestartPolicy, orDefault(policy, "fail"))
		}
		return RestartPolicy{}, nil
	case "on-failure":
	default:
		return RestartPolicy{}, fmt.Errorf("arrowstream: %s %q: want 'fail' or 'on-failure'", stream.OptRestartPolicy, policy)
	}
	if continuous {
		return RestartPolicy{}, fmt.Errorf("arrowstream: %s 'on-failure' is for micro-batch triggers, not a continuous one", stream.OptRestartPolicy)
	}
	p := RestartPolicy{MaxAttempts: DefaultRestartMaxAttempts, Backoff: DefaultRestartBackoff}
	if hasAttempts {
		n, err := strconv.Atoi(strings.TrimSpace(attempts))
		if err != nil || n < 1 || n > 1000 {
			return RestartPolicy{}, fmt.Errorf("arrowstream: %s %q: want a whole number from 1 to 1000", stream.OptRestartMaxAttempts, attempts)
		}
		p.MaxAttempts = n
	}
	if hasBackoff {
		d, err := stream.ParseDuration(backoff)
		if err != nil {
			return RestartPolicy{}, fmt.Errorf("arrowstream: %s %q: %w", stream.OptRestartBackoff, backoff, err)
		}
		if d > MaxRestartBackoff {
			return RestartPolicy{}, fmt.Errorf("arrowstream: %s %q: at most %s", stream.OptRestartBackoff, backoff, MaxRestartBackoff)
		}
		p.Backoff = d
	}
	return p, nil
}

func orDefault(s, def string) string {
	if s == "" {
		return def
	}
	return s
}

// wait returns the wait before restart number attempt (1-based).
func (p RestartPolicy) wait(attempt int) time.Duration {
	d := p.Backoff
	for i := 1; i < attempt && d < MaxRestartBackoff; i++ {
		d *= 2
	}
	return min(d, MaxRestartBackoff)
}

// Retryable reports whether a query that failed with err may restart from
// its checkpoint: not when it was stopped, not on a damaged or newer
// checkpoint, not on a failure marked stream.ErrPermanent. (A panic ends
// the query without asking: it is a bug that would fire again.)
func Retryable(err error) bool {
	switch {
	case err == nil,
		errors.Is(err, context.Canceled),
		errors.Is(err, errStopped),
		errors.Is(err, stream.ErrPermanent),
		errors.Is(err, checkpoint.ErrCorrupt),
		errors.Is(err, checkpoint.ErrNewerFormat):
		return false
	}
	return true
}

// restartAfter decides after a failed run whether to restart: it waits
// the backoff (or until ctx ends) and reports true, or reports false when
// the policy, the error or ctx say the query ends. attempt is the number
// of this restart (1-based).
func (q *Query) restartAfter(ctx context.Context, p RestartPolicy, attempt int, err error) bool {
	if p.MaxAttempts == 0 || attempt > p.MaxAttempts || !Retryable(err) || ctx.Err() != nil {
		return false
	}
	wait := p.wait(attempt)
	err = clip.Bound(err, MaxErrorBytes) // logged and shown at every attempt
	q.logger.Warn("streaming query failed; restarting from its checkpoint",
		"query", q.Describe(), "attempt", attempt, "maxAttempts", p.MaxAttempts, "backoff", wait, "err", err)
	q.mu.Lock()
	q.restarts++
	q.lastRestartErr = err
	q.status = QueryStatus{Message: fmt.Sprintf("Restarting after failure (attempt %d of %d): %v", attempt, p.MaxAttempts, err)}
	q.notify()
	q.mu.Unlock()
	t := time.NewTimer(wait)
	defer t.Stop()
	select {
	case <-t.C:
		return true
	case <-ctx.Done():
		return false
	}
}

// MaxErrorBytes bounds the message of a query's error as it is logged,
// kept (Err, system.streaming_queries' exception) and shown in its status:
// errors quote their input (a malformed record, a value that failed a
// cast), which a source or a user may make megabytes long.
const MaxErrorBytes = 4 << 10
