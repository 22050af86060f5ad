package stateful

import (
	"fmt"
	"math/rand"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

var mergeTestSchema = arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64}}, nil)

// neverEvictBatch makes a batch of a side that never evicts: values vs,
// keys keys (keyNull where null), as the operator builds one.
func neverEvictBatch(mem memory.Allocator, id uint64, keys []uint64, keyNull []bool, vs []int64) *joinBatch[uint64] {
	b := array.NewInt64Builder(mem)
	b.AppendValues(vs, nil)
	col := b.NewArray()
	b.Release()
	rec := array.NewRecord(mergeTestSchema, []arrow.Array{col}, int64(len(vs)))
	col.Release()
	return &joinBatch[uint64]{id: id, rec: rec, end: int32(len(vs)), keys: keys, keyNull: keyNull}
}

// TestJoinSideMergeTail: a side that never evicts, fed batches of random
// sizes and keys (some null) and merged after each epoch as the operator
// does, keeps a key index that finds exactly the rows of each key with
// their values (checked against a model after every epoch), a byte count
// equal to its batches' and index's, an unchanged count of store
// entries, and O(log n) batches: fewer than mergeFanIn per level.
func TestJoinSideMergeTail(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewSource(7))
	side := newJoinSideLive[uint64]()
	defer side.release()
	model := map[uint64][]int64{}
	next := int64(0)
	merges := 0
	for epoch := 0; epoch < 300; epoch++ {
		n := rng.Intn(60)
		if rng.Intn(10) == 0 {
			n = rng.Intn(2000)
		}
		keys, keyNull, vs := make([]uint64, n), make([]bool, n), make([]int64, n)
		for i := range vs {
			keys[i], vs[i] = uint64(rng.Intn(40)), next
			next++
			keyNull[i] = rng.Intn(20) == 0
			if !keyNull[i] {
				model[keys[i]] = append(model[keys[i]], vs[i])
			}
		}
		nb := neverEvictBatch(mem, uint64(epoch)<<8, keys, keyNull, vs)
		side.add(nb)
		nb.rewrite = true
		side.mark(nb)
		entries := len(side.changed())
		if entries != 1 || side.entries != int64(epoch+1) {
			t.Fatalf("epoch %d: %d changes, side counts %d entries", epoch, entries, side.entries)
		}
		m, err := side.mergeTail(mem)
		if err != nil {
			t.Fatal(err)
		}
		merges += m
		if side.entries != int64(epoch+1) {
			t.Fatalf("epoch %d: merging changed the entry count to %d", epoch, side.entries)
		}
		if side.rows != next {
			t.Fatalf("epoch %d: %d live rows, want %d", epoch, side.rows, next)
		}
		levels := 1
		for n := epoch + 1; n >= mergeFanIn; n /= mergeFanIn {
			levels++
		}
		if limit := (mergeFanIn - 1) * levels; len(side.batches) > limit {
			t.Fatalf("epoch %d: %d batches after %d epochs (at most %d)", epoch, len(side.batches), epoch+1, limit)
		}
		for i, b := range side.batches {
			if b.slot != i {
				t.Fatalf("epoch %d: batch %d has slot %d", epoch, i, b.slot)
			}
		}
		var bytes int64
		for _, b := range side.batches {
			if b.bytes != b.size() {
				t.Fatalf("epoch %d: batch bytes %d, size %d", epoch, b.bytes, b.size())
			}
			bytes += b.bytes
		}
		side.index.each(func(_ uint64, s *joinKeySlot[uint64]) {
			bytes += joinKeyOverhead + int64(s.live)*joinRowBytes
		})
		if bytes != side.bytes {
			t.Fatalf("epoch %d: side counts %d bytes, its batches and index hold %d", epoch, side.bytes, bytes)
		}
		for k := uint64(0); k < 40; k++ {
			var got []int64
			if kr := side.index.get(k); kr != nil {
				for _, ref := range kr.refs {
					if ref.b.rec == nil {
						t.Fatalf("epoch %d key %d: ref to a released batch", epoch, k)
					}
					got = append(got, ref.b.rec.Column(0).(*array.Int64).Value(int(ref.row-ref.b.base)))
				}
			}
			want := model[k]
			if fmt.Sprint(got) != fmt.Sprint(want) {
				t.Fatalf("epoch %d key %d: index finds %v, model %v", epoch, k, got, want)
			}
		}
	}
	if merges == 0 {
		t.Fatal("no merge: the test does not cover merging")
	}
	t.Logf("%d merges, %d batches for %d rows", merges, len(side.batches), next)
}

// TestJoinSideMergeLeavesPending: the newest batches are merged only when
// mergeFanIn of them are of one level, none with a pending store write
// nor evicted rows.
func TestJoinSideMergeLeavesPending(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	side := newJoinSideLive[uint64]()
	defer side.release()
	var bs []*joinBatch[uint64]
	for j := 0; j < mergeFanIn; j++ {
		b := neverEvictBatch(mem, uint64(j), []uint64{1, uint64(100 + j)}, []bool{false, false}, []int64{int64(2 * j), int64(2*j + 1)})
		side.add(b)
		bs = append(bs, b)
		if j < mergeFanIn-1 {
			if m, err := side.mergeTail(mem); err != nil || m != 0 {
				t.Fatalf("merged %d batches: %d merges, %v", j+1, m, err)
			}
		}
	}
	last := bs[mergeFanIn-1]
	last.rewrite = true
	side.mark(last)
	if m, err := side.mergeTail(mem); err != nil || m != 0 {
		t.Fatalf("merged a batch with a pending write: %d merges, %v", m, err)
	}
	side.changed()
	bs[0].cursor = 1
	if m, err := side.mergeTail(mem); err != nil || m != 0 {
		t.Fatalf("merged a batch with evicted rows: %d merges, %v", m, err)
	}
	bs[0].cursor = 0
	if m, err := side.mergeTail(mem); err != nil || m != 1 || len(side.batches) != 1 || side.batches[0].level != 1 {
		t.Fatalf("%d merges, %v, %d batches: want one merge into one batch of level 1", m, err, len(side.batches))
	}
	if kr := side.index.get(1); len(kr.refs) != mergeFanIn || kr.refs[mergeFanIn-1].row != 2*(mergeFanIn-1) {
		t.Fatalf("key 1 refs after the merge: %+v", kr.refs)
	}
}

// BenchmarkJoinSideProbe: the probe of a never-evicting side that holds
// one small batch per past epoch (as a partition of Nexmark q20 after 320
// epochs) against the same rows merged: the candidate pairs of 50 new
// keys, then one Take of the stored rows per batch they hit.
//
//	go test -run XXX -bench JoinSideProbe ./arrowstream/internal/stateful/
func BenchmarkJoinSideProbe(b *testing.B) {
	for _, merged := range []bool{false, true} {
		b.Run(fmt.Sprintf("merged=%v", merged), func(b *testing.B) {
			mem := memory.NewGoAllocator()
			rng := rand.New(rand.NewSource(1))
			side := newJoinSideLive[uint64]()
			defer side.release()
			next := int64(0)
			for epoch := 0; epoch < 320; epoch++ {
				n := 25
				keys, vs := make([]uint64, n), make([]int64, n)
				for i := range vs {
					keys[i], vs[i] = uint64(rng.Intn(2000)), next
					next++
				}
				side.add(neverEvictBatch(mem, uint64(epoch), keys, make([]bool, n), vs))
				if merged {
					if _, err := side.mergeTail(mem); err != nil {
						b.Fatal(err)
					}
				}
			}
			empty := newJoinSideLive[uint64]()
			lp := &joinLivePart[uint64]{sides: [2]*joinSideLive[uint64]{empty, side}}
			fresh := [2]*sideRows{{keyNull: make([]bool, 50), excluded: make([]bool, 50), words: make([]uint64, 50)}, {}}
			for i := range fresh[0].words {
				fresh[0].words[i] = uint64(rng.Intn(2000))
			}
			keys := [2][]uint64{fresh[0].words, nil}
			for b.Loop() {
				for _, sg := range candidatesOK(lp, fresh, keys) {
					t, err := vector.TakeRecord(mem, sg.r.rec, sg.ri)
					if err != nil {
						b.Fatal(err)
					}
					t.Release()
				}
			}
			b.ReportMetric(float64(len(side.batches)), "batches")
		})
	}
}

// TestJoinSideMergeStopsAtFull: a side that never evicts, fed 1,000
// epochs of 10 rows with full batches at 100 rows, copies each row at
// most twice (level 1 of 80 rows, level 2 of 640, full) however many
// epochs it runs: no batch goes past level 2, the rows the merges copy
// stay under twice the rows added, and every batch but the newest levels'
// is full. Its key index still finds exactly each key's rows. Unbounded,
// the 512th epoch made a batch of level 3, copying its rows a third time
// (a cost per row that grew with the run).
func TestJoinSideMergeStopsAtFull(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	side := newJoinSideLive[uint64]()
	defer side.release()
	side.fullRows = 100
	model := map[uint64][]int64{}
	next, copied := int64(0), int64(0)
	for epoch := 0; epoch < 1000; epoch++ {
		keys, vs := make([]uint64, 10), make([]int64, 10)
		for i := range vs {
			keys[i], vs[i] = uint64(next%37), next
			model[keys[i]] = append(model[keys[i]], next)
			next++
		}
		nb := neverEvictBatch(mem, uint64(epoch)<<8, keys, make([]bool, 10), vs)
		if err := side.add(nb); err != nil {
			t.Fatal(err)
		}
		nb.rewrite = true
		side.mark(nb)
		side.changed()
		before := map[*joinBatch[uint64]]int32{}
		for _, b := range side.batches {
			before[b] = b.end
		}
		if _, err := side.mergeTail(mem); err != nil {
			t.Fatal(err)
		}
		for _, b := range side.batches {
			if b.end != before[b] {
				copied += int64(b.end) // a merged batch: all its rows copied
			}
		}
		for _, b := range side.batches {
			if b.level > 2 {
				t.Fatalf("epoch %d: a batch of level %d (%d rows): rows copied %d times, full at %d rows", epoch, b.level, b.end, b.level, side.fullRows)
			}
		}
	}
	if copied > 2*next {
		t.Errorf("merges copied %d rows for %d added: more than twice each", copied, next)
	}
	full := 0
	for _, b := range side.batches {
		if side.full(b) {
			full++
		}
	}
	if want := int(next) / 640; full != want {
		t.Errorf("%d full batches of %d, want %d (one per 640 rows)", full, len(side.batches), want)
	}
	for k := uint64(0); k < 37; k++ {
		var got []int64
		if kr := side.index.get(k); kr != nil {
			for _, ref := range kr.refs {
				got = append(got, ref.b.rec.Column(0).(*array.Int64).Value(int(ref.row-ref.b.base)))
			}
		}
		if fmt.Sprint(got) != fmt.Sprint(model[k]) {
			t.Fatalf("key %d: index finds %v, model %v", k, got, model[k])
		}
	}
	t.Logf("%d batches (%d full) for %d rows, %d rows copied", len(side.batches), full, next, copied)
}

// TestJoinSideCrowdedByBytes: a side that merges only when crowded (as a
// side rarely probed does, stateful_join_epoch.go) keeps large batches as
// they were made however many it holds, and still merges a run of small
// ones once it holds more than mergeMaxBatches of them.
func TestJoinSideCrowdedByBytes(t *testing.T) {
	for _, tc := range []struct {
		name       string
		rows       int
		wantMerged bool
	}{
		{"large", mergeBatchBytes/8 + 100, false}, // int64 rows: over mergeBatchBytes a batch
		{"small", 10, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			side := newJoinSideLive[uint64]()
			defer side.release()
			merged, next := 0, int64(0)
			const epochs = 3 * mergeMaxBatches
			for epoch := 0; epoch < epochs; epoch++ {
				if side.crowded() {
					m, err := side.mergeTail(mem)
					if err != nil {
						t.Fatal(err)
					}
					merged += m
				}
				keys, vs := make([]uint64, tc.rows), make([]int64, tc.rows)
				for i := range vs {
					keys[i], vs[i] = uint64(next%101), next
					next++
				}
				nb := neverEvictBatch(mem, uint64(epoch)<<8, keys, make([]bool, tc.rows), vs)
				if err := side.add(nb); err != nil {
					t.Fatal(err)
				}
			}
			if got := merged > 0; got != tc.wantMerged {
				t.Fatalf("%d epochs of %d rows (%d Arrow bytes held): %d merges, want merges %v", epochs, tc.rows, side.arrow, merged, tc.wantMerged)
			}
			if !tc.wantMerged && len(side.batches) != epochs {
				t.Fatalf("%d batches, want the %d added", len(side.batches), epochs)
			}
			if tc.wantMerged && len(side.batches) > mergeMaxBatches+mergeFanIn {
				t.Fatalf("%d batches of %d rows: unbounded", len(side.batches), tc.rows)
			}
			t.Logf("%d batches, %d merges, %d Arrow bytes", len(side.batches), merged, side.arrow)
		})
	}
}
