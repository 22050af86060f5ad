package stateful

import (
	"fmt"
	"math/rand"
	"runtime"
	"syscall"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// BenchmarkJoinSideIndex: the key index's per-row cost on the shape of a
// Nexmark q7 partition (keys nearly unique, rows evicted in time order, a
// window of live batches), a q20 one (few rows per key, never evicted) and
// a q4 one (as q20, but half the rows on 8 hot keys): each iteration adds one batch of 5,000 rows to the index and,
// for the evicting shape, evicts what the rising threshold passes. The
// batches and their records are built before the timer; ns/row is the
// index's cost per stored row in process CPU time (getrusage, so that a
// loaded machine does not inflate it; the collector's work counts).
//
//	go test -run XXX -bench JoinSideIndex ./arrowstream/internal/stateful/
func BenchmarkJoinSideIndex(b *testing.B) {
	const rows = 5000
	for _, shape := range []struct {
		name  string
		keys  int
		evict bool
		hot   int // when set, half the rows go to this many keys
	}{{"q7-unique-evicting", 1 << 30, true, 0}, {"q20-few-per-key", 20_000, false, 0}, {"q4-hot-keys", 20_000, false, 8}} {
		b.Run(shape.name, func(b *testing.B) {
			mem := memory.NewGoAllocator()
			schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil)
			bld := array.NewInt64Builder(mem)
			bld.AppendValues(make([]int64, rows), nil)
			col := bld.NewArray()
			bld.Release()
			rec := array.NewRecord(schema, []arrow.Array{col}, rows)
			col.Release()
			defer rec.Release()
			rng := rand.New(rand.NewSource(1))
			// A pool of batches, reused round robin (the index is what is
			// measured, not building them).
			const pool = 64
			keys := make([][]uint64, pool)
			for p := range keys {
				keys[p] = make([]uint64, rows)
				for i := range keys[p] {
					keys[p][i] = uint64(rng.Intn(shape.keys))
					if shape.hot > 0 && rng.Intn(2) == 0 {
						keys[p][i] = uint64(rng.Intn(shape.hot))
					}
				}
			}
			side := newJoinSideLive[uint64]()
			defer side.release()
			epoch := int64(0)
			cpu0 := processCPU()
			for b.Loop() {
				var times []int64
				if shape.evict {
					times = make([]int64, rows)
					for i := range times {
						times[i] = epoch*rows + int64(i)
					}
				}
				rec.Retain()
				nb := &joinBatch[uint64]{id: uint64(epoch), rec: rec, end: rows, keys: keys[epoch%pool], keyNull: make([]bool, rows), times: times}
				side.add(nb)
				epoch++
				if shape.evict {
					// Ten epochs of rows stay live, as q7's window.
					thr := (epoch-10)*rows - 1
					for side.due.due(thr) {
						bt := side.due.pop().v
						if bt.rec == nil {
							continue
						}
						side.evict(bt, thr)
						if bt.cursor >= bt.end {
							side.drop(bt)
							continue
						}
						side.schedule(bt)
					}
				} else if epoch%200 == 0 {
					// A never-evicting side grows without bound: start over
					// now and then, so every iteration measures a similar state.
					side.release()
					side = newJoinSideLive[uint64]()
				}
				side.changes = side.changes[:0]
			}
			// CPU time, not wall time: the machine is shared.
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N)/rows, "cpu-ns/row")
			b.ReportMetric(float64(side.rows), "live-rows")
			// The heap the side holds per live row (its index, and the
			// batches' flags and times; keys and records are shared
			// with the pool): what its release frees.
			b.StopTimer()
			var ms runtime.MemStats
			runtime.GC()
			runtime.ReadMemStats(&ms)
			held, live := int64(ms.HeapAlloc), side.rows
			side.release()
			runtime.GC()
			runtime.ReadMemStats(&ms)
			b.ReportMetric(float64(held-int64(ms.HeapAlloc))/float64(max(live, 1)), "held-B/row")
		})
	}
}

// processCPU is the process's user+system CPU time in nanoseconds.
func processCPU() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return ru.Utime.Nano() + ru.Stime.Nano()
}

// BenchmarkJoinSideProbeFew: a probe by few keys (a window's maximum in
// Nexmark q7: one row a window; 32, as new auctions probing q20's bids) of a side holding 10 batches of 5,000
// rows with nearly unique keys, the rows indexed by key (the probe looks
// each key up, but indexing them cost an insertion and a deletion per
// row) or pending (the probe scans them; see stateful_join_scan.go).
// With index=true, add-ns/row is what indexing cost per row; with
// index=false, scan-ns/row is what each scan costs per row, and a row is
// scanned at most joinScanLimit times.
//
//	go test -run XXX -bench JoinSideProbeFew ./arrowstream/internal/stateful/
func BenchmarkJoinSideProbeFew(b *testing.B) {
	const rows, batches = 5000, 10
	for _, c := range []struct {
		indexed bool
		probes  int
	}{{true, 1}, {false, 1}, {false, 32}} {
		indexed := c.indexed
		b.Run(fmt.Sprintf("index=%v/keys=%d", indexed, c.probes), func(b *testing.B) {
			mem := memory.NewGoAllocator()
			rng := rand.New(rand.NewSource(1))
			side := newJoinSideLive[uint64]()
			defer side.release()
			cpu0 := processCPU()
			for id := 0; id < batches; id++ {
				keys, vs := make([]uint64, rows), make([]int64, rows)
				for i := range keys {
					keys[i], vs[i] = uint64(rng.Int63()), int64(i)
				}
				nb := neverEvictBatch(mem, uint64(id), keys, make([]bool, rows), vs)
				if indexed {
					side.add(nb)
				} else {
					side.addPending(nb)
				}
			}
			addNs := float64(processCPU()-cpu0) / (rows * batches)
			f := &sideRows{keyNull: make([]bool, c.probes), excluded: make([]bool, c.probes), words: make([]uint64, c.probes)}
			for j := range f.words {
				f.words[j] = side.batches[j%batches].keys[17+j]
			}
			fresh := [2]*sideRows{f, {}}
			lp := &joinLivePart[uint64]{sides: [2]*joinSideLive[uint64]{newJoinSideLive[uint64](), side}}
			keys := [2][]uint64{fresh[0].words, nil}
			cpu0 = processCPU()
			for b.Loop() {
				segs := candidatesOK(lp, fresh, keys)
				found := 0
				for _, sg := range segs {
					found += len(sg.li)
				}
				if found != c.probes {
					b.Fatalf("%d pairs: each probe key is stored once", found)
				}
				for _, x := range side.batches {
					x.scans = 0 // stays pending
				}
			}
			b.ReportMetric(addNs, "add-ns/row")
			b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N)/(rows*batches), "scan-ns/row")
		})
	}
}
