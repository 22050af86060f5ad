package vector

import (
	"bytes"
	"fmt"
	"math/rand"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
)

// viewTestStrings builds n strings (or binaries) whose lengths sit around
// a view header's inline limit (0–30 bytes, 12 and 13 often) with a few of
// several KB, nulls when nullable, sliced from a larger array when slice.
func viewTestStrings(mem memory.Allocator, rng *rand.Rand, dt arrow.DataType, n int, nullable, slice bool) arrow.Array {
	pad := 0
	if slice {
		pad = rng.Intn(5) + 1
	}
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	for i := 0; i < n+2*pad; i++ {
		if nullable && rng.Intn(5) == 0 {
			b.AppendNull()
			continue
		}
		var size int
		switch rng.Intn(10) {
		case 0:
			size = viewInline
		case 1:
			size = viewInline + 1
		case 2:
			size = 1000 + rng.Intn(5000)
		default:
			size = rng.Intn(31)
		}
		s := []byte(strings.Repeat(fmt.Sprintf("%c%d|", 'a'+rune(i%26), i), size/2+1))[:size]
		switch bb := b.(type) {
		case *array.StringBuilder:
			bb.Append(string(s))
		case *array.BinaryBuilder:
			bb.Append(s)
		}
	}
	a := b.NewArray()
	if pad == 0 {
		return a
	}
	defer a.Release()
	return array.NewSlice(a, int64(pad), int64(pad+n))
}

// plainValue is row i of a string or binary array.
func plainValue(a arrow.Array, i int) []byte {
	switch v := a.(type) {
	case *array.String:
		return []byte(v.Value(i))
	case *array.Binary:
		return v.Value(i)
	}
	panic(fmt.Sprintf("not a string array: %T", a))
}

// viewValue is row i of a string_view or binary_view array.
func viewValue(a arrow.Array, i int) []byte {
	switch v := a.(type) {
	case *array.StringView:
		return []byte(v.Value(i))
	case *array.BinaryView:
		return v.Value(i)
	}
	panic(fmt.Sprintf("not a view array: %T", a))
}

// TestGatherChunksViewMatchesGather: a view gather holds, row for row, the
// values and nulls of GatherChunks over the same chunks and rows (random
// strings and binaries around the inline limit and of several KB, nulls,
// sliced and empty chunks); its data buffers are exactly, once each, the
// data buffers of the chunks a long value came from; its values outlive
// the chunks (released first, on a poisoning allocator); MaterializeViews
// of it, and of a slice of it, equals the copying gather; nothing leaks.
func TestGatherChunksViewMatchesGather(t *testing.T) {
	pm := poisonmem.NewChecked(t)
	rng := rand.New(rand.NewSource(25))
	for trial := 0; trial < 80; trial++ {
		dt := arrow.DataType(arrow.BinaryTypes.String)
		if trial%3 == 2 {
			dt = arrow.BinaryTypes.Binary
		}
		nullable, slice := trial%2 == 0, trial%4 < 2
		chunks := make([]arrow.Array, 1+rng.Intn(8))
		for k := range chunks {
			n := 1 + rng.Intn(40)
			if rng.Intn(6) == 0 {
				n = 0
			}
			chunks[k] = viewTestStrings(pm, rng, dt, n, nullable, slice)
		}
		var src, rows []int32
		for o := rng.Intn(300); o > 0; o-- {
			k := rng.Intn(len(chunks))
			if chunks[k].Len() == 0 {
				continue
			}
			src, rows = append(src, int32(k)), append(rows, int32(rng.Intn(chunks[k].Len())))
		}
		want, err := GatherChunks(pm, chunks, src, rows)
		if err != nil {
			t.Fatal(err)
		}
		got, err := GatherChunksView(pm, chunks, src, rows)
		if err != nil {
			t.Fatal(err)
		}
		wantType := arrow.DataType(arrow.BinaryTypes.StringView)
		if dt.ID() == arrow.BINARY {
			wantType = arrow.BinaryTypes.BinaryView
		}
		if !arrow.TypeEqual(got.DataType(), wantType) {
			t.Fatalf("trial %d: view gather of %s is %s, want %s", trial, dt, got.DataType(), wantType)
		}
		// The referenced buffers: the chunks holding a long gathered value.
		var refs []*memory.Buffer
		seen := map[int32]bool{}
		for o, r := range rows {
			k := src[o]
			c := chunks[k].(array.BinaryLike)
			if !seen[k] && chunks[k].IsValid(int(r)) && c.ValueLen(int(r)) > viewInline {
				seen[k] = true
				refs = append(refs, chunks[k].Data().Buffers()[2])
			}
		}
		held := got.Data().Buffers()[2:]
		if len(held) != len(refs) {
			t.Errorf("trial %d: the view holds %d data buffers, want %d (the chunks with a long value)", trial, len(held), len(refs))
		} else {
			for i := range refs {
				if held[i] != refs[i] {
					t.Errorf("trial %d: data buffer %d is not the chunk's buffer of its first long value", trial, i)
				}
			}
		}
		releaseArrays(chunks) // the view must keep what it references
		check := func(what string, got, want arrow.Array) {
			t.Helper()
			if got.Len() != want.Len() || got.NullN() != want.NullN() {
				t.Fatalf("trial %d %s: %d rows, %d nulls; want %d, %d", trial, what, got.Len(), got.NullN(), want.Len(), want.NullN())
			}
			for i := 0; i < want.Len(); i++ {
				if got.IsNull(i) != want.IsNull(i) {
					t.Fatalf("trial %d %s row %d: null %v, want %v", trial, what, i, got.IsNull(i), want.IsNull(i))
				}
				if want.IsNull(i) {
					continue
				}
				wv := plainValue(want, i)
				if gv := viewValue(got, i); !bytes.Equal(gv, wv) {
					t.Fatalf("trial %d %s row %d: %q, want %q", trial, what, i, trunc(gv), trunc(wv))
				}
			}
		}
		check("view", got, want)
		mat, err := MaterializeViews(pm, got)
		if err != nil {
			t.Fatal(err)
		}
		if !arrow.TypeEqual(mat.DataType(), dt) || !array.Equal(mat, want) {
			t.Errorf("trial %d: materialized %s %v, want %v", trial, mat.DataType(), mat, want)
		}
		mat.Release()
		if n := got.Len(); n > 2 {
			lo, hi := int64(rng.Intn(n/2)), int64(n/2+rng.Intn(n/2))
			gs, ws := array.NewSlice(got, lo, hi), array.NewSlice(want, lo, hi)
			check("slice", gs, ws)
			ms, err := MaterializeViews(pm, gs)
			if err != nil {
				t.Fatal(err)
			}
			if !array.Equal(ms, ws) {
				t.Errorf("trial %d: materialized slice %d..%d differs", trial, lo, hi)
			}
			ms.Release()
			gs.Release()
			ws.Release()
		}
		got.Release()
		want.Release()
	}
}

func trunc(b []byte) []byte {
	if len(b) > 40 {
		return b[:40]
	}
	return b
}

// TestGatherChunksViewRefusesBadInput: mismatched lengths, no chunks,
// chunks of different types and a type that has no view are errors;
// MaterializeViews returns any other array unchanged (retained).
func TestGatherChunksViewRefusesBadInput(t *testing.T) {
	pm := poisonmem.NewChecked(t)
	rng := rand.New(rand.NewSource(1))
	a := gatherChunksTestArray(pm, rng, arrow.PrimitiveTypes.Int64, 3, false, false)
	defer a.Release()
	s := gatherChunksTestArray(pm, rng, arrow.BinaryTypes.String, 3, false, false)
	defer s.Release()
	for name, call := range map[string]func() (arrow.Array, error){
		"lengths":   func() (arrow.Array, error) { return GatherChunksView(pm, []arrow.Array{s}, []int32{0}, nil) },
		"no chunks": func() (arrow.Array, error) { return GatherChunksView(pm, nil, nil, nil) },
		"types":     func() (arrow.Array, error) { return GatherChunksView(pm, []arrow.Array{s, a}, []int32{0}, []int32{0}) },
		"int64":     func() (arrow.Array, error) { return GatherChunksView(pm, []arrow.Array{a}, []int32{0}, []int32{0}) },
	} {
		if out, err := call(); err == nil {
			out.Release()
			t.Errorf("%s: no error", name)
		}
	}
	for _, in := range []arrow.Array{a, s} {
		out, err := MaterializeViews(pm, in)
		if err != nil {
			t.Fatal(err)
		}
		if out != in {
			t.Errorf("MaterializeViews of %s: a new array", in.DataType())
		}
		out.Release()
	}
}

// BenchmarkGatherChunksView: what q20's output strings cost an epoch as a
// copy (copy: GatherChunks), as views (view: GatherChunksView) and as
// views turned into owned strings at read (viewRead: the view gather and
// MaterializeViews, what a reader would pay). 1,800 rows of 600-byte
// strings (q20's auction extra) from 64 chunks of 200 rows; fresh: every
// buffer a fresh allocation of the Go allocator, as q20's kept output is.
//
//	go test -run '^$' -bench GatherChunksView ./vector/
func BenchmarkGatherChunksView(b *testing.B) {
	mem := memory.NewGoAllocator()
	rng := rand.New(rand.NewSource(1))
	const nChunks, per, out = 64, 200, 1800
	chunks := make([]arrow.Array, nChunks)
	for k := range chunks {
		sb := array.NewStringBuilder(mem)
		for i := 0; i < per; i++ {
			sb.Append(strings.Repeat("x", 500+rng.Intn(200)))
		}
		chunks[k] = sb.NewArray()
		sb.Release()
	}
	defer releaseArrays(chunks)
	src, rows := make([]int32, out), make([]int32, out)
	for o := range src {
		src[o], rows[o] = int32(rng.Intn(nChunks)), int32(rng.Intn(per))
	}
	run := func(b *testing.B, f func() (arrow.Array, error)) {
		b.ReportAllocs()
		for b.Loop() {
			a, err := f()
			if err != nil {
				b.Fatal(err)
			}
			a.Release()
		}
	}
	b.Run("copy", func(b *testing.B) {
		run(b, func() (arrow.Array, error) { return GatherChunks(mem, chunks, src, rows) })
	})
	b.Run("view", func(b *testing.B) {
		run(b, func() (arrow.Array, error) { return GatherChunksView(mem, chunks, src, rows) })
	})
	b.Run("viewRead", func(b *testing.B) {
		run(b, func() (arrow.Array, error) {
			v, err := GatherChunksView(mem, chunks, src, rows)
			if err != nil {
				return nil, err
			}
			defer v.Release()
			return MaterializeViews(mem, v)
		})
	})
}
