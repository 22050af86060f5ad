package vector_test

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// The acceptance benchmark: SUM(float64), COUNT(*) GROUP BY int64
// over 10M rows in 64K-row batches, keys shuffled, at 1e3, 1e5 and 1e6
// distinct keys; beside it, in the same run, the same aggregation with a Go
// map, so that the ratio shows. Run the figures with -cpu 1:
//
//	go test -run '^$' -bench 'BenchmarkHashAggregate' -cpu 1 -benchtime 5x ./vector/

const (
	benchAggRows  = 10_000_000
	benchAggBatch = 64 << 10
)

var benchAggSchema = arrow.NewSchema([]arrow.Field{
	{Name: "k", Type: vector.Int64},
	{Name: "v", Type: vector.Float64},
}, nil)

// benchAggData returns rows key/value pairs with nKeys distinct keys, each
// appearing rows/nKeys times (±1), in a shuffled order; keys are spread over
// the int64 range so that nothing depends on them being small.
func benchAggData(rows, nKeys int, seed uint64) ([]int64, []float64) {
	r := rand.New(rand.NewPCG(seed, 0x5eed))
	ids := make([]int64, nKeys)
	for i := range ids {
		ids[i] = int64(r.Uint64())
	}
	keys := make([]int64, rows)
	vals := make([]float64, rows)
	for i := range keys {
		keys[i] = ids[i%nKeys]
		vals[i] = float64(r.IntN(100_000)) / 100
	}
	r.Shuffle(rows, func(i, j int) { keys[i], keys[j] = keys[j], keys[i] })
	return keys, vals
}

func benchAggRecords(keys []int64, vals []float64) []arrow.Record {
	var recs []arrow.Record
	mem := memory.NewGoAllocator()
	for lo := 0; lo < len(keys); lo += benchAggBatch {
		hi := min(lo+benchAggBatch, len(keys))
		kb := array.NewInt64Builder(mem)
		kb.AppendValues(keys[lo:hi], nil)
		vb := array.NewFloat64Builder(mem)
		vb.AppendValues(vals[lo:hi], nil)
		k, v := kb.NewArray(), vb.NewArray()
		recs = append(recs, array.NewRecord(benchAggSchema, []arrow.Array{k, v}, int64(hi-lo)))
		k.Release()
		v.Release()
		kb.Release()
		vb.Release()
	}
	return recs
}

type benchGroup struct {
	sum float64
	cnt int64
}

// goMapAggregate is the baseline: the same aggregation over the same
// batches with a Go map to per-group accumulators.
func goMapAggregate(recs []arrow.Record) map[int64]*benchGroup {
	m := make(map[int64]*benchGroup)
	for _, rec := range recs {
		ks := rec.Column(0).(*array.Int64).Int64Values()
		vs := rec.Column(1).(*array.Float64).Float64Values()
		for i, k := range ks {
			g := m[k]
			if g == nil {
				g = &benchGroup{}
				m[k] = g
			}
			g.sum += vs[i]
			g.cnt++
		}
	}
	return m
}

var benchAggSpec = vector.AggregateSpec{
	GroupBy: []vector.NamedExpr{vector.As(vector.Col("k"), "k")},
	Aggregates: []vector.AggregateCall{
		{Func: vector.AggSum, Args: []vector.Expr{vector.Col("v")}, Name: "s"},
		{Func: vector.AggCountStar, Name: "c"},
	},
}

// runHashAggregate runs the operator over recs and returns the number of
// groups, calling check for every output record when not nil.
func runHashAggregate(tb testing.TB, mem memory.Allocator, recs []arrow.Record, check func(arrow.Record)) int {
	scan, err := vector.NewScan(benchAggSchema, recs...)
	if err != nil {
		tb.Fatal(err)
	}
	op, err := vector.NewHashAggregate(mem, scan, benchAggSpec)
	if err != nil {
		tb.Fatal(err)
	}
	defer op.Close()
	groups := 0
	ctx := context.Background()
	for {
		rec, err := op.Next(ctx)
		if err != nil {
			break
		}
		groups += int(rec.NumRows())
		if check != nil {
			check(rec)
		}
		rec.Release()
	}
	return groups
}

// checkAgainstMap verifies the operator's answer against the Go map's.
func checkAgainstMap(tb testing.TB, recs []arrow.Record) {
	want := goMapAggregate(recs)
	seen := 0
	runHashAggregate(tb, memory.NewGoAllocator(), recs, func(rec arrow.Record) {
		ks := rec.Column(0).(*array.Int64).Int64Values()
		ss := rec.Column(1).(*array.Float64).Float64Values()
		cs := rec.Column(2).(*array.Int64).Int64Values()
		for i, k := range ks {
			w := want[k]
			if w == nil || w.cnt != cs[i] || math.Abs(w.sum-ss[i]) > 1e-9*math.Abs(w.sum) {
				tb.Fatalf("key %d: got sum %v count %d, want %+v", k, ss[i], cs[i], w)
			}
			seen++
		}
	})
	if seen != len(want) {
		tb.Fatalf("got %d groups, want %d", seen, len(want))
	}
}

func BenchmarkHashAggregate(b *testing.B) {
	for _, nKeys := range []int{1_000, 100_000, 1_000_000} {
		keys, vals := benchAggData(benchAggRows, nKeys, uint64(nKeys))
		recs := benchAggRecords(keys, vals)
		checkAgainstMap(b, recs)
		b.Run(fmt.Sprintf("keys=%d/impl=hashagg", nKeys), func(b *testing.B) {
			mem := memory.NewGoAllocator()
			for i := 0; i < b.N; i++ {
				if g := runHashAggregate(b, mem, recs, nil); g != nKeys {
					b.Fatalf("%d groups, want %d", g, nKeys)
				}
			}
			b.ReportMetric(float64(benchAggRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
		b.Run(fmt.Sprintf("keys=%d/impl=gomap", nKeys), func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				if m := goMapAggregate(recs); len(m) != nKeys {
					b.Fatalf("%d groups, want %d", len(m), nKeys)
				}
			}
			b.ReportMetric(float64(benchAggRows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
		for _, r := range recs {
			r.Release()
		}
	}
}

// BenchmarkHashAggregateKeyPaths measures the other key paths (the
// KeyEncoder's byte keys, 32-bit keys) on SUM(v), COUNT(*) over 2M rows
// with 10K distinct keys, for comparison with the bigint path above.
func BenchmarkHashAggregateKeyPaths(b *testing.B) {
	const rows, nKeys = 2_000_000, 10_000
	keys, vals := benchAggData(rows, nKeys, 3)
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: vector.String}
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: vector.Int64}, {Name: "i32", Type: vector.Int32}, {Name: "s", Type: vector.String}, {Name: "v", Type: vector.Float64},
		{Name: "ds", Type: dt},
	}, nil)
	mem := memory.NewGoAllocator()
	// One dictionary shared by every batch, as a streaming source keeps it.
	entry := map[int64]int32{}
	db := array.NewStringBuilder(mem)
	for _, k := range keys {
		if _, ok := entry[k]; !ok {
			entry[k] = int32(len(entry))
			db.Append(fmt.Sprintf("key-%d", k))
		}
	}
	dict := db.NewArray()
	db.Release()
	defer dict.Release()
	var recs []arrow.Record
	for lo := 0; lo < rows; lo += benchAggBatch {
		hi := min(lo+benchAggBatch, rows)
		bld := array.NewRecordBuilder(mem, arrow.NewSchema(schema.Fields()[:4], nil))
		ib := array.NewInt32Builder(mem)
		for i := lo; i < hi; i++ {
			bld.Field(0).(*array.Int64Builder).Append(keys[i])
			bld.Field(1).(*array.Int32Builder).Append(int32(keys[i]))
			bld.Field(2).(*array.StringBuilder).Append(fmt.Sprintf("key-%d", keys[i]))
			ib.Append(entry[keys[i]])
		}
		bld.Field(3).(*array.Float64Builder).AppendValues(vals[lo:hi], nil)
		rec := bld.NewRecord()
		ix := ib.NewArray()
		ds := array.NewDictionaryArray(dt, ix, dict)
		cols := append(rec.Columns()[:4:4], ds)
		recs = append(recs, array.NewRecord(schema, cols, int64(hi-lo)))
		rec.Release()
		ix.Release()
		ds.Release()
		ib.Release()
		bld.Release()
	}
	defer releaseRecords(recs)
	for _, c := range []struct {
		name string
		keys []string
	}{{"int32", []string{"i32"}}, {"string", []string{"s"}}, {"dictionary", []string{"ds"}}, {"bigint+string", []string{"i", "s"}}} {
		spec := vector.AggregateSpec{Aggregates: benchAggSpec.Aggregates}
		for _, k := range c.keys {
			spec.GroupBy = append(spec.GroupBy, vector.As(vector.Col(k), k))
		}
		b.Run(c.name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				scan, _ := vector.NewScan(schema, recs...)
				op, err := vector.NewHashAggregate(mem, scan, spec)
				if err != nil {
					b.Fatal(err)
				}
				out, err := vector.Drain(context.Background(), op)
				if err != nil {
					b.Fatal(err)
				}
				groups := 0
				for _, r := range out {
					groups += int(r.NumRows())
				}
				releaseRecords(out)
				op.Close()
				if groups != nKeys {
					b.Fatalf("%d groups, want %d", groups, nKeys)
				}
			}
			b.ReportMetric(float64(rows)*float64(b.N)/b.Elapsed().Seconds(), "rows/s")
		})
	}
}
