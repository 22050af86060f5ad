package stateful

import (
	"context"
	"io"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// TestSessionAssignSchemaKept: a query's Planner (NewPlanner) builds the
// session assignment's output schema once and hands the same one to every
// epoch's assignment, while an input that differs (in a field, or only in
// the schema's metadata) gets a schema of its own, equal to a new one.
func TestSessionAssignSchemaKept(t *testing.T) {
	ctx := context.Background()
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)

	// The plan's time field carries the watermark metadata that the
	// engine's input does not (as in q11).
	wm := arrow.NewMetadata([]string{"spark.watermarkDelayMs"}, []string{"0"})
	planIn := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "t", Type: vector.Timestamp, Nullable: true, Metadata: wm},
	}, nil)
	values, err := plan.NewValues(planIn, nil)
	if err != nil {
		t.Fatal(err)
	}
	sw, err := plan.NewSessionWindow(values, &plan.ColumnRef{Index: 1, Name: "t", Type: vector.Timestamp, Null: true}, 10_000_000, "session")
	if err != nil {
		t.Fatal(err)
	}
	in := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "t", Type: vector.Timestamp, Nullable: true},
	}, nil)
	schemaMD := arrow.NewMetadata([]string{"origin"}, []string{"other"})
	inMD := arrow.NewSchema(in.Fields(), &schemaMD)
	inRenamed := arrow.NewSchema([]arrow.Field{
		{Name: "key", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "t", Type: vector.Timestamp, Nullable: true},
	}, nil)
	// in2 is equal to in but another object, as a new epoch's input may be.
	in2 := arrow.NewSchema(in.Fields(), nil)

	p := NewPlanner(mem, stream.Append)
	// build runs one epoch's assignment over one row of schema s and
	// returns its schema (checked against the record it emits).
	build := func(s *arrow.Schema) *arrow.Schema {
		t.Helper()
		kb := array.NewInt64Builder(mem)
		kb.Append(7)
		k := kb.NewArray()
		kb.Release()
		tb := array.NewTimestampBuilder(mem, vector.Timestamp.(*arrow.TimestampType))
		tb.Append(1_000_000)
		ts := tb.NewArray()
		tb.Release()
		rec := array.NewRecord(s, []arrow.Array{k, ts}, 1)
		k.Release()
		ts.Release()
		scan, err := vector.NewScan(s, rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
		op, ok, err := p.BuildEpoch(sw, []vector.Operator{scan}, &plan.Env{})
		if !ok || err != nil {
			t.Fatalf("BuildEpoch: %v, %v", ok, err)
		}
		defer op.Close()
		out, err := op.Next(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if out.Schema() != op.Schema() || out.NumRows() != 1 {
			t.Fatalf("the record's schema is not the operator's, or %d rows", out.NumRows())
		}
		out.Release()
		if _, err := op.Next(ctx); err != io.EOF {
			t.Fatalf("after the row: %v", err)
		}
		return op.Schema()
	}
	window := sw.Schema().Field(sw.Schema().NumFields() - 1)
	check := func(name string, got, s *arrow.Schema) {
		t.Helper()
		if want := newAssignSchema(s, window); !got.Equal(want) || !got.Metadata().Equal(want.Metadata()) {
			t.Fatalf("%s: schema\n%v\nwant\n%v", name, got, want)
		}
	}

	first := build(in)
	check("in", first, in)
	for i, s := range []*arrow.Schema{in, in2, in} {
		if got := build(s); got != first {
			t.Fatalf("epoch %d: a new schema for an equal input", i+2)
		}
	}
	withMD := build(inMD)
	check("schema metadata", withMD, inMD)
	renamed := build(inRenamed)
	check("renamed", renamed, inRenamed)
	if withMD == first || renamed == first || renamed == withMD {
		t.Fatal("inputs that differ share a schema")
	}
	if build(inMD) != withMD || build(in) != first || build(inRenamed) != renamed {
		t.Fatal("a kept schema was not found again")
	}
}
