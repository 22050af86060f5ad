package engine

import (
	"fmt"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
)

// resumeSources tells the sources that can number their data after a
// restart (stream.ResumableSource: the memory source, which comes back
// empty with a new process) where the query's last recorded batch ended,
// so that data added from now on gets offsets past it and the query sees
// it. A new query (nothing recorded) tells them nothing.
func resumeSources(sources []stream.Source, descriptions []string, recorded []stream.Offset) error {
	for i, src := range sources {
		rs, ok := src.(stream.ResumableSource)
		if !ok || i >= len(recorded) || recorded[i] == nil {
			continue
		}
		if err := rs.Resume(recorded[i]); err != nil {
			name := fmt.Sprintf("source %d", i)
			if i < len(descriptions) {
				name = descriptions[i]
			}
			return fmt.Errorf("arrowstream: %s: %w", name, err)
		}
	}
	return nil
}
