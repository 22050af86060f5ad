package vector_test

import (
	"fmt"
	"math"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// keyOf returns row i's key as a comparable string, from either path.
func keyOf(e *vector.KeyEncoder, i int) string {
	if e.IsFixed() {
		return fmt.Sprintf("%v/%d", e.HasNull(i), e.Fixed()[i])
	}
	return string(e.Key(i))
}

func TestKeyEncoderEquality(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "i", Type: vector.Int64, Nullable: true},
		{Name: "s", Type: vector.String, Nullable: true},
		{Name: "f", Type: vector.Float64, Nullable: true},
		{Name: "w", Type: vector.WindowType, Nullable: true},
		{Name: "b", Type: vector.Boolean, Nullable: true},
		{Name: "d", Type: vector.Decimal(10, 2), Nullable: true},
	}, nil)
	rows := []vt.Row{
		{1, "a", 0.0, []any{0, 10}, true, "1.00"},
		{1, "a", math.Copysign(0, -1), []any{0, 10}, true, "1.00"}, // -0.0 groups with 0.0
		{nil, "", math.NaN(), nil, nil, nil},
		{nil, "", -math.NaN(), nil, nil, nil}, // NaNs group together
		{0, nil, 1.5, []any{nil, 10}, false, "-1.00"},
		{0, "", 1.5, []any{nil, 10}, false, "-1.00"}, // "" differs from NULL
		{2, "ab", 2.5, []any{5, 15}, true, "2.50"},
		{2, "a", 2.5, []any{5, 15}, true, "2.50"},
	}
	for _, shape := range vt.Shapes {
		t.Run(shape.String(), func(t *testing.T) {
			mem := vt.NewAllocator(t)
			recs := vt.BuildRecords(mem, schema, rows, vt.Shape{BatchSize: 1024, Sliced: shape.Sliced, GarbageUnderNulls: shape.GarbageUnderNulls, BitmapWithoutNulls: shape.BitmapWithoutNulls})
			defer recs[0].Release()
			rec := recs[0]
			for c := 0; c < int(rec.NumCols()); c++ {
				cols := []arrow.Array{rec.Column(c)}
				if c > 0 {
					cols = append(cols, rec.Column(0)) // composite keys too
				}
				types := make([]arrow.DataType, len(cols))
				for i, col := range cols {
					types[i] = col.DataType()
				}
				enc, err := vector.NewKeyEncoder(mem, types)
				if err != nil {
					t.Fatal(err)
				}
				if err := enc.Encode(cols); err != nil {
					t.Fatal(err)
				}
				for i := range rows {
					for j := range rows {
						want := true
						for _, col := range cols {
							want = want && sameKeyValue(vector.ValueAt(col, i), vector.ValueAt(col, j))
						}
						got := keyOf(enc, i) == keyOf(enc, j)
						if got != want {
							t.Errorf("column %d rows %d,%d: equal keys=%v, want %v", c, i, j, got, want)
						}
						if want && enc.Hashes()[i] != enc.Hashes()[j] {
							t.Errorf("column %d rows %d,%d: equal keys hash differently", c, i, j)
						}
					}
				}
				// Round trip through decode.
				var decoded []arrow.Array
				if enc.IsFixed() {
					nulls := make([]bool, len(rows))
					for i := range nulls {
						nulls[i] = enc.HasNull(i)
					}
					a, err := enc.DecodeFixed(mem, enc.Fixed(), nulls)
					if err != nil {
						t.Fatal(err)
					}
					decoded = []arrow.Array{a}
				} else {
					keys := make([][]byte, len(rows))
					for i := range keys {
						keys[i] = enc.Key(i)
					}
					decoded, err = enc.DecodeKeys(mem, keys)
					if err != nil {
						t.Fatal(err)
					}
				}
				for k, a := range decoded {
					for i := range rows {
						if !sameKeyValue(vector.ValueAt(a, i), vector.ValueAt(cols[k], i)) {
							t.Errorf("column %d key %d row %d: decoded %v, want %v", c, k, i, vector.ValueAt(a, i), vector.ValueAt(cols[k], i))
						}
					}
					a.Release()
				}
			}
		})
	}
}

// sameKeyValue is grouping equality: NaN = NaN, -0.0 = 0.0, NULL = NULL.
func sameKeyValue(a, b any) bool {
	if x, ok := a.(float64); ok {
		y, ok := b.(float64)
		return ok && (x == y || x != x && y != y)
	}
	if x, ok := a.([]any); ok {
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameKeyValue(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return vt.ValueEqual(a, b)
}

func TestKeyEncoderDictionaryMatchesPlain(t *testing.T) {
	mem := vt.NewAllocator(t)
	dictType := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: vector.String}
	vals := []any{"view", "click", nil, "view", "purchase"}
	db := array.NewBuilder(mem, dictType)
	sb := array.NewBuilder(mem, vector.String)
	for _, v := range vals {
		if err := vector.AppendValue(db, v); err != nil {
			t.Fatal(err)
		}
		if err := vector.AppendValue(sb, v); err != nil {
			t.Fatal(err)
		}
	}
	dict, plain := db.NewArray(), sb.NewArray()
	db.Release()
	sb.Release()
	defer dict.Release()
	defer plain.Release()
	a, _ := vector.NewKeyEncoder(mem, []arrow.DataType{vector.String})
	b, _ := vector.NewKeyEncoder(mem, []arrow.DataType{dictType})
	if err := a.Encode([]arrow.Array{plain}); err != nil {
		t.Fatal(err)
	}
	if err := b.Encode([]arrow.Array{dict}); err != nil {
		t.Fatal(err)
	}
	for i := range vals {
		if string(a.Key(i)) != string(b.Key(i)) || a.Hashes()[i] != b.Hashes()[i] {
			t.Errorf("row %d: dictionary key differs from plain", i)
		}
	}
	if !a.HasNull(2) || a.HasNull(0) {
		t.Errorf("HasNull wrong")
	}
}

func TestKeyEncoderErrors(t *testing.T) {
	mem := vt.NewAllocator(t)
	if _, err := vector.NewKeyEncoder(mem, []arrow.DataType{vector.MapOf(vector.Int64, vector.Int64)}); err == nil {
		t.Error("map key accepted")
	}
	enc, _ := vector.NewKeyEncoder(mem, []arrow.DataType{vector.Int64})
	rec := vt.BuildRecord(mem, windowSchema, windowRows)
	defer rec.Release()
	if err := enc.Encode([]arrow.Array{rec.Column(2)}); err == nil {
		t.Error("string column accepted by a bigint encoder")
	}
	if err := enc.Encode(nil); err == nil {
		t.Error("wrong column count accepted")
	}
	if _, err := enc.DecodeKeys(mem, [][]byte{{1, 2}}); err == nil {
		t.Error("short key decoded")
	}
}

func TestKeyHashStable(t *testing.T) {
	// Hashes partition persistent state: they must not change between
	// processes or releases. These values pin the function.
	mem := vt.NewAllocator(t)
	s := arrow.NewSchema([]arrow.Field{{Name: "k", Type: vector.Int64}, {Name: "s", Type: vector.String}}, nil)
	rec := vt.BuildRecord(mem, s, []vt.Row{{42, "view"}})
	defer rec.Release()
	fixed, _ := vector.NewKeyEncoder(mem, []arrow.DataType{vector.Int64})
	composite, _ := vector.NewKeyEncoder(mem, []arrow.DataType{vector.Int64, vector.String})
	if err := fixed.Encode([]arrow.Array{rec.Column(0)}); err != nil {
		t.Fatal(err)
	}
	if err := composite.Encode(rec.Columns()); err != nil {
		t.Fatal(err)
	}
	got := [2]uint64{fixed.Hashes()[0], composite.Hashes()[0]}
	want := [2]uint64{0x810879608e4259cc, 0x15753896122e73dd}
	if got != want {
		t.Fatalf("hash function changed: got %#x, want %#x", got, want)
	}
}
