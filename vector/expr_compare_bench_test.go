package vector_test

import (
	"context"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// eventRecords returns the YSB event_type column as a dictionary<int8,
// string> record and as a plain string record, benchRows rows each.
func eventRecords() (dict, plain arrow.Record) {
	mem := memory.NewGoAllocator()
	types := []string{"view", "click", "purchase"}
	// Write the indices directly: AppendString is slow (docs/performance.md,
	// "Machine and library facts").
	ib := array.NewInt8Builder(mem)
	for i := range benchRows {
		ib.Append(int8((i * 7) % len(types)))
	}
	idx := ib.NewArray()
	ib.Release()
	sb := array.NewStringBuilder(mem)
	sb.AppendValues(types, nil)
	values := sb.NewArray()
	sb.Release()
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: arrow.BinaryTypes.String}
	d := array.NewDictionaryArray(dt, idx, values)
	idx.Release()
	values.Release()
	dict = array.NewRecord(exprSchema("event_type", dt), []arrow.Array{d}, benchRows)
	p, err := vector.DecodeDictionary(mem, d)
	if err != nil {
		panic(err)
	}
	d.Release()
	plain = array.NewRecord(exprSchema("event_type", vector.String), []arrow.Array{p}, benchRows)
	p.Release()
	return dict, plain
}

// BenchmarkStringEqConst is the YSB filter event_type = 'view': on the
// dictionary column (one comparison per dictionary entry, then an index
// lookup), on the dictionary column decoded first (what a kernel without
// the specialisation would do), on a plain string column, and a hand loop
// over the plain column's buffers. "ratio" reports the decode path's and
// the plain path's time relative to the dictionary path.
func BenchmarkStringEqConst(b *testing.B) {
	dict, plain := eventRecords()
	defer dict.Release()
	defer plain.Release()
	e := vector.Eq(col("event_type"), lit("view"))
	ctx := context.Background()
	var dictNs, decodeNs, plainNs float64
	run := func(rec arrow.Record, decode bool, ns *float64) func(b *testing.B) {
		return func(b *testing.B) {
			mem := newExprPool()
			ev, err := e.Bind(plain.Schema(), mem)
			if !decode {
				ev, err = e.Bind(rec.Schema(), mem)
			}
			if err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for range b.N {
				in := rec
				if decode {
					p, err := vector.DecodeDictionary(mem, rec.Column(0))
					if err != nil {
						b.Fatal(err)
					}
					in = array.NewRecord(plain.Schema(), []arrow.Array{p}, rec.NumRows())
					p.Release()
				}
				arr, err := ev.Eval(ctx, in)
				if err != nil {
					b.Fatal(err)
				}
				arr.Release()
				if decode {
					in.Release()
				}
			}
			reportRows(b, rec.NumRows())
			*ns = float64(b.Elapsed().Nanoseconds()) / float64(b.N)
		}
	}
	b.Run("dict", run(dict, false, &dictNs))
	b.Run("dict-decoded", run(dict, true, &decodeNs))
	b.Run("plain", run(plain, false, &plainNs))
	b.Run("plain-hand", func(b *testing.B) {
		s := plain.Column(0).(*array.String)
		offs, data := s.ValueOffsets(), s.ValueBytes()
		out := make([]uint64, benchRows/64)
		for range b.N {
			clear(out)
			for i := range benchRows {
				if string(data[offs[i]:offs[i+1]]) == "view" {
					out[i>>6] |= 1 << (uint(i) & 63)
				}
			}
		}
		reportRows(b, benchRows)
	})
	b.Run("ratio", func(b *testing.B) {
		if dictNs > 0 {
			b.ReportMetric(decodeNs/dictNs, "decoded/dict")
			b.ReportMetric(plainNs/dictNs, "plain/dict")
		}
		b.ReportMetric(0, "ns/op")
	})
}
