package checkpoint

import (
	"fmt"
	"sync"

	"github.com/klauspost/compress/zstd"
)

// stateCompressMin is the size of an encoded state body below which it is
// stored uncompressed (see sealColumns): compressing the delta of an epoch
// that changed little saves a few bytes at the cost of most of its commit.
const stateCompressMin = 4 << 10

// zstdFrameMagic starts every zstd frame (RFC 8878, 3.1.1); an Arrow IPC
// stream starts with 0xFFFFFFFF instead, so the two never collide.
var zstdFrameMagic = []byte{0x28, 0xb5, 0x2f, 0xfd}

// stateZstd returns the zstd decoder shared by every state file of format
// v1 stored as one zstd frame (files of format v2 use S2, see
// statecolumns.go). Creating a decoder allocates its tables and windows;
// DecodeAll is safe for concurrent use, so one serves all partitions.
func stateZstd() (*zstd.Decoder, error) {
	return stateZstdOnce()
}

var stateZstdOnce = sync.OnceValues(func() (*zstd.Decoder, error) {
	// A state file is decoded whole; a damaged frame header must not make
	// the decoder reserve more than a state file can reasonably hold.
	dec, err := zstd.NewReader(nil, zstd.WithDecoderMaxMemory(8<<30), zstd.WithDecoderConcurrency(0))
	if err != nil {
		return nil, fmt.Errorf("checkpoint: zstd decoder: %w", err)
	}
	return dec, nil
})
