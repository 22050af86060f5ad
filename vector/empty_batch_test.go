package vector_test

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// emptyTypes are the column types an empty bufferless batch is checked with.
var emptyTypes = []arrow.DataType{
	vector.Boolean, vector.Int32, vector.Int64, vector.Float64, vector.String,
	vector.Binary, vector.Timestamp, vector.Date, vector.Decimal(10, 2),
	&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: vector.String},
	vector.WindowType, vector.ListOf(vector.Int64),
}

// TestEmptyRecordHasNoBuffers checks the test kit: the empty record really
// has nil buffers, so that the operator runs with Shape.EmptyBatches test
// what they claim to.
func TestEmptyRecordHasNoBuffers(t *testing.T) {
	fields := make([]arrow.Field, len(emptyTypes))
	for i, dt := range emptyTypes {
		fields[i] = arrow.Field{Name: vector.TypeName(dt), Type: dt, Nullable: true}
	}
	rec := vt.EmptyRecord(arrow.NewSchema(fields, nil))
	defer rec.Release()
	var check func(d arrow.ArrayData)
	check = func(d arrow.ArrayData) {
		if d.Len() != 0 {
			t.Errorf("%s: length %d", d.DataType(), d.Len())
		}
		for i, b := range d.Buffers() {
			if b != nil {
				t.Errorf("%s: buffer %d is not nil", d.DataType(), i)
			}
		}
		for _, c := range d.Children() {
			check(c)
		}
		if d.DataType().ID() == arrow.DICTIONARY {
			check(d.Dictionary())
		}
	}
	for _, c := range rec.Columns() {
		check(c.Data())
	}
	if rows := vt.RowsOf(rec); len(rows) != 0 {
		t.Errorf("rows: %v", rows)
	}
}

// TestKeyEncoderEmptyBufferless encodes zero-row key columns without
// buffers, alone and together, fixed and variable width.
func TestKeyEncoderEmptyBufferless(t *testing.T) {
	mem := vt.NewAllocator(t)
	sets := [][]arrow.DataType{}
	for _, dt := range emptyTypes {
		if dt.ID() == arrow.LIST {
			continue // not a key type
		}
		sets = append(sets, []arrow.DataType{dt})
	}
	sets = append(sets, []arrow.DataType{vector.Int64, vector.String, vector.WindowType, vector.Decimal(10, 2)})
	for _, types := range sets {
		enc, err := vector.NewKeyEncoder(mem, types)
		if err != nil {
			t.Fatalf("%v: %v", types, err)
		}
		cols := make([]arrow.Array, len(types))
		for i, dt := range types {
			cols[i] = vt.EmptyArray(dt)
		}
		// Twice: the second call reuses the encoder's buffers.
		for range 2 {
			if err := enc.Encode(cols); err != nil {
				t.Fatalf("%v: %v", types, err)
			}
			if enc.Len() != 0 || len(enc.Hashes()) != 0 || enc.AnyNull() {
				t.Fatalf("%v: len %d, hashes %d, anyNull %v", types, enc.Len(), len(enc.Hashes()), enc.AnyNull())
			}
		}
		for _, c := range cols {
			c.Release()
		}
	}
}

// TestTakeEmptyBufferless gathers from zero-row arrays without buffers:
// nothing, and nulls only (negative indices).
func TestTakeEmptyBufferless(t *testing.T) {
	mem := vt.NewAllocator(t)
	for _, dt := range emptyTypes {
		arr := vt.EmptyArray(dt)
		for _, idx := range [][]int32{nil, {-1, -1}} {
			out, err := vector.Take(mem, arr, idx)
			if err != nil {
				t.Fatalf("%s %v: %v", dt, idx, err)
			}
			if out.Len() != len(idx) || out.NullN() != len(idx) {
				t.Errorf("%s %v: len %d nulls %d", dt, idx, out.Len(), out.NullN())
			}
			out.Release()
		}
		arr.Release()
	}
}
