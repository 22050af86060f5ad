package stateful

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// joinSnapOp drives a stream-stream join through runLiveSnapOps: each
// epoch's rows (k, t) are split, even positions to the left side (k, t),
// odd ones to the right (k2, t2).
type joinSnapOp struct {
	j   *statefulJoin
	mem memory.Allocator
	l   *arrow.Schema
	r   *arrow.Schema
}

func newJoinSnapOp(t *testing.T, mem memory.Allocator, on, typ string, watermark bool) *joinSnapOp {
	t.Helper()
	cat := plan.NewMemoryCatalog()
	cat.Register("l", &plan.SourceTable{TableSchema: liveInSchema})
	cat.Register("r", &plan.SourceTable{TableSchema: arrow.NewSchema([]arrow.Field{
		{Name: "k2", Type: vector.Int64},
		{Name: "t2", Type: vector.Timestamp},
	}, nil)})
	l, err := plan.Read(cat, "l")
	if err != nil {
		t.Fatal(err)
	}
	r, err := plan.Read(cat, "r")
	if err != nil {
		t.Fatal(err)
	}
	if watermark {
		if l, err = plan.WithWatermark(l, "t", "2 seconds"); err != nil {
			t.Fatal(err)
		}
		if r, err = plan.WithWatermark(r, "t2", "2 seconds"); err != nil {
			t.Fatal(err)
		}
	}
	n, err := plan.JoinOn(l, r, on, typ)
	if err != nil {
		t.Fatal(err)
	}
	jn, ok := n.(*plan.Join)
	if !ok {
		t.Fatalf("JoinOn made a %T", n)
	}
	j, err := newStatefulJoin(mem, 0, jn)
	if err != nil {
		t.Fatal(err)
	}
	return &joinSnapOp{j: j, mem: mem, l: jn.Left.Schema(), r: jn.Right.Schema()}
}

func (o *joinSnapOp) Execute(ctx context.Context, ep Epoch, input vector.Operator) (vector.Operator, error) {
	recs, err := vector.Drain(ctx, input)
	input.Close()
	if err != nil {
		return nil, err
	}
	defer releaseRecords(recs)
	var sides [2][]arrow.Record
	defer func() {
		for _, s := range sides {
			releaseRecords(s)
		}
	}()
	for _, rec := range recs {
		var idx [2][]int32
		for i := range int(rec.NumRows()) {
			idx[i%2] = append(idx[i%2], int32(i))
		}
		for i, schema := range []*arrow.Schema{o.l, o.r} {
			part, err := vector.TakeRecord(o.mem, rec, idx[i])
			if err != nil {
				return nil, err
			}
			sides[i] = append(sides[i], array.NewRecord(schema, part.Columns(), part.NumRows()))
			part.Release()
		}
	}
	left, err := vector.NewScan(o.l, sides[0]...)
	if err != nil {
		return nil, err
	}
	right, err := vector.NewScan(o.r, sides[1]...)
	if err != nil {
		left.Close()
		return nil, err
	}
	return o.j.ExecuteTwo(ctx, ep, left, right)
}

func (o *joinSnapOp) Committed(c StateCommit) { o.j.Committed(c) }

// joinEntriesNorm renders a join partition's entries with each batch
// entry's rows (decoded with its side's schema, from schemas) in place of
// its IPC bytes: a batch merged in memory is written to a live snapshot as
// slices of the merged rows, whose encoding need not be byte for byte the
// one logged.
func joinEntriesNorm(schemas [2]*arrow.Schema) func(t *testing.T, m map[string]string) map[string]string {
	return func(t *testing.T, m map[string]string) map[string]string {
		t.Helper()
		out := make(map[string]string, len(m))
		for k, v := range m {
			if len(k) != 9 || k[0]&0xf0 != joinBatchTag || int(k[0]&0x0f) >= len(schemas) {
				out[k] = v
				continue
			}
			stream, _, err := joinBatchStream(memory.DefaultAllocator, []byte(v), schemas[k[0]&0x0f])
			if err != nil {
				t.Fatalf("entry %x: %v", k, err)
			}
			rd, err := ipc.NewReader(stream)
			if err != nil {
				t.Fatalf("entry %x: %v", k, err)
			}
			var rows []vt.Row
			for rd.Next() {
				rows = append(rows, vt.RowsOf(rd.Record())...)
			}
			if err := rd.Err(); err != nil {
				t.Fatalf("entry %x: %v", k, err)
			}
			rd.Release()
			out[k] = fmt.Sprint(rows)
		}
		return out
	}
}

// TestJoinLiveSnapshots: a stream-stream join's snapshots made from its
// live batches load as the folded ones do, with restarts between a
// snapshot's write and the purge after it: evicting sides (cursors in the
// meta entries, compactions), an outer side (matched flags), and sides
// that never evict (batches merged in memory, written as their pieces).
func TestJoinLiveSnapshots(t *testing.T) {
	const timed = "k = k2 AND t2 >= t - INTERVAL 2 SECONDS AND t2 <= t + INTERVAL 2 SECONDS"
	for _, c := range []struct {
		name, on, typ string
		watermark     bool
	}{
		{"inner-evict", timed, "inner", true},
		{"left-outer", timed, "left_outer", true},
		{"inner-merged", "k = k2", "inner", false},
	} {
		for _, parts := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/%d", c.name, parts), func(t *testing.T) {
				probe := newJoinSnapOp(t, memory.DefaultAllocator, c.on, c.typ, c.watermark)
				schemas := [2]*arrow.Schema{probe.j.sides[0].codec.schema, probe.j.sides[1].codec.schema}
				if err := probe.Close(); err != nil {
					t.Fatal(err)
				}
				runLiveSnapOpsNorm(t, parts, func(mem memory.Allocator) liveSnapOp {
					return newJoinSnapOp(t, mem, c.on, c.typ, c.watermark)
				}, joinEntriesNorm(schemas))
			})
		}
	}
}

func (o *joinSnapOp) Close() error { return o.j.Close() }
