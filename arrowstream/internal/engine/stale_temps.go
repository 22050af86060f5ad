package engine

import (
	"context"
	"log/slog"

	"github.com/arrowstream/arrowstream/checkpoint"
)

// sweepStaleTempsOnLock arranges for the temp files that killed writers
// left in the checkpoint (offset and commit entries, state snapshots and
// packs, Pebble versions, memory-sink files, source logs, metadata: every
// atomic write, checkpoint.WriteFile) to be removed once this run holds
// the epoch log's lock, taken at its first append. Not before: until then
// another process may be this checkpoint's live writer (it is refused only
// at the first append), and its temp files are in flight. A checkpoint in
// the v1 layout has no epoch log and no lock, so its temp files stay.
// A failed sweep is only logged: a stale file costs space, not answers.
func sweepStaleTempsOnLock(ctx context.Context, offsets *checkpoint.OffsetLog, dir string, log *slog.Logger) {
	seg := offsets.SegmentLog()
	if seg == nil || dir == "" {
		return
	}
	seg.OnWriterLock(func() {
		if _, err := checkpoint.RemoveStaleTemps(ctx, dir, log); err != nil {
			log.Warn("stale temp files of interrupted writes not removed", "dir", dir, "err", err)
		}
	})
}
