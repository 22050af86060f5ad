package stateful

import (
	"bytes"
	"fmt"
	"math/rand"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// encoderSchemas are the schemas of the encoder's property test: fixed
// width, strings, nested and temporal columns, with and without nulls and
// field metadata.
func encoderSchemas() []*arrow.Schema {
	md := arrow.NewMetadata([]string{"k"}, []string{"v"})
	return []*arrow.Schema{
		arrow.NewSchema([]arrow.Field{{Name: "id", Type: vector.Int64, Nullable: true}}, nil),
		arrow.NewSchema([]arrow.Field{
			{Name: "id", Type: vector.Int64},
			{Name: "name", Type: vector.String, Nullable: true},
			{Name: "ts", Type: vector.Timestamp, Nullable: true},
		}, &md),
		arrow.NewSchema([]arrow.Field{
			{Name: "w", Type: windowType, Nullable: true},
			{Name: "l", Type: arrow.ListOf(vector.Int32), Nullable: true},
			{Name: "f", Type: vector.Float64, Nullable: true, Metadata: md},
			{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
		}, nil),
	}
}

// randomRecord builds a record of schema with rows random rows, about a
// fifth of the values null in nullable columns.
func randomRecord(mem memory.Allocator, schema *arrow.Schema, rows int, rng *rand.Rand) arrow.Record {
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for i, f := range schema.Fields() {
		fillRandom(b.Field(i), f, rows, rng)
	}
	return b.NewRecord()
}

func fillRandom(b array.Builder, f arrow.Field, rows int, rng *rand.Rand) {
	for r := 0; r < rows; r++ {
		if f.Nullable && rng.Intn(5) == 0 {
			b.AppendNull()
			continue
		}
		switch bb := b.(type) {
		case *array.Int64Builder:
			bb.Append(rng.Int63())
		case *array.Int32Builder:
			bb.Append(rng.Int31())
		case *array.Float64Builder:
			bb.Append(rng.NormFloat64())
		case *array.BooleanBuilder:
			bb.Append(rng.Intn(2) == 0)
		case *array.StringBuilder:
			bb.Append(fmt.Sprintf("s%d", rng.Intn(1000)))
		case *array.TimestampBuilder:
			bb.Append(arrow.Timestamp(rng.Int63n(1 << 50)))
		case *array.StructBuilder:
			bb.Append(true)
			st := f.Type.(*arrow.StructType)
			for c := 0; c < st.NumFields(); c++ {
				fillRandom(bb.FieldBuilder(c), arrow.Field{Type: st.Field(c).Type}, 1, rng)
			}
		case *array.ListBuilder:
			bb.Append(true)
			for n := rng.Intn(4); n > 0; n-- {
				bb.ValueBuilder().(*array.Int32Builder).Append(rng.Int31())
			}
		default:
			panic(fmt.Sprintf("no random values for %T", b))
		}
	}
}

// TestIPCStreamEncoderMatchesWriter checks the encoder against a fresh
// ipc.Writer (writeJoinRecord): over many records, sliced and empty ones
// among them, written through one encoder in turn, every stream is the
// same bytes, and it reads back as the record.
func TestIPCStreamEncoderMatchesWriter(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewSource(19))
	for si, schema := range encoderSchemas() {
		enc, err := newIPCStreamEncoder(mem, schema)
		if err != nil {
			t.Fatal(err)
		}
		if enc.w == nil {
			t.Fatalf("schema %d: the encoder took the plain path", si)
		}
		for i := 0; i < 40; i++ {
			rec := randomRecord(mem, schema, rng.Intn(50), rng)
			if i%3 == 1 && rec.NumRows() > 2 {
				// A slice, as the join's batches may be.
				lo := rng.Int63n(rec.NumRows() / 2)
				s := rec.NewSlice(lo, lo+rng.Int63n(rec.NumRows()-lo))
				rec.Release()
				rec = s
			}
			var want, got bytes.Buffer
			if err := writeJoinRecord(mem, &want, rec); err != nil {
				t.Fatal(err)
			}
			if err := enc.write(&got, rec); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Fatalf("schema %d record %d (%d rows): encoder wrote %d bytes, ipc.Writer %d, and they differ", si, i, rec.NumRows(), got.Len(), want.Len())
			}
			assertJoinEntryReadsBack(t, mem, got.Bytes(), rec, fmt.Sprintf("schema %d record %d", si, i))
			rec.Release()
		}
	}
}

// assertJoinEntryReadsBack decodes a join batch entry as the join's
// restore does and checks that it is rec.
func assertJoinEntryReadsBack(t *testing.T, mem memory.Allocator, entry []byte, rec arrow.Record, what string) {
	t.Helper()
	js := &statefulJoin{mem: mem, keep: mem}
	back, err := js.decodeJoinBatch(entry, rec.Schema())
	if err != nil {
		t.Fatalf("%s: %v", what, err)
	}
	defer back.Release()
	if !array.RecordEqual(back, rec) {
		t.Fatalf("%s: read back %v, wrote %v", what, back, rec)
	}
}

// TestIPCStreamEncoderPlainPaths checks the cases the encoder hands to a
// fresh writer: a dictionary-encoded column, and a record whose schema is
// another than the encoder's.
func TestIPCStreamEncoderPlainPaths(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	dictSchema := arrow.NewSchema([]arrow.Field{{Name: "d", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: vector.String}}}, nil)
	nested := arrow.NewSchema([]arrow.Field{{Name: "l", Type: arrow.ListOf(&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int8, ValueType: vector.String})}}, nil)
	for _, s := range []*arrow.Schema{dictSchema, nested} {
		enc, err := newIPCStreamEncoder(mem, s)
		if err != nil {
			t.Fatal(err)
		}
		if enc.w != nil {
			t.Errorf("%v: a dictionary column must take the plain path", s)
		}
	}
	db := array.NewDictionaryBuilder(mem, dictSchema.Field(0).Type.(*arrow.DictionaryType)).(*array.BinaryDictionaryBuilder)
	defer db.Release()
	enc, _ := newIPCStreamEncoder(mem, dictSchema)
	for i, vals := range [][]string{{"a", "b", "a"}, {"c", "a"}} {
		for _, v := range vals {
			if err := db.AppendString(v); err != nil {
				t.Fatal(err)
			}
		}
		col := db.NewArray()
		rec := array.NewRecord(dictSchema, []arrow.Array{col}, int64(col.Len()))
		col.Release()
		var want, got bytes.Buffer
		if err := writeJoinRecord(mem, &want, rec); err != nil {
			t.Fatal(err)
		}
		if err := enc.write(&got, rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("dictionary record %d: the streams differ", i)
		}
	}
	// Another schema (by pointer) than the encoder's, equal or not.
	base := encoderSchemas()[1]
	enc, err := newIPCStreamEncoder(mem, base)
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(1))
	for _, other := range []*arrow.Schema{arrow.NewSchema(base.Fields(), nil), encoderSchemas()[0]} {
		rec := randomRecord(mem, other, 5, rng)
		var want, got bytes.Buffer
		if err := writeJoinRecord(mem, &want, rec); err != nil {
			t.Fatal(err)
		}
		if err := enc.write(&got, rec); err != nil {
			t.Fatal(err)
		}
		rec.Release()
		if !bytes.Equal(got.Bytes(), want.Bytes()) {
			t.Fatalf("record of schema %v through an encoder of %v: the streams differ", other, base)
		}
	}
}

// TestIPCStreamEncoderBuildsSchemaOnce checks the point of the encoder: a
// record written through it allocates less than through a fresh writer,
// which builds the schema's message each time (to leave it out).
func TestIPCStreamEncoderBuildsSchemaOnce(t *testing.T) {
	mem := memory.NewGoAllocator()
	schema := encoderSchemas()[2]
	rec := randomRecord(mem, schema, 10, rand.New(rand.NewSource(3)))
	defer rec.Release()
	enc, err := newIPCStreamEncoder(mem, schema)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	fresh := testing.AllocsPerRun(20, func() {
		buf.Reset()
		if err := writeJoinRecord(mem, &buf, rec); err != nil {
			t.Fatal(err)
		}
	})
	reused := testing.AllocsPerRun(20, func() {
		buf.Reset()
		if err := enc.write(&buf, rec); err != nil {
			t.Fatal(err)
		}
	})
	if reused >= fresh*3/4 {
		t.Errorf("a record through the encoder made %.0f allocations, through a fresh writer %.0f: the schema is built again", reused, fresh)
	}
	t.Logf("allocations per record: fresh writer %.0f, encoder %.0f", fresh, reused)
}
