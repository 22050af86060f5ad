package vector_test

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// modelKeyEqual is the brute-force model of grouping equality for nested
// values: same shape, NULL = NULL (elements and fields too), NaN = NaN,
// -0.0 = 0.0, everything else by value.
func modelKeyEqual(a, b any) bool {
	a, b = vt.Normalize(a), vt.Normalize(b)
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && (x == y || x != x && y != y)
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !modelKeyEqual(x[i], y[i]) {
				return false
			}
		}
		return true
	}
	return a == b
}

// randNested draws a value of dt from small domains, so that equal and
// nearly equal values (NaN, -0.0, NULL elements, prefixes) are common.
func randNested(r *rand.Rand, dt arrow.DataType) any {
	if r.IntN(8) == 0 {
		return nil
	}
	switch t := dt.(type) {
	case *arrow.ListType:
		out := make([]any, r.IntN(4))
		for i := range out {
			out[i] = randNested(r, t.Elem())
		}
		return out
	case *arrow.StructType:
		out := make([]any, t.NumFields())
		for i, f := range t.Fields() {
			out[i] = randNested(r, f.Type)
		}
		return out
	case *arrow.Float64Type:
		return []float64{0, math.Copysign(0, -1), math.NaN(), -math.NaN(), 1.5, -2}[r.IntN(6)]
	case *arrow.Float32Type:
		return []float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), 1.5}[r.IntN(4)]
	case *arrow.Int64Type:
		return int64(r.IntN(3))
	case *arrow.StringType:
		return []string{"", "a", "ab"}[r.IntN(3)]
	}
	panic("randNested: unexpected type " + dt.String())
}

func nestedKeyTypes() [][]arrow.DataType {
	pair := arrow.StructOf(arrow.Field{Name: "x", Type: vector.Float64, Nullable: true}, arrow.Field{Name: "s", Type: vector.String, Nullable: true})
	return [][]arrow.DataType{
		{vector.ListOf(vector.Float64)},
		{vector.ListOf(arrow.PrimitiveTypes.Float32)},
		{vector.ListOf(vector.ListOf(vector.Int64))},
		{vector.ListOf(pair)},
		{arrow.StructOf(arrow.Field{Name: "l", Type: vector.ListOf(vector.Float64), Nullable: true}, arrow.Field{Name: "i", Type: vector.Int64, Nullable: true})},
		{vector.ListOf(vector.Int64), vector.String},
		{arrow.PrimitiveTypes.Float32},
	}
}

// TestNestedKeysMatchModel checks, for random nested keys with NULLs, NaN
// and -0.0, in every array shape (sliced, garbage under nulls), that two
// rows get equal key bytes exactly when the model says their values are
// equal, that equal keys hash alike, and that keys decode back to values
// equal to the originals.
func TestNestedKeysMatchModel(t *testing.T) {
	r := rand.New(rand.NewPCG(20, 1))
	for _, types := range nestedKeyTypes() {
		fields := make([]arrow.Field, len(types))
		for i, dt := range types {
			fields[i] = arrow.Field{Name: string(rune('a' + i)), Type: dt, Nullable: true}
		}
		schema := arrow.NewSchema(fields, nil)
		rows := make([]vt.Row, 150)
		for i := range rows {
			row := make(vt.Row, len(types))
			for c, dt := range types {
				row[c] = randNested(r, dt)
			}
			rows[i] = row
		}
		for _, shape := range vt.Shapes {
			t.Run(schema.String()+"/"+shape.String(), func(t *testing.T) {
				mem := vt.NewAllocator(t)
				recs := vt.BuildRecords(mem, schema, rows, vt.Shape{BatchSize: 1024, Sliced: shape.Sliced, GarbageUnderNulls: shape.GarbageUnderNulls, BitmapWithoutNulls: shape.BitmapWithoutNulls})
				defer recs[0].Release()
				cols := recs[0].Columns()
				enc, err := vector.NewKeyEncoder(mem, types)
				if err != nil {
					t.Fatal(err)
				}
				defer enc.Release()
				if err := enc.Encode(cols); err != nil {
					t.Fatal(err)
				}
				if enc.IsFixed() {
					t.Fatal("nested key took the fixed path")
				}
				for i := range rows {
					for j := range rows {
						want := true
						for c := range cols {
							want = want && modelKeyEqual(vector.ValueAt(cols[c], i), vector.ValueAt(cols[c], j))
						}
						if got := string(enc.Key(i)) == string(enc.Key(j)); got != want {
							t.Fatalf("rows %d %v and %d %v: equal keys=%v, want %v", i, rows[i], j, rows[j], got, want)
						}
						if want && enc.Hashes()[i] != enc.Hashes()[j] {
							t.Fatalf("rows %d and %d: equal keys hash differently", i, j)
						}
					}
				}
				keys := make([][]byte, len(rows))
				for i := range keys {
					keys[i] = enc.Key(i)
				}
				decoded, err := enc.DecodeKeys(mem, keys)
				if err != nil {
					t.Fatal(err)
				}
				for c, a := range decoded {
					for i := range rows {
						if got, want := vector.ValueAt(a, i), vector.ValueAt(cols[c], i); !modelKeyEqual(got, want) {
							t.Errorf("column %d row %d: decoded %v, want %v", c, i, got, want)
						}
					}
					a.Release()
				}
			})
		}
	}
}

// TestNestedKeysAcrossChunks encodes more rows than one cancellation chunk
// (the encoder slices its leaves per chunk): rows that repeat a value get
// the key of its first occurrence.
func TestNestedKeysAcrossChunks(t *testing.T) {
	mem := vt.NewAllocator(t)
	dt := vector.ListOf(vector.ListOf(vector.Int64))
	schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: dt, Nullable: true}}, nil)
	r := rand.New(rand.NewPCG(20, 2))
	distinct := make([]any, 97)
	for i := range distinct {
		distinct[i] = randNested(r, dt)
	}
	const n = 70_000
	rows := make([]vt.Row, n)
	for i := range rows {
		rows[i] = vt.Row{distinct[i%len(distinct)]}
	}
	recs := vt.BuildRecords(mem, schema, rows, vt.Shape{BatchSize: n, Sliced: true})
	defer recs[0].Release()
	enc, err := vector.NewKeyEncoder(mem, []arrow.DataType{dt})
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Release()
	if err := enc.EncodeContext(t.Context(), recs[0].Columns()); err != nil {
		t.Fatal(err)
	}
	for i := len(distinct); i < n; i++ {
		if string(enc.Key(i)) != string(enc.Key(i%len(distinct))) {
			t.Fatalf("row %d (%v): key differs from row %d", i, rows[i][0], i%len(distinct))
		}
	}
}

// BenchmarkListKeyEncode measures encoding an array<bigint> key column
// (four elements a row) next to a string key of similar width.
func BenchmarkListKeyEncode(b *testing.B) {
	const n = 4096
	mem := vt.NewAllocator(b)
	for _, dt := range []arrow.DataType{vector.ListOf(vector.Int64), vector.String} {
		rows := make([]vt.Row, n)
		for i := range rows {
			if dt.ID() == arrow.LIST {
				rows[i] = vt.Row{[]any{int64(i % 7), int64(i % 11), int64(i), int64(1)}}
			} else {
				rows[i] = vt.Row{"key-value-" + string(rune('a'+i%26)) + "-0123456789abcdef"}
			}
		}
		schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: dt, Nullable: true}}, nil)
		recs := vt.BuildRecords(mem, schema, rows, vt.Shape{BatchSize: n})
		enc, err := vector.NewKeyEncoder(mem, []arrow.DataType{dt})
		if err != nil {
			b.Fatal(err)
		}
		b.Run(vector.TypeName(dt), func(b *testing.B) {
			b.ReportAllocs()
			for range b.N {
				if err := enc.Encode(recs[0].Columns()); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
		})
		recs[0].Release()
	}
}
