package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// Checkpoint log formats. v1 is Spark's layout: offsets/<N> and
// commits/<N>, one file per epoch, each written to a temporary file,
// fsynced, linked into place and the directory fsynced (four syncs per
// epoch for the two logs). v2 appends both logs' records to the segments
// of epochlog/ (segmentlog.go): one fdatasync per append.
//
// A checkpoint keeps the format it was created with: an existing v1
// checkpoint is read and continued in v1 (so that an older build can still
// read it), a new one is created in the Writer's LogFormat (default v2). A
// checkpoint holding both an offsets/ or commits/ entry and an epochlog/
// directory is refused, not read half one way and half the other.
//
// # Durability and exactly-once with one write per epoch
//
// The micro-batch loop (internal/engine) writes, per epoch N:
//
//  1. the offsets record of N (what N reads), durably, before N runs;
//  2. the state of N (version N+1 of every changed partition), durably;
//  3. the sink's output of N (AddBatch: visible to readers);
//  4. the commit record of N (N is done).
//
// On restart, an epoch with an offsets record and no commit record is
// re-run with exactly the recorded offsets, timestamp and watermark, from
// the state version it read (version N: step 2 of the failed run wrote
// N+1, which the re-run overwrites with the same content). So the rule
// that makes output exactly-once is: nothing of N becomes visible before
// its offsets record is durable (step 1 precedes 3), and a re-run of N is
// harmless to the sink. Every Sink must accept a second AddBatch of an
// epoch (stream.Sink); re-running N then changes nothing for a sink that
// is idempotent by epoch id (it keeps, per epoch id, the first output and
// ignores later ones, as the memory sink and the file sink do).
//
// For such sinks, step 4 need not be durable on its own: if the commit
// record of N is lost, N is re-run and the sink ignores it. The engine
// therefore stages it (CommitLog.AddWithNext) and it is appended in the
// same write as the offsets record of N+1 (step 1 of the next epoch):
// one write and one fdatasync per epoch. The order stays safe: the commit
// of N is durable no later than the offsets of N+1, so a checkpoint never
// shows N+1 started while N looks unfinished unless both records were
// lost together, and then restart re-runs N, whose state version N is
// still on disk (state is retained for minBatchesToRetain versions). When
// no next epoch follows (the query idles or stops) the staged record is
// flushed on its own. Sinks that are not idempotent by epoch id get step 4
// written at once (CommitLog.Add): their window for a replay is the one
// Spark has, between AddBatch and the commit file.
//
// A stateful epoch needs step 2 durable too. A new v2 checkpoint keeps
// its state records in this log (statelog_epoch.go), and the engine
// stages step 1 (OffsetLog.Stage) instead of writing it: the state
// commit appends the offsets record of N, the state record of N (version
// N+1) and the staged commit record of N-1 with one write and one
// fdatasync, before the sink sees N. Step 1 then precedes step 3 as
// before, so the rule above holds; what changes is that the offsets of N
// may be lost in a crash before that write, and N is then planned again
// from the sources' latest offsets, possibly with another end. That is
// safe because nothing of N had an effect that outlives the crash: the
// sink has not seen N, its state is in the same write, and sources are
// told to forget data (Source.Commit of N-1's end) only after the write.
// Sources are asked for a range only after it is planned, and every
// built-in source reads a planned range the same way each time (rate,
// memory, files through their own log, Kafka by offsets; a socket source
// is not replayable at all), so none needs the offsets durable before it
// is read; a source that does says so (stream.DurablePlanSource) and the
// engine then writes the offsets record at once. An epoch with no state to write (its operators
// declared none) flushes the staged records before its sink runs.

// entryLog is one kind of entries (offsets or commits) in one format.
type entryLog interface {
	add(epoch int64, body []byte) (bool, error)
	stage(epoch int64, body []byte) (bool, error)
	flush() error
	pending() bool
	close() error
	get(epoch int64) ([]byte, bool, error)
	latest() (int64, []byte, bool, error)
	epochs() ([]int64, error)
	purge(before int64) error
	drop(before int64) error
	dir() string
	name(epoch int64) string
}

// OpenEpochLogs opens the offset and commit logs of a checkpoint, in the
// format the checkpoint has (a new one gets w.LogFormat's; see above).
// Both share one v2 epoch log, so a process that writes them opens them
// here, once.
func OpenEpochLogs(checkpointDir string, w *Writer) (*OffsetLog, *CommitLog, error) {
	format, err := DetectLogFormat(checkpointDir)
	if err != nil {
		return nil, nil, err
	}
	if format == 0 {
		format = EpochLogFormatVersion
		if w != nil && w.LogFormat == 1 {
			format = 1
		}
	}
	if format == 1 {
		off, err := OpenLog(filepath.Join(checkpointDir, "offsets"), w)
		if err != nil {
			return nil, nil, err
		}
		com, err := OpenLog(filepath.Join(checkpointDir, "commits"), w)
		if err != nil {
			return nil, nil, err
		}
		return &OffsetLog{entries: v1Entries{off}}, &CommitLog{entries: v1Entries{com}}, nil
	}
	seg, err := OpenSegmentLog(filepath.Join(checkpointDir, EpochLogDir), w, true)
	if err != nil {
		return nil, nil, err
	}
	return &OffsetLog{entries: v2Entries{seg, kindOffsets}}, &CommitLog{entries: v2Entries{seg, kindCommit}}, nil
}

// DetectLogFormat returns the log format of the checkpoint in dir: 1
// (offsets/ or commits/ hold entries), 2 (epochlog/ exists) or 0 (no log
// yet). A checkpoint with both is refused with ErrCorrupt.
func DetectLogFormat(checkpointDir string) (int, error) {
	v1 := false
	for _, name := range []string{"offsets", "commits"} {
		ents, err := os.ReadDir(filepath.Join(checkpointDir, name))
		if err != nil && !errors.Is(err, os.ErrNotExist) {
			return 0, fmt.Errorf("checkpoint: list %s: %w", filepath.Join(checkpointDir, name), err)
		}
		for _, e := range ents {
			if _, ok := parseEpochName(e.Name()); ok {
				v1 = true
				break
			}
		}
	}
	v2dir := filepath.Join(checkpointDir, EpochLogDir)
	_, err := os.Stat(v2dir)
	v2 := err == nil
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, fmt.Errorf("checkpoint: %s: %w", v2dir, err)
	}
	switch {
	case v1 && v2:
		return 0, fmt.Errorf("checkpoint: %s holds both v1 logs (offsets/, commits/) and a v2 epoch log (%s/): refusing to guess which is current; move one aside: %w", checkpointDir, EpochLogDir, ErrCorrupt)
	case v1:
		return 1, nil
	case v2:
		return EpochLogFormatVersion, nil
	}
	return 0, nil
}

// HasEpochLog reports whether the checkpoint in dir has an offset log in
// either format (a query has started from it).
func HasEpochLog(checkpointDir string) (bool, error) {
	if _, err := os.Stat(filepath.Join(checkpointDir, EpochLogDir)); err == nil {
		return true, nil
	}
	_, err := os.Stat(filepath.Join(checkpointDir, "offsets"))
	if err == nil {
		return true, nil
	}
	if errors.Is(err, os.ErrNotExist) {
		return false, nil
	}
	return false, fmt.Errorf("checkpoint: %w", err)
}

// OffsetLogPath names the offset log of the checkpoint in dir in the
// format it has (the epochlog directory, or offsets/), for messages.
func OffsetLogPath(checkpointDir string) string {
	if f, _ := DetectLogFormat(checkpointDir); f == EpochLogFormatVersion {
		return filepath.Join(checkpointDir, EpochLogDir)
	}
	return filepath.Join(checkpointDir, "offsets")
}

// v1Entries is a v1 per-epoch directory.
type v1Entries struct{ l *Log }

func (v v1Entries) add(epoch int64, body []byte) (bool, error) { return v.l.Add(epoch, body) }

// stage writes at once: v1 has no shared write to ride with.
func (v v1Entries) stage(epoch int64, body []byte) (bool, error) { return v.l.Add(epoch, body) }
func (v v1Entries) flush() error                                 { return nil }
func (v v1Entries) pending() bool                                { return false }
func (v v1Entries) close() error                                 { return nil }
func (v v1Entries) get(epoch int64) ([]byte, bool, error)        { return v.l.Get(epoch) }
func (v v1Entries) latest() (int64, []byte, bool, error)         { return v.l.Latest() }
func (v v1Entries) epochs() ([]int64, error)                     { return v.l.Epochs() }
func (v v1Entries) purge(before int64) error                     { return v.l.Purge(before) }
func (v v1Entries) drop(before int64) error                      { return v.l.Purge(before) }
func (v v1Entries) dir() string                                  { return v.l.Dir() }
func (v v1Entries) name(epoch int64) string                      { return v.l.path(epoch) }

// v2Entries is one kind of record of a shared SegmentLog.
type v2Entries struct {
	s    *SegmentLog
	kind recordKind
}

func (v v2Entries) add(epoch int64, body []byte) (bool, error) { return v.s.add(v.kind, epoch, body) }
func (v v2Entries) stage(epoch int64, body []byte) (bool, error) {
	return v.s.stage(v.kind, epoch, body)
}
func (v v2Entries) flush() error  { return v.s.Flush() }
func (v v2Entries) pending() bool { return v.s.Staged() }
func (v v2Entries) close() error  { return v.s.Close() }
func (v v2Entries) get(epoch int64) ([]byte, bool, error) {
	b, ok := v.s.get(v.kind, epoch)
	return b, ok, nil
}
func (v v2Entries) latest() (int64, []byte, bool, error) {
	e, b, ok := v.s.latest(v.kind)
	return e, b, ok, nil
}
func (v v2Entries) epochs() ([]int64, error) { return v.s.epochs(v.kind), nil }
func (v v2Entries) purge(before int64) error { return v.s.Purge(before) }
func (v v2Entries) drop(before int64) error  { return v.s.drop(v.kind, before) }
func (v v2Entries) dir() string              { return v.s.Dir() }
func (v v2Entries) name(epoch int64) string {
	return v.s.where(v.kind, epoch) + " (" + v.kind.String() + " record of epoch " + strconv.FormatInt(epoch, 10) + ")"
}
