package stateful

import (
	"bytes"
	"fmt"
	"math/rand"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// directSchemas are flat schemas the direct path takes: every column
// type it writes, nullable and not.
func directSchemas() []*arrow.Schema {
	types := []arrow.DataType{
		arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int32, arrow.PrimitiveTypes.Int64,
		arrow.PrimitiveTypes.Uint8, arrow.PrimitiveTypes.Uint64, arrow.PrimitiveTypes.Float32, arrow.PrimitiveTypes.Float64,
		arrow.FixedWidthTypes.Boolean, arrow.BinaryTypes.String, arrow.BinaryTypes.Binary,
		arrow.FixedWidthTypes.Date32, arrow.FixedWidthTypes.Timestamp_us, &arrow.Decimal128Type{Precision: 20, Scale: 2},
		&arrow.FixedSizeBinaryType{ByteWidth: 3},
	}
	var all []arrow.Field
	for i, dt := range types {
		all = append(all, arrow.Field{Name: fmt.Sprintf("c%d", i), Type: dt, Nullable: i%3 != 0})
	}
	return []*arrow.Schema{
		arrow.NewSchema(all, nil),
		// Nexmark's bid side as q7 and q20 store it.
		arrow.NewSchema([]arrow.Field{
			{Name: "auction", Type: arrow.PrimitiveTypes.Int64}, {Name: "bidder", Type: arrow.PrimitiveTypes.Int64},
			{Name: "price", Type: arrow.PrimitiveTypes.Int64}, {Name: "dateTime", Type: arrow.FixedWidthTypes.Timestamp_us},
			{Name: "extra", Type: arrow.BinaryTypes.String, Nullable: true},
		}, nil),
		arrow.NewSchema([]arrow.Field{{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true}}, nil),
		// Nexmark q8's sides: a window struct beside the keys.
		arrow.NewSchema([]arrow.Field{
			{Name: "id", Type: arrow.PrimitiveTypes.Int64}, {Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
			{Name: "window", Type: windowType, Nullable: true},
		}, nil),
		// Structs nested, with nullable children of each kind.
		arrow.NewSchema([]arrow.Field{{Name: "s", Nullable: true, Type: arrow.StructOf(
			arrow.Field{Name: "a", Type: arrow.BinaryTypes.String, Nullable: true},
			arrow.Field{Name: "b", Type: arrow.FixedWidthTypes.Boolean, Nullable: true},
			arrow.Field{Name: "t", Nullable: true, Type: arrow.StructOf(arrow.Field{Name: "x", Type: arrow.PrimitiveTypes.Int32, Nullable: true})},
		)}}, nil),
	}
}

// fillDirect appends rows random values to b; nulls is the share of nulls
// in a nullable column (0, some, or all).
func fillDirect(b array.Builder, nullable bool, rows int, nulls float64, rng *rand.Rand) {
	for r := 0; r < rows; r++ {
		if nullable && rng.Float64() < nulls {
			b.AppendNull()
			continue
		}
		switch bb := b.(type) {
		case *array.Int8Builder:
			bb.Append(int8(rng.Int()))
		case *array.Int16Builder:
			bb.Append(int16(rng.Int()))
		case *array.Int32Builder:
			bb.Append(rng.Int31())
		case *array.Int64Builder:
			bb.Append(rng.Int63())
		case *array.Uint8Builder:
			bb.Append(uint8(rng.Int()))
		case *array.Uint64Builder:
			bb.Append(rng.Uint64())
		case *array.Float32Builder:
			bb.Append(rng.Float32())
		case *array.Float64Builder:
			bb.Append(rng.NormFloat64())
		case *array.BooleanBuilder:
			bb.Append(rng.Intn(2) == 0)
		case *array.StringBuilder:
			bb.Append(string(make([]byte, rng.Intn(40))))
		case *array.BinaryBuilder:
			v := make([]byte, rng.Intn(9))
			rng.Read(v)
			bb.Append(v)
		case *array.Date32Builder:
			bb.Append(arrow.Date32(rng.Int31()))
		case *array.TimestampBuilder:
			bb.Append(arrow.Timestamp(rng.Int63n(1 << 50)))
		case *array.Decimal128Builder:
			bb.Append(decimal128.FromI64(rng.Int63()))
		case *array.FixedSizeBinaryBuilder:
			bb.Append([]byte{byte(r), byte(r >> 8), 7})
		case *array.StructBuilder:
			bb.Append(true)
			for c, f := range bb.Type().(*arrow.StructType).Fields() {
				fillDirect(bb.FieldBuilder(c), f.Nullable, 1, nulls, rng)
			}
		default:
			panic(fmt.Sprintf("no random values for %T", b))
		}
	}
}

// TestIPCDirectMatchesWriter checks the direct record batch message
// against ipc.Writer: for flat schemas of every type it takes, records
// with no, some and only nulls, sliced at offsets that are and are not
// multiples of 8 (shifted bitmaps, rebased offsets), written in turn
// through one encoder, every entry is the bytes writeJoinRecord writes,
// the direct path wrote it, and it reads back as the record.
func TestIPCDirectMatchesWriter(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewSource(7))
	for si, schema := range directSchemas() {
		enc, err := newIPCStreamEncoder(mem, schema)
		if err != nil {
			t.Fatal(err)
		}
		if enc.direct == nil {
			t.Fatalf("schema %d: the direct path refused a flat schema", si)
		}
		for i := 0; i < 120; i++ {
			rows := 1 + rng.Intn(150)
			nulls := []float64{0, 0.3, 1}[i%3]
			b := array.NewRecordBuilder(mem, schema)
			for c, f := range schema.Fields() {
				fillDirect(b.Field(c), f.Nullable, rows, nulls, rng)
			}
			rec := b.NewRecord()
			b.Release()
			if i%2 == 1 && rows > 2 {
				lo := rng.Int63n(int64(rows) - 1)
				s := rec.NewSlice(lo, lo+1+rng.Int63n(int64(rows)-lo-1))
				rec.Release()
				rec = s
			}
			var want, got bytes.Buffer
			if err := writeJoinRecord(mem, &want, rec); err != nil {
				t.Fatal(err)
			}
			got.Write(joinBatchMagic[:])
			done, err := enc.direct.write(&got, rec)
			if err != nil || !done {
				t.Fatalf("schema %d record %d: direct path done=%v err=%v", si, i, done, err)
			}
			got.Write(ipcEOS[:])
			if !bytes.Equal(got.Bytes(), want.Bytes()) {
				t.Fatalf("schema %d record %d (%d rows, nulls %.1f): direct wrote %d bytes, ipc.Writer %d, and they differ", si, i, rec.NumRows(), nulls, got.Len(), want.Len())
			}
			var viaEnc bytes.Buffer
			if err := enc.write(&viaEnc, rec); err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(viaEnc.Bytes(), want.Bytes()) {
				t.Fatalf("schema %d record %d: the encoder's entry differs from ipc.Writer's", si, i)
			}
			assertJoinEntryReadsBack(t, mem, got.Bytes(), rec, fmt.Sprintf("schema %d record %d", si, i))
			rec.Release()
		}
	}
}

// TestIPCDirectRefuses checks what the direct path leaves to ipc.Writer:
// a nested or large-string column (no template), and a record without rows.
func TestIPCDirectRefuses(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	for _, s := range []*arrow.Schema{encoderSchemas()[2], // a list column
		arrow.NewSchema([]arrow.Field{{Name: "l", Type: arrow.BinaryTypes.LargeString}}, nil)} {
		enc, err := newIPCStreamEncoder(mem, s)
		if err != nil {
			t.Fatal(err)
		}
		if enc.direct != nil {
			t.Errorf("%v: the column must not take the direct path (not a type it writes)", s)
		}
	}
	schema := directSchemas()[1]
	enc, err := newIPCStreamEncoder(mem, schema)
	if err != nil {
		t.Fatal(err)
	}
	empty := array.NewRecordBuilder(mem, schema)
	rec := empty.NewRecord()
	empty.Release()
	defer rec.Release()
	var buf bytes.Buffer
	if done, err := enc.direct.write(&buf, rec); done || err != nil || buf.Len() != 0 {
		t.Fatalf("a record without rows: done=%v err=%v, %d bytes written", done, err, buf.Len())
	}
	var want, got bytes.Buffer
	if err := writeJoinRecord(mem, &want, rec); err != nil {
		t.Fatal(err)
	}
	if err := enc.write(&got, rec); err != nil {
		t.Fatal(err)
	}
	if !bytes.Equal(got.Bytes(), want.Bytes()) {
		t.Fatal("a record without rows: the encoder's entry differs from ipc.Writer's")
	}
}

// TestIPCDirectAllocations checks the point of the direct path: a batch
// of a flat schema is written without ipc.Writer's allocations.
func TestIPCDirectAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	mem := memory.NewGoAllocator()
	schema := directSchemas()[1]
	b := array.NewRecordBuilder(mem, schema)
	for c, f := range schema.Fields() {
		fillDirect(b.Field(c), f.Nullable, 50, 0.3, rand.New(rand.NewSource(1)))
	}
	whole := b.NewRecord()
	b.Release()
	defer whole.Release()
	rec := whole.NewSlice(3, 40) // shifted bitmap, rebased offsets
	defer rec.Release()
	enc, err := newIPCStreamEncoder(mem, schema)
	if err != nil {
		t.Fatal(err)
	}
	var buf bytes.Buffer
	buf.Grow(1 << 16)
	allocs := testing.AllocsPerRun(50, func() {
		buf.Reset()
		if err := enc.write(&buf, rec); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 0 {
		t.Errorf("a batch through the direct path made %.0f allocations, want 0", allocs)
	}
}

// BenchmarkIPCDirect writes a Nexmark bid-like batch (four int64 and
// timestamp columns, a nullable string; the slice of a larger record, as
// a partition's part of an epoch is) as a join batch entry through one
// started ipc.Writer (the encoder before the direct path) and through
// the direct message, alternately in the same run:
//
//	go test -run '^$' -bench IPCDirect -benchmem ./arrowstream/internal/stateful/
func BenchmarkIPCDirect(b *testing.B) {
	mem := memory.NewGoAllocator()
	schema := directSchemas()[1]
	for _, rows := range []int{2, 50, 5000} {
		bld := array.NewRecordBuilder(mem, schema)
		for c, f := range schema.Fields() {
			fillDirect(bld.Field(c), f.Nullable, 2*rows+3, 0.1, rand.New(rand.NewSource(1)))
		}
		whole := bld.NewRecord()
		bld.Release()
		rec := whole.NewSlice(3, int64(3+rows))
		whole.Release()
		enc, err := newIPCStreamEncoder(mem, schema)
		if err != nil {
			b.Fatal(err)
		}
		var buf bytes.Buffer
		for _, path := range []string{"writer", "direct"} {
			b.Run(fmt.Sprintf("rows=%d/%s", rows, path), func(b *testing.B) {
				direct := enc.direct
				if path == "writer" {
					enc.direct = nil
				}
				defer func() { enc.direct = direct }()
				for b.Loop() {
					buf.Reset()
					if err := enc.write(&buf, rec); err != nil {
						b.Fatal(err)
					}
				}
				b.SetBytes(int64(buf.Len()))
			})
		}
		rec.Release()
	}
}
