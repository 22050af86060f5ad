package stateful

import (
	"math/rand"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// BenchmarkJoinCandidatesIndexed: an epoch's 2,000 new rows probing the
// key index of a side holding 50 batches of 100 rows over 5,000 keys (q20's
// new bids probing its stored auctions: the pairs spread over many
// batches), collecting the candidate pairs by batch. ns/key is process
// CPU per probing row.
//
//	go test -run XXX -bench JoinCandidatesIndexed ./arrowstream/internal/stateful/
func BenchmarkJoinCandidatesIndexed(b *testing.B) {
	const rows, batches, keySpace, probes = 100, 50, 5000, 2000
	mem := memory.NewGoAllocator()
	rng := rand.New(rand.NewSource(1))
	side := newJoinSideLive[uint64]()
	defer side.release()
	for id := 0; id < batches; id++ {
		keys, vs := make([]uint64, rows), make([]int64, rows)
		for i := range keys {
			keys[i], vs[i] = uint64(rng.Intn(keySpace)), int64(i)
		}
		side.add(neverEvictBatch(mem, uint64(id), keys, make([]bool, rows), vs))
	}
	f := &sideRows{keyNull: make([]bool, probes), excluded: make([]bool, probes), words: make([]uint64, probes)}
	for j := range f.words {
		f.words[j] = uint64(rng.Intn(keySpace))
	}
	fresh := [2]*sideRows{f, {}}
	lp := &joinLivePart[uint64]{sides: [2]*joinSideLive[uint64]{newJoinSideLive[uint64](), side}}
	keys := [2][]uint64{f.words, nil}
	cpu0 := processCPU()
	pairs := 0
	for b.Loop() {
		pairs = 0
		for _, sg := range candidatesOK(lp, fresh, keys) {
			pairs += len(sg.li)
		}
	}
	if pairs == 0 {
		b.Fatal("no pairs")
	}
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N*probes), "cpu-ns/key")
	b.ReportMetric(float64(pairs)/probes, "pairs/key")
}

// BenchmarkJoinCandidatesNew: an epoch's 300 new rows of one side against
// 4,500 of the other, with no stored rows (a partition of Nexmark q4's
// epoch: the bids on the epoch's own auctions), about one pair per row of
// the larger side. ns/row is process CPU per row of the larger side.
//
//	go test -run XXX -bench JoinCandidatesNew -benchmem ./arrowstream/internal/stateful/
func BenchmarkJoinCandidatesNew(b *testing.B) {
	const small, large = 300, 4500
	rng := rand.New(rand.NewSource(1))
	a := &sideRows{keyNull: make([]bool, small), excluded: make([]bool, small), words: make([]uint64, small)}
	for j := range a.words {
		a.words[j] = uint64(j)
	}
	bids := &sideRows{keyNull: make([]bool, large), excluded: make([]bool, large), words: make([]uint64, large)}
	for j := range bids.words {
		bids.words[j] = uint64(rng.Intn(small + small/10)) // a few name a later auction
	}
	fresh := [2]*sideRows{a, bids}
	keys := [2][]uint64{a.words, bids.words}
	lp := &joinLivePart[uint64]{sides: [2]*joinSideLive[uint64]{newJoinSideLive[uint64](), newJoinSideLive[uint64]()}}
	cpu0 := processCPU()
	pairs := 0
	for b.Loop() {
		pairs = 0
		for _, sg := range candidatesOK(lp, fresh, keys) {
			pairs += len(sg.li)
		}
	}
	if pairs == 0 {
		b.Fatal("no pairs")
	}
	b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N*large), "cpu-ns/row")
}
