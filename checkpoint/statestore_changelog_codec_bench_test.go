package checkpoint

import (
	"encoding/binary"
	"fmt"
	"hash/crc32"
	"math/rand/v2"
	"testing"

	"github.com/klauspost/compress/s2"
	"github.com/klauspost/compress/zstd"
)

// codecArena is an epoch's changelog of rows upserts: an aggregation's
// groups (a count and a sum per key) or a join's kept rows (five integer
// columns and 80 bytes of generated strings, as Nexmark's events carry).
func codecArena(kind string, rows int) *changeArena {
	rng := rand.New(rand.NewPCG(1, 2))
	a := &changeArena{}
	key := make([]byte, 8)
	for r := range rows {
		binary.LittleEndian.PutUint64(key, uint64(r*7919))
		var val []byte
		switch kind {
		case "agg":
			val = binary.LittleEndian.AppendUint64(nil, uint64(rng.IntN(100)))
			val = binary.LittleEndian.AppendUint64(val, uint64(rng.IntN(1_000_000)))
		case "join":
			for range 5 {
				val = binary.LittleEndian.AppendUint64(val, uint64(rng.IntN(1_000_000)))
			}
			for range 80 {
				val = append(val, byte('a'+rng.IntN(26)))
			}
		}
		a.add(key, val, true)
	}
	return a
}

// BenchmarkChangelogCodec is what chose how the state log stores an
// epoch's changelog (appendDelta): the chunk written as it is, or
// compressed with S2 or zstd's fastest level, checksummed as the record
// is. ns/op is the CPU of one partition's delta, ratio the bytes written
// over the chunk's. (LZ4, measured the same way with
// github.com/pierrec/lz4/v4 outside the repository, did no better than S2
// in bytes and cost more.)
func BenchmarkChangelogCodec(b *testing.B) {
	zfast, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	if err != nil {
		b.Fatal(err)
	}
	defer zfast.Close()
	for _, kind := range []string{"agg", "join"} {
		for _, rows := range []int{20, 200, 2000, 20000} {
			a := codecArena(kind, rows)
			chunk := a.appendChunk(nil)
			for _, codec := range []string{"none", "s2", "zstd-fastest"} {
				b.Run(fmt.Sprintf("%s/rows=%d/%s", kind, rows, codec), func(b *testing.B) {
					body := make([]byte, 0, len(chunk))
					out := make([]byte, 0, s2.MaxEncodedLen(len(chunk))+len(chunk))
					var n int
					b.SetBytes(int64(len(chunk)))
					for b.Loop() {
						body = a.appendChunk(body[:0])
						written := body
						switch codec {
						case "s2":
							written = s2.Encode(out[:cap(out)], body)
						case "zstd-fastest":
							written = zfast.EncodeAll(body, out[:0])
						}
						n = len(written)
						crc32.Checksum(written, castagnoli)
					}
					b.ReportMetric(float64(n)/float64(len(chunk)), "ratio")
				})
			}
		}
	}
}
