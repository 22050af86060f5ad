package checkpoint

import (
	"bytes"
	"encoding/binary"
	"errors"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// FuzzChunkTotals: on a patched state payload, chunkTotals (headers
// only) never panics, fails only with ErrCorrupt, and agrees with a walk
// of every entry (walkChunks) whenever that walk succeeds: the counts a
// snapshot segment's bookkeeping takes from the headers are the entries'.
func FuzzChunkTotals(f *testing.F) {
	mem := memory.NewGoAllocator()
	var bases [][]byte
	for _, n := range []int{1, 40, 2000} {
		keys, vals, del := testState(n)
		raw, err := encodeState(mem, keys, vals, del)
		if err != nil {
			f.Fatal(err)
		}
		payload, v2, err := columnsPayload(raw)
		if err != nil || !v2 {
			f.Fatalf("payload of a %d-key state: v2 %v, %v", n, v2, err)
		}
		// Two chunks back to back, as a segment concatenates deltas.
		bases = append(bases, payload, append(bytes.Clone(payload), payload...))
	}
	f.Add([]byte{0, 0, 0, 0})
	f.Add([]byte{1, 5, 0, 0xff})
	f.Add([]byte{3, 0, 0, 0, 0, 0, 0x80})
	f.Add([]byte{4, 9, 0, 1})
	f.Fuzz(func(t *testing.T, patch []byte) {
		if len(patch) < 3 {
			return
		}
		payload := bytes.Clone(bases[int(patch[0])%len(bases)])
		off := int(binary.LittleEndian.Uint16(patch[1:3])) % len(payload)
		for i, b := range patch[3:] {
			if off+i < len(payload) {
				payload[off+i] ^= b
			}
		}
		if len(patch)%7 == 0 {
			payload = payload[:off] // truncated
		}
		entries, nbytes, err := chunkTotals(payload)
		if err != nil && !errors.Is(err, ErrCorrupt) {
			t.Fatalf("error without ErrCorrupt: %v", err)
		}
		var wantEntries, wantBytes int64
		werr := walkChunks(payload, func(key, value []byte, _ bool) {
			wantEntries++
			wantBytes += int64(len(key) + len(value))
		})
		if werr != nil {
			return
		}
		if err != nil {
			t.Fatalf("chunkTotals refused a payload walkChunks reads: %v", err)
		}
		if entries != wantEntries {
			t.Fatalf("chunkTotals: %d entries, walk %d", entries, wantEntries)
		}
		// A tombstone's value bytes, if a damaged file gives it any, are
		// counted by the header and not by the walk.
		if nbytes < wantBytes {
			t.Fatalf("chunkTotals: %d bytes, walk %d", nbytes, wantBytes)
		}
	})
}
