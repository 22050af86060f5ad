package sparksql

import (
	"fmt"
	"strconv"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
)

// createTestTables registers the tables SQLQueryTestSuite creates before
// every file (createTestTables in the suite): testdata (key 1..100, value
// the key as text), arraydata (two rows of an int array and a nested
// array) and mapdata (five maps int → string).
func createTestTables(s *arrowstream.Session, mem memory.Allocator) error {
	testdata := arrow.NewSchema([]arrow.Field{
		{Name: "key", Type: arrow.PrimitiveTypes.Int32},
		{Name: "value", Type: arrow.BinaryTypes.String, Nullable: true},
	}, nil)
	if err := register(s, mem, "testdata", testdata, func(b *array.RecordBuilder) {
		for i := 1; i <= 100; i++ {
			b.Field(0).(*array.Int32Builder).Append(int32(i))
			b.Field(1).(*array.StringBuilder).Append(strconv.Itoa(i))
		}
	}); err != nil {
		return err
	}

	intList := arrow.ListOf(arrow.PrimitiveTypes.Int32)
	arraydata := arrow.NewSchema([]arrow.Field{
		{Name: "arraycol", Type: intList, Nullable: true},
		{Name: "nestedarraycol", Type: arrow.ListOf(intList), Nullable: true},
	}, nil)
	if err := register(s, mem, "arraydata", arraydata, func(b *array.RecordBuilder) {
		for _, start := range []int32{1, 2} {
			lb := b.Field(0).(*array.ListBuilder)
			lb.Append(true)
			nb := b.Field(1).(*array.ListBuilder)
			nb.Append(true)
			inner := nb.ValueBuilder().(*array.ListBuilder)
			inner.Append(true)
			for v := start; v < start+3; v++ {
				lb.ValueBuilder().(*array.Int32Builder).Append(v)
				inner.ValueBuilder().(*array.Int32Builder).Append(v)
			}
		}
	}); err != nil {
		return err
	}

	mapdata := arrow.NewSchema([]arrow.Field{
		{Name: "mapcol", Type: arrow.MapOf(arrow.PrimitiveTypes.Int32, arrow.BinaryTypes.String), Nullable: true},
	}, nil)
	return register(s, mem, "mapdata", mapdata, func(b *array.RecordBuilder) {
		mb := b.Field(0).(*array.MapBuilder)
		for row := 1; row <= 5; row++ {
			mb.Append(true)
			for k := 1; k <= 6-row; k++ {
				mb.KeyBuilder().(*array.Int32Builder).Append(int32(k))
				mb.ItemBuilder().(*array.StringBuilder).Append(fmt.Sprintf("%c%d", 'a'+k-1, row))
			}
		}
	})
}

func register(s *arrowstream.Session, mem memory.Allocator, name string, schema *arrow.Schema, fill func(*array.RecordBuilder)) error {
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	fill(b)
	rec := b.NewRecord()
	defer rec.Release()
	if err := s.RegisterTable(name, schema, rec); err != nil {
		return fmt.Errorf("sparksql: test table %s: %w", name, err)
	}
	return nil
}
