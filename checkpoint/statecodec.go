package checkpoint

import (
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// stateCompressMin is the size of an encoded state stream below which it is
// stored uncompressed (see encodeState).
const stateCompressMin = 4 << 10

// zstdFrameMagic starts every zstd frame (RFC 8878, 3.1.1); an Arrow IPC
// stream starts with 0xFFFFFFFF instead, so the two never collide.
var zstdFrameMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// stateCodec returns the zstd encoder and decoder shared by every state
// file. Creating an encoder allocates its tables and windows (hundreds of
// KiB); arrow's ipc.WithZstd did that for every file written, which was
// most of the cost of committing a small delta. EncodeAll and DecodeAll are
// safe for concurrent use, so one pair serves all partitions; it holds no
// data between calls, only reusable scratch space.
//
// The level is SpeedFastest: on the aggregation states measured by
// BenchmarkEncodeState it compresses nearly as well as SpeedDefault (the
// keys are sorted and the values small integers) at a fraction of the time.
// Our own CRC-32C trailer covers the file, so the frame's checksum is off.
func stateCodec() (*zstd.Encoder, *zstd.Decoder, error) {
	c, err := stateCodecOnce()
	return c.enc, c.dec, err
}

type zstdCodec struct {
	enc *zstd.Encoder
	dec *zstd.Decoder
}

var stateCodecOnce = sync.OnceValues(func() (zstdCodec, error) {
	enc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderCRC(false))
	if err != nil {
		return zstdCodec{}, fmt.Errorf("checkpoint: zstd encoder: %w", err)
	}
	// A state file is decoded whole; a damaged frame header must not make
	// the decoder reserve more than a state file can reasonably hold.
	dec, err := zstd.NewReader(nil, zstd.WithDecoderMaxMemory(8<<30), zstd.WithDecoderConcurrency(0))
	if err != nil {
		return zstdCodec{}, fmt.Errorf("checkpoint: zstd decoder: %w", err)
	}
	return zstdCodec{enc, dec}, nil
})
