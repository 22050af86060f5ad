package kafka

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/klauspost/compress/zstd"
)

// The records of a repartition topic (docs/cluster.md). The Kafka key
// says what a record is:
//
//   - hopKeyData: the value is a zstd frame (klauspost's, with its content
//     checksum) of an Arrow IPC stream (schema, then record batches) of
//     rows that hash to the record's partition. Compressing the whole
//     stream rather than Arrow's per-buffer compression lets the checksum
//     catch a damaged record before Arrow parses it, and bounds the
//     decoder's memory.
//   - hopKeyMarker: the value is a watermark marker of one upstream
//     writer for the partition: 8 bytes big-endian, the largest event
//     time (microseconds) the writer has sent, or math.MinInt64 when it
//     has none; then the writer's id.
var (
	hopKeyData   = []byte("d")
	hopKeyMarker = []byte("w")
)

// hopRowsPerRecord bounds the rows of one Kafka record of a hop (Kafka's
// default message.max.bytes is 1 MB; rows are compressed).
const hopRowsPerRecord = 8192

// hopMaxDecoded bounds the decompressed size of one hop record.
const hopMaxDecoded = 256 << 20

// newHopEncoder returns the zstd encoder of hop records (safe for
// concurrent EncodeAll).
func newHopEncoder() (*zstd.Encoder, error) {
	return zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
}

// newHopDecoder returns the zstd decoder of hop records (DecodeAll only).
func newHopDecoder() (*zstd.Decoder, error) {
	return zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(hopMaxDecoded))
}

// encodeHopBatch writes recs (of schema) as one Arrow IPC stream,
// compressed into one zstd frame by enc (nil: uncompressed, for the
// schema prefix).
func encodeHopBatch(mem memory.Allocator, enc *zstd.Encoder, schema *arrow.Schema, recs ...arrow.Record) ([]byte, error) {
	return encodeHopBatchWith(new(bytes.Buffer), mem, enc, schema, recs...)
}

// encodeHopBatchWith is encodeHopBatch writing the IPC stream into buf, a
// scratch buffer the caller keeps across records (the upstream sink: a
// fresh buffer per record grew, and first touched, its pages for every
// record). buf is reset first, and the value returned never aliases it
// (zstd writes a new slice; uncompressed, a copy), so a record produced
// from it is not changed by the next one.
func encodeHopBatchWith(buf *bytes.Buffer, mem memory.Allocator, enc *zstd.Encoder, schema *arrow.Schema, recs ...arrow.Record) ([]byte, error) {
	buf.Reset()
	w := ipc.NewWriter(buf, ipc.WithSchema(schema), ipc.WithAllocator(mem))
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			w.Close()
			return nil, fmt.Errorf("kafka: encode repartition batch: %w", err)
		}
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("kafka: encode repartition batch: %w", err)
	}
	if enc == nil {
		return bytes.Clone(buf.Bytes()), nil
	}
	return enc.EncodeAll(buf.Bytes(), nil), nil
}

// hopSchemaMessage is the IPC schema message every hop record of schema
// starts with (as encodeHopBatch writes it).
func hopSchemaMessage(mem memory.Allocator, schema *arrow.Schema) ([]byte, error) {
	v, err := encodeHopBatch(mem, nil, schema)
	if err != nil {
		return nil, err
	}
	if len(v) < 8 {
		return nil, fmt.Errorf("kafka: IPC stream of schema %s has %d bytes", schema, len(v))
	}
	return v[:len(v)-8], nil // without the end-of-stream marker
}

// decodeHopBatch reads the record batches of one hop record; each must
// have schema want (the upstream stage's), whose IPC schema message is
// schemaMsg: a record that does not start with it is refused before
// Arrow parses anything (a corrupt schema message makes Arrow's reader
// allocate what its counts say). The caller releases the records. Bad
// input is an error, never a panic.
func decodeHopBatch(mem memory.Allocator, dec *zstd.Decoder, want *arrow.Schema, schemaMsg, value []byte) ([]arrow.Record, error) {
	out, _, err := decodeHopBatchInto(mem, dec, want, schemaMsg, value, nil)
	return out, err
}

// decodeHopBatchInto is decodeHopBatch decompressing into scratch (its
// contents are overwritten; nil: a new buffer), returned for the next
// record (the downstream source keeps it across records and epochs).
// The records never alias it: Arrow's IPC reader copies each message
// body into buffers of mem.
func decodeHopBatchInto(mem memory.Allocator, dec *zstd.Decoder, want *arrow.Schema, schemaMsg, value, scratch []byte) (out []arrow.Record, kept []byte, err error) {
	kept, err = dec.DecodeAll(value, scratch[:0])
	if err != nil {
		return nil, scratch, fmt.Errorf("kafka: repartition record: %w", err)
	}
	out, err = decodeHopStream(mem, want, schemaMsg, kept)
	return out, kept, err
}

// decodeHopStream reads the record batches of one decompressed hop
// record (see decodeHopBatch).
func decodeHopStream(mem memory.Allocator, want *arrow.Schema, schemaMsg, value []byte) (out []arrow.Record, err error) {
	if !bytes.HasPrefix(value, schemaMsg) {
		return nil, fmt.Errorf("kafka: repartition record does not start with the schema of the stage's rows (written by a query of another shape?)")
	}
	defer func() {
		if p := recover(); p != nil { // arrow's IPC reader panics on some corrupt input
			for _, r := range out {
				r.Release()
			}
			out, err = nil, fmt.Errorf("kafka: repartition record: corrupt Arrow IPC stream (%v)", p)
		}
	}()
	// A corrupt length would make the reader allocate gigabytes before
	// it finds the input short: allocations are bounded by what the
	// value can decompress to.
	lim := &limitAllocator{Allocator: mem, left: hopDecodeLimit(len(value))}
	rd, err := ipc.NewReader(bytes.NewReader(value), ipc.WithAllocator(lim), ipc.WithSchema(want))
	if err != nil {
		return nil, fmt.Errorf("kafka: repartition record: %w", err)
	}
	defer rd.Release()
	for {
		rec, err := rd.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			for _, r := range out {
				r.Release()
			}
			return nil, fmt.Errorf("kafka: repartition record: %w", err)
		}
		if int(rec.NumCols()) != want.NumFields() {
			for _, r := range out {
				r.Release()
			}
			return nil, fmt.Errorf("kafka: repartition record has %d columns, want %d", rec.NumCols(), want.NumFields())
		}
		rec.Retain() // the reader releases its current record on the next Read
		out = append(out, rec)
	}
	if err := rd.Err(); err != nil && !errors.Is(err, io.EOF) {
		for _, r := range out {
			r.Release()
		}
		return nil, fmt.Errorf("kafka: repartition record: %w", err)
	}
	return out, nil
}

// hopDecodeLimit bounds the bytes decoding a value of n bytes may
// allocate: zstd's ratio on Arrow columns stays far below 1000:1.
func hopDecodeLimit(n int) int64 { return 1<<20 + 1000*int64(n) }

// errHopTooLarge is the panic a limitAllocator raises (decodeHopBatch
// recovers it).
var errHopTooLarge = errors.New("the record claims more data than it can hold")

// limitAllocator fails (panics with errHopTooLarge, as allocators report
// exhaustion) once its allocations exceed left bytes in total.
type limitAllocator struct {
	memory.Allocator
	left int64
}

func (a *limitAllocator) Allocate(n int) []byte {
	if int64(n) > a.left {
		panic(errHopTooLarge)
	}
	a.left -= int64(n)
	return a.Allocator.Allocate(n)
}

func (a *limitAllocator) Reallocate(n int, b []byte) []byte {
	if grow := int64(n - len(b)); grow > a.left {
		panic(errHopTooLarge)
	} else if grow > 0 {
		a.left -= grow
	}
	return a.Allocator.Reallocate(n, b)
}

// encodeHopMarker is a watermark marker's value.
func encodeHopMarker(maxEventTime int64, writer string) []byte {
	b := make([]byte, 8, 8+len(writer))
	binary.BigEndian.PutUint64(b, uint64(maxEventTime))
	return append(b, writer...)
}

// decodeHopMarker reads a watermark marker.
func decodeHopMarker(v []byte) (maxEventTime int64, writer string, err error) {
	if len(v) < 8 {
		return 0, "", fmt.Errorf("kafka: repartition watermark marker of %d bytes (want at least 8)", len(v))
	}
	return int64(binary.BigEndian.Uint64(v)), string(v[8:]), nil
}
