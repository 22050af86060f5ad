package stateful

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// BenchmarkJoinSideZones: a side that never evicts on the shape of a
// Nexmark q4 partition's bids, 20 epochs of 4,600 rows whose keys are
// ids of the last 100 "auctions" (half on the newest) or of the next 10,
// each epoch probed by its 300 new auctions (ids past every stored bid's
// but the next 10's); and the same with keys, stored and probed, spread
// over every id so far (moving=false: every batch's key range meets every
// probe's). One
// iteration is a run of the 20 epochs on a fresh side: the probe of the
// stored batches (candidates), then the epoch's batch added pending. With
// moving keys the probes pass the older batches over and nothing is
// indexed; spread, each batch is scanned joinScanLimit times and indexed,
// as every batch was before the key ranges (session 36). cpu-ns/row is
// process CPU (getrusage) per stored row, the batches built before it.
//
//	go test -run XXX -bench JoinSideZones -benchmem ./arrowstream/internal/stateful/
func BenchmarkJoinSideZones(b *testing.B) {
	const epochs, rows, auctions = 20, 4600, 300
	for _, moving := range []bool{true, false} {
		b.Run(fmt.Sprintf("moving=%v", moving), func(b *testing.B) {
			mem := memory.NewGoAllocator()
			rng := rand.New(rand.NewSource(1))
			type epoch struct {
				keys  []uint64
				vs    []int64
				probe *sideRows
			}
			var eps []epoch
			for e := range epochs {
				top := (e + 1) * auctions // the newest id stored
				ep := epoch{keys: make([]uint64, rows), vs: make([]int64, rows)}
				for j := range ep.keys {
					switch {
					case !moving:
						ep.keys[j] = uint64(rng.Intn(top + 10))
					case j%2 == 0:
						ep.keys[j] = uint64(top)
					default:
						ep.keys[j] = uint64(max(0, top-100+rng.Intn(110)))
					}
					ep.vs[j] = int64(j)
				}
				f := &sideRows{keyNull: make([]bool, auctions), excluded: make([]bool, auctions), words: make([]uint64, auctions)}
				for j := range f.words {
					f.words[j] = uint64(top + 1 + j) // the next epoch's auctions
					if !moving {
						f.words[j] = uint64(rng.Intn(top + auctions))
					}
				}
				ep.probe = f
				eps = append(eps, ep)
			}
			var pairs, indexed int
			var cpu int64
			for b.Loop() {
				b.StopTimer()
				batches := make([]*joinBatch[uint64], epochs)
				for e, ep := range eps {
					batches[e] = neverEvictBatch(mem, uint64(e), ep.keys, make([]bool, rows), ep.vs)
				}
				side := newJoinSideLive[uint64]()
				b.StartTimer()
				cpu0 := processCPU()
				for e := range eps {
					if e > 0 {
						lp := &joinLivePart[uint64]{sides: [2]*joinSideLive[uint64]{newJoinSideLive[uint64](), side}}
						for _, sg := range candidatesOK(lp, [2]*sideRows{eps[e-1].probe, {}}, [2][]uint64{eps[e-1].probe.words, nil}) {
							pairs += len(sg.li)
						}
					}
					side.addPending(batches[e])
				}
				cpu += processCPU() - cpu0
				b.StopTimer()
				indexed += int(side.index.rows)
				side.release()
				b.StartTimer()
			}
			b.ReportMetric(float64(cpu)/float64(b.N)/(epochs*rows), "cpu-ns/row")
			b.ReportMetric(float64(indexed)/float64(b.N), "indexed-rows/run")
			b.ReportMetric(float64(pairs)/float64(b.N), "pairs/run")
		})
	}
}
