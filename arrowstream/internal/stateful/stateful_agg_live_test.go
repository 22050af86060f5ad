package stateful

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

var liveInSchema = arrow.NewSchema([]arrow.Field{
	{Name: "k", Type: vector.Int64},
	{Name: "t", Type: vector.Timestamp},
}, nil)

// aggModel is the brute-force answer of GROUP BY k, t with count(*) and
// sum(k), t carrying the watermark (Spark's semantics: rows at or below
// the late watermark are dropped, groups at or below the watermark are
// evicted, in Append mode emitted then).
type aggModel struct {
	mode  stream.OutputMode
	state map[[2]int64][2]int64 // (k, t µs) → (count, sum)
}

func (m *aggModel) epoch(rows [][2]int64, wmMs, lateMs int64) []string {
	changed := map[[2]int64]bool{}
	for _, r := range rows {
		if r[1] <= lateMs*1000 {
			continue
		}
		v := m.state[r]
		m.state[r] = [2]int64{v[0] + 1, v[1] + r[0]}
		changed[r] = true
	}
	var out []string
	emit := func(g [2]int64) {
		v := m.state[g]
		out = append(out, fmt.Sprint(g[0], g[1], v[0], v[1]))
	}
	if m.mode == stream.Update {
		for g := range changed {
			emit(g)
		}
	}
	for g := range m.state {
		if g[1] <= wmMs*1000 {
			if m.mode == stream.Append {
				emit(g)
			}
			delete(m.state, g)
		}
	}
	slices.Sort(out)
	return out
}

// TestLiveAggregateAbortRestart runs a watermarked aggregation over
// random epochs while aborting epochs (then replaying them) and restarting
// the operator (a new instance over the same stores) at random, and checks
// every committed epoch's output against the brute-force model: the live
// state must be discarded on abort and rebuilt from the stores. The
// stores take changelogs (no decoded copy of their own), and some
// restarts reopen them, so that the state comes back from the files.
func TestLiveAggregateAbortRestart(t *testing.T) {
	for _, mode := range []stream.OutputMode{stream.Append, stream.Update} {
		for _, parts := range []int{1, 3} {
			t.Run(fmt.Sprintf("%s/%d", mode, parts), func(t *testing.T) {
				mem := poisonmem.New()
				defer mem.AssertSize(t, 0)
				ctx := context.Background()
				dir := t.TempDir()
				stores := newTestStores(t, mem, dir, parts)
				defer func() { stores.close() }() // waits for background snapshots before the directory goes
				spec := vector.AggregateSpec{
					GroupBy: []vector.NamedExpr{vector.As(vector.Col("k"), "k"), vector.As(vector.Col("t"), "t")},
					Aggregates: []vector.AggregateCall{
						{Func: vector.AggCountStar, Name: "n"},
						{Func: vector.AggSum, Args: []vector.Expr{vector.Col("k")}, Name: "s"},
					},
				}
				newOp := func() *statefulAggregate {
					op, err := newStatefulAggregate(mem, 0, liveInSchema, spec, mode, 1)
					if err != nil {
						t.Fatal(err)
					}
					return op
				}
				op := newOp()
				model := &aggModel{mode: mode, state: map[[2]int64][2]int64{}}
				rng := rand.New(rand.NewPCG(3, uint64(parts)))
				lateMs := int64(0)
				for id := int64(0); id < 40; id++ {
					wmMs := max(0, (id-3)*1000)
					var rows [][2]int64
					var data []vt.Row
					for i := 0; i < 30; i++ {
						r := [2]int64{rng.Int64N(6), (max(0, id-5) + rng.Int64N(6)) * 1_000_000}
						rows = append(rows, r)
						data = append(data, vt.Row{r[0], r[1]})
					}
					ep := Epoch{EpochInfo: stream.EpochInfo{ID: id, WatermarkMs: wmMs, LateWatermarkMs: lateMs, HasWatermark: true, CheckpointDir: dir, NumPartitions: parts}}
					run := func() []string {
						rec := vt.BuildRecord(mem, liveInSchema, data)
						scan, err := vector.NewScan(liveInSchema, rec)
						rec.Release()
						if err != nil {
							t.Fatal(err)
						}
						ep.State = stores.begin(id)
						out, err := op.Execute(ctx, ep, scan)
						if err != nil {
							t.Fatalf("epoch %d: %v", id, err)
						}
						recs, err := vector.Drain(ctx, out)
						out.Close()
						if err != nil {
							t.Fatal(err)
						}
						var got []string
						for _, r := range vt.Rows[vt.Row](vt.Normalizer{}, recs...) {
							got = append(got, fmt.Sprint(r...))
						}
						for _, r := range recs {
							r.Release()
						}
						slices.Sort(got)
						return got
					}
					for rng.IntN(4) == 0 { // an attempt that fails after running
						run()
						stores.abort()
						op.Abort()
					}
					got := run()
					op.Committed(stores.commit(ctx))
					want := model.epoch(rows, wmMs, lateMs)
					if !slices.Equal(got, want) {
						t.Fatalf("epoch %d: got\n%v\nwant\n%v", id, got, want)
					}
					if p := op.Report(); p.NumRowsTotal != int64(len(model.state)) {
						t.Fatalf("epoch %d: numRowsTotal %d, want %d", id, p.NumRowsTotal, len(model.state))
					}
					if op.live == nil || int64(op.live.agg.NumLive()) != int64(len(model.state)) {
						t.Fatalf("epoch %d: live state does not hold the %d groups", id, len(model.state))
					}
					if rng.IntN(5) == 0 {
						op = newOp() // restart: the state comes back from the stores
						if rng.IntN(2) == 0 {
							// A process restart: fresh partitions rebuild
							// the version from the files (snapshot and
							// changelogs), not from a copy in memory.
							stores.close()
							stores = newTestStores(t, mem, dir, parts)
						}
					}
					lateMs = wmMs
				}
			})
		}
	}
}
