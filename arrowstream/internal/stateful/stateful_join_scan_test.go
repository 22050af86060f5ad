package stateful

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// TestJoinScanPendingMatchesIndex: the candidate pairs of new rows against
// a side whose batches are pending (scanned) are exactly those found when
// the same batches are indexed, for random keys (some null, some new rows
// excluded), partly evicted batches and probes from either side; a batch
// scanned joinScanLimit times gets indexed, as does every pending batch
// when a probe brings many keys; and scanned batches never enter the index
// early (their eviction leaves it untouched). A probe whose keys all lie
// outside every pending batch's key range scans none: they stay pending,
// their scans uncounted.
func TestJoinScanPendingMatchesIndex(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewSource(3))
	type pair struct{ batch, l, r int64 }
	render := func(segs []*joinPairs[uint64], probe int) []pair {
		var out []pair
		for _, sg := range segs {
			b := sg.r
			if probe == 1 {
				b = sg.l
			}
			if b == nil {
				continue // new × new
			}
			for k := range sg.li {
				out = append(out, pair{int64(b.id), int64(sg.li[k]), int64(sg.ri[k])})
			}
		}
		slices.SortFunc(out, func(a, b pair) int {
			return int((a.batch-b.batch)*1e12 + (a.l-b.l)*1e6 + (a.r - b.r))
		})
		return out
	}
	passed := 0 // trials whose probes passed every pending batch over
	for trial := 0; trial < 200; trial++ {
		scanned, indexed := newJoinSideLive[uint64](), newJoinSideLive[uint64]()
		nb := 1 + rng.Intn(6)
		for id := 0; id < nb; id++ {
			n := 1 + rng.Intn(300)
			keys, keyNull, vs := make([]uint64, n), make([]bool, n), make([]int64, n)
			for i := range keys {
				keys[i], keyNull[i], vs[i] = uint64(rng.Intn(40)), rng.Intn(15) == 0, int64(i)
			}
			a := neverEvictBatch(mem, uint64(id), keys, keyNull, vs)
			b := neverEvictBatch(mem, uint64(id), keys, keyNull, vs)
			if rng.Intn(3) == 0 {
				a.cursor = int32(rng.Intn(n))
				b.cursor = a.cursor
			}
			// The older batches indexed, the newer pending.
			if id < nb/2 {
				scanned.add(a)
			} else {
				scanned.addPending(a)
			}
			indexed.add(b)
		}
		probe := rng.Intn(2)
		m := 1 + rng.Intn(12)
		fresh := [2]*sideRows{{}, {}}
		for i := range fresh {
			fresh[i] = &sideRows{keyNull: []bool{}, excluded: []bool{}, words: []uint64{}}
		}
		f := fresh[probe]
		for j := 0; j < m; j++ {
			f.words = append(f.words, uint64(rng.Intn(40)))
			f.keyNull = append(f.keyNull, rng.Intn(10) == 0)
			f.excluded = append(f.excluded, rng.Intn(10) == 0)
		}
		keys := [2][]uint64{fresh[0].words, fresh[1].words}
		mk := func(stored *joinSideLive[uint64]) *joinLivePart[uint64] {
			lp := &joinLivePart[uint64]{}
			lp.sides[1-probe] = stored
			lp.sides[probe] = newJoinSideLive[uint64]()
			return lp
		}
		live := scanned.pendingLive()
		pending := len(scanned.pending)
		wantScan := int64(m)*joinScanRatio < live
		probeRange := rangeOf(f.words, f.keyNull, f.excluded)
		met := false
		for _, b := range scanned.pending {
			met = met || b.zone.meets(probeRange)
		}
		want := render(candidatesOK(mk(indexed), fresh, keys), probe)
		got := render(candidatesOK(mk(scanned), fresh, keys), probe)
		if fmt.Sprint(got) != fmt.Sprint(want) {
			t.Fatalf("trial %d (probe side %d, %d keys, %d pending rows): scan finds %v, index %v", trial, probe, m, live, got, want)
		}
		if wantScan {
			if len(scanned.pending) != pending {
				t.Fatalf("trial %d: a probe of %d keys against %d pending rows indexed them", trial, m, live)
			}
			// Scanned joinScanLimit times in all: indexed then, the
			// candidates the same every time.
			for s := 1; s < joinScanLimit+1; s++ {
				got := render(candidatesOK(mk(scanned), fresh, keys), probe)
				if fmt.Sprint(got) != fmt.Sprint(want) {
					t.Fatalf("trial %d probe %d: scan finds %v, index %v", trial, s+1, got, want)
				}
			}
			// Unless the probe's keys lie outside every pending batch's
			// key range: then none is scanned, and they stay pending.
			switch {
			case met && (len(scanned.pending) != 0 || scanned.index.len() != indexed.index.len()):
				t.Fatalf("trial %d: after %d scans %d batches pending, %d keys indexed (want %d)", trial, joinScanLimit, len(scanned.pending), scanned.index.len(), indexed.index.len())
			case !met && len(scanned.pending) != pending:
				t.Fatalf("trial %d: probes of keys in %v, outside every pending batch's range, indexed them", trial, probeRange)
			case !met:
				for _, b := range scanned.pending {
					if b.scans != 0 {
						t.Fatalf("trial %d: a batch of keys in %v counts %d scans by probes of keys in %v", trial, b.zone, b.scans, probeRange)
					}
				}
				passed++
				if err := scanned.indexPending(); err != nil {
					t.Fatal(err)
				}
			}
		} else if len(scanned.pending) != 0 {
			t.Fatalf("trial %d: a probe of %d keys against %d pending rows left them pending", trial, m, live)
		}
		if scanned.bytes != indexed.bytes || scanned.rows != indexed.rows {
			t.Fatalf("trial %d: indexed late, the side counts %d bytes %d rows; at once %d bytes %d rows", trial, scanned.bytes, scanned.rows, indexed.bytes, indexed.rows)
		}
		scanned.release()
		indexed.release()
	}
	if passed == 0 {
		t.Fatal("no probe passed its pending batches over")
	}
}

// TestJoinScanEvictUnindexed: evicting rows of a batch not indexed yet
// leaves the key index alone, and indexing it later indexes only its live
// rows.
func TestJoinScanEvictUnindexed(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	side := newJoinSideLive[uint64]()
	defer side.release()
	old := neverEvictBatch(mem, 1, []uint64{7, 8}, []bool{false, false}, []int64{0, 1})
	side.add(old)
	b := neverEvictBatch(mem, 2, []uint64{7, 8, 9, 9}, make([]bool, 4), []int64{0, 1, 2, 3})
	b.times = []int64{10, 20, 30, 40}
	side.addPending(b)
	side.evict(b, 25)
	if side.index.len() != 2 || side.index.get(7).live != 1 {
		t.Fatalf("evicting pending rows touched the index: %d keys", side.index.len())
	}
	side.indexPending()
	if kr := side.index.get(9); kr == nil || kr.live != 2 {
		t.Fatalf("key 9 after indexing: %+v", kr)
	}
	if kr := side.index.get(7); kr.live != 1 || len(kr.refs) != 1 {
		t.Fatalf("key 7 indexed an evicted row: %+v", kr)
	}
	if side.rows != 4 {
		t.Fatalf("live rows %d, want 4", side.rows)
	}
}
