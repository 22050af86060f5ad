package vector

import (
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// wordKeyShapes are the key types TestGroupKeysMatchEncoder draws from:
// the streaming window key, a single struct, leaves of every width with
// nulls inside and outside a struct, and a leaf Spark's hash does not take.
var wordKeyShapes = [][]arrow.DataType{
	{windowKeyType, arrow.PrimitiveTypes.Int32},
	{windowKeyType, arrow.PrimitiveTypes.Int64},
	{windowKeyType},
	{arrow.PrimitiveTypes.Int64, arrow.StructOf(
		arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int8, Nullable: true},
		arrow.Field{Name: "b", Type: arrow.FixedWidthTypes.Date32, Nullable: true})},
	{arrow.PrimitiveTypes.Int16, arrow.StructOf(arrow.Field{Name: "a", Type: arrow.PrimitiveTypes.Int32, Nullable: true})},
	{arrow.FixedWidthTypes.Duration_us, arrow.PrimitiveTypes.Int64},
}

// randomKeyCols makes n rows of key columns of types from few distinct
// values (so that groups repeat), with nulls at rate 1/nullEvery (0: none)
// in every leaf and struct; a window struct's end is its start plus 10
// unless broken, so that the grouper derives words and sometimes stops.
func randomKeyCols(mem memory.Allocator, rng *rand.Rand, types []arrow.DataType, n, nullEvery int, broken bool) []arrow.Array {
	null := func() bool { return nullEvery > 0 && rng.IntN(nullEvery) == 0 }
	var appendLeaf func(b array.Builder, base int64)
	appendLeaf = func(b array.Builder, base int64) {
		if null() {
			b.AppendNull()
			return
		}
		v := base + int64(rng.IntN(7)) - 3
		switch b := b.(type) {
		case *array.Int8Builder:
			b.Append(int8(v))
		case *array.Int16Builder:
			b.Append(int16(v * 1000))
		case *array.Int32Builder:
			b.Append(int32(v * 100_000))
		case *array.Date32Builder:
			b.Append(arrow.Date32(v))
		case *array.Int64Builder:
			b.Append(v * 1e12)
		case *array.TimestampBuilder:
			b.Append(arrow.Timestamp(v))
		case *array.DurationBuilder:
			b.Append(arrow.Duration(v))
		default:
			panic(fmt.Sprintf("randomKeyCols: %T", b))
		}
	}
	cols := make([]arrow.Array, len(types))
	for c, dt := range types {
		b := array.NewBuilder(mem, dt)
		for range n {
			sb, ok := b.(*array.StructBuilder)
			if !ok {
				appendLeaf(b, 0)
				continue
			}
			if null() {
				sb.AppendNull()
				for f := range sb.NumField() {
					appendLeaf(sb.FieldBuilder(f), 5) // anything: hidden by the null
				}
				continue
			}
			sb.Append(true)
			if arrow.TypeEqual(dt, windowKeyType) {
				s := int64(rng.IntN(4)) * 10
				e := s + 10
				if broken && rng.IntN(3) == 0 {
					e = s + 5
				}
				sb.FieldBuilder(0).(*array.TimestampBuilder).Append(arrow.Timestamp(s))
				sb.FieldBuilder(1).(*array.TimestampBuilder).Append(arrow.Timestamp(e))
				continue
			}
			for f := range sb.NumField() {
				appendLeaf(sb.FieldBuilder(f), 0)
			}
		}
		cols[c] = b.NewArray()
		b.Release()
	}
	return cols
}

// TestGroupKeysMatchEncoder: the keys encodeKeys writes from the words
// are the KeyEncoder's bytes and hashes of the key columns keysOf rebuilds,
// and its Spark hashes are HashRows of the columns asked for, for groups
// in any order (repeats included), over batches with and without nulls,
// with derived words learned and broken, and across keepGroups.
func TestGroupKeysMatchEncoder(t *testing.T) {
	for seed := range uint64(80) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			rng := rand.New(rand.NewPCG(seed, 20))
			types := wordKeyShapes[int(seed)%len(wordKeyShapes)]
			g := newWordsGrouper(types)
			if g == nil {
				t.Fatalf("no words grouper for %v", types)
			}
			enc, err := NewKeyEncoder(mem, types)
			if err != nil {
				t.Fatal(err)
			}
			defer enc.Release()
			var out GroupKeys
			nullEvery := []int{0, 0, 3, 9}[rng.IntN(4)]
			for batch := range 8 {
				n := 1 + rng.IntN([]int{30, 600}[rng.IntN(2)])
				cols := randomKeyCols(mem, rng, types, n, nullEvery, batch > 3 && rng.IntN(2) == 0)
				if err := g.group(cols, make([]int32, n)); err != nil {
					t.Fatal(err)
				}
				releaseArrays(cols)
				if rng.IntN(4) == 0 { // drop some groups, renumbering the rest
					var live []int32
					for gid := range g.numGroups() {
						if rng.IntN(2) == 0 {
							live = append(live, int32(gid))
						}
					}
					g.keepGroups(live)
				}
				gids := make([]int32, rng.IntN(2*g.numGroups()+1))
				for i := range gids {
					gids[i] = int32(rng.IntN(g.numGroups()))
				}
				var sparkCols []int
				switch rng.IntN(4) {
				case 1:
					sparkCols = []int{}
				case 2, 3:
					for c := range types {
						if rng.IntN(3) > 0 {
							sparkCols = append(sparkCols, c)
						}
					}
				}
				checkGroupKeys(t, mem, g, enc, gids, sparkCols, &out)
			}
		})
	}
}

// checkGroupKeys compares encodeKeys of gids with the encoder's and
// HashRows' results over keysOf(gids).
func checkGroupKeys(t *testing.T, mem memory.Allocator, g *wordsGrouper, enc *KeyEncoder, gids []int32, sparkCols []int, out *GroupKeys) {
	t.Helper()
	keys, err := g.keysOf(mem, gids)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseArrays(keys)
	if !g.keysLike(enc.Types(), sparkCols) {
		// Only a column Spark's hash does not take may refuse.
		cols := make([]arrow.Array, 0, len(sparkCols))
		for _, c := range sparkCols {
			cols = append(cols, keys[c])
		}
		if err := HashRows(cols, make([]int32, len(gids))); err == nil || len(gids) == 0 && len(cols) == 0 {
			t.Fatalf("keysLike refused spark columns %v of %v that HashRows takes", sparkCols, g.types)
		}
		return
	}
	g.encodeKeys(gids, sparkCols, out)
	if err := enc.Encode(keys); err != nil {
		t.Fatal(err)
	}
	if out.Len() != len(gids) {
		t.Fatalf("%d keys, want %d", out.Len(), len(gids))
	}
	if out.EncodedBytes() != enc.EncodedBytes() {
		t.Fatalf("%d bytes, the encoder's %d", out.EncodedBytes(), enc.EncodedBytes())
	}
	var spark []int32
	if sparkCols != nil {
		cols := make([]arrow.Array, 0, len(sparkCols))
		for _, c := range sparkCols {
			cols = append(cols, keys[c])
		}
		spark = make([]int32, len(gids))
		if err := HashRows(cols, spark); err != nil {
			t.Fatal(err)
		}
	}
	for i, gid := range gids {
		if !bytes.Equal(out.Key(i), enc.Key(i)) {
			t.Fatalf("group %d (row %d): key %x, the encoder's %x", gid, i, out.Key(i), enc.Key(i))
		}
		if out.Hash(i) != enc.Hashes()[i] {
			t.Fatalf("group %d (row %d): hash %x, the encoder's %x", gid, i, out.Hash(i), enc.Hashes()[i])
		}
		if spark != nil && out.SparkHash(i) != spark[i] {
			t.Fatalf("group %d (row %d): Spark hash of %v %d, HashRows' %d", gid, i, sparkCols, out.SparkHash(i), spark[i])
		}
	}
	// The same keys without the encoder's hashes (the buffers reused).
	out.NoHashes = true
	defer func() { out.NoHashes = false }()
	g.encodeKeys(gids, sparkCols, out)
	if out.Len() != len(gids) || out.EncodedBytes() != enc.EncodedBytes() {
		t.Fatalf("NoHashes: %d keys of %d bytes, want %d of %d", out.Len(), out.EncodedBytes(), len(gids), enc.EncodedBytes())
	}
	for i, gid := range gids {
		if !bytes.Equal(out.Key(i), enc.Key(i)) {
			t.Fatalf("NoHashes: group %d (row %d): key %x, the encoder's %x", gid, i, out.Key(i), enc.Key(i))
		}
		if spark != nil && out.SparkHash(i) != spark[i] {
			t.Fatalf("NoHashes: group %d (row %d): Spark hash %d, HashRows' %d", gid, i, out.SparkHash(i), spark[i])
		}
	}
}

// TestLiveAggregateEncodeKeys: EncodeKeys encodes a words-keyed live
// aggregation's groups as the encoder does, and declines (false, out
// untouched) the keys it cannot write from words: a single fixed-width
// key, a string key, a value encoder, an encoder of other types. A group
// that does not exist is an error that names it.
func TestLiveAggregateEncodeKeys(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(1, 20))
	live := func(types []arrow.DataType, cols []arrow.Array) *LiveAggregate {
		fields := make([]arrow.Field, len(types))
		for i, dt := range types {
			fields[i] = arrow.Field{Name: fmt.Sprintf("k%d", i), Type: dt, Nullable: true}
		}
		schema := arrow.NewSchema(fields, nil)
		l, err := NewLiveAggregate(mem, schema, len(types), nil)
		if err != nil {
			t.Fatal(err)
		}
		rec := array.NewRecord(schema, cols, int64(cols[0].Len()))
		defer rec.Release()
		if _, err := l.Merge(context.Background(), rec); err != nil {
			t.Fatal(err)
		}
		return l
	}
	types := wordKeyShapes[1]
	cols := randomKeyCols(mem, rng, types, 300, 5, false)
	l := live(types, cols)
	defer l.Close()
	releaseArrays(cols)
	enc, err := NewKeyEncoder(mem, types)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Release()
	gids := []int32{int32(l.NumGroups() - 1), 0, 2, 0}
	var out GroupKeys
	ok, err := l.EncodeKeys(enc, gids, []int{0, 1}, &out)
	if err != nil || !ok {
		t.Fatalf("EncodeKeys of (window, bigint): %v, %v", ok, err)
	}
	keys, err := l.Keys(gids)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseArrays(keys)
	if err := enc.Encode(keys); err != nil {
		t.Fatal(err)
	}
	spark := make([]int32, len(gids))
	if err := HashRows(keys, spark); err != nil {
		t.Fatal(err)
	}
	for i := range gids {
		if !bytes.Equal(out.Key(i), enc.Key(i)) || out.Hash(i) != enc.Hashes()[i] || out.SparkHash(i) != spark[i] {
			t.Fatalf("row %d: %x %x %d, want %x %x %d", i, out.Key(i), out.Hash(i), out.SparkHash(i), enc.Key(i), enc.Hashes()[i], spark[i])
		}
	}
	if _, err := l.EncodeKeys(enc, []int32{int32(l.NumGroups())}, nil, &out); err == nil {
		t.Error("EncodeKeys of a group past the last: no error")
	}
	val, err := NewValueEncoder(mem, types)
	if err != nil {
		t.Fatal(err)
	}
	defer val.Release()
	other, err := NewKeyEncoder(mem, wordKeyShapes[0])
	if err != nil {
		t.Fatal(err)
	}
	defer other.Release()
	for name, e := range map[string]*KeyEncoder{"value encoder": val, "other types": other} {
		if ok, err := l.EncodeKeys(e, gids, nil, &out); ok || err != nil {
			t.Errorf("EncodeKeys with a %s: %v, %v; want false", name, ok, err)
		}
	}
	for _, types := range [][]arrow.DataType{{arrow.PrimitiveTypes.Int64}, {arrow.BinaryTypes.String, arrow.PrimitiveTypes.Int64}} {
		var cols []arrow.Array
		if types[0].ID() == arrow.STRING {
			sb := array.NewStringBuilder(mem)
			sb.AppendValues([]string{"a", "b", "a"}, nil)
			cols = append(cols, sb.NewArray())
			sb.Release()
			cols = append(cols, randomKeyCols(mem, rng, types[1:], 3, 0, false)...)
		} else {
			cols = randomKeyCols(mem, rng, types, 3, 0, false)
		}
		l := live(types, cols)
		releaseArrays(cols)
		e, err := NewKeyEncoder(mem, types)
		if err != nil {
			t.Fatal(err)
		}
		if ok, err := l.EncodeKeys(e, []int32{0}, nil, &out); ok || err != nil {
			t.Errorf("EncodeKeys of %v: %v, %v; want false", types, ok, err)
		}
		e.Release()
		l.Close()
	}
}
