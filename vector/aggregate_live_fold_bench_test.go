package vector

import (
	"context"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// BenchmarkWindowRawFold folds epochs of 64K rows keyed by (window
// struct, bigint key) — 10K keys, a new 10 s window every epoch, an
// eighth of the rows in the window before — into a live count(*)
// aggregation through LiveRaw.Update, as a windowed streaming
// aggregation does: after every epoch the groups of the window two back
// are deleted and the aggregation compacted when it should be. It
// measures the whole fold (probe, row counts, accumulators), in CPU ns
// per row. Compare before/after across commits in one run:
//
//	go test -run '^$' -bench 'WindowRawFold' -benchtime 20x ./vector/
func BenchmarkWindowRawFold(b *testing.B) {
	ctx := context.Background()
	mem := memory.NewGoAllocator()
	const n, keys, epochs = 64 << 10, 10_000, 16
	schema := arrow.NewSchema([]arrow.Field{{Name: "w", Type: windowKeyType}, {Name: "k", Type: arrow.PrimitiveTypes.Int64}}, nil)
	recs := make([]arrow.Record, epochs)
	for e := range epochs {
		sb := array.NewStructBuilder(mem, windowKeyType)
		st, en := sb.FieldBuilder(0).(*array.TimestampBuilder), sb.FieldBuilder(1).(*array.TimestampBuilder)
		kb := array.NewInt64Builder(mem)
		x := uint64(e + 1)
		for i := range n {
			w := int64(e)
			if i%8 == 0 && e > 0 {
				w--
			}
			s := arrow.Timestamp(w * 10_000_000)
			sb.Append(true)
			st.Append(s)
			en.Append(s + 10_000_000)
			x = x*6364136223846793005 + 1442695040888963407
			kb.Append(int64(x>>33) % keys)
		}
		w, k := sb.NewArray(), kb.NewArray()
		recs[e] = array.NewRecord(schema, []arrow.Array{w, k}, n)
		w.Release()
		k.Release()
		sb.Release()
		kb.Release()
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	groupBy := []NamedExpr{As(Col("w"), "w"), As(Col("k"), "k")}
	spec := AggregateSpec{GroupBy: groupBy, Aggregates: []AggregateCall{{Func: AggCountStar, Name: "n"}}}
	partial, err := PartialSchema(schema, spec)
	if err != nil {
		b.Fatal(err)
	}
	cpu0 := cpuNanos()
	for b.Loop() {
		l, err := NewLiveAggregate(mem, partial, 2, spec.Aggregates)
		if err != nil {
			b.Fatal(err)
		}
		raw, ok, err := l.Raw(schema, groupBy)
		if err != nil || !ok {
			b.Fatal(ok, err)
		}
		for e, rec := range recs {
			kc, err := raw.Keys(ctx, rec)
			if err != nil {
				b.Fatal(err)
			}
			if _, err := raw.Update(ctx, rec, kc); err != nil {
				b.Fatal(err)
			}
			releaseArrays(kc)
			if e < 2 {
				continue
			}
			var del []int32
			old := uint64((e - 2) * 10_000_000)
			g := l.b.grouper.(*wordsGrouper)
			for gid := range g.numGroups() {
				if !l.IsDead(int32(gid)) && g.word(gid, 0) == old {
					del = append(del, int32(gid))
				}
			}
			l.Delete(del)
			if l.ShouldCompact() {
				if _, err := l.Compact(ctx); err != nil {
					b.Fatal(err)
				}
			}
		}
		l.Close()
	}
	b.ReportMetric(float64(cpuNanos()-cpu0)/float64(n*epochs*b.N), "cpu-ns/row")
}
