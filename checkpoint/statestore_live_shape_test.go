package checkpoint

import (
	"bytes"
	"context"
	"fmt"
	"math/rand"
	"testing"
)

// slicesView is a LiveView over prepared entries (no allocation per
// entry), optionally telling its shape (LiveShaper), right or wrong.
type slicesView struct {
	keys, values [][]byte
	shape        bool
	n            int
	kb, vb       int64
}

func (v *slicesView) Entries(_ context.Context, emit func(key, value []byte) error) error {
	for i, k := range v.keys {
		if err := emit(k, v.values[i]); err != nil {
			return err
		}
	}
	return nil
}

func (v *slicesView) Release() {}

// shapedView is a slicesView that implements LiveShaper.
type shapedView struct{ *slicesView }

func (v shapedView) EntryShape() (int, int64, int64) { return v.n, v.kb, v.vb }

func newSlicesView(r *rand.Rand, n, maxValue int) *slicesView {
	v := &slicesView{n: n}
	for i := range n {
		k := []byte(fmt.Sprintf("key%07d", i))
		val := make([]byte, r.Intn(maxValue))
		r.Read(val)
		v.keys, v.values = append(v.keys, k), append(v.values, val)
		v.kb += int64(len(k))
		v.vb += int64(len(val))
	}
	return v
}

// TestEncodeLiveViewShaped: a view that tells its entries' count and key
// and value bytes (LiveShaper) is encoded byte for byte as without the
// shape, whether the shape is right or wrong, across several chunks; and
// with the right shape the encode allocates its arena and body once (no
// growth), where growing them by appends allocates each slice again at
// every doubling.
func TestEncodeLiveViewShaped(t *testing.T) {
	r := rand.New(rand.NewSource(7))
	for _, n := range []int{0, 1, 60, 300, 5000, stateChunkRows + 10} {
		v := newSlicesView(r, n, 40)
		want, wantEntries, wantState, err := encodeLiveView(v)
		if err != nil {
			t.Fatal(err)
		}
		right := *v
		wrong := *v
		wrong.n, wrong.kb, wrong.vb = n/3, v.kb/5, v.vb*2
		for name, sv := range map[string]LiveView{"right": shapedView{&right}, "wrong": shapedView{&wrong}} {
			got, entries, state, err := encodeLiveView(sv)
			if err != nil {
				t.Fatal(err)
			}
			if entries != wantEntries || state != wantState || !bytes.Equal(got, want) {
				t.Fatalf("%d entries, %s shape: %d entries of %d bytes in %d file bytes, want %d of %d in %d (or different bytes)",
					n, name, entries, state, len(got), wantEntries, wantState, len(want))
			}
		}
		if n == 60 {
			// Under stateCompressMin: the file is the body itself, which
			// must have been allocated at its size, offsets included.
			raw, _, _, err := encodeLiveView(shapedView{v})
			if err != nil {
				t.Fatal(err)
			}
			if len(raw) >= stateCompressMin || cap(raw) < len(raw) || cap(raw) > len(raw)+64 {
				t.Fatalf("%d entries: a file of %d bytes in a body of %d, want it uncompressed and the body sized to it", n, len(raw), cap(raw))
			}
		}
		if n < 300 || n > stateChunkRows {
			continue
		}
		shaped := testing.AllocsPerRun(5, func() {
			if _, _, _, err := encodeLiveView(shapedView{v}); err != nil {
				t.Fatal(err)
			}
		})
		plain := testing.AllocsPerRun(5, func() {
			if _, _, _, err := encodeLiveView(v); err != nil {
				t.Fatal(err)
			}
		})
		// The arena's five slices and the body once, the compressed
		// file and the compressor's own (12 at 300 and 5,000 entries;
		// 52 and 88 when the arena and the body grow).
		if shaped > 14 {
			t.Errorf("%d entries: %.0f allocations with the shape told (%.0f without), want at most 14", n, shaped, plain)
		}
	}
}
