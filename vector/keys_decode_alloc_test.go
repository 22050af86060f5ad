package vector

import (
	"fmt"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// reallocCounter counts the Reallocate calls it passes on: a builder
// appended to row by row reallocates each buffer as it doubles.
type reallocCounter struct {
	memory.Allocator
	reallocs int
}

func (c *reallocCounter) Reallocate(size int, b []byte) []byte {
	c.reallocs++
	return c.Allocator.Reallocate(size, b)
}

// q8PersonKeyTypes are the key types of Nexmark q8's persons' grouping
// (GROUP BY id, name, window): an int64, a string and the window struct.
var q8PersonKeyTypes = []arrow.DataType{
	arrow.PrimitiveTypes.Int64,
	arrow.BinaryTypes.String,
	arrow.StructOf(
		arrow.Field{Name: "start", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true},
		arrow.Field{Name: "end", Type: &arrow.TimestampType{Unit: arrow.Microsecond}, Nullable: true}),
}

// q8PersonKeys builds n rows of q8PersonKeyTypes, some of each column null.
func q8PersonKeys(mem memory.Allocator, n int) []arrow.Array {
	ids := array.NewInt64Builder(mem)
	names := array.NewStringBuilder(mem)
	wins := array.NewStructBuilder(mem, q8PersonKeyTypes[2].(*arrow.StructType))
	defer ids.Release()
	defer names.Release()
	defer wins.Release()
	starts := wins.FieldBuilder(0).(*array.TimestampBuilder)
	ends := wins.FieldBuilder(1).(*array.TimestampBuilder)
	for i := range n {
		if i%17 == 3 {
			ids.AppendNull()
		} else {
			ids.Append(int64(1000 + i))
		}
		if i%13 == 5 {
			names.AppendNull()
		} else {
			names.Append(fmt.Sprintf("person %d of %d", i, n))
		}
		switch {
		case i%11 == 7:
			wins.AppendNull()
		case i%19 == 2:
			wins.Append(true)
			starts.AppendNull()
			ends.Append(arrow.Timestamp(i))
		default:
			wins.Append(true)
			starts.Append(arrow.Timestamp(int64(i/100) * 10_000_000))
			ends.Append(arrow.Timestamp(int64(i/100+1) * 10_000_000))
		}
	}
	return []arrow.Array{ids.NewArray(), names.NewArray(), wins.NewArray()}
}

// TestDecodeKeysSizesBuffersOnce decodes 2000 of q8's person keys (what a
// window's close decodes to evict them) and checks the columns round-trip
// and that the builders' buffers were sized once for every key: only the
// string's bytes (their size is not known ahead) may grow as they come.
// Appended row by row from empty, every buffer (the ids, the names'
// offsets, the window's and its fields' values and validity) doubled its
// way up: 49 reallocations of fresh memory here, 13 now.
func TestDecodeKeysSizesBuffersOnce(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const n = 2000
	cols := q8PersonKeys(mem, n)
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	enc, err := NewKeyEncoder(mem, q8PersonKeyTypes)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Release()
	if err := enc.Encode(cols); err != nil {
		t.Fatal(err)
	}
	keys := make([][]byte, n)
	for i := range keys {
		keys[i] = enc.Key(i)
	}
	counter := &reallocCounter{Allocator: mem}
	decoded, err := enc.DecodeKeys(counter, keys)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, a := range decoded {
			a.Release()
		}
	}()
	for k, a := range decoded {
		if !array.Equal(a, cols[k]) {
			t.Errorf("key column %d: decoded\n%v\nwant\n%v", k, a, cols[k])
		}
	}
	// The names' bytes (about 40 KB) double from Arrow's first reserve:
	// about a dozen reallocations; nothing else may reallocate.
	t.Logf("%d keys: %d reallocations", n, counter.reallocs)
	if counter.reallocs > 14 {
		t.Errorf("decoding %d keys reallocated %d times: the builders were not sized ahead", n, counter.reallocs)
	}
}

// TestBytesGrouperKeyViewsKept: the views of the keys LiveAggregate
// decodes (a new group's store key, an evicted window's rows) come from a
// slice the grouper keeps, not one made per call (fresh memory every
// epoch of q8), and hold the groups' keys.
func TestBytesGrouperKeyViewsKept(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	gr, err := newGrouper(mem, q8PersonKeyTypes)
	if err != nil {
		t.Fatal(err)
	}
	g, ok := gr.(*bytesGrouper)
	if !ok {
		t.Fatalf("grouper %T, want a bytes grouper", gr)
	}
	defer g.release()
	const n = 500
	cols := q8PersonKeys(mem, n)
	defer func() {
		for _, c := range cols {
			c.Release()
		}
	}()
	gids := make([]int32, n)
	if err := g.group(cols, gids); err != nil {
		t.Fatal(err)
	}
	enc, err := NewKeyEncoder(mem, q8PersonKeyTypes)
	if err != nil {
		t.Fatal(err)
	}
	defer enc.Release()
	if err := enc.Encode(cols); err != nil {
		t.Fatal(err)
	}
	views := g.keyViews(gids)
	for i, v := range views {
		if string(v) != string(enc.Key(i)) {
			t.Fatalf("row %d (group %d): view %x, want the key %x", i, gids[i], v, enc.Key(i))
		}
	}
	some := gids[:n/2]
	if allocs := testing.AllocsPerRun(20, func() { g.keyViews(some) }); allocs != 0 {
		t.Errorf("keyViews allocated %.0f times a call, want 0 (its scratch kept)", allocs)
	}
}
