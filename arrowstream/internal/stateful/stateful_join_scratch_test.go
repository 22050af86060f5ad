package stateful

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// TestJoinSplitSideWarmAllocs: a warm join splits an epoch's rows (q4's
// shape: 10 K rows, 2 partitions, no key null nor excluded row) with the
// parts only: the counting sort's arrays and the parts' selections and
// keys are the join's scratch, the all-false flags are read in place and
// no hashes are gathered. It took 11 allocations, then 6.
func TestJoinSplitSideWarmAllocs(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewSource(3))
	s := &statefulJoin{mem: mem, keep: mem}
	r := splitTestRows(mem, rng, 10000, 2000)
	defer r.release()
	clear(r.keyNull)
	clear(r.excluded)
	split := func() {
		parts, err := s.splitSide(0, r, 2)
		if err != nil {
			t.Fatal(err)
		}
		for _, p := range parts {
			if p != nil {
				p.release()
			}
		}
	}
	split()
	// out, the input's joinInput and the two parts (the parts' sel and
	// words are the side's scratch: 6 allocations when they were not).
	if n := testing.AllocsPerRun(20, split); !raceEnabled && n > 4 {
		t.Errorf("warm split: %.0f allocations, want at most 4", n)
	}
}

// TestJoinGatherPairsScratch: the epoch's output pairs gathered through
// the join's reused scratch equal a Take of each pair's rows (a model
// record by record), over calls of growing and shrinking sizes; a warm
// gather allocates no row-sized index slices (it took 4 more: each
// side's sources and rows).
// warmGatherAllocs bounds a warm gather's allocations (measured: see below).
const warmGatherAllocs = 157

func TestJoinGatherPairsScratch(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewSource(11))
	lrecs := make([]arrow.Record, 3)
	rrecs := make([]arrow.Record, 4)
	for k := range lrecs {
		r := splitTestRows(mem, rng, 200+k*50, 40)
		lrecs[k] = r.rec
	}
	for k := range rrecs {
		r := splitTestRows(mem, rng, 300+k*30, 40)
		rrecs[k] = r.rec
	}
	defer releaseRecords(lrecs)
	defer releaseRecords(rrecs)
	fields := append(append([]arrow.Field(nil), lrecs[0].Schema().Fields()...), rrecs[0].Schema().Fields()...)
	for k := range fields {
		fields[k].Name += string(rune('a' + k))
	}
	schema := arrow.NewSchema(fields, nil)
	s := &statefulJoin{mem: mem, keep: mem}
	makePairs := func(groups, per int) []joinOutPairs {
		ps := make([]joinOutPairs, groups)
		for g := range ps {
			l, r := lrecs[rng.Intn(len(lrecs))], rrecs[rng.Intn(len(rrecs))]
			n := rng.Intn(per + 1)
			p := joinOutPairs{l: l, r: r, li: make([]int32, n), ri: make([]int32, n)}
			for k := 0; k < n; k++ {
				p.li[k], p.ri[k] = int32(rng.Intn(int(l.NumRows()))), int32(rng.Intn(int(r.NumRows())))
			}
			ps[g] = p
		}
		return ps
	}
	for _, size := range []struct{ groups, per int }{{5, 100}, {40, 400}, {1, 3}, {300, 500}, {2, 50}, {60, 20}} {
		ps := makePairs(size.groups, size.per)
		got, err := s.gatherPairs(ps, schema)
		if err != nil {
			t.Fatal(err)
		}
		// The model: each pair group taken on its own, concatenated.
		var want []arrow.Record
		for _, p := range ps {
			if len(p.li) == 0 {
				continue
			}
			lt, err := vector.TakeRecord(mem, p.l, p.li)
			if err != nil {
				t.Fatal(err)
			}
			rt, err := vector.TakeRecord(mem, p.r, p.ri)
			if err != nil {
				t.Fatal(err)
			}
			cols := append(append([]arrow.Array(nil), lt.Columns()...), rt.Columns()...)
			want = append(want, array.NewRecord(schema, cols, lt.NumRows()))
			lt.Release()
			rt.Release()
		}
		switch {
		case len(want) == 0:
			if got != nil {
				t.Fatalf("%+v: %d rows gathered from no pairs", size, got.NumRows())
			}
		default:
			w, err := concatRecords(mem, schema, want)
			if err != nil {
				t.Fatal(err)
			}
			if !array.RecordEqual(got, w) {
				t.Fatalf("%+v: gathered pairs differ from the model", size)
			}
			w.Release()
			got.Release()
		}
		releaseRecords(want)
	}
	// A warm gather of a q4-like epoch: the Go-heap allocations are the
	// columns', not the index slices'.
	ps := makePairs(4, 2500)
	gather := func() {
		rec, err := s.gatherPairs(ps, schema)
		if err != nil {
			t.Fatal(err)
		}
		rec.Release()
	}
	gather()
	base := testing.AllocsPerRun(10, gather)
	t.Logf("warm gather: %.0f allocations", base) // 161 before the scratch
	// The race detector's instrumentation allocates too (159 there).
	if !raceEnabled && base > warmGatherAllocs {
		t.Errorf("warm gather: %.0f allocations, want at most %d", base, warmGatherAllocs)
	}
}

// TestJoinSplitSidesOwnScratch: the parts of one side's split stay as
// they were through the other side's split (both sides' parts are read
// by the partitions' epochs), and a side's next split reuses its scratch.
func TestJoinSplitSidesOwnScratch(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewSource(7))
	s := &statefulJoin{mem: mem, keep: mem}
	render := func(parts []*sideRows) string {
		return fmt.Sprint(func() (out [][2]any) {
			for _, p := range parts {
				if p != nil {
					out = append(out, [2]any{slices.Clone(p.sel), slices.Clone(p.words)})
				}
			}
			return out
		}())
	}
	release := func(parts []*sideRows) {
		for _, p := range parts {
			if p != nil {
				p.release()
			}
		}
	}
	r0 := splitTestRows(mem, rng, 5000, 700)
	defer r0.release()
	r1 := splitTestRows(mem, rng, 6000, 900)
	defer r1.release()
	for round := range 3 {
		p0, err := s.splitSide(0, r0, 3)
		if err != nil {
			t.Fatal(err)
		}
		before := render(p0)
		p1, err := s.splitSide(1, r1, 3)
		if err != nil {
			t.Fatal(err)
		}
		if after := render(p0); after != before {
			t.Fatalf("round %d: the left side's parts changed by the right side's split", round)
		}
		if render(p1) == before {
			t.Fatalf("round %d: the sides' splits are equal", round)
		}
		release(p0)
		release(p1)
	}
}
