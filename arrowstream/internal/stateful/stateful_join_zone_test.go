package stateful

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// TestJoinZonePendingMatchesModel: a side that never evicts fed, epoch
// after epoch, batches whose keys move on with time (ids of the last few
// dozen "auctions", a few ahead of them, a hot one, some null), probed
// as Nexmark q4's bids are: mostly by keys newer than any stored, now and
// then by a late key of any past epoch or by a key at the very edge of a
// stored batch's key range, with its tail merged as the operator merges
// it (pending batches too) and restarts that rebuild it from its batches.
// Every probe finds exactly the pairs of a brute-force model, however old
// the batch; a pending batch is never scanned joinScanLimit times and
// still pending (the newest batches, scanned, are indexed with the older
// ones); and batches that probes pass over stay pending (most of them:
// no index is paid for them) while their rows are found.
func TestJoinZonePendingMatchesModel(t *testing.T) {
	t.Run("fixed", func(t *testing.T) {
		testJoinZoneModel(t, func(n int) uint64 { return uint64(n) }, func(r *sideRows, k []uint64) { r.words = k })
	})
	t.Run("bytes", func(t *testing.T) {
		testJoinZoneModel(t, func(n int) string { return fmt.Sprintf("a%07d", n) }, func(r *sideRows, k []string) { r.keys = k })
	})
}

func testJoinZoneModel[K joinKey](t *testing.T, key func(int) K, setKeys func(*sideRows, []K)) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewSource(11))
	side := newJoinSideLive[K]()
	defer func() { side.release() }()
	type stored struct {
		key  K
		null bool
	}
	model := map[int64]stored{} // by value
	var nextV int64
	var id uint64
	newBatch := func(keys []K, null []bool) *joinBatch[K] {
		vb := array.NewInt64Builder(mem)
		defer vb.Release()
		for j := range keys {
			vb.Append(nextV)
			model[nextV] = stored{keys[j], null[j]}
			nextV++
		}
		col := vb.NewArray()
		defer col.Release()
		b := &joinBatch[K]{id: id, end: int32(len(keys)), keys: keys, keyNull: null,
			rec: array.NewRecord(mergeTestSchema, []arrow.Array{col}, int64(len(keys)))}
		id++
		return b
	}
	base := 0 // the newest id
	var probes, late, edge, restarts, pendingMerges int
	var passedOver int        // pending batches a probe passed over
	var indexedByProbes int64 // rows the probes' scans had indexed
	for epoch := range 400 {
		// The tail merges before the epoch's batch is added, as the
		// operator merges it.
		if len(side.batches) > mergeMaxBatches || rng.Intn(6) == 0 {
			var pend int
			for _, b := range side.batches {
				if !b.indexed {
					pend++
				}
			}
			m, err := side.mergeTail(mem)
			if err != nil {
				t.Fatal(err)
			}
			if m > 0 && pend >= mergeFanIn {
				pendingMerges++
			}
		}
		n := 1 + rng.Intn(120)
		keys, null := make([]K, n), make([]bool, n)
		for j := range keys {
			switch k := rng.Intn(10); {
			case k < 4: // the hot id
				keys[j] = key(base / 50 * 50)
			case k < 9: // one of the last few dozen
				keys[j] = key(max(0, base-rng.Intn(40)))
			default: // one of the next few, not yet seen
				keys[j] = key(base + 1 + rng.Intn(5))
			}
			null[j] = rng.Intn(25) == 0
		}
		side.addPending(newBatch(keys, null))
		base += 30 + rng.Intn(40)
		// The epoch's probe: the new ids, now and then a late one or a
		// stored batch's edge.
		m := 1 + rng.Intn(20)
		probe := make([]K, m)
		f := &sideRows{keyNull: make([]bool, m), excluded: make([]bool, m)}
		for j := range probe {
			probe[j] = key(base - rng.Intn(25))
			f.keyNull[j] = rng.Intn(30) == 0
			f.excluded[j] = rng.Intn(30) == 0
		}
		switch rng.Intn(30) {
		case 0:
			probe[0] = key(rng.Intn(base + 1))
			f.keyNull[0], f.excluded[0] = false, false
			late++
		case 1:
			b := side.batches[rng.Intn(len(side.batches))]
			if b.zone.ok {
				probe[0] = b.zone.lo
				if rng.Intn(2) == 0 {
					probe[0] = b.zone.hi
				}
				f.keyNull[0], f.excluded[0] = false, false
				edge++
			}
		}
		setKeys(f, probe)
		probeRange := rangeOf(probe, f.keyNull, f.excluded)
		// The pending batches the probe must pass over, and their scans.
		over := map[*joinBatch[K]]int{}
		for _, b := range side.pending {
			if b.rec != nil && !b.indexed && !b.zone.meets(probeRange) {
				over[b] = b.scans
			}
		}
		passedOver += len(over)
		before := side.index.rows
		lp := &joinLivePart[K]{sides: [2]*joinSideLive[K]{newJoinSideLive[K](), side}}
		var got []string
		for _, sg := range candidatesOK(lp, [2]*sideRows{f, {}}, [2][]K{probe, nil}) {
			col := sg.r.rec.Column(0).(*array.Int64)
			for k, j := range sg.li {
				got = append(got, fmt.Sprint(j, "/", col.Value(int(sg.ri[k]))))
			}
		}
		probes++
		indexedByProbes += side.index.rows - before
		var want []string
		for j, k := range probe {
			if f.keyNull[j] || f.excluded[j] {
				continue
			}
			for v, r := range model {
				if !r.null && r.key == k {
					want = append(want, fmt.Sprint(j, "/", v))
				}
			}
		}
		slices.Sort(got)
		slices.Sort(want)
		if !slices.Equal(got, want) {
			t.Fatalf("epoch %d: the probe of %v finds %d pairs %v, the model %d %v", epoch, probe, len(got), got, len(want), want)
		}
		for b, scans := range over {
			if !b.indexed && b.scans != scans {
				t.Fatalf("epoch %d: batch %d of keys in %v scanned by a probe of keys in %v", epoch, b.id, b.zone, probeRange)
			}
		}
		for _, b := range side.pending {
			if b.rec != nil && !b.indexed && b.scans >= joinScanLimit {
				t.Fatalf("epoch %d: batch %d scanned %d times and still pending", epoch, b.id, b.scans)
			}
		}
		if rng.Intn(40) == 0 {
			side = restartJoinSide(t, mem, side, true)
			restarts++
		}
	}
	t.Logf("%d probes (%d late, %d at a batch's edge), %d pending batches passed over, %d merges of pending batches, %d restarts; %d of %d rows indexed by probes",
		probes, late, edge, passedOver, pendingMerges, restarts, indexedByProbes, nextV)
	if late == 0 || edge == 0 || restarts == 0 || pendingMerges == 0 {
		t.Fatal("the test does not cover late probes, edges, restarts or merges of pending batches")
	}
	// Passed over, batches stay pending: only late probes, which scan
	// the batches their keys are in, get rows indexed (with every
	// batch then pending), not the flow of new keys.
	if indexedByProbes*2 > nextV {
		t.Fatalf("%d of %d rows indexed by probes: probes scan (and index) batches their keys cannot be in", indexedByProbes, nextV)
	}
}
