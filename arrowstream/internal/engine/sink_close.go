package engine

import (
	"log/slog"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
)

// CloseSinkFunc returns the function that closes a format-created sink
// once (nil when the sink holds nothing to close).
func CloseSinkFunc(sink stream.Sink, desc string, logger *slog.Logger) func() {
	cs, ok := sink.(stream.ClosingSink)
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
