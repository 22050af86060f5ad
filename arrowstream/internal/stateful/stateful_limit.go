package stateful

import (
	"context"
	"encoding/binary"
	"fmt"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/vector"
)

// statefulLimit is a streaming global limit (Spark's
// StreamingGlobalLimitExec): it lets through at most n rows over the whole
// life of the query, keeping the count emitted so far in the state store.
// The planner makes one wherever the limit's input is a stream of appends
// (limitSeesAppends): any limit in Append mode, and a limit below the
// streaming aggregation in Complete mode. Rows reach it in the order of
// the partitions of the stateful operator below (partition 0 first), as
// Spark's single-partition exchange concatenates them, so which rows pass
// follows Spark's partitioning of keys.
type statefulLimit struct {
	mem      memory.Allocator
	n        int64
	schema   *arrow.Schema
	state    statePartitions
	progress stream.StateOperatorProgress
}

func newStatefulLimit(mem memory.Allocator, opID int, input *arrow.Schema, n int64) *statefulLimit {
	l := &statefulLimit{mem: mem, n: n, schema: input,
		state: statePartitions{opID: opID, global: true}}
	l.state.schema = describeState("globalLimit", nil, arrow.NewSchema([]arrow.Field{{Name: "count", Type: vector.Int64}}, nil))
	return l
}

var limitKey = []byte("count")

func (l *statefulLimit) Execute(ctx context.Context, ep Epoch, input vector.Operator) (vector.Operator, error) {
	start := time.Now()
	l.progress = stream.StateOperatorProgress{OperatorName: "globalLimit"}
	if err := l.state.bind(ep); err != nil {
		input.Close()
		return nil, err
	}
	st := l.state.stores[0]
	var done int64
	v, ok, err := st.Get(limitKey)
	if err != nil {
		input.Close()
		return nil, fmt.Errorf("arrowstream: read state of operator %d: %w", l.state.opID, err)
	}
	if ok && len(v) == 8 {
		done = int64(binary.LittleEndian.Uint64(v))
	}
	remaining := max(l.n-done, 0)
	op, err := vector.NewLimit(l.mem, input, remaining)
	if err != nil {
		input.Close()
		return nil, err
	}
	recs, err := vector.Drain(ctx, op)
	op.Close()
	if err != nil {
		return nil, err
	}
	var rows int64
	for _, r := range recs {
		rows += r.NumRows()
	}
	if rows > 0 {
		// As Spark's, the count is written only when rows went through
		// (numRowsUpdated is 0 for an epoch that let nothing through).
		var buf [8]byte
		binary.LittleEndian.PutUint64(buf[:], uint64(done+rows))
		if err := st.Put(limitKey, buf[:]); err != nil {
			releaseRecords(recs)
			return nil, fmt.Errorf("arrowstream: write state of operator %d: %w", l.state.opID, err)
		}
		l.progress.NumRowsUpdated = 1
	}
	l.progress.AllUpdatesTimeMs = time.Since(start).Milliseconds()
	scan, err := vector.NewScan(input.Schema(), recs...)
	releaseRecords(recs)
	return scan, err
}

func (l *statefulLimit) State() StateDecl                     { return l.state.decl() }
func (l *statefulLimit) Committed(c StateCommit)              { l.state.committed(&l.progress, c) }
func (l *statefulLimit) Abort()                               { l.state.release() }
func (l *statefulLimit) ShouldRunAnotherBatch(int64) bool     { return false }
func (l *statefulLimit) Report() stream.StateOperatorProgress { return l.progress }
