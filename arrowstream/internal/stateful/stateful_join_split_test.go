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

// splitTestRows builds n rows of a bid-like side (int64 key and values, a
// nullable string) with their keys, hashes and flags.
func splitTestRows(mem memory.Allocator, rng *rand.Rand, n, keys int) *sideRows {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "auction", Type: arrow.PrimitiveTypes.Int64},
		{Name: "price", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "extra", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	r := &sideRows{words: make([]uint64, n), keyNull: make([]bool, n), hashes: make([]uint64, n), excluded: make([]bool, n)}
	for j := 0; j < n; j++ {
		k := int64(rng.Intn(keys))
		b.Field(0).(*array.Int64Builder).Append(k)
		if rng.Intn(7) == 0 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.Int64Builder).Append(rng.Int63n(1e6))
		}
		if rng.Intn(5) == 0 {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("extra-%d-%0*d", j, rng.Intn(40), 0))
		}
		r.words[j] = uint64(k)
		r.hashes[j] = uint64(k) * 0x9E3779B97F4A7C15
		r.keyNull[j] = rng.Intn(50) == 0
		r.excluded[j] = rng.Intn(9) == 0
	}
	r.rec = b.NewRecord()
	return r
}

// TestJoinSplitSideMatchesRows: each partition's part selects exactly the
// rows of its partition, in input order, with their keys and
// flags; every part is a view of the input record itself (no copy), all
// sharing one joinInput; one partition takes the input as is (no
// selection); nothing leaks.
func TestJoinSplitSideMatchesRows(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewSource(7))
	// One join for every case: each split reuses the scratch the one
	// before left (larger, smaller, other partition counts).
	s := &statefulJoin{mem: mem, keep: mem}
	for _, tc := range []struct {
		rows, keys, parts int
		flags             string // "random", "none" (no flag set), "unstored"
	}{
		{0, 10, 8, "random"}, {1, 10, 8, "random"}, {500, 1000, 1, "random"}, {500, 1000, 7, "random"},
		{2000, 3, 200, "random"}, {3000, 100000, 200, "random"}, {64, 1, 16, "random"},
		{3000, 1000, 2, "none"}, {700, 1000, 7, "none"}, {100000, 5000, 3, "unstored"}, {900, 50, 5, "unstored"},
		{2500, 1000, 2, "none"},
	} {
		t.Run(fmt.Sprintf("rows%d-keys%d-parts%d-%s", tc.rows, tc.keys, tc.parts, tc.flags), func(t *testing.T) {
			r := splitTestRows(mem, rng, tc.rows, tc.keys)
			defer r.release()
			switch tc.flags {
			case "none":
				clear(r.keyNull)
				clear(r.excluded)
			case "unstored":
				r.unstored = make([]bool, tc.rows)
				for j := range r.unstored {
					r.unstored[j] = rng.Intn(3) == 0
				}
			}
			parts, err := s.splitSide(0, r, tc.parts)
			if err != nil {
				t.Fatal(err)
			}
			defer func() {
				for _, p := range parts {
					if p != nil {
						p.release()
					}
				}
			}()
			if len(parts) != tc.parts {
				t.Fatalf("%d parts, want %d", len(parts), tc.parts)
			}
			var in *joinInput
			seen := 0
			for p, part := range parts {
				// The brute-force model: the input's rows of partition p.
				var want []int32
				for j, h := range r.hashes {
					if s.state.scheme.partition(h, tc.parts) == p {
						want = append(want, int32(j))
					}
				}
				if part == nil {
					if len(want) > 0 {
						t.Fatalf("partition %d: no part for %d rows", p, len(want))
					}
					continue
				}
				if part.rec != r.rec {
					t.Fatalf("partition %d: a record other than the input's (a copy)", p)
				}
				if in == nil {
					in = part.in
				}
				if part.in == nil || part.in != in || part.in.rec != r.rec {
					t.Fatalf("partition %d: not a view of the shared input", p)
				}
				if part.count() != len(want) || len(part.words) != len(want) || len(part.keyNull) != len(want) || len(part.excluded) != len(want) || (r.unstored != nil && len(part.unstored) != len(want)) {
					t.Fatalf("partition %d: %d rows (%d keys), want %d", p, part.count(), len(part.words), len(want))
				}
				wantRec, err := vector.TakeRecord(mem, r.rec, want)
				if err != nil {
					t.Fatal(err)
				}
				got, err := gatherSel(mem, part.rec, part.sel)
				if err != nil {
					t.Fatal(err)
				}
				if !array.RecordEqual(got, wantRec) {
					t.Errorf("partition %d: rows differ:\n got %v\nwant %v", p, got, wantRec)
				}
				got.Release()
				wantRec.Release()
				for k, j := range want {
					if part.words[k] != r.words[j] || part.keyNull[k] != r.keyNull[j] || part.excluded[k] != r.excluded[j] {
						t.Fatalf("partition %d row %d: key data of another row", p, k)
					}
					if r.unstored != nil && part.unstored[k] != r.unstored[j] {
						t.Fatalf("partition %d row %d: unstored flag of another row", p, k)
					}
				}
				if (part.sel != nil) != (len(want) < tc.rows) {
					t.Errorf("partition %d: selection %v with %d of %d rows", p, part.sel != nil, len(want), tc.rows)
				}
				seen += len(want)
			}
			if seen != tc.rows {
				t.Fatalf("parts hold %d rows, want %d", seen, tc.rows)
			}
			// No view holds the input yet: nothing counted as held.
			if in != nil && (in.bytes != heldRecordBytes(r.rec) || in.holders.Load() != 0 || s.viewHeld.Load() != 0) {
				t.Errorf("input of %d bytes, %d holders, %d held; want %d, 0, 0", in.bytes, in.holders.Load(), s.viewHeld.Load(), heldRecordBytes(r.rec))
			}
		})
	}
}

// TestSlicedRecordBytes: a slice counts its rows' bytes, not its
// buffers', and the slices of a record add up to it.
func TestSlicedRecordBytes(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	b := array.NewStringBuilder(mem)
	defer b.Release()
	for i := 0; i < 100; i++ {
		b.Append(fmt.Sprintf("%0*d", i, 0)) // row i has i bytes (row 0 one)
	}
	a := b.NewArray()
	defer a.Release()
	rec := array.NewRecord(arrow.NewSchema([]arrow.Field{{Name: "s", Type: a.DataType()}}, nil), []arrow.Array{a}, 100)
	defer rec.Release()
	s := rec.NewSlice(10, 20)
	defer s.Release()
	// Rows 10..19: their validity bits, 145 bytes of values and 11
	// offsets.
	if got, want := vector.SlicedRecordBytes(s), int64(2+145+4*11); got != want {
		t.Errorf("slice of rows 10..19: %d bytes, want %d", got, want)
	}
	if got, want := vector.SlicedRecordBytes(rec), int64(13+4951+4*101); got != want {
		t.Errorf("whole: %d bytes, want %d", got, want)
	}
}

// BenchmarkJoinSplitSide: splitting an epoch's 10,000 new rows of a
// bid-like side over 200 state partitions, as a selection of the input per
// partition (split), against one Take per partition (perPartitionTake, an
// earlier way), in the same run. ns/row is process
// CPU per row (getrusage).
//
//	go test -run XXX -bench JoinSplitSide ./arrowstream/internal/stateful/
func BenchmarkJoinSplitSide(b *testing.B) {
	const rows, parts = 10_000, 200
	mem := memory.NewGoAllocator()
	r := splitTestRows(mem, rand.New(rand.NewSource(1)), rows, 50_000)
	defer r.release()
	s := &statefulJoin{mem: mem, keep: mem}
	b.Run("split", func(b *testing.B) {
		cpu0 := processCPU()
		for b.Loop() {
			out, err := s.splitSide(0, r, parts)
			if err != nil {
				b.Fatal(err)
			}
			for _, p := range out {
				if p != nil {
					p.release()
				}
			}
		}
		b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N*rows), "cpu-ns/row")
	})
	b.Run("perPartitionTake", func(b *testing.B) {
		cpu0 := processCPU()
		for b.Loop() {
			idx := make([][]int32, parts)
			for j, h := range r.hashes {
				p := s.state.scheme.partition(h, parts)
				idx[p] = append(idx[p], int32(j))
			}
			for _, rowsOf := range idx {
				if len(rowsOf) == 0 {
					continue
				}
				rec, err := vector.TakeRecord(mem, r.rec, rowsOf)
				if err != nil {
					b.Fatal(err)
				}
				words, keyNull, hashes, excluded := make([]uint64, len(rowsOf)), make([]bool, len(rowsOf)), make([]uint64, len(rowsOf)), make([]bool, len(rowsOf))
				for k, j := range rowsOf {
					words[k], keyNull[k], hashes[k], excluded[k] = r.words[j], r.keyNull[j], r.hashes[j], r.excluded[j]
				}
				rec.Release()
			}
		}
		b.ReportMetric(float64(processCPU()-cpu0)/float64(b.N*rows), "cpu-ns/row")
	})
}
