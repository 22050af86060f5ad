package arrowstream

import "log/slog"

// ClosingSink is a sink that holds resources for the life of its query (a
// Kafka producer, open connections). The engine calls CloseSink exactly
// once, when the query ends (stopped, failed or finished), or when Start
// fails after the sink was created.
//
// Only sinks the engine created from a format (DataStreamWriter.Format)
// are closed; a sink passed to DataStreamWriter.Sink belongs to its
// caller. The method is not io.Closer's Close on purpose: memory sink
// tables have a Close that drops their data, and they outlive the query
// in the session's catalog.
type ClosingSink interface {
	Sink
	CloseSink() error
}

// closeSinkFunc returns the function that closes a format-created sink
// once (nil when the sink holds nothing to close).
func closeSinkFunc(sink Sink, desc string, logger *slog.Logger) func() {
	cs, ok := sink.(ClosingSink)
	if !ok {
		return nil
	}
	return func() {
		if err := cs.CloseSink(); err != nil && logger != nil {
			// The query's outcome is already decided; a failed close is
			// reported, not turned into a query failure.
			logger.Warn("closing sink failed", "sink", desc, "err", err)
		}
	}
}
