package vector

import (
	"fmt"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

var windowKeyType = arrow.StructOf(
	arrow.Field{Name: "start", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
	arrow.Field{Name: "end", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
)

// randomKeys builds n rows of (window struct, int32 key) or (bigint,
// int16) with values from a small domain, nulls at every level when
// nullable, sliced by off so that offsets are exercised.
func randomKeys(mem memory.Allocator, rng *rand.Rand, n, off int, shape int, nullable bool) []arrow.Array {
	null := func() bool { return nullable && rng.IntN(7) == 0 }
	var cols []arrow.Array
	switch shape {
	case 0:
		sb := array.NewStructBuilder(mem, windowKeyType)
		st, en := sb.FieldBuilder(0).(*array.TimestampBuilder), sb.FieldBuilder(1).(*array.TimestampBuilder)
		kb := array.NewInt32Builder(mem)
		for range n + off {
			if null() {
				sb.AppendNull()
			} else {
				sb.Append(true)
				s := arrow.Timestamp(rng.IntN(4) * 10_000_000)
				if null() {
					st.AppendNull()
				} else {
					st.Append(s)
				}
				en.Append(s + 10_000_000)
			}
			if null() {
				kb.AppendNull()
			} else {
				kb.Append(int32(rng.IntN(5) - 2))
			}
		}
		cols = []arrow.Array{sb.NewArray(), kb.NewArray()}
		sb.Release()
		kb.Release()
	default:
		ab, bb := array.NewInt64Builder(mem), array.NewInt16Builder(mem)
		for range n + off {
			if null() {
				ab.AppendNull()
			} else {
				ab.Append(int64(rng.IntN(6)) - 3)
			}
			if null() {
				bb.AppendNull()
			} else {
				bb.Append(int16(rng.IntN(3)) - 1)
			}
		}
		cols = []arrow.Array{ab.NewArray(), bb.NewArray()}
		ab.Release()
		bb.Release()
	}
	for i, c := range cols {
		cols[i] = array.NewSlice(c, int64(off), int64(off+n))
		c.Release()
	}
	return cols
}

// TestWordsGrouperMatchesBytes: the words grouper numbers the groups as
// the general (key bytes) grouper does, batch after batch, and rebuilds
// keys that encode to the same bytes.
func TestWordsGrouperMatchesBytes(t *testing.T) {
	for seed := range uint64(40) {
		t.Run(fmt.Sprint(seed), func(t *testing.T) {
			mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
			defer mem.AssertSize(t, 0)
			rng := rand.New(rand.NewPCG(seed, 3))
			shape, nullable := int(seed%2), seed%4 >= 2
			first := randomKeys(mem, rng, 1, 0, shape, nullable)
			types := []arrow.DataType{first[0].DataType(), first[1].DataType()}
			releaseArrays(first)
			wg := newWordsGrouper(types)
			if wg == nil {
				t.Fatalf("no words grouper for %v", types)
			}
			enc, err := NewKeyEncoder(mem, types)
			if err != nil {
				t.Fatal(err)
			}
			bg := &bytesGrouper{t: newBytesTable(), enc: enc}
			defer bg.release()
			for batch := range 5 {
				n := 1 + rng.IntN([]int{300, 3 * wordsProbeChunk}[batch%2]) // one chunk, or several
				keys := randomKeys(mem, rng, n, rng.IntN(4), shape, nullable)
				want, got := make([]int32, n), make([]int32, n)
				// The general path without its tuple shortcut: the key
				// bytes alone decide.
				if err := bg.enc.Encode(keys); err != nil {
					t.Fatal(err)
				}
				bg.t.probe(bg.enc, want)
				if err := wg.group(keys, got); err != nil {
					t.Fatal(err)
				}
				for i := range want {
					if want[i] != got[i] {
						t.Fatalf("batch %d row %d: group %d, the bytes grouper says %d", batch, i, got[i], want[i])
					}
				}
				releaseArrays(keys)
			}
			if wg.numGroups() != bg.numGroups() {
				t.Fatalf("%d groups, want %d", wg.numGroups(), bg.numGroups())
			}
			wantRows := make([]int64, bg.numGroups())
			bg.t.rowCounts(wantRows)
			if got, want := fmt.Sprint(wg.finish()), fmt.Sprint(wantRows); got != want {
				t.Fatalf("rows by group %s, want %s", got, want)
			}
			// Rebuilt keys encode to the bytes the general path kept, in
			// any order of groups.
			gids := rng.Perm(wg.numGroups())
			g32 := make([]int32, len(gids))
			for i, g := range gids {
				g32[i] = int32(g)
			}
			rebuilt, err := wg.keysOf(mem, g32)
			if err != nil {
				t.Fatal(err)
			}
			defer releaseArrays(rebuilt)
			if err := enc.Encode(rebuilt); err != nil {
				t.Fatal(err)
			}
			for i, g := range gids {
				if got, want := string(enc.Key(i)), string(bg.t.key(g)); got != want {
					t.Fatalf("group %d rebuilt as %x, want %x", g, got, want)
				}
			}
		})
	}
}

// TestWordsGrouperEligibility: composites of fixed-width leaves take it;
// strings, floats, dictionaries, nested structs and wide keys do not.
func TestWordsGrouperEligibility(t *testing.T) {
	ts := &arrow.TimestampType{Unit: arrow.Microsecond}
	for _, tc := range []struct {
		types []arrow.DataType
		want  bool
	}{
		{[]arrow.DataType{windowKeyType, arrow.PrimitiveTypes.Int64}, true},
		{[]arrow.DataType{windowKeyType}, true},
		{[]arrow.DataType{arrow.PrimitiveTypes.Int64, ts, arrow.PrimitiveTypes.Date32}, true},
		{[]arrow.DataType{arrow.PrimitiveTypes.Int64}, false}, // the fixed grouper's
		{[]arrow.DataType{windowKeyType, arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Int64}, false},
		{[]arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.BinaryTypes.String}, false},
		{[]arrow.DataType{arrow.PrimitiveTypes.Int64, arrow.PrimitiveTypes.Float64}, false},
		{[]arrow.DataType{arrow.StructOf(arrow.Field{Name: "w", Type: windowKeyType})}, false},
		{[]arrow.DataType{&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.PrimitiveTypes.Int64}, arrow.PrimitiveTypes.Int64}, false},
	} {
		if got := newWordsGrouper(tc.types) != nil; got != tc.want {
			t.Errorf("%v: words grouper %v, want %v", tc.types, got, tc.want)
		}
	}
}
