package stateful

import (
	"bytes"
	"testing"
)

// FuzzDecodeOverEntry: a streaming OVER state value read back from a
// checkpoint never panics, and what decodes re-encodes to the same bytes.
func FuzzDecodeOverEntry(f *testing.F) {
	e := &overEntry{hist: [][]byte{{1, 2}, {}}, wait: []overRow{{at: 7, row: []byte{3}}, {at: -1, row: nil}}}
	f.Add(e.encode(nil))
	f.Add((&overEntry{}).encode(nil))
	f.Add([]byte{})
	f.Add([]byte{0x80})
	f.Add([]byte{2, 1})
	f.Fuzz(func(t *testing.T, v []byte) {
		e, err := decodeOverEntry(v)
		if err != nil {
			return
		}
		if got := e.encode(nil); !bytes.Equal(got, v) {
			// Uvarints have several encodings; the canonical one must be
			// stable.
			again, err := decodeOverEntry(got)
			if err != nil {
				t.Fatalf("re-encoded %x does not decode: %v", got, err)
			}
			if !bytes.Equal(again.encode(nil), got) {
				t.Fatalf("encoding not stable: %x", got)
			}
		}
	})
}

func TestOverEntryRoundTrip(t *testing.T) {
	e := &overEntry{hist: [][]byte{{1, 2}, {}}, wait: []overRow{{at: 7, row: []byte{3}}, {at: -1, row: []byte{}}}}
	got, err := decodeOverEntry(e.encode(nil))
	if err != nil {
		t.Fatal(err)
	}
	if len(got.hist) != 2 || len(got.wait) != 2 || got.wait[0].at != 7 || got.wait[1].at != -1 || !bytes.Equal(got.hist[0], []byte{1, 2}) || !bytes.Equal(got.wait[0].row, []byte{3}) {
		t.Fatalf("round trip: %+v", got)
	}
	for _, bad := range [][]byte{{}, {1}, {0, 1, 2}, {1, 5, 1}} {
		if _, err := decodeOverEntry(bad); err == nil {
			t.Errorf("%x decoded", bad)
		}
	}
}
