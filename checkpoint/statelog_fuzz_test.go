package checkpoint

import (
	"bytes"
	"errors"
	"testing"
)

// FuzzDecodeStateSegment: a state log segment decodes into records whose
// re-encoding is the valid prefix, is torn (only at its end) or fails
// with ErrCorrupt; it never panics and its entries stay inside the data.
func FuzzDecodeStateSegment(f *testing.F) {
	seg := appendStateLogHeader(nil, -1, 1)
	seg = appendStateRecord(seg, 1, []StateDelta{{Path: "0/1", Raw: []byte("delta one")}, {Path: "0/7", Raw: nil}}, nil)
	seg = appendStateRecord(seg, 3, []StateDelta{{Path: "2/0", Raw: []byte("x")}}, nil)
	f.Add(seg)
	f.Add(seg[:len(seg)-3])
	f.Add(appendStateLogHeader(nil, 5, 1))
	f.Add([]byte("ASSL"))
	f.Fuzz(func(t *testing.T, data []byte) {
		dec, err := decodeStateSegment("seg", data)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				t.Fatalf("error without ErrCorrupt: %v", err)
			}
			return
		}
		if dec.valid > int64(len(data)) || dec.torn == "" && dec.valid != int64(len(data)) {
			t.Fatalf("valid %d of %d bytes, torn %q", dec.valid, len(data), dec.torn)
		}
		if dec.valid < stateLogHeaderLen {
			return
		}
		again := appendStateLogHeader(nil, dec.prevFirst, dec.coverStart)
		for _, r := range dec.records {
			var deltas []StateDelta
			for _, e := range r.entries {
				if e.off < 0 || e.off+e.n > dec.valid {
					t.Fatalf("entry %s at %d+%d outside the valid %d bytes", e.path, e.off, e.n, dec.valid)
				}
				deltas = append(deltas, StateDelta{Path: e.path, Raw: data[e.off : e.off+e.n]})
			}
			again = appendStateRecord(again, r.version, deltas, nil)
		}
		if !bytes.Equal(again, data[:dec.valid]) {
			t.Fatalf("re-encoding differs:\n%x\n%x", again, data[:dec.valid])
		}
	})
}
