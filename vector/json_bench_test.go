package vector_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// BenchmarkFromJSON decodes 8192 JSON objects per batch with from_json,
// next to arrow's struct builder reading the same rows as one JSON array
// (the decoding from_json is built on) in the same run.
//
//	go test -run '^$' -bench BenchmarkFromJSON -benchtime 20x ./vector/
func BenchmarkFromJSON(b *testing.B) {
	const rows = 8192
	mem := memory.NewGoAllocator()
	sb := array.NewStringBuilder(mem)
	arrayText := []byte{'['}
	for i := 0; i < rows; i++ {
		doc := fmt.Sprintf(`{"id": %d, "user": "user%d", "score": %d.5, "tags": ["a", "b"]}`, i, i%100, i)
		sb.Append(doc)
		if i > 0 {
			arrayText = append(arrayText, ',')
		}
		arrayText = append(arrayText, doc...)
	}
	arrayText = append(arrayText, ']')
	col := sb.NewArray()
	sb.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "j", Type: vector.String, Nullable: true}}, nil)
	rec := array.NewRecord(schema, []arrow.Array{col}, rows)
	col.Release()
	defer rec.Release()
	ddl := "id BIGINT, user STRING, score DOUBLE, tags ARRAY<STRING>"
	st, err := vector.ParseDDLSchema(ddl)
	if err != nil {
		b.Fatal(err)
	}
	ev, err := vector.FromJSON(vector.Col("j"), vector.Lit(ddl), nil).Bind(schema, mem)
	if err != nil {
		b.Fatal(err)
	}
	// The two alternate in every iteration so that both see the same load.
	var bare, ours time.Duration
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		bld := array.NewStructBuilder(mem, st)
		if err := bld.UnmarshalJSON(arrayText); err != nil {
			b.Fatal(err)
		}
		bld.NewArray().Release()
		bld.Release()
		t1 := time.Now()
		out, err := ev.Eval(context.Background(), rec)
		if err != nil {
			b.Fatal(err)
		}
		out.Release()
		bare += t1.Sub(t0)
		ours += time.Since(t1)
	}
	n := float64(rows) * float64(b.N)
	b.ReportMetric(n/ours.Seconds(), "from_json-rows/s")
	b.ReportMetric(n/bare.Seconds(), "arrow-builder-rows/s")
	b.ReportMetric(bare.Seconds()/ours.Seconds(), "from_json/arrow")
}
