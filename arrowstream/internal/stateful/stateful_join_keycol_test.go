package stateful

import (
	"fmt"
	"math/rand"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// TestJoinBatchKeysInPlaceMatchCodec: a stored batch whose key is one
// integral column of its rows reads its keys from its record
// (joinBatch.keySpan); they are the row codec's words (the oracle: what
// the batch kept before, sign-extended values, 0 for a null) and the key
// columns' nulls, for every integral type (extremes, both signs), sliced
// records, views of an input record through a selection and batches of
// their own (a Take, the whole record), random spans, a compaction, and
// the scratch reused; the built batch's key range is its rows' words'. A float key and a computed key keep their slices.
func TestJoinBatchKeysInPlaceMatchCodec(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	types := []arrow.DataType{arrow.PrimitiveTypes.Int64, vector.Timestamp, arrow.PrimitiveTypes.Int32,
		arrow.FixedWidthTypes.Date32, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Float64}
	for _, dt := range types {
		for seed := int64(1); seed <= 12; seed++ {
			t.Run(fmt.Sprintf("%s/seed%d", dt, seed), func(t *testing.T) {
				rng := rand.New(rand.NewSource(seed))
				n := 1 + rng.Intn(2000)
				full := nullsOverValues(mem, rng, fixedKeyTestRecord(mem, rng, dt, n+7))
				defer full.Release()
				rec := full.NewSlice(int64(rng.Intn(7)), int64(n+7-rng.Intn(7)))
				defer rec.Release()
				n = int(rec.NumRows())
				codec, err := newValueCodec(mem, rec.Schema(), []int{0, 1})
				if err != nil {
					t.Fatal(err)
				}
				keys := []vector.Expr{vector.Col("k")}
				computed := seed == 11 && dt.ID() != arrow.INT64 // a cast to its own type is the column
				if computed {
					keys = []vector.Expr{vector.Cast(vector.Col("k"), vector.Int64)}
				}
				side := &joinSide{name: "bids", schema: rec.Schema(), codec: codec, keys: keys, evictCol: -1, timeCol: -1}
				side.keyCol = keyColumnOf(side, true)
				s := &statefulJoin{mem: mem, keep: mem, fixedKeys: true, nullSafe: []bool{false}, sides: [2]*joinSide{side, side}}
				defer s.Close()
				wantDerived := dt != arrow.PrimitiveTypes.Float64 && !computed
				if (side.keyCol == 0) != wantDerived {
					t.Fatalf("key column %d for a key %v of %s", side.keyCol, keys[0], dt)
				}

				// The oracle: the row codec's words and the column's nulls.
				enc, err := vector.NewKeyEncoder(mem, []arrow.DataType{dt})
				if err != nil {
					t.Fatal(err)
				}
				defer enc.Release()
				if err := enc.Encode([]arrow.Array{rec.Column(0)}); err != nil {
					t.Fatal(err)
				}
				words := enc.Fixed()
				nulls := make([]bool, n)
				for j := range nulls {
					nulls[j] = rec.Column(0).IsNull(j)
				}

				// The new rows: the whole record, or a selection of it
				// (a partition's rows), as a view of the input or not.
				r := &sideRows{rec: rec}
				var held atomic.Int64
				if rng.Intn(3) > 0 {
					for j := 0; j < n; j++ {
						if rng.Intn(3) > 0 {
							r.sel = append(r.sel, int32(j))
						}
					}
					if len(r.sel) == 0 {
						r.sel = []int32{int32(n - 1)}
					}
				}
				if rng.Intn(2) == 0 {
					r.in = newJoinInput(rec, &held)
				}
				m := r.count()
				r.keyNull = make([]bool, m)
				rowWords := make([]uint64, m)
				for j := range rowWords {
					rowWords[j], r.keyNull[j] = words[selRow(r.sel, j)], nulls[selRow(r.sel, j)]
				}
				var rows []int32
				for j := 0; j < m; j++ {
					if seed%4 == 0 || rng.Intn(4) > 0 {
						rows = append(rows, int32(j))
					}
				}
				if len(rows) == 0 {
					rows = []int32{0}
				}
				b, err := buildJoinBatch(s, 0, 1, r, rows, rowWords, nil)
				if err != nil {
					t.Fatal(err)
				}
				defer b.release()
				if b.derived != wantDerived || (b.keys == nil) != wantDerived {
					t.Fatalf("batch derived %v with %d key slices, want derived %v", b.derived, len(b.keys), wantDerived)
				}
				want := func(k int32) (uint64, bool) {
					j := rows[k]
					return rowWords[j], r.keyNull[j]
				}
				var kb []uint64
				var nb []bool
				check := func(what string, want func(int32) (uint64, bool)) {
					t.Helper()
					for round := 0; round < 6; round++ {
						lo := rng.Int31n(b.end - b.base)
						hi := lo + rng.Int31n(b.end-b.base-lo+1)
						if round == 0 {
							lo, hi = 0, b.end-b.base
						}
						gotK, gotN := b.keySpan(lo, hi, &kb, &nb)
						if len(gotK) != int(hi-lo) || len(gotN) != int(hi-lo) {
							t.Fatalf("%s: span [%d,%d) has %d keys and %d nulls", what, lo, hi, len(gotK), len(gotN))
						}
						for k := lo; k < hi; k++ {
							w, null := want(k)
							if gotN[k-lo] != null || gotK[k-lo] != w { // a null key's word is 0, as the codec's
								t.Fatalf("%s: row %d of span [%d,%d): key %d null %v, want %d null %v", what, k, lo, hi, gotK[k-lo], gotN[k-lo], w, null)
							}
						}
					}
				}
				check("built", want)
				// The batch's key range (stateful_join_zone.go) is that of
				// its rows' non-null words.
				var zone keyRange[uint64]
				for k := range rows {
					if w, null := want(int32(k)); !null {
						zone.widen(w)
					}
				}
				if b.zone != zone {
					t.Fatalf("built: key range %v, its rows' %v", b.zone, zone)
				}

				// A compaction: the rows from the cursor on, under their
				// numbers, in a record of their own.
				b.cursor = b.base + rng.Int31n(b.end-b.base)
				if b.in != nil {
					b.in.live.Add(-int64(b.cursor - b.base))
				}
				off := b.cursor - b.base
				live := &joinSideLive[uint64]{}
				if err := live.compact(mem, b); err != nil {
					t.Fatal(err)
				}
				if b.derived != wantDerived {
					t.Fatalf("compacted batch derived %v, want %v", b.derived, wantDerived)
				}
				check("compacted", func(k int32) (uint64, bool) { return want(k + off) })
				if wantDerived {
					b.materializeKeys()
					if b.derived || len(b.keys) != int(b.end-b.base) {
						t.Fatalf("materialized batch derived %v with %d keys of %d rows", b.derived, len(b.keys), b.end-b.base)
					}
					check("materialized", func(k int32) (uint64, bool) { return want(k + off) })
				}
			})
		}
	}
}

// nullsOverValues returns rec (released) with more of its key column's
// rows null, over their values (a builder writes 0 under a null: the key
// word of a null must be 0 whatever its slot holds).
func nullsOverValues(mem memory.Allocator, rng *rand.Rand, rec arrow.Record) arrow.Record {
	defer rec.Release()
	old := rec.Column(0).Data()
	n := old.Len()
	valid := memory.NewResizableBuffer(mem)
	valid.Resize(int(bitutil.BytesForBits(int64(n))))
	bits := valid.Bytes()
	nulls := 0
	for j := 0; j < n; j++ {
		if rec.Column(0).IsValid(j) && rng.Intn(7) > 0 {
			bitutil.SetBit(bits, j)
		} else {
			nulls++
		}
	}
	data := array.NewData(old.DataType(), n, []*memory.Buffer{valid, old.Buffers()[1]}, nil, nulls, old.Offset())
	valid.Release()
	col := array.MakeFromData(data)
	data.Release()
	defer col.Release()
	return array.NewRecord(rec.Schema(), []arrow.Array{col, rec.Column(1)}, int64(n))
}
