package vector_test

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

// sortBenchInput is 1M rows (16 batches of 64K): with strings, a string s
// of 5-20 bytes and a random bigint k; otherwise a random bigint k and a
// double v.
func sortBenchInput(mem memory.Allocator, strings bool) []arrow.Record {
	fields := []arrow.Field{
		{Name: "k", Type: vector.Int64, Nullable: true},
		{Name: "v", Type: vector.Float64, Nullable: true},
	}
	if strings {
		fields[1] = arrow.Field{Name: "s", Type: vector.String, Nullable: true}
	}
	schema := arrow.NewSchema(fields, nil)
	r := rand.New(rand.NewSource(1))
	var recs []arrow.Record
	for b := 0; b < 16; b++ {
		kb := array.NewInt64Builder(mem)
		vb := array.NewFloat64Builder(mem)
		sb := array.NewStringBuilder(mem)
		for i := 0; i < opsBatchRows; i++ {
			kb.Append(r.Int63() - r.Int63())
			if strings {
				sb.Append(fmt.Sprintf("key-%0*d", 1+r.Intn(16), r.Intn(1e9)))
			} else {
				vb.Append(r.Float64())
			}
		}
		cols := []arrow.Array{kb.NewArray(), vb.NewArray()}
		if strings {
			cols[1].Release()
			cols[1] = sb.NewArray()
		}
		recs = append(recs, array.NewRecord(schema, cols, opsBatchRows))
		for _, c := range cols {
			c.Release()
		}
		kb.Release()
		vb.Release()
		sb.Release()
	}
	return recs
}

// BenchmarkSort sorts 1M rows by one key (bigint and double: radix path,
// over (bigint, double) rows; string: prefix path, over (bigint, string)
// rows) and by two keys, and reports input rows/s, reading the input and
// producing the sorted output included.
func BenchmarkSort(b *testing.B) {
	for _, a := range opsAllocators() {
		b.Run(a.name, func(b *testing.B) { benchSort(b, a.mem) })
	}
}

func benchSort(b *testing.B, mem memory.Allocator) {
	nums := sortBenchInput(mem, false)
	strs := sortBenchInput(mem, true)
	defer func() {
		for _, r := range append(nums, strs...) {
			r.Release()
		}
	}()
	// Baseline in the same run: the standard library's sort of the same 1M
	// bigint keys alone (no payload, no stability, no nulls).
	b.Run("baseline=slices.Sort/key=int64", func(b *testing.B) {
		keys := make([]int64, 0, len(nums)*opsBatchRows)
		for _, r := range nums {
			keys = append(keys, r.Column(0).(*array.Int64).Int64Values()...)
		}
		work := make([]int64, len(keys))
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			copy(work, keys)
			slices.Sort(work)
		}
		b.ReportMetric(float64(len(keys))*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
	})
	for _, c := range []struct {
		name string
		recs []arrow.Record
		keys []vector.SortKey
	}{
		{"int64", nums, []vector.SortKey{vector.Asc(vector.Col("k"))}},
		{"float64-desc", nums, []vector.SortKey{vector.Desc(vector.Col("v"))}},
		{"string", strs, []vector.SortKey{vector.Asc(vector.Col("s"))}},
		{"string,int64", strs, []vector.SortKey{vector.Asc(vector.Col("s")), vector.Desc(vector.Col("k"))}},
	} {
		recs := c.recs
		b.Run("key="+c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				scan, err := vector.NewScan(recs[0].Schema(), recs...)
				if err != nil {
					b.Fatal(err)
				}
				s, err := vector.NewSort(mem, scan, c.keys)
				if err != nil {
					b.Fatal(err)
				}
				if n := opsDrain(b, s); n != int64(len(recs))*opsBatchRows {
					b.Fatalf("%d rows", n)
				}
				s.Close()
			}
			b.ReportMetric(float64(len(recs))*opsBatchRows*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
