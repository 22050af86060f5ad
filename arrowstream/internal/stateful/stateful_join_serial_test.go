package stateful

import (
	"context"
	"fmt"
	"maps"
	"math/rand/v2"
	"runtime"
	"runtime/metrics"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// goroutinesCreated is how many goroutines the process has started.
func goroutinesCreated() uint64 {
	s := []metrics.Sample{{Name: "/sched/goroutines-created:goroutines"}}
	metrics.Read(s)
	return s[0].Value.Uint64()
}

// TestJoinSmallEpochsOnCaller: a join whose small epochs run their
// partitions one after another on the caller (serialRows) emits, epoch by
// epoch, what the same join run always in parallel emits, and commits the
// same state in every partition; its small epochs start no goroutine for
// the partitions, the parallel one's do (the comparison shows the count
// sees them). Epochs of 20–59 rows over 4 partitions against a bound of
// 40: about half of them small, with a watermark evicting (a time-bounded
// inner join) and without (an equi-join, as q3).
func TestJoinSmallEpochsOnCaller(t *testing.T) {
	prev := runtime.GOMAXPROCS(max(2, runtime.GOMAXPROCS(0)))
	defer runtime.GOMAXPROCS(prev)
	for _, tc := range []struct {
		name, on  string
		watermark bool
	}{
		{"equi", "k = k2", false},
		{"timed", "k = k2 AND t2 >= t - INTERVAL 2 SECONDS AND t2 <= t + INTERVAL 2 SECONDS", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			const (
				parts = 4
				bound = 40
			)
			mem := poisonmem.New()
			defer mem.AssertSize(t, 0)
			ctx := context.Background()
			dirs := [2]string{t.TempDir(), t.TempDir()}
			var stores [2]*testStores
			var ops [2]*joinSnapOp
			for i := range ops {
				stores[i] = newOptStores(t, dirs[i], parts, liveSnapOpts(mem, true))
				ops[i] = newJoinSnapOp(t, mem, tc.on, "inner", tc.watermark)
			}
			defer func() {
				for i := range ops {
					if err := ops[i].Close(); err != nil {
						t.Error(err)
					}
					stores[i].close()
				}
			}()
			ops[0].j.serialRows = 0 // the reference: every epoch in parallel
			ops[1].j.serialRows = bound
			rng := rand.New(rand.NewPCG(26, 3))
			var created [2]uint64
			small, emitted := 0, 0
			for id := int64(0); id < 40; id++ {
				wmMs := max(0, (id-4)*1000)
				var data []vt.Row
				for range 20 + rng.IntN(40) {
					data = append(data, vt.Row{rng.Int64N(50), (max(0, id-5) + rng.Int64N(6)) * 1_000_000})
				}
				if len(data) < bound {
					small++
				}
				var outs [2][]string
				for i, op := range ops {
					ep := Epoch{EpochInfo: stream.EpochInfo{ID: id, WatermarkMs: wmMs, HasWatermark: tc.watermark, CheckpointDir: dirs[i], NumPartitions: parts}}
					rec := vt.BuildRecord(mem, liveInSchema, data)
					scan, err := vector.NewScan(liveInSchema, rec)
					rec.Release()
					if err != nil {
						t.Fatal(err)
					}
					ep.State = stores[i].begin(id)
					before := goroutinesCreated()
					out, err := op.Execute(ctx, ep, scan)
					if err != nil {
						t.Fatalf("epoch %d: %v", id, err)
					}
					recs, err := vector.Drain(ctx, out)
					out.Close()
					created[i] += goroutinesCreated() - before
					for _, r := range vt.Rows[vt.Row](vt.Normalizer{}, recs...) {
						outs[i] = append(outs[i], fmt.Sprint(r...))
					}
					slices.Sort(outs[i])
					releaseRecords(recs)
					if err != nil {
						t.Fatal(err)
					}
					op.Committed(stores[i].commit(ctx))
				}
				if !slices.Equal(outs[0], outs[1]) {
					t.Fatalf("epoch %d (%d rows): on the caller %d rows, in parallel %d:\n%v\n%v", id, len(data), len(outs[1]), len(outs[0]), outs[1], outs[0])
				}
				emitted += len(outs[0])
				for i := range stores {
					for _, p := range stores[i].parts {
						if err := p.(interface{ WaitMaintenance() error }).WaitMaintenance(); err != nil {
							t.Fatal(err)
						}
					}
				}
				norm := joinEntriesNorm([2]*arrow.Schema{ops[0].l, ops[0].r})
				par, ser := readVersion(t, mem, dirs[0], parts, id+1), readVersion(t, mem, dirs[1], parts, id+1)
				for p := range par {
					if a, b := norm(t, par[p]), norm(t, ser[p]); !maps.Equal(a, b) {
						t.Fatalf("version %d partition %d: %d entries on the caller, %d in parallel", id+1, p, len(b), len(a))
					}
				}
			}
			if emitted == 0 || small == 0 || small == 40 {
				t.Fatalf("%d rows emitted, %d of 40 epochs small: the comparison is empty", emitted, small)
			}
			// Each small epoch touches several of the 4 partitions: in
			// parallel it starts a worker, on the caller none (at least
			// half of them counted: the stores' background work may
			// start goroutines in either).
			if created[1]+uint64(small)/2 > created[0] {
				t.Fatalf("%d small epochs started %d goroutines on the caller's join, %d in parallel", small, created[1], created[0])
			}
			t.Logf("%d small epochs; goroutines started: %d on the caller's join, %d in parallel; %d rows emitted", small, created[1], created[0], emitted)
		})
	}
}
