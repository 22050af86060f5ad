package arrowstream

import (
	"context"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
)

// FaultInjector is a test hook that fails an epoch at a precise point of
// the micro-batch loop (the conformance scenarios' fail_next_epoch step;
// Spark's tests throw from a user function instead). Set it in
// SessionOptions.Faults; production code leaves it nil, and then the loop
// does not change at all.
//
// BeforeSink is called once per executed epoch (data and no-data epochs, a
// re-run epoch again) after the epoch's offset-log entry is written and its
// operators have consumed all of its input (stateful operators have staged,
// not committed, their changes), and before the sink receives the result,
// the state stores commit and the commit-log entry is written. query is the
// query's name, inputRows the epoch's input rows over all sources. A non-nil
// error fails the epoch: the staged state is discarded and the query
// terminates with the error (wrapped, naming the epoch), so that a restart
// re-runs the epoch from its offset-log entry. It is called from the query's
// goroutine; implementations used by several queries must be safe for
// concurrent use.
//
// With an injector set, the loop materializes each epoch's result before
// handing it to the sink, so that the input is fully read when BeforeSink
// runs.
type FaultInjector interface {
	BeforeSink(query string, epoch, inputRows int64) error
}

// injectFault drains out (consuming it), consults the injector and returns
// an operator replaying the result for the sink.
func (m *microBatch) injectFault(ctx context.Context, out vector.Operator, inputRows []atomic.Int64) (vector.Operator, error) {
	schema := out.Schema()
	recs, err := vector.Drain(ctx, out)
	out.Close()
	if err != nil {
		return nil, err
	}
	var total int64
	for i := range inputRows {
		total += inputRows[i].Load()
	}
	if err := m.cfg.faults.BeforeSink(m.q.name, m.batchID, total); err != nil {
		releaseRecords(recs)
		return nil, fmt.Errorf("injected fault: %w", err)
	}
	return &replayOperator{schema: schema, recs: recs}, nil
}

// replayOperator returns records it owns, in order.
type replayOperator struct {
	schema *arrow.Schema
	recs   []arrow.Record
}

func (r *replayOperator) Schema() *arrow.Schema { return r.schema }

func (r *replayOperator) Next(context.Context) (arrow.Record, error) {
	for len(r.recs) > 0 {
		rec := r.recs[0]
		r.recs[0] = nil
		r.recs = r.recs[1:]
		if rec.NumRows() > 0 {
			return rec, nil
		}
		rec.Release()
	}
	return nil, io.EOF
}

func (r *replayOperator) Close() error {
	releaseRecords(r.recs)
	r.recs = nil
	return nil
}
