package stateful

import (
	"context"
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
)

// TestSessionWindowStoresHoldNoCopy runs session windows over the memory
// provider's stores and checks that, once sessions are stored, the
// partitions hold no decoded copy of them (MemoryBytes 0: the epoch
// logged its changes) while the operator holds them live and reserves
// them in its own account; and that a new operator rebuilds the same
// sessions from the files.
func TestSessionWindowStoresHoldNoCopy(t *testing.T) {
	const gap = 2_000_000 // µs
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	dir := t.TempDir()
	stores := newTestStores(t, mem, dir, 3)
	defer stores.close()
	spec := vector.AggregateSpec{
		GroupBy:    []vector.NamedExpr{vector.As(vector.Col("k"), "k"), vector.As(vector.Col("session"), "session")},
		Aggregates: []vector.AggregateCall{{Func: vector.AggCountStar, Name: "n"}},
	}
	newOp := func() *statefulSessionWindow {
		op, err := newStatefulSessionWindow(mem, 0, sessionInSchema, spec, 1, 1, true, stream.Append)
		if err != nil {
			t.Fatal(err)
		}
		return op
	}
	op := newOp()
	defer op.Close()
	run := func(op *statefulSessionWindow, id int64, rows [][2]int64) {
		t.Helper()
		rec := sessionRecord(mem, rows, gap)
		scan, err := vector.NewScan(sessionInSchema, rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
		ep := Epoch{EpochInfo: stream.EpochInfo{ID: id, HasWatermark: true, CheckpointDir: dir, NumPartitions: 3}}
		ep.State = stores.begin(id)
		out, err := op.Execute(ctx, ep, scan)
		if err != nil {
			t.Fatalf("epoch %d: %v", id, err)
		}
		recs, err := vector.Drain(ctx, out)
		out.Close()
		releaseRecords(recs)
		if err != nil {
			t.Fatal(err)
		}
		op.Committed(stores.commit(ctx))
	}
	var id int64
	for ; id < 4; id++ {
		var rows [][2]int64
		for k := int64(0); k < 200; k++ {
			rows = append(rows, [2]int64{k, (id*10 + k%3) * 1_000_000})
		}
		run(op, id, rows)
	}
	want := op.Report().NumRowsTotal
	if want != 800 {
		t.Fatalf("%d sessions stored, want 800 (200 keys × 4 disjoint sessions)", want)
	}
	for p, part := range stores.parts {
		if b := part.MemoryBytes(); b != 0 {
			t.Errorf("partition %d holds %d bytes of decoded state: the sessions should be live in the operator only", p, b)
		}
	}
	if op.index.dec == nil || op.index.live.on() {
		t.Fatalf("sessions decoded %v, an encoded copy kept %v: want decoded only", op.index.dec != nil, op.index.live.on())
	}
	if got := op.acct.bytes(); got < op.index.bytes() || op.index.bytes() == 0 {
		t.Errorf("the account reserves %d bytes for %d bytes of live sessions", got, op.index.bytes())
	}
	// A new operator (a restart) reads the same sessions from the files.
	op2 := newOp()
	defer op2.Close()
	run(op2, id, nil)
	if got := op2.Report().NumRowsTotal; got != want {
		t.Fatalf("after a restart %d sessions, want %d", got, want)
	}
}
