package stateful

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/decimal128"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
)

var windowType = arrow.StructOf(arrow.Field{Name: "start", Type: vector.Timestamp, Nullable: true}, arrow.Field{Name: "end", Type: vector.Timestamp, Nullable: true})

// keyTypes are the key types of the property test: every key type the
// key encoder takes (FLOAT is not one today), a dictionary-encoded string
// and a window struct.
var keyTypes = []arrow.DataType{
	arrow.FixedWidthTypes.Boolean, arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Int16, vector.Int32, vector.Int64,
	vector.Float64, vector.String, arrow.BinaryTypes.Binary, arrow.FixedWidthTypes.Date32,
	vector.Timestamp, &arrow.Decimal128Type{Precision: 10, Scale: 2}, &arrow.Decimal128Type{Precision: 30, Scale: 5},
	&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: vector.String}, windowType,
}

// randomColumn builds n random values of dt, about one in eight NULL
// (a NULL window has NULL fields, as the engine builds them).
func randomColumn(t *testing.T, rng *rand.Rand, dt arrow.DataType, n int) arrow.Array {
	t.Helper()
	b := array.NewBuilder(poisonmem.NewChecked(t), dt)
	defer b.Release()
	small := func() int64 { return rng.Int63n(40) - 20 } // collisions and negatives
	for i := 0; i < n; i++ {
		if rng.Intn(8) == 0 {
			if sb, ok := b.(*array.StructBuilder); ok {
				sb.AppendNull()
				sb.FieldBuilder(0).AppendNull()
				sb.FieldBuilder(1).AppendNull()
				continue
			}
			b.AppendNull()
			continue
		}
		switch x := b.(type) {
		case *array.BooleanBuilder:
			x.Append(rng.Intn(2) == 0)
		case *array.Int8Builder:
			x.Append(int8(rng.Intn(256) - 128))
		case *array.Int16Builder:
			x.Append(int16(rng.Intn(65536) - 32768))
		case *array.Int32Builder:
			x.Append(int32(rng.Uint32()))
		case *array.Int64Builder:
			x.Append(int64(rng.Uint64()))
		case *array.Float32Builder:
			x.Append([]float32{0, float32(math.Copysign(0, -1)), float32(math.NaN()), 1.5, -2.25, rng.Float32()}[rng.Intn(6)])
		case *array.Float64Builder:
			x.Append([]float64{0, math.Copysign(0, -1), math.NaN(), math.Inf(1), 1e300, rng.NormFloat64()}[rng.Intn(6)])
		case *array.StringBuilder:
			x.Append(fmt.Sprintf("k%d-%s", small(), "abcdefg"[:rng.Intn(8)]))
		case *array.BinaryDictionaryBuilder:
			if err := x.AppendString(fmt.Sprintf("d%d", small())); err != nil {
				t.Fatal(err)
			}
		case *array.BinaryBuilder:
			v := make([]byte, rng.Intn(11))
			rng.Read(v)
			x.Append(v)
		case *array.Date32Builder:
			x.Append(arrow.Date32(small() * 1000))
		case *array.TimestampBuilder:
			x.Append(arrow.Timestamp(rng.Int63n(1<<50) - 1<<49))
		case *array.Decimal128Builder:
			hi := int64(0)
			if x.Type().(*arrow.Decimal128Type).Precision > 18 {
				hi = rng.Int63n(1<<20) - 1<<19
			}
			lo := uint64(rng.Int63n(1e9)) - 5e8
			if hi == 0 && int64(lo) < 0 {
				hi = -1
			}
			x.Append(decimal128.New(hi, lo))
		case *array.StructBuilder:
			x.Append(true)
			start := small() * 10_000_000
			x.FieldBuilder(0).(*array.TimestampBuilder).Append(arrow.Timestamp(start))
			if rng.Intn(10) == 0 {
				x.FieldBuilder(1).AppendNull()
			} else {
				x.FieldBuilder(1).(*array.TimestampBuilder).Append(arrow.Timestamp(start + 10_000_000))
			}
		default:
			t.Fatalf("no generator for %T", b)
		}
	}
	return b.NewArray()
}

// sqlHashExprs are the arguments of SQL's hash() that hash like column c
// of type dt: the column, or a window's fields in order.
func sqlHashExprs(name string, dt arrow.DataType) []vector.Expr {
	if dt.ID() == arrow.STRUCT {
		return []vector.Expr{vector.Col(name, "start"), vector.Col(name, "end")}
	}
	return []vector.Expr{vector.Col(name)}
}

// TestMurmur3PartitionIsSparks is the property: under Spark's scheme the
// partition of a key of one to three random columns of every key type is
// pmod(hash(cols...), n), hash being SQL's hash() function.
func TestMurmur3PartitionIsSparks(t *testing.T) {
	rng := rand.New(rand.NewSource(7))
	mem := poisonmem.NewChecked(t)
	const rows = 300
	for round := 0; round < 60; round++ {
		ncols := 1 + rng.Intn(3)
		if round < len(keyTypes) {
			ncols = 1 // every type alone first
		}
		fields := make([]arrow.Field, ncols)
		cols := make([]arrow.Array, ncols)
		var args []vector.Expr
		keys := make([]int, ncols)
		for c := range cols {
			dt := keyTypes[rng.Intn(len(keyTypes))]
			if round < len(keyTypes) {
				dt = keyTypes[round]
			}
			name := fmt.Sprintf("c%d", c)
			fields[c] = arrow.Field{Name: name, Type: dt, Nullable: true}
			cols[c] = randomColumn(t, rng, dt, rows)
			args = append(args, sqlHashExprs(name, dt)...)
			keys[c] = c
		}
		schema := arrow.NewSchema(fields, nil)
		rec := array.NewRecord(schema, cols, rows)
		for _, c := range cols {
			c.Release()
		}
		call, err := vector.LookupFunction("hash", args)
		if err != nil {
			t.Fatal(err)
		}
		ev, err := call.Bind(schema, mem)
		if err != nil {
			t.Fatalf("%s: %v", schema, err)
		}
		hashes, err := ev.Eval(context.Background(), rec)
		if err != nil {
			t.Fatal(err)
		}
		codec, err := newRowCodec(mem, schema, keys)
		if err != nil {
			t.Fatal(err)
		}
		if !codec.sparkHashable {
			t.Fatalf("%s: not Spark-hashable", schema)
		}
		if err := codec.encode(rec); err != nil {
			t.Fatal(err)
		}
		h := hashes.(*array.Int32).Int32Values()
		for _, n := range []int{1, 2, 5, 7, 200} {
			for i := 0; i < rows; i++ {
				want := ((int(h[i]) % n) + n) % n
				if got := partitionMurmur3.of(codec, i, n); got != want {
					t.Fatalf("%s row %d (%v): partition %d of %d, pmod(hash, %d) = %d", schema, i, rowString(rec, i), got, n, n, want)
				}
			}
		}
		hashes.Release()
		rec.Release()
	}
}

func rowString(rec arrow.Record, i int) string {
	s := ""
	for c := 0; c < int(rec.NumCols()); c++ {
		s += rec.Column(c).ValueStr(i) + " "
	}
	return s
}

// A NULL window hashes as nothing, whatever its fields hold.
func TestMurmur3NullStructIgnoresFields(t *testing.T) {
	mem := poisonmem.NewChecked(t)
	b := array.NewStructBuilder(mem, windowType)
	defer b.Release()
	for i := 0; i < 2; i++ {
		b.AppendNull()
		b.FieldBuilder(0).(*array.TimestampBuilder).Append(arrow.Timestamp(10 * (i + 1)))
		b.FieldBuilder(1).(*array.TimestampBuilder).Append(arrow.Timestamp(20 * (i + 1)))
	}
	a := b.NewArray()
	defer a.Release()
	out := make([]int32, 2)
	if err := vector.HashRows([]arrow.Array{a}, out); err != nil {
		t.Fatal(err)
	}
	if out[0] != 42 || out[1] != 42 {
		t.Fatalf("hashes of NULL windows %v, want the seed 42", out)
	}
}

// The scheme comes from the settings; an unknown one is refused.
func TestPartitioningOf(t *testing.T) {
	for v, want := range map[string]partitioning{"": partitionKeyEncoder, stream.PartitioningKeyEncoder: partitionKeyEncoder, stream.PartitioningMurmur3: partitionMurmur3} {
		got, err := partitioningOf(map[string]string{stream.ConfStatePartitioning: v})
		if err != nil || got != want {
			t.Errorf("%q: %v, %v; want %v", v, got, err, want)
		}
	}
	if _, err := partitioningOf(map[string]string{stream.ConfStatePartitioning: "crc"}); err == nil {
		t.Error("an unknown scheme was accepted")
	}
	// The empty key (a global aggregation) lives in partition 0.
	if p := partitionMurmur3.partition(0, 5); p != 0 {
		t.Errorf("partition of the empty key %d", p)
	}
}
