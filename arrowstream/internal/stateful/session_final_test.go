package stateful

import (
	"context"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
)

// labelCounter counts the operator labels an allocator is asked for
// (vector.ForOperator): one per hash aggregation built through it.
type labelCounter struct {
	memory.Allocator
	labels map[string]int
}

func (m *labelCounter) ForOperator(name string) memory.Allocator {
	m.labels[name]++
	return m
}

// sessionCountSpec is count(*) GROUP BY k, session.
var sessionCountSpec = vector.AggregateSpec{
	GroupBy:    []vector.NamedExpr{vector.As(vector.Col("k"), "k"), vector.As(vector.Col("session"), "session")},
	Aggregates: []vector.AggregateCall{{Func: vector.AggCountStar, Name: "n"}},
}

// runSessionEpoch runs one epoch of op over rows (k, start) and returns
// its output records (the caller releases them) and their schema.
func runSessionEpoch(t *testing.T, mem memory.Allocator, op *statefulSessionWindow, stores *testStores, dir string, id, wmMs, lateMs int64, rows [][2]int64, gap int64) ([]arrow.Record, *arrow.Schema) {
	t.Helper()
	ctx := context.Background()
	rec := sessionRecord(mem, rows, gap)
	scan, err := vector.NewScan(sessionInSchema, rec)
	rec.Release()
	if err != nil {
		t.Fatal(err)
	}
	ep := Epoch{EpochInfo: stream.EpochInfo{ID: id, WatermarkMs: wmMs, LateWatermarkMs: lateMs, HasWatermark: true, CheckpointDir: dir, NumPartitions: len(stores.parts)}}
	ep.State = stores.begin(id)
	out, err := op.Execute(ctx, ep, scan)
	if err != nil {
		t.Fatalf("epoch %d: %v", id, err)
	}
	schema := out.Schema()
	recs, err := vector.Drain(ctx, out)
	out.Close()
	if err != nil {
		t.Fatal(err)
	}
	op.Committed(stores.commit(ctx))
	return recs, schema
}

// TestSessionEvictionFinalizesLive: Append epochs answer the sessions
// they evict from the decoded aggregate's accumulators (and an epoch
// without output an empty scan): no finalizing hash aggregation per
// epoch, only the output layout's once. Every epoch's rows and schema
// must be the finalizing aggregation's.
func TestSessionEvictionFinalizesLive(t *testing.T) {
	const gap = 2_000_000 // µs
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	lc := &labelCounter{Allocator: mem, labels: map[string]int{}}
	dir := t.TempDir()
	stores := newTestStores(t, mem, dir, 2)
	defer stores.close()
	op, err := newStatefulSessionWindow(lc, 0, sessionInSchema, sessionCountSpec, 1, 1, true, stream.Append)
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	want, err := finalizePartial(mem, op.partialSchema, op.stateSpec(vector.AggFinal), nil)
	if err != nil {
		t.Fatal(err)
	}
	wantSchema := want.Schema()
	want.Close()
	const keys = 50
	lateMs := int64(0)
	for id := int64(0); id < 10; id++ {
		// Each key: two rows 1 s apart (one session of 2 rows, [10id s,
		// 10id+3 s)); the watermark evicts the sessions of epoch id-2.
		var rows [][2]int64
		for k := int64(0); k < keys; k++ {
			rows = append(rows, [2]int64{k, id * 10_000_000}, [2]int64{k, id*10_000_000 + 1_000_000})
		}
		wmMs := max(0, (id-1)*10_000)
		recs, schema := runSessionEpoch(t, mem, op, stores, dir, id, wmMs, lateMs, rows, gap)
		lateMs = wmMs
		if !schema.Equal(wantSchema) {
			t.Fatalf("epoch %d: output schema %v, want %v", id, schema, wantSchema)
		}
		n := 0
		for _, r := range recs {
			if !r.Schema().Equal(wantSchema) {
				t.Fatalf("epoch %d: record schema %v, want %v", id, r.Schema(), wantSchema)
			}
			st := r.Column(1).(*array.Struct).Field(0).(*array.Timestamp)
			cnt := r.Column(2).(*array.Int64)
			for i := 0; i < int(r.NumRows()); i++ {
				if got, w := int64(st.Value(i)), (id-2)*10_000_000; got != w || cnt.Value(i) != 2 {
					t.Fatalf("epoch %d: session at %d with %d rows, want at %d with 2", id, got, cnt.Value(i), w)
				}
			}
			n += int(r.NumRows())
			r.Release()
		}
		if wantN := keys * int(min(1, max(0, id-1))); n != wantN {
			t.Fatalf("epoch %d: %d sessions evicted, want %d", id, n, wantN)
		}
	}
	if got := lc.labels[finalizeAggName]; got > 1 {
		t.Fatalf("%d finalizing aggregations built in 10 epochs, want at most 1 (the output layout)", got)
	}
}

// TestDropLateSessionsNoSelection: an epoch without late rows builds no
// selection (no allocation), and one with late rows drops exactly them.
func TestDropLateSessionsNoSelection(t *testing.T) {
	const gap = 2_000_000
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	op, err := newStatefulSessionWindow(mem, 0, sessionInSchema, sessionCountSpec, 1, 1, true, stream.Append)
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	var rows [][2]int64
	for i := int64(0); i < 4096; i++ {
		rows = append(rows, [2]int64{i % 7, (i * 7919 % 4096) * 1000})
	}
	recs := []arrow.Record{sessionRecord(mem, rows, gap)}
	defer func() { releaseRecords(recs) }()
	allocs := testing.AllocsPerRun(20, func() {
		if n, err := op.dropLateSessions(recs, gap-1); n != 0 || err != nil {
			t.Fatalf("dropped %d rows (%v), want none", n, err)
		}
	})
	if allocs != 0 {
		t.Fatalf("%v allocations per epoch without late rows, want 0", allocs)
	}
	limit := arrow.Timestamp(gap + 2_000_000)
	want := 0
	for _, r := range rows {
		if r[1]+gap <= int64(limit) {
			want++
		}
	}
	n, err := op.dropLateSessions(recs, limit)
	if err != nil || n != int64(want) {
		t.Fatalf("dropped %d rows (%v), want %d", n, err, want)
	}
	if got := recs[0].NumRows(); got != int64(len(rows)-want) {
		t.Fatalf("%d rows kept, want %d", got, len(rows)-want)
	}
	_, ends := sessionBounds(recs[0], 1)
	for _, e := range ends {
		if e <= limit {
			t.Fatalf("a late row (end %d ≤ %d) kept", e, limit)
		}
	}
}

// snapCatcher is a store that wants a live snapshot and keeps the view
// it is handed.
type snapCatcher struct {
	checkpoint.StateStore
	view checkpoint.LiveView
}

func (c *snapCatcher) WantsLiveSnapshot() bool { return true }
func (c *snapCatcher) SetLiveSnapshot(v checkpoint.LiveView) {
	if c.view != nil {
		c.view.Release()
	}
	c.view = v
}

// TestSessionSnapshotSized: the live snapshot's copy of the decoded
// sessions is sized from the decoded state's counts, not grown by
// appends (when every partition asks, exactly).
func TestSessionSnapshotSized(t *testing.T) {
	const gap = 2_000_000
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	dir := t.TempDir()
	stores := newTestStores(t, mem, dir, 2)
	defer stores.close()
	op, err := newStatefulSessionWindow(mem, 0, sessionInSchema, sessionCountSpec, 1, 1, true, stream.Append)
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	for id := int64(0); id < 3; id++ {
		var rows [][2]int64
		for k := int64(0); k < 300+100*id; k++ {
			rows = append(rows, [2]int64{k, id * 10_000_000})
		}
		recs, _ := runSessionEpoch(t, mem, op, stores, dir, id, 0, 0, rows, gap)
		releaseRecords(recs)
	}
	catchers := []*snapCatcher{{}, {}}
	op.state.stores = []checkpoint.StateStore{catchers[0], catchers[1]}
	defer func() {
		for _, c := range catchers {
			if c.view != nil {
				c.view.Release()
			}
		}
	}()
	if err := op.offerDecoded([]bool{true, true}); err != nil {
		t.Fatal(err)
	}
	snap := catchers[0].view.(*sessionSnapView).s
	if len(snap.keys) != 500 || len(snap.ends) != 1200 {
		t.Fatalf("snapshot of %d keys and %d sessions, want 500 and 1200", len(snap.keys), len(snap.ends))
	}
	if cap(snap.keys) != len(snap.keys) || cap(snap.first) != len(snap.first) || cap(snap.ends) != len(snap.ends) {
		t.Fatalf("snapshot capacities %d, %d, %d for %d keys and %d sessions: grown, not sized", cap(snap.keys), cap(snap.first), cap(snap.ends), len(snap.keys), len(snap.ends))
	}
}
