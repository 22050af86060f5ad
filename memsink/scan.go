package memsink

import (
	"context"
	"fmt"
	"io"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// SnapshotScan is a vector.Operator over a snapshot's records. It holds
// the snapshot until Close, so that the epochs it reads stay in the
// table's accounting (and their buffers alive) for as long as a reader
// streams them; the records are the snapshot's own, never copied.
type SnapshotScan struct {
	schema *arrow.Schema
	snap   *Snapshot
	recs   []arrow.Record
	owned  bool // recs are owned (RecordsWithEpoch), not borrowed from snap
	pos    int
	closed bool
}

// NewSnapshotScan returns an operator over snap's records and takes over
// the caller's reference to snap: Close releases it, and so does
// NewSnapshotScan when it fails. With epochColumns every record carries
// EpochColumn and CommitTimestampColumn (schema WithEpochSchema), those
// two columns built from mem.
func NewSnapshotScan(snap *Snapshot, epochColumns bool, mem memory.Allocator) (*SnapshotScan, error) {
	op := &SnapshotScan{schema: snap.Schema(), snap: snap}
	if !epochColumns {
		op.recs = snap.Records()
		return op, nil
	}
	recs, err := snap.RecordsWithEpoch(mem)
	if err != nil {
		snap.Release()
		return nil, fmt.Errorf("memsink: epoch columns of the snapshot at epoch %d: %w", snap.LatestEpoch(), err)
	}
	op.schema, op.recs, op.owned = WithEpochSchema(snap.Schema()), recs, true
	return op, nil
}

// Schema implements vector.Operator.
func (o *SnapshotScan) Schema() *arrow.Schema { return o.schema }

// Next implements vector.Operator: the next non-empty record, owned by
// the caller.
func (o *SnapshotScan) Next(ctx context.Context) (arrow.Record, error) {
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	for o.pos < len(o.recs) {
		r := o.recs[o.pos]
		o.pos++
		if r.NumRows() == 0 {
			continue
		}
		// The caller gets its own reference; the snapshot's (or, for owned
		// records, the operator's) is dropped in Close.
		r.Retain()
		return r, nil
	}
	return nil, io.EOF
}

// Close implements vector.Operator: it releases the snapshot (and the
// records built for the epoch columns). It is idempotent.
func (o *SnapshotScan) Close() error {
	if o.closed {
		return nil
	}
	o.closed = true
	if o.owned {
		releaseAll(o.recs)
	}
	o.recs = nil
	o.snap.Release()
	return nil
}
