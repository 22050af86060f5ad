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
)

// The records of a repartition topic (docs/cluster.md). The Kafka key
// says what a record is:
//
//   - hopKeyData: the value is an Arrow IPC stream (schema, then record
//     batches, bodies compressed with zstd) of rows that hash to the
//     record's partition.
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

// encodeHopBatch writes recs (of schema) as one Arrow IPC stream with
// zstd-compressed bodies.
func encodeHopBatch(mem memory.Allocator, schema *arrow.Schema, recs ...arrow.Record) ([]byte, error) {
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(schema), ipc.WithAllocator(mem), ipc.WithZstd())
	for _, r := range recs {
		if err := w.Write(r); err != nil {
			w.Close()
			return nil, fmt.Errorf("kafka: encode repartition batch: %w", err)
		}
	}
	if err := w.Close(); err != nil {
		return nil, fmt.Errorf("kafka: encode repartition batch: %w", err)
	}
	return buf.Bytes(), nil
}

// decodeHopBatch reads the record batches of one hop record; each must
// have schema want (the upstream stage's). The caller releases them. Bad
// input is an error, never a panic.
func decodeHopBatch(mem memory.Allocator, want *arrow.Schema, value []byte) (out []arrow.Record, err error) {
	defer func() {
		if p := recover(); p != nil { // arrow's IPC reader panics on some corrupt input
			for _, r := range out {
				r.Release()
			}
			out, err = nil, fmt.Errorf("kafka: repartition record: corrupt Arrow IPC stream (%v)", p)
		}
	}()
	rd, err := ipc.NewReader(bytes.NewReader(value), ipc.WithAllocator(mem), ipc.WithSchema(want))
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
