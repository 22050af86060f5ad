package plan

import (
	"context"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
)

// schemaOp is an operator that only has a schema (relabel reads nothing
// else).
type schemaOp struct{ s *arrow.Schema }

func (o schemaOp) Schema() *arrow.Schema                      { return o.s }
func (o schemaOp) Next(context.Context) (arrow.Record, error) { return nil, nil }
func (o schemaOp) Close() error                               { return nil }

// TestRelabelEqualSchemaAllocatesNothing: relabel runs for every node of
// every streaming epoch (BuildOperator), so a schema that already matches
// the plan's must cost no allocation (it built two schemas, each with a
// name index, per call). Different names still relabel; different types
// do not.
func TestRelabelEqualSchemaAllocatesNothing(t *testing.T) {
	fields := func(names ...string) *arrow.Schema {
		var fs []arrow.Field
		for _, n := range names {
			fs = append(fs, arrow.Field{Name: n, Type: vector.Int64, Nullable: true})
		}
		return arrow.NewSchema(fs, nil)
	}
	have, want := schemaOp{fields("a", "b", "c")}, fields("a", "b", "c")
	var op vector.Operator = have
	if allocs := testing.AllocsPerRun(100, func() { op = relabel(have, want) }); allocs != 0 {
		t.Errorf("relabel of an equal schema: %v allocations, want 0", allocs)
	}
	if op != vector.Operator(have) {
		t.Errorf("relabel of an equal schema wrapped the operator: %T", op)
	}
	renamed := fields("x", "y", "z")
	if got := relabel(have, renamed); !got.Schema().Equal(renamed) {
		t.Errorf("relabel to other names: schema %v, want %v", got.Schema(), renamed)
	}
	other := arrow.NewSchema([]arrow.Field{{Name: "a", Type: vector.Float64}, {Name: "b", Type: vector.Int64}, {Name: "c", Type: vector.Int64}}, nil)
	if got := relabel(have, other); got != vector.Operator(have) {
		t.Errorf("relabel to other types wrapped the operator")
	}
}

// TestSchemasEqualMatchesArrow compares schemasEqual with arrow's
// Schema.Equal on every pair of a set of schemas that differ in one
// thing each: names, nullability, field metadata, parameterless types,
// parameterized types (time zone, unit, element type, struct fields).
func TestSchemasEqualMatchesArrow(t *testing.T) {
	md := arrow.NewMetadata([]string{"k"}, []string{"v"})
	md2 := arrow.NewMetadata([]string{"k"}, []string{"w"})
	one := func(f arrow.Field) *arrow.Schema { return arrow.NewSchema([]arrow.Field{f}, nil) }
	schemas := []*arrow.Schema{
		one(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64}),
		one(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true}),
		one(arrow.Field{Name: "b", Type: arrow.PrimitiveTypes.Int64}),
		one(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32}),
		one(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64, Metadata: md}),
		one(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int64, Metadata: md2}),
		one(arrow.Field{Name: "a", Type: arrow.BinaryTypes.String}),
		one(arrow.Field{Name: "a", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}}),
		one(arrow.Field{Name: "a", Type: &arrow.TimestampType{Unit: arrow.Microsecond}}),
		one(arrow.Field{Name: "a", Type: &arrow.TimestampType{Unit: arrow.Millisecond, TimeZone: "UTC"}}),
		one(arrow.Field{Name: "a", Type: arrow.ListOf(arrow.PrimitiveTypes.Int64)}),
		one(arrow.Field{Name: "a", Type: arrow.ListOf(arrow.BinaryTypes.String)}),
		one(arrow.Field{Name: "a", Type: arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int64})}),
		one(arrow.Field{Name: "a", Type: arrow.StructOf(arrow.Field{Name: "y", Type: arrow.PrimitiveTypes.Int64})}),
		arrow.NewSchema([]arrow.Field{{Name: "a", Type: arrow.PrimitiveTypes.Int64}, {Name: "b", Type: arrow.PrimitiveTypes.Int64}}, nil),
		arrow.NewSchema(nil, nil),
	}
	// A copy of each, so that equal schemas are not the same pointer.
	for _, a := range schemas[:len(schemas):len(schemas)] {
		schemas = append(schemas, arrow.NewSchema(a.Fields(), nil))
	}
	for _, a := range schemas {
		for _, b := range schemas {
			if got, want := schemasEqual(a, b), a.Equal(b); got != want {
				t.Errorf("schemasEqual(%v, %v) = %v, arrow says %v", a, b, got, want)
			}
		}
	}
}
