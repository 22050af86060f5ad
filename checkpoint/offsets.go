package checkpoint

import (
	"bytes"
	"encoding/json"
	"fmt"
	"path/filepath"
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

// OffsetLog is the write-ahead log of epoch offsets.
type OffsetLog struct{ log *Log }

// OpenOffsetLog opens <checkpoint>/offsets.
func OpenOffsetLog(checkpointDir string, w *Writer) (*OffsetLog, error) {
	l, err := OpenLog(filepath.Join(checkpointDir, "offsets"), w)
	if err != nil {
		return nil, err
	}
	return &OffsetLog{log: l}, nil
}

// Log returns the underlying file log (listing, purging).
func (o *OffsetLog) Log() *Log { return o.log }

// Add writes epoch's entry; false when it already exists.
func (o *OffsetLog) Add(epoch int64, seq OffsetSeq) (bool, error) {
	body, err := encodeOffsetSeq(seq)
	if err != nil {
		return false, fmt.Errorf("checkpoint: offsets for epoch %d: %w", epoch, err)
	}
	return o.log.Add(epoch, body)
}

// Get reads epoch's entry.
func (o *OffsetLog) Get(epoch int64) (OffsetSeq, bool, error) {
	body, ok, err := o.log.Get(epoch)
	if err != nil || !ok {
		return OffsetSeq{}, ok, err
	}
	seq, err := decodeOffsetSeq(body)
	if err != nil {
		return OffsetSeq{}, false, fmt.Errorf("checkpoint: %s: %w", o.log.path(epoch), err)
	}
	return seq, true, nil
}

// Latest reads the newest entry.
func (o *OffsetLog) Latest() (int64, OffsetSeq, bool, error) {
	epoch, body, ok, err := o.log.Latest()
	if err != nil || !ok {
		return 0, OffsetSeq{}, ok, err
	}
	seq, err := decodeOffsetSeq(body)
	if err != nil {
		return 0, OffsetSeq{}, false, fmt.Errorf("checkpoint: %s: %w", o.log.path(epoch), err)
	}
	return epoch, seq, true, nil
}

func encodeOffsetSeq(seq OffsetSeq) ([]byte, error) {
	if seq.Conf == nil {
		seq.Conf = map[string]string{}
	}
	meta, err := json.Marshal(seq)
	if err != nil {
		return nil, err
	}
	var b bytes.Buffer
	b.Write(meta)
	for i, off := range seq.Offsets {
		b.WriteByte('\n')
		if off == nil {
			b.WriteByte('-')
			continue
		}
		if bytes.ContainsAny(off, "\n\r") || !json.Valid(off) {
			return nil, fmt.Errorf("offset of source %d is not single-line JSON: %q", i, off)
		}
		b.Write(off)
	}
	return b.Bytes(), nil
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
}

// CommitLog records completed epochs.
type CommitLog struct{ log *Log }

// OpenCommitLog opens <checkpoint>/commits.
func OpenCommitLog(checkpointDir string, w *Writer) (*CommitLog, error) {
	l, err := OpenLog(filepath.Join(checkpointDir, "commits"), w)
	if err != nil {
		return nil, err
	}
	return &CommitLog{log: l}, nil
}

// Log returns the underlying file log.
func (c *CommitLog) Log() *Log { return c.log }

// Add records epoch as committed; false when it already was.
func (c *CommitLog) Add(epoch int64, m CommitMetadata) (bool, error) {
	body, err := json.Marshal(m)
	if err != nil {
		return false, err
	}
	return c.log.Add(epoch, body)
}

// Get reads epoch's commit entry.
func (c *CommitLog) Get(epoch int64) (CommitMetadata, bool, error) {
	body, ok, err := c.log.Get(epoch)
	if err != nil || !ok {
		return CommitMetadata{}, ok, err
	}
	m, err := decodeCommit(body)
	if err != nil {
		return CommitMetadata{}, false, fmt.Errorf("checkpoint: %s: %w", c.log.path(epoch), err)
	}
	return m, true, nil
}

// Latest reads the newest commit entry.
func (c *CommitLog) Latest() (int64, CommitMetadata, bool, error) {
	epoch, body, ok, err := c.log.Latest()
	if err != nil || !ok {
		return 0, CommitMetadata{}, ok, err
	}
	m, err := decodeCommit(body)
	if err != nil {
		return 0, CommitMetadata{}, false, fmt.Errorf("checkpoint: %s: %w", c.log.path(epoch), err)
	}
	return epoch, m, true, nil
}

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
