package stateful

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// TestValueCodecDecodesNarrowFramedRows: a value codec of one 32-bit
// column frames its rows as a flag byte and a 64-bit word, and decodes
// them back; rows framed at the column's own width (5 bytes), as the
// live aggregation logged a min/max of an int32 or date column before it
// framed them as the store does, decode too, so the changelogs of such
// checkpoints restore; a 5-byte row of a 64-bit column is refused.
func TestValueCodecDecodesNarrowFramedRows(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, typ := range []arrow.DataType{arrow.PrimitiveTypes.Int32, arrow.FixedWidthTypes.Date32} {
		schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: typ, Nullable: true}}, nil)
		c, err := newValueCodec(mem, schema, []int{0})
		if err != nil {
			t.Fatal(err)
		}
		rows := [][]byte{
			{1, 0xfb, 0xff, 0xff, 0xff}, // -5, at its own width
			{0},                         // NULL
			{1, 7, 0, 0, 0},             // 7
			{1, 0xfe, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff}, // -2, the store's framing
		}
		cols, err := c.decode(mem, rows)
		if err != nil {
			t.Fatalf("%s: %v", typ, err)
		}
		got := cols[0]
		want := []any{int64(-5), nil, int64(7), int64(-2)}
		for i, w := range want {
			var v any
			switch a := got.(type) {
			case *array.Int32:
				if a.IsValid(i) {
					v = int64(a.Value(i))
				}
			case *array.Date32:
				if a.IsValid(i) {
					v = int64(a.Value(i))
				}
			}
			if v != w {
				t.Errorf("%s row %d: %v, want %v", typ, i, v, w)
			}
		}
		got.Release()
		c.enc.Release()
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	c, err := newValueCodec(mem, schema, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	defer c.enc.Release()
	if _, err := c.decode(mem, [][]byte{{1, 1, 0, 0, 0}}); err == nil {
		t.Fatal("a 5-byte row of an int64 column decoded")
	}
}
