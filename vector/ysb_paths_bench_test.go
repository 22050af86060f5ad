package vector_test

import (
	"context"
	"fmt"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// The hot paths of a YSB-shaped query (join a dictionary-encoded key to a
// small table, group by a dictionary column and a window), each with its
// dictionary shortcut and, for comparison in the same run, the general
// path on the same values decoded to plain strings.

const ysbRows = 64 << 10

func ysbKeys(mem memory.Allocator, dictLen int) (dict arrow.Array, idx []int16) {
	vals := make([]any, dictLen)
	for i := range vals {
		vals[i] = fmt.Sprintf("%08x-0000-4000-8000-%012x", i*7919, i)
	}
	dict = stringArr(mem, vals...)
	idx = make([]int16, ysbRows)
	x := uint32(1)
	for i := range idx {
		x = x*1664525 + 1013904223
		idx[i] = int16((x >> 8) % uint32(dictLen))
	}
	return dict, idx
}

func decodeColumn(b *testing.B, mem memory.Allocator, a arrow.Array) arrow.Array {
	out, err := vector.DecodeDictionary(mem, a)
	if err != nil {
		b.Fatal(err)
	}
	return out
}

// BenchmarkJoinDictionaryProbe joins 64K rows whose key is a dictionary of
// 1000 ids to a 1000-row table: "dict" probes once per entry, "plain"
// hashes every row's string.
func BenchmarkJoinDictionaryProbe(b *testing.B) {
	mem := memory.NewGoAllocator()
	dict, idx := ysbKeys(mem, 1000)
	defer dict.Release()
	right := func() arrow.Record {
		n := int64Arr(mem, make([]int64, dict.Len())...)
		defer n.Release()
		return array.NewRecord(joinSchema(field("rk", vector.String), field("rv", vector.Int64)), []arrow.Array{dict, n}, int64(dict.Len()))
	}()
	defer right.Release()
	dc := dictColumn(mem, dict, idx)
	defer dc.Release()
	for _, c := range []struct {
		name string
		col  arrow.Array
	}{{"dict", dc}, {"plain", decodeColumn(b, mem, dc)}} {
		b.Run(c.name, func(b *testing.B) {
			ls := joinSchema(field("k", c.col.DataType()))
			rec := array.NewRecord(ls, []arrow.Array{c.col}, ysbRows)
			defer rec.Release()
			for b.Loop() {
				l, _ := vector.NewScan(ls, rec)
				r, _ := vector.NewScan(right.Schema(), right)
				j, err := vector.NewHashJoin(mem, l, r, vector.JoinSpec{LeftKeys: cols("k"), RightKeys: cols("rk")})
				if err != nil {
					b.Fatal(err)
				}
				out, err := vector.Drain(context.Background(), j)
				if err != nil {
					b.Fatal(err)
				}
				for _, o := range out {
					o.Release()
				}
				j.Close()
			}
			b.ReportMetric(float64(ysbRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}

// BenchmarkAggregateDictWindow groups 64K rows by (dictionary of 100
// campaign ids, 10 s window) with count(*): "dict" takes the word-tuple
// shortcut, "plain" encodes every row's key bytes.
func BenchmarkAggregateDictWindow(b *testing.B) {
	mem := memory.NewGoAllocator()
	dict, idx := ysbKeys(mem, 100)
	defer dict.Release()
	starts := make([]int64, ysbRows)
	for i := range starts {
		starts[i] = int64(i/30_000) * 10_000_000
	}
	wb := array.NewStructBuilder(mem, vector.WindowType)
	defer wb.Release()
	for _, s := range starts {
		wb.Append(true)
		wb.FieldBuilder(0).(*array.TimestampBuilder).Append(arrow.Timestamp(s))
		wb.FieldBuilder(1).(*array.TimestampBuilder).Append(arrow.Timestamp(s + 10_000_000))
	}
	w := wb.NewArray()
	defer w.Release()
	dc := dictColumn(mem, dict, idx)
	defer dc.Release()
	for _, c := range []struct {
		name string
		col  arrow.Array
	}{{"dict", dc}, {"plain", decodeColumn(b, mem, dc)}} {
		b.Run(c.name, func(b *testing.B) {
			s := arrow.NewSchema([]arrow.Field{{Name: "c", Type: c.col.DataType()}, {Name: "w", Type: vector.WindowType}}, nil)
			rec := array.NewRecord(s, []arrow.Array{c.col, w}, ysbRows)
			defer rec.Release()
			for b.Loop() {
				scan, _ := vector.NewScan(s, rec, rec, rec, rec)
				agg, err := vector.NewHashAggregate(mem, scan, vector.AggregateSpec{
					GroupBy:    []vector.NamedExpr{vector.As(vector.Col("c"), "c"), vector.As(vector.Col("w"), "w")},
					Aggregates: []vector.AggregateCall{call(vector.AggCountStar, "n")},
				})
				if err != nil {
					b.Fatal(err)
				}
				out, err := vector.Drain(context.Background(), agg)
				if err != nil {
					b.Fatal(err)
				}
				for _, o := range out {
					o.Release()
				}
				agg.Close()
			}
			b.ReportMetric(4*float64(ysbRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
