package stateful

import (
	"context"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// bigAllocs counts the allocations of at least min bytes made through
// it (the Arrow buffers of columns of that many rows).
type bigAllocs struct {
	memory.Allocator
	min, n int
}

func (a *bigAllocs) Allocate(size int) []byte {
	if size >= a.min {
		a.n++
	}
	return a.Allocator.Allocate(size)
}

// TestUpdateEpochLogsValuesWithoutColumns runs an Update-mode aggregation
// shaped as q17's (count, sums, min, max, avg by key) whose every epoch
// changes the same 4096 groups, and counts the Arrow buffers of a
// changed-groups column size the second epoch allocates: the output's
// columns (Final) and the fold's, but none for the changelog, whose value
// rows are written from the accumulators (LiveAggregate.EncodeValues).
// Before, the changelog gathered the groups' state columns into Arrow
// arrays (Values) only to encode them, about one buffer per state column.
func TestUpdateEpochLogsValuesWithoutColumns(t *testing.T) {
	const parts, groups = 2, 4096
	storeMem := poisonmem.New()
	defer storeMem.AssertSize(t, 0)
	opMem := poisonmem.New()
	defer opMem.AssertSize(t, 0)
	mem := &bigAllocs{Allocator: opMem, min: groups * 8}
	ctx := context.Background()
	dir := t.TempDir()
	stores := newTestStores(t, storeMem, dir, parts)
	defer func() { stores.close() }()
	spec := vector.AggregateSpec{
		GroupBy: []vector.NamedExpr{vector.As(vector.Col("k"), "k")},
		Aggregates: []vector.AggregateCall{
			{Func: vector.AggCountStar, Name: "n"},
			{Func: vector.AggSum, Name: "s", Args: []vector.Expr{vector.Col("k")}},
			{Func: vector.AggMin, Name: "lo", Args: []vector.Expr{vector.Col("t")}},
			{Func: vector.AggMax, Name: "hi", Args: []vector.Expr{vector.Col("k")}},
			{Func: vector.AggAvg, Name: "a", Args: []vector.Expr{vector.Col("k")}},
		},
	}
	op, err := newStatefulAggregate(mem, 0, liveInSchema, spec, stream.Update, -1)
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	var outCols int
	for id := int64(0); id < 2; id++ {
		var data []vt.Row
		for k := range int64(groups) {
			data = append(data, vt.Row{k, int64(1_000_000_000 + id)})
		}
		rec := vt.BuildRecord(opMem, liveInSchema, data)
		scan, err := vector.NewScan(liveInSchema, rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
		ep := Epoch{EpochInfo: stream.EpochInfo{ID: id, CheckpointDir: dir, NumPartitions: parts}}
		ep.State = stores.begin(id)
		mem.n = 0
		out, err := op.Execute(ctx, ep, scan)
		if err != nil {
			t.Fatalf("epoch %d: %v", id, err)
		}
		recs, err := vector.Drain(ctx, out)
		out.Close()
		if err != nil {
			t.Fatal(err)
		}
		outCols = 0
		for _, r := range recs {
			if r.NumRows() != groups {
				t.Fatalf("epoch %d: %d rows, want %d", id, r.NumRows(), groups)
			}
			outCols += int(r.NumCols())
		}
		releaseRecords(recs)
		op.Committed(stores.commit(ctx))
	}
	if !op.log.on() {
		t.Fatal("the epochs logged no changes: the test did not reach the changelog")
	}
	// The output's columns and slack (the state's 7 columns were as many
	// buffers more).
	if limit := outCols + 2; mem.n > limit {
		t.Fatalf("an epoch of %d changed groups allocated %d buffers of %d+ bytes, want at most %d (output %d columns)", groups, mem.n, mem.min, limit, outCols)
	}
	t.Logf("%d buffers of %d+ bytes, output %d columns", mem.n, mem.min, outCols)
}
