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

// TestJoinSplitSideMatchesRows: each partition's part holds exactly the
// rows of its partition, in input order, with their keys, hashes and
// flags; the parts' sizes add up to the rows' bytes; one partition takes
// the input as is; nothing leaks.
func TestJoinSplitSideMatchesRows(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewSource(7))
	for _, tc := range []struct{ rows, keys, parts int }{
		{0, 10, 8}, {1, 10, 8}, {500, 1000, 1}, {500, 1000, 7}, {2000, 3, 200}, {3000, 100000, 200}, {64, 1, 16},
	} {
		t.Run(fmt.Sprintf("rows%d-keys%d-parts%d", tc.rows, tc.keys, tc.parts), func(t *testing.T) {
			s := &statefulJoin{mem: mem, keep: mem}
			r := splitTestRows(mem, rng, tc.rows, tc.keys)
			defer r.release()
			parts, err := s.splitSide(r, tc.parts)
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
			var bytes int64
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
				if int(part.rec.NumRows()) != len(want) || len(part.words) != len(want) || len(part.keyNull) != len(want) || len(part.hashes) != len(want) || len(part.excluded) != len(want) {
					t.Fatalf("partition %d: %d rows (%d keys), want %d", p, part.rec.NumRows(), len(part.words), len(want))
				}
				wantRec, err := vector.TakeRecord(mem, r.rec, want)
				if err != nil {
					t.Fatal(err)
				}
				if !array.RecordEqual(part.rec, wantRec) {
					t.Errorf("partition %d: rows differ:\n got %v\nwant %v", p, part.rec, wantRec)
				}
				wantRec.Release()
				for k, j := range want {
					if part.words[k] != r.words[j] || part.keyNull[k] != r.keyNull[j] || part.hashes[k] != r.hashes[j] || part.excluded[k] != r.excluded[j] {
						t.Fatalf("partition %d row %d: key data of another row", p, k)
					}
				}
				if part.sliced != (len(want) < tc.rows) {
					t.Errorf("partition %d: sliced %v with %d of %d rows", p, part.sliced, len(want), tc.rows)
				}
				bytes += vector.SlicedRecordBytes(part.rec)
				seen += len(want)
			}
			if seen != tc.rows {
				t.Fatalf("parts hold %d rows, want %d", seen, tc.rows)
			}
			// Each part counts its own rows: together about the whole
			// (validity bitmaps and offsets rounded per part; a gathered
			// column without nulls has no bitmap).
			if whole := vector.SlicedRecordBytes(r.rec); tc.rows > 0 && (bytes < whole-3*int64(tc.rows+7)/8 || bytes > whole+int64(tc.parts)*3*8) {
				t.Errorf("parts count %d bytes, the rows are %d", bytes, whole)
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
// bid-like side over 200 state partitions, as one gather into partition
// order sliced per partition (split), against one Take per partition
// (perPartitionTake, the former way), in the same run. ns/row is process
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
			out, err := s.splitSide(r, parts)
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
