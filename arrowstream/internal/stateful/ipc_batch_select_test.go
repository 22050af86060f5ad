package stateful

import (
	"bytes"
	"fmt"
	"io"
	"math/rand"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// extendBuffer is a writer that lends its space as the changelog's arena
// does (bufferExtender), its lent bytes dirty as a reused arena's are.
type extendBuffer struct {
	b     []byte
	stale bool // fill the lent bytes with garbage first
}

func (w *extendBuffer) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	return len(p), nil
}

func (w *extendBuffer) Extend(n int) []byte {
	start := len(w.b)
	w.b = slices.Grow(w.b, n)[:start+n]
	out := w.b[start:]
	if w.stale {
		for i := range out {
			out[i] = 0xA5 // the encoder must write every byte
		}
	}
	return out
}

// randomSelection returns rows of a record of n rows: increasing (a
// view's), any order with repeats, all rows, or one.
func randomSelection(rng *rand.Rand, n int) []int32 {
	var sel []int32
	switch rng.Intn(4) {
	case 0:
		for r := 0; r < n; r++ {
			if rng.Intn(3) > 0 {
				sel = append(sel, int32(r))
			}
		}
	case 1:
		for k := rng.Intn(2 * n); k >= 0; k-- {
			sel = append(sel, int32(rng.Intn(n)))
		}
	case 2:
		for r := 0; r < n; r++ {
			sel = append(sel, int32(r))
		}
	default:
		sel = []int32{int32(rng.Intn(n))}
	}
	if len(sel) == 0 {
		sel = []int32{int32(n - 1)}
	}
	return sel
}

// TestIPCSelectMatchesGather checks the entry written through a selection
// against the path it replaces (the rows gathered into a record of their
// own, vector.TakeRecord, then written by the encoder): for every column
// type the direct path takes, structs nested, records with no, some and
// only nulls, sliced at offsets that are and are not multiples of 8, and
// selections increasing, shuffled with repeats, whole and of one row, the
// bytes are the same, through a writer that lends its space (with stale
// bytes in it) and through one that does not, the planned size is the
// size written, and the entry reads back as the gathered rows.
func TestIPCSelectMatchesGather(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewSource(11))
	schemas := directSchemas()
	// Every type but fixed-size binary (which Take does not gather), so
	// that all the others are compared byte for byte in one record too.
	var noFSB []arrow.Field
	for _, f := range schemas[0].Fields() {
		if f.Type.ID() != arrow.FIXED_SIZE_BINARY {
			noFSB = append(noFSB, f)
		}
	}
	schemas = append(schemas, arrow.NewSchema(noFSB, nil))
	bytewiseSeen := 0
	for si, schema := range schemas {
		enc, err := newIPCStreamEncoder(mem, schema)
		if err != nil {
			t.Fatal(err)
		}
		if enc.direct == nil {
			t.Fatalf("schema %d: the direct path refused a flat schema", si)
		}
		for i := 0; i < 150; i++ {
			rows := 1 + rng.Intn(150)
			nulls := []float64{0, 0.3, 1, 0.95, 0.05}[i%5]
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
			sel := randomSelection(rng, int(rec.NumRows()))
			name := fmt.Sprintf("schema %d record %d (%d rows, %d selected, nulls %.2f)", si, i, rec.NumRows(), len(sel), nulls)

			// The oracle: the rows gathered by vector.TakeRecord and
			// written by the encoder, byte for byte. A record with a
			// column Take does not gather (fixed-size binary) is
			// checked by what it reads back against its rows sliced
			// one by one and concatenated.
			gathered, err := gatherSel(mem, rec, sel)
			bytewise := err == nil
			if bytewise {
				bytewiseSeen++
			} else {
				gathered = concatRows(t, mem, rec, sel)
			}
			var want bytes.Buffer
			if err := enc.write(&want, gathered); err != nil {
				t.Fatal(err)
			}
			for _, mode := range []string{"lent", "written", "deferred"} {
				lend := mode == "lent"
				size, ok := enc.planSel(rec, sel)
				if !ok {
					t.Fatalf("%s: the selection path refused the record", name)
				}
				var got []byte
				if mode == "deferred" {
					// Filled at a commit: after the encoder planned
					// and wrote another entry over its plan.
					v := enc.deferSel(rec, size)
					other := randomSelection(rng, int(rec.NumRows()))
					if _, ok := enc.planSel(rec, other); !ok {
						t.Fatalf("%s: the selection path refused the record", name)
					}
					if err := enc.writeSel(io.Discard); err != nil {
						t.Fatal(err)
					}
					got = bytes.Repeat([]byte{0xa5}, v.Len())
					v.Fill(got)
					v.Release()
				} else if lend {
					w := &extendBuffer{b: []byte("xyz"), stale: true}
					if err := enc.writeSel(w); err != nil {
						t.Fatal(err)
					}
					got = w.b[3:]
				} else {
					var w bytes.Buffer
					if err := enc.writeSel(&w); err != nil {
						t.Fatal(err)
					}
					got = w.Bytes()
				}
				if bytewise && !bytes.Equal(got, want.Bytes()) {
					t.Fatalf("%s, %s: wrote %d bytes, the gathered record's entry is %d, and they differ", name, mode, len(got), want.Len())
				}
				if size != len(got) {
					t.Fatalf("%s: planned %d bytes, wrote %d", name, size, len(got))
				}
				assertJoinEntryReadsBack(t, mem, got, gathered, name)
			}
			gathered.Release()
			rec.Release()
		}
	}
	if bytewiseSeen < 5*150 {
		t.Errorf("only %d records compared byte for byte", bytewiseSeen)
	}
}

// concatRows is rows sel of rec, each sliced and the slices concatenated.
func concatRows(t *testing.T, mem memory.Allocator, rec arrow.Record, sel []int32) arrow.Record {
	t.Helper()
	cols := make([]arrow.Array, rec.NumCols())
	for c, col := range rec.Columns() {
		parts := make([]arrow.Array, len(sel))
		for i, r := range sel {
			parts[i] = array.NewSlice(col, int64(r), int64(r)+1)
		}
		cat, err := array.Concatenate(parts, mem)
		for _, p := range parts {
			p.Release()
		}
		if err != nil {
			t.Fatal(err)
		}
		cols[c] = cat
	}
	out := array.NewRecord(rec.Schema(), cols, int64(len(sel)))
	for _, c := range cols {
		c.Release()
	}
	return out
}

// TestIPCSelectRefuses checks what the selection path leaves to the
// gather: no rows selected, another schema, a schema the direct path does
// not take (a dictionary, a list).
func TestIPCSelectRefuses(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := directSchemas()[1]
	enc, err := newIPCStreamEncoder(mem, schema)
	if err != nil {
		t.Fatal(err)
	}
	b := array.NewRecordBuilder(mem, schema)
	for c, f := range schema.Fields() {
		fillDirect(b.Field(c), f.Nullable, 10, 0.3, rand.New(rand.NewSource(1)))
	}
	rec := b.NewRecord()
	b.Release()
	defer rec.Release()
	if _, ok := enc.planSel(rec, []int32{}); ok {
		t.Error("an empty selection took the selection path")
	}
	other := arrow.NewSchema(schema.Fields(), nil) // equal, not the same
	same := array.NewRecord(other, rec.Columns(), rec.NumRows())
	defer same.Release()
	if _, ok := enc.planSel(same, []int32{1}); ok {
		t.Error("a record of another schema took the selection path")
	}
	dict := arrow.NewSchema([]arrow.Field{{Name: "d", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: arrow.BinaryTypes.String}}}, nil)
	for _, s := range []*arrow.Schema{dict, encoderSchemas()[2]} {
		e, err := newIPCStreamEncoder(mem, s)
		if err != nil {
			t.Fatal(err)
		}
		// No record is needed: the encoder refuses by its schema.
		if e.direct != nil {
			t.Errorf("%v: the direct path took a schema it does not write", s)
		}
	}
}

// TestIPCSelectAllocations: an entry written through a selection into a
// lending writer allocates nothing (the gather it replaces allocated a
// record and its buffers).
func TestIPCSelectAllocations(t *testing.T) {
	if raceEnabled {
		t.Skip("allocation counts differ under the race detector")
	}
	mem := memory.NewGoAllocator()
	schema := directSchemas()[1]
	b := array.NewRecordBuilder(mem, schema)
	for c, f := range schema.Fields() {
		fillDirect(b.Field(c), f.Nullable, 500, 0.3, rand.New(rand.NewSource(1)))
	}
	rec := b.NewRecord()
	b.Release()
	defer rec.Release()
	sel := randomSelection(rand.New(rand.NewSource(2)), 500)
	enc, err := newIPCStreamEncoder(mem, schema)
	if err != nil {
		t.Fatal(err)
	}
	w := &extendBuffer{b: make([]byte, 0, 1<<20)}
	allocs := testing.AllocsPerRun(50, func() {
		w.b = w.b[:0]
		if _, ok := enc.planSel(rec, sel); !ok {
			t.Fatal("refused")
		}
		if err := enc.writeSel(w); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 0 {
		t.Errorf("an entry through a selection made %.0f allocations, want 0", allocs)
	}
}

// BenchmarkIPCSelect logs the rows a view selects (every other row of a
// 10,000-row bid-like record, as a partition of two keeps) by gathering
// them into a record and encoding it (the path before), and through the
// selection into a lending writer, alternately in the same run:
//
//	go test -run '^$' -bench IPCSelect -benchmem ./arrowstream/internal/stateful/
func BenchmarkIPCSelect(b *testing.B) {
	mem := memory.NewGoAllocator()
	schema := directSchemas()[1]
	const rows = 10000
	bld := array.NewRecordBuilder(mem, schema)
	for c, f := range schema.Fields() {
		fillDirect(bld.Field(c), f.Nullable, rows, 0.1, rand.New(rand.NewSource(1)))
	}
	rec := bld.NewRecord()
	bld.Release()
	defer rec.Release()
	sel := make([]int32, 0, rows/2)
	for r := 0; r < rows; r += 2 {
		sel = append(sel, int32(r))
	}
	enc, err := newIPCStreamEncoder(mem, schema)
	if err != nil {
		b.Fatal(err)
	}
	w := &extendBuffer{b: make([]byte, 0, 4<<20)}
	b.Run("gather", func(b *testing.B) {
		for b.Loop() {
			w.b = w.b[:0]
			g, err := gatherSel(mem, rec, sel)
			if err != nil {
				b.Fatal(err)
			}
			if err := enc.write(w, g); err != nil {
				b.Fatal(err)
			}
			g.Release()
		}
		b.SetBytes(int64(len(w.b)))
	})
	b.Run("select", func(b *testing.B) {
		for b.Loop() {
			w.b = w.b[:0]
			if _, ok := enc.planSel(rec, sel); !ok {
				b.Fatal("refused")
			}
			if err := enc.writeSel(w); err != nil {
				b.Fatal(err)
			}
		}
		b.SetBytes(int64(len(w.b)))
	})
}
