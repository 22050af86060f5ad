package checkpoint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"sync/atomic"
)

// OffsetSeq is one entry of the offset log: what epoch N reads, written
// before the epoch runs (docs/semantics.md §9.2).
type OffsetSeq struct {
	// BatchWatermarkMs is the event-time watermark the epoch runs with.
	BatchWatermarkMs int64 `json:"batchWatermarkMs"`
	// BatchTimestampMs is the epoch's processing time (current_timestamp()),
	// reused when the epoch is replayed.
	BatchTimestampMs int64 `json:"batchTimestampMs"`
	// Conf holds the settings that shape state (shuffle partitions, state
	// store provider, watermark policy, ...), frozen at the first epoch.
	Conf map[string]string `json:"conf"`
	// Offsets has one end offset per source in plan order, as the source's
	// own JSON text; nil for a source with no offset yet.
	Offsets []json.RawMessage `json:"-"`
}

// OffsetLog is the write-ahead log of epoch offsets: the v1 directory of
// one file per epoch, or the offset records of the v2 epoch log
// (epochlog.go).
type OffsetLog struct {
	entries entryLog
	// conf is the JSON of the last entry's Conf: the settings are frozen
	// at the first epoch, so every epoch's entry repeats them, and
	// encoding the map each time was most of an empty epoch's
	// allocations.
	conf atomic.Pointer[confJSON]
}

// confJSON is an encoded Conf (immutable once published).
type confJSON struct {
	conf map[string]string
	json []byte
}

// OpenOffsetLog opens the offset log of a checkpoint in the format the
// checkpoint has (a new checkpoint gets w's format). A process that also
// writes the commit log opens both with OpenEpochLogs, which shares one
// v2 epoch log between them.
func OpenOffsetLog(checkpointDir string, w *Writer) (*OffsetLog, error) {
	o, _, err := OpenEpochLogs(checkpointDir, w)
	return o, err
}

// Dir returns the directory holding the log's files.
func (o *OffsetLog) Dir() string { return o.entries.dir() }

// EntryName names where epoch's entry is (a file, or a record of the
// epoch log), for messages.
func (o *OffsetLog) EntryName(epoch int64) string { return o.entries.name(epoch) }

// Purge is retention: entries of epochs before the given one may be
// deleted (v2 deletes whole segments, so some may stay).
func (o *OffsetLog) Purge(before int64) error { return o.entries.purge(before) }

// Add writes epoch's entry durably; false when it already exists.
func (o *OffsetLog) Add(epoch int64, seq OffsetSeq) (bool, error) {
	body, err := o.encode(seq)
	if err != nil {
		return false, fmt.Errorf("checkpoint: offsets for epoch %d: %w", epoch, err)
	}
	return o.entries.add(epoch, body)
}

// Stage records epoch's entry for the next durable write to the epoch
// log (a state record, CommitLog.Flush, or any Add), so that an epoch's
// offsets and state share one fdatasync: nothing of the epoch may become
// visible before that write (Flush first). The v1 format has no shared
// write: the entry is written at once. False when it already exists.
func (o *OffsetLog) Stage(epoch int64, seq OffsetSeq) (bool, error) {
	body, err := o.encode(seq)
	if err != nil {
		return false, fmt.Errorf("checkpoint: offsets for epoch %d: %w", epoch, err)
	}
	return o.entries.stage(epoch, body)
}

// SegmentLog returns the v2 epoch log that holds the entries (nil for a
// v1 checkpoint), for a state log that writes its records there
// (OpenQueryStateLog).
func (o *OffsetLog) SegmentLog() *SegmentLog {
	if v, ok := o.entries.(v2Entries); ok {
		return v.s
	}
	return nil
}

// Get reads epoch's entry.
func (o *OffsetLog) Get(epoch int64) (OffsetSeq, bool, error) {
	body, ok, err := o.entries.get(epoch)
	if err != nil || !ok {
		return OffsetSeq{}, ok, err
	}
	seq, err := decodeOffsetSeq(body)
	if err != nil {
		return OffsetSeq{}, false, fmt.Errorf("checkpoint: %s: %w", o.entries.name(epoch), err)
	}
	return seq, true, nil
}

// Latest reads the newest entry.
func (o *OffsetLog) Latest() (int64, OffsetSeq, bool, error) {
	epoch, body, ok, err := o.entries.latest()
	if err != nil || !ok {
		return 0, OffsetSeq{}, ok, err
	}
	seq, err := decodeOffsetSeq(body)
	if err != nil {
		return 0, OffsetSeq{}, false, fmt.Errorf("checkpoint: %s: %w", o.entries.name(epoch), err)
	}
	return epoch, seq, true, nil
}

// Epochs lists the epochs that have entries, ascending.
func (o *OffsetLog) Epochs() ([]int64, error) { return o.entries.epochs() }

// EntryBody returns epoch's raw entry body (for dumps).
func (o *OffsetLog) EntryBody(epoch int64) ([]byte, bool, error) { return o.entries.get(epoch) }

// encode is encodeOffsetSeq with the Conf's JSON kept from the last
// entry while the settings stay the same.
func (o *OffsetLog) encode(seq OffsetSeq) ([]byte, error) {
	c := o.conf.Load()
	if c == nil || !maps.Equal(c.conf, seq.Conf) {
		conf := seq.Conf
		if conf == nil {
			conf = map[string]string{}
		}
		js, err := json.Marshal(conf)
		if err != nil {
			return nil, err
		}
		c = &confJSON{conf: maps.Clone(conf), json: js}
		o.conf.Store(c)
	}
	return appendOffsetSeq(nil, seq, c.json)
}

// encodeOffsetSeq encodes an offset log entry: the metadata as one JSON
// line (json.Marshal's bytes for the struct), then a line per source.
func encodeOffsetSeq(seq OffsetSeq) ([]byte, error) {
	conf := seq.Conf
	if conf == nil {
		conf = map[string]string{}
	}
	js, err := json.Marshal(conf)
	if err != nil {
		return nil, err
	}
	return appendOffsetSeq(nil, seq, js)
}

// appendOffsetSeq appends seq's entry to dst, with conf the JSON of
// seq.Conf. The metadata line is what json.Marshal writes for the struct
// (fields in their order, integers in decimal), written without
// reflection.
func appendOffsetSeq(dst []byte, seq OffsetSeq, conf []byte) ([]byte, error) {
	n := 64 + len(conf)
	for _, off := range seq.Offsets {
		n += 1 + len(off)
	}
	dst = slices.Grow(dst, n)
	dst = append(dst, `{"batchWatermarkMs":`...)
	dst = strconv.AppendInt(dst, seq.BatchWatermarkMs, 10)
	dst = append(dst, `,"batchTimestampMs":`...)
	dst = strconv.AppendInt(dst, seq.BatchTimestampMs, 10)
	dst = append(dst, `,"conf":`...)
	dst = append(dst, conf...)
	dst = append(dst, '}')
	for i, off := range seq.Offsets {
		dst = append(dst, '\n')
		if off == nil {
			dst = append(dst, '-')
			continue
		}
		if bytes.ContainsAny(off, "\n\r") || !json.Valid(off) {
			return nil, fmt.Errorf("offset of source %d is not single-line JSON: %q", i, off)
		}
		dst = append(dst, off...)
	}
	return dst, nil
}

func decodeOffsetSeq(body []byte) (OffsetSeq, error) {
	lines := bytes.Split(body, []byte("\n"))
	var seq OffsetSeq
	if len(lines[0]) > 0 {
		if err := json.Unmarshal(lines[0], &seq); err != nil {
			return OffsetSeq{}, fmt.Errorf("offset metadata line: %v: %w", err, ErrCorrupt)
		}
	}
	if seq.Conf == nil {
		seq.Conf = map[string]string{}
	}
	for i, l := range lines[1:] {
		if string(l) == "-" {
			seq.Offsets = append(seq.Offsets, nil)
			continue
		}
		if !json.Valid(l) {
			return OffsetSeq{}, fmt.Errorf("offset of source %d is not JSON: %q: %w", i, l, ErrCorrupt)
		}
		seq.Offsets = append(seq.Offsets, json.RawMessage(append([]byte(nil), l...)))
	}
	return seq, nil
}

// CommitMetadata is one entry of the commit log: epoch N is complete (sink
// and state committed). docs/semantics.md §9.3.
type CommitMetadata struct {
	NextBatchWatermarkMs int64 `json:"nextBatchWatermarkMs"`
	// StateLog is where the state log (StateLog) ended when the epoch
	// committed, nil without one: a restart refuses a state log that
	// ends before it (records lost), which a torn tail, the normal crash
	// case, could otherwise hide.
	StateLog *StateLogMark `json:"stateLog,omitempty"`
}

// StateLogMark is the end of a state log: its highest version with a
// record and the segment that holds it.
type StateLogMark struct {
	Version int64  `json:"version"`
	Segment string `json:"segment"`
}

// CommitLog records completed epochs: the v1 directory of one file per
// epoch, or the commit records of the v2 epoch log (epochlog.go).
type CommitLog struct{ entries entryLog }

// OpenCommitLog opens the commit log of a checkpoint in the format the
// checkpoint has (see OpenOffsetLog).
func OpenCommitLog(checkpointDir string, w *Writer) (*CommitLog, error) {
	_, c, err := OpenEpochLogs(checkpointDir, w)
	return c, err
}

// Dir returns the directory holding the log's files.
func (c *CommitLog) Dir() string { return c.entries.dir() }

// EntryName names where epoch's entry is, for messages.
func (c *CommitLog) EntryName(epoch int64) string { return c.entries.name(epoch) }

// Purge is retention (see OffsetLog.Purge).
func (c *CommitLog) Purge(before int64) error { return c.entries.purge(before) }

// Drop deletes exactly the entries of epochs before the given one (tools
// and tests, while the query is stopped): v2 rewrites the segments that
// hold them.
func (c *CommitLog) Drop(before int64) error { return c.entries.drop(before) }

// Add records epoch as committed, durably; false when it already was.
func (c *CommitLog) Add(epoch int64, m CommitMetadata) (bool, error) {
	body, err := encodeCommit(m)
	if err != nil {
		return false, err
	}
	return c.entries.add(epoch, body)
}

// AddWithNext records epoch as committed in the same durable write as the
// next entry written to the epoch log (the offsets of the next epoch), or
// at Flush. It is for sinks that are idempotent by epoch id: until then a
// crash re-runs the epoch (see the durability argument on OpenEpochLogs).
// The v1 format has no shared write: the entry is written at once. False
// when the epoch already has an entry.
func (c *CommitLog) AddWithNext(epoch int64, m CommitMetadata) (bool, error) {
	body, err := encodeCommit(m)
	if err != nil {
		return false, err
	}
	return c.entries.stage(epoch, body)
}

// Flush durably writes entries waiting for the next write (AddWithNext).
func (c *CommitLog) Flush() error { return c.entries.flush() }

// Pending reports whether entries wait for the next write.
func (c *CommitLog) Pending() bool { return c.entries.pending() }

// Close flushes waiting entries and releases the log's files (for both
// logs, when they share an epoch log).
func (c *CommitLog) Close() error { return c.entries.close() }

// Get reads epoch's commit entry (entries waiting for the next write are
// not there yet).
func (c *CommitLog) Get(epoch int64) (CommitMetadata, bool, error) {
	body, ok, err := c.entries.get(epoch)
	if err != nil || !ok {
		return CommitMetadata{}, ok, err
	}
	m, err := decodeCommit(body)
	if err != nil {
		return CommitMetadata{}, false, fmt.Errorf("checkpoint: %s: %w", c.entries.name(epoch), err)
	}
	return m, true, nil
}

// Latest reads the newest commit entry.
func (c *CommitLog) Latest() (int64, CommitMetadata, bool, error) {
	epoch, body, ok, err := c.entries.latest()
	if err != nil || !ok {
		return 0, CommitMetadata{}, ok, err
	}
	m, err := decodeCommit(body)
	if err != nil {
		return 0, CommitMetadata{}, false, fmt.Errorf("checkpoint: %s: %w", c.entries.name(epoch), err)
	}
	return epoch, m, true, nil
}

// Epochs lists the epochs that have entries, ascending.
func (c *CommitLog) Epochs() ([]int64, error) { return c.entries.epochs() }

// EntryBody returns epoch's raw entry body (for dumps).
func (c *CommitLog) EntryBody(epoch int64) ([]byte, bool, error) { return c.entries.get(epoch) }

func decodeCommit(body []byte) (CommitMetadata, error) {
	var m CommitMetadata
	if len(bytes.TrimSpace(body)) == 0 {
		return m, nil // Spark: a missing metadata line means defaults.
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	if err := dec.Decode(&m); err != nil {
		return CommitMetadata{}, fmt.Errorf("commit metadata: %v: %w", err, ErrCorrupt)
	}
	return m, nil
}
