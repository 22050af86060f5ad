package stateful

import (
	"context"
	"fmt"
	"maps"
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// liveSnapOpts make snapshots due every few epochs and keep few versions,
// so that loads rebuild from snapshots with the deltas under them gone.
func liveSnapOpts(mem memory.Allocator, live bool) checkpoint.StoreOptions {
	return checkpoint.StoreOptions{Allocator: mem, MinDeltasForSnapshot: 1, MaxDeltasForSnapshot: 2, MinVersionsToRetain: 2, NoLiveSnapshots: !live}
}

func newOptStores(t *testing.T, dir string, n int, opts checkpoint.StoreOptions) *testStores {
	t.Helper()
	ts := &testStores{t: t, provider: checkpoint.NewMemoryProvider(&checkpoint.Writer{NoSync: true}, opts)}
	for p := 0; p < n; p++ {
		part, err := ts.provider.OpenPartition(filepath.Join(dir, "state", "0", strconv.Itoa(p)))
		if err != nil {
			t.Fatal(err)
		}
		ts.parts = append(ts.parts, part)
	}
	return ts
}

// readVersion reads every partition of dir at version through a fresh
// provider (what a restarted process loads: newest snapshot plus deltas).
func readVersion(t *testing.T, mem memory.Allocator, dir string, n int, version int64) []map[string]string {
	t.Helper()
	ts := newOptStores(t, dir, n, checkpoint.StoreOptions{Allocator: mem})
	defer ts.close()
	out := make([]map[string]string, n)
	for p, part := range ts.parts {
		st, err := part.Begin(version)
		if err != nil {
			t.Fatalf("load %s partition %d version %d: %v", dir, p, version, err)
		}
		m := map[string]string{}
		if err := st.Range(func(k, v []byte) bool { m[string(k)] = string(v); return true }); err != nil {
			t.Fatal(err)
		}
		st.Abort()
		out[p] = m
	}
	return out
}

// liveSnapOp is what the test drives of an operator.
type liveSnapOp interface {
	Execute(ctx context.Context, ep Epoch, input vector.Operator) (vector.Operator, error)
	Committed(c StateCommit)
}

// runLiveSnapOps runs the same random epochs through three instances of
// an operator, one whose stores take snapshots from its live state and
// one whose stores fold them from the files, restarting both now and
// then, and one never restarted whose stores make no snapshot (its
// versions load from the changelog alone), and checks that every version
// loads the same in all three (the folded one is the reference: it is
// checked against models elsewhere), that every epoch's output is the
// same with and without restarts, and that snapshots were made from live
// state.
func runLiveSnapOps(t *testing.T, parts int, newOp func(memory.Allocator) liveSnapOp) {
	runLiveSnapOpsNorm(t, parts, newOp, nil)
}

// runLiveSnapOpsNorm is runLiveSnapOps comparing the versions' entries
// as norm renders them (nil: their bytes), for an operator whose values
// may be encoded differently yet mean the same.
func runLiveSnapOpsNorm(t *testing.T, parts int, newOp func(memory.Allocator) liveSnapOp, norm func(t *testing.T, m map[string]string) map[string]string) {
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	dirs := [3]string{t.TempDir(), t.TempDir(), t.TempDir()} // live, folded, changelog alone
	var stores [3]*testStores
	var ops [3]liveSnapOp
	optsOf := func(i int) checkpoint.StoreOptions {
		if i == 2 {
			// No snapshot: every version loads from the changelog alone.
			return checkpoint.StoreOptions{Allocator: mem, MinDeltasForSnapshot: 1 << 30, MaxDeltasForSnapshot: 1 << 30, MinVersionsToRetain: 1000}
		}
		return liveSnapOpts(mem, i == 0)
	}
	for i := range stores {
		stores[i] = newOptStores(t, dirs[i], parts, optsOf(i))
		ops[i] = newOp(mem)
	}
	// An operator holding Arrow memory (the join's batches) frees it
	// when closed, before it is replaced and at the end.
	closeOp := func(op liveSnapOp) {
		if c, ok := op.(interface{ Close() error }); ok {
			if err := c.Close(); err != nil {
				t.Error(err)
			}
		}
	}
	defer func() {
		for _, op := range ops {
			closeOp(op)
		}
		for _, s := range stores {
			s.close()
		}
	}()
	liveSnaps, emitted := int64(0), 0
	countLive := func() {
		for _, p := range stores[0].parts {
			liveSnaps += p.(*checkpoint.StorePartition).LiveSnapshots()
		}
	}
	rng := rand.New(rand.NewPCG(9, uint64(parts)))
	lateMs := int64(0)
	for id := int64(0); id < 60; id++ {
		wmMs := max(0, (id-4)*1000)
		var data []vt.Row
		for range 20 + rng.IntN(40) {
			data = append(data, vt.Row{rng.Int64N(12), (max(0, id-5) + rng.Int64N(6)) * 1_000_000})
		}
		var outs [3][]string
		for i := range ops {
			ep := Epoch{EpochInfo: stream.EpochInfo{ID: id, WatermarkMs: wmMs, LateWatermarkMs: lateMs, HasWatermark: true, CheckpointDir: dirs[i], NumPartitions: parts}}
			rec := vt.BuildRecord(mem, liveInSchema, data)
			scan, err := vector.NewScan(liveInSchema, rec)
			rec.Release()
			if err != nil {
				t.Fatal(err)
			}
			ep.State = stores[i].begin(id)
			out, err := ops[i].Execute(ctx, ep, scan)
			if err != nil {
				t.Fatalf("epoch %d: %v", id, err)
			}
			recs, err := vector.Drain(ctx, out)
			out.Close()
			for _, r := range vt.Rows[vt.Row](vt.Normalizer{}, recs...) {
				outs[i] = append(outs[i], fmt.Sprint(r...))
			}
			slices.Sort(outs[i])
			releaseRecords(recs)
			if err != nil {
				t.Fatal(err)
			}
			ops[i].Committed(stores[i].commit(ctx))
		}
		emitted += len(outs[2])
		for i := range 2 {
			if !slices.Equal(outs[i], outs[2]) {
				t.Fatalf("epoch %d: instance %d (restarted) emits %d rows, the one never restarted %d:\n%v\n%v", id, i, len(outs[i]), len(outs[2]), outs[i], outs[2])
			}
		}
		if rng.IntN(6) == 0 {
			// A restart, after the background snapshots were written and
			// before the next commit purges anything.
			countLive()
			for i := range 2 {
				stores[i].close()
				stores[i] = newOptStores(t, dirs[i], parts, optsOf(i))
				closeOp(ops[i])
				ops[i] = newOp(mem)
			}
		}
		for _, p := range stores[0].parts {
			if err := p.(*checkpoint.StorePartition).WaitMaintenance(); err != nil {
				t.Fatal(err)
			}
		}
		for _, p := range stores[1].parts {
			if err := p.(*checkpoint.StorePartition).WaitMaintenance(); err != nil {
				t.Fatal(err)
			}
		}
		for _, p := range stores[2].parts {
			if err := p.(*checkpoint.StorePartition).WaitMaintenance(); err != nil {
				t.Fatal(err)
			}
		}
		live, folded := readVersion(t, mem, dirs[0], parts, id+1), readVersion(t, mem, dirs[1], parts, id+1)
		logOnly := readVersion(t, mem, dirs[2], parts, id+1)
		for p := range live {
			if norm != nil {
				live[p], folded[p], logOnly[p] = norm(t, live[p]), norm(t, folded[p]), norm(t, logOnly[p])
			}
			if !maps.Equal(live[p], folded[p]) {
				t.Fatalf("version %d partition %d: loads %d keys with live snapshots, %d folded (files %v)", id+1, p, len(live[p]), len(folded[p]), dirs[0])
			}
			if !maps.Equal(logOnly[p], folded[p]) {
				t.Fatalf("version %d partition %d: loads %d keys from the changelog alone, %d folded (files %v)", id+1, p, len(logOnly[p]), len(folded[p]), dirs[2])
			}
		}
		lateMs = wmMs
	}
	countLive()
	if liveSnaps == 0 {
		t.Fatal("no snapshot was made from the operator's live state")
	}
	if emitted == 0 {
		t.Fatal("no row was emitted: the outputs compared nothing")
	}
}

// TestAggregateLiveSnapshots: a watermarked aggregation's snapshots made
// from its live groups load as the folded ones do.
func TestAggregateLiveSnapshots(t *testing.T) {
	spec := vector.AggregateSpec{
		GroupBy: []vector.NamedExpr{vector.As(vector.Col("k"), "k"), vector.As(vector.Col("t"), "t")},
		Aggregates: []vector.AggregateCall{
			{Func: vector.AggCountStar, Name: "n"},
			{Func: vector.AggSum, Args: []vector.Expr{vector.Col("k")}, Name: "s"},
			// A stored -0.0 keeps its sign bit in a live snapshot as in
			// a folded one (values go through the value codec, not the
			// key codec, which folds -0.0 into 0.0).
			{Func: vector.AggMax, Args: []vector.Expr{vector.Lit(math.Copysign(0, -1))}, Name: "z"},
		},
	}
	for _, mode := range []stream.OutputMode{stream.Append, stream.Update} {
		for _, parts := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/%d", mode, parts), func(t *testing.T) {
				var made []*statefulAggregate
				runLiveSnapOps(t, parts, func(mem memory.Allocator) liveSnapOp {
					op, err := newStatefulAggregate(mem, 0, liveInSchema, spec, mode, 1)
					if err != nil {
						t.Fatal(err)
					}
					made = append(made, op)
					return op
				})
				// Both ways ran: from the kept store keys (every group
				// changed since the last restart) and from a record of
				// the groups' state (groups rebuilt from the stores).
				keyed, record := 0, 0
				for _, op := range made {
					keyed += op.keyedSnaps
					record += op.recordSnaps
				}
				if keyed == 0 || record == 0 {
					t.Fatalf("live snapshots: %d from the kept store keys, %d from records: the test did not reach both", keyed, record)
				}
			})
		}
	}
}

// TestDedupLiveSnapshots: a deduplication's snapshots made from its live
// keys load as the folded ones do.
func TestDedupLiveSnapshots(t *testing.T) {
	for _, within := range []bool{false, true} {
		for _, parts := range []int{1, 3} {
			t.Run(fmt.Sprintf("within=%v/%d", within, parts), func(t *testing.T) {
				keys := []int{0, 1}
				if within {
					keys = []int{0}
				}
				runLiveSnapOps(t, parts, func(mem memory.Allocator) liveSnapOp {
					op, err := newStatefulDedup(mem, 0, liveInSchema, keys, 1, within, 2*time.Second)
					if err != nil {
						t.Fatal(err)
					}
					return op
				})
			})
		}
	}
}

// sessionSnapOp runs a session window over liveInSchema's rows (k, t):
// each row's session is [t, t+gap).
type sessionSnapOp struct {
	*statefulSessionWindow
	gap int64
}

func (o sessionSnapOp) Execute(ctx context.Context, ep Epoch, input vector.Operator) (vector.Operator, error) {
	recs, err := vector.Drain(ctx, input)
	input.Close()
	if err != nil {
		return nil, err
	}
	var rows [][2]int64
	for _, r := range vt.Rows[vt.Row](vt.Normalizer{}, recs...) {
		rows = append(rows, [2]int64{r[0].(int64), r[1].(int64)})
	}
	releaseRecords(recs)
	rec := sessionRecord(o.mem, rows, o.gap)
	defer rec.Release()
	scan, err := vector.NewScan(sessionInSchema, rec)
	if err != nil {
		return nil, err
	}
	return o.statefulSessionWindow.Execute(ctx, ep, scan)
}

// TestSessionLiveSnapshots: a session window's snapshots made from its
// decoded sessions load as the folded ones and the changelog alone do,
// across restarts that load them; with first() the epoch's partial rows
// are merged, without it the input rows are folded raw.
func TestSessionLiveSnapshots(t *testing.T) {
	for _, raw := range []bool{false, true} {
		spec := vector.AggregateSpec{
			GroupBy: []vector.NamedExpr{vector.As(vector.Col("k"), "k"), vector.As(vector.Col("session"), "session")},
			Aggregates: []vector.AggregateCall{
				{Func: vector.AggCountStar, Name: "n"},
				{Func: vector.AggSum, Args: []vector.Expr{vector.Col("k")}, Name: "s"},
			},
		}
		if !raw {
			spec.Aggregates = append(spec.Aggregates, vector.AggregateCall{Func: vector.AggFirst, Args: []vector.Expr{vector.Col("k")}, Name: "f"})
		}
		for _, mode := range []stream.OutputMode{stream.Append, stream.Update} {
			for _, parts := range []int{1, 3} {
				t.Run(fmt.Sprintf("%s/%d/raw=%v", mode, parts, raw), func(t *testing.T) {
					runLiveSnapOps(t, parts, func(mem memory.Allocator) liveSnapOp {
						op, err := newStatefulSessionWindow(mem, 0, sessionInSchema, spec, 1, 1, true, mode)
						if err != nil {
							t.Fatal(err)
						}
						return sessionSnapOp{statefulSessionWindow: op, gap: 2_000_000}
					})
				})
			}
		}
	}
}
