package checkpoint

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkStateRecordChecksum builds a state record holding one delta of
// q20's size (about 1.5 MB of stored rows an epoch), its trailer checksum
// computed as it is written: "hashed" checksums the record's body over
// again (as before), "carried" combines the trailer's checksum in.
//
//	go test -run '^$' -bench StateRecordChecksum -benchmem ./checkpoint/
func BenchmarkStateRecordChecksum(b *testing.B) {
	rng := rand.New(rand.NewPCG(7, 8))
	payload := make([]byte, 1_500_000)
	for i := range payload {
		payload[i] = byte(rng.Uint32())
	}
	for _, carried := range []bool{false, true} {
		name := "hashed"
		if carried {
			name = "carried"
		}
		b.Run(name, func(b *testing.B) {
			var sums crcSpans
			s := &sums
			if !carried {
				s = nil
			}
			build := func(dst []byte) []byte {
				start := len(dst)
				dst = append(dst, payload...)
				return stateTrailerFrom(dst, start, s)
			}
			buf := make([]byte, 0, len(payload)+64)
			b.SetBytes(int64(len(payload)))
			for b.Loop() {
				buf = appendRecord(buf[:0], record{kind: kindState, epoch: 1, build: build, sums: s})
			}
		})
	}
}
