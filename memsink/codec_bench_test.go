package memsink

import (
	"fmt"
	"strconv"
	"syscall"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// countingPayloads is an ipc.PayloadWriter that counts the bytes it is
// given (message metadata and body) and keeps none.
type countingPayloads struct{ n int64 }

func (c *countingPayloads) Start() error { return nil }
func (c *countingPayloads) Close() error { return nil }
func (c *countingPayloads) WritePayload(p ipc.Payload) error {
	m := p.Meta()
	c.n += int64(m.Len())
	m.Release()
	return p.SerializeBody(c)
}
func (c *countingPayloads) Write(b []byte) (int, error) { c.n += int64(len(b)); return len(b), nil }

// bidRecord is a record of rows Nexmark-bid-like rows (the schema of
// BenchmarkPersistEpochSize's "bid").
func bidRecord(mem memory.Allocator, rows int) arrow.Record {
	s := arrow.NewSchema([]arrow.Field{
		{Name: "auction", Type: vector.Int64}, {Name: "bidder", Type: vector.Int64}, {Name: "price", Type: vector.Int64},
		{Name: "channel", Type: vector.String}, {Name: "url", Type: vector.String}, {Name: "date_time", Type: arrow.FixedWidthTypes.Timestamp_ms}}, nil)
	channels := []string{"Google", "Facebook", "Baidu", "Apple"}
	b := array.NewRecordBuilder(mem, s)
	defer b.Release()
	for i := range rows {
		b.Field(0).(*array.Int64Builder).Append(int64(1000 + i/7))
		b.Field(1).(*array.Int64Builder).Append(int64(2000 + i*31%5000))
		b.Field(2).(*array.Int64Builder).Append(int64(100 + i*7919%100000))
		b.Field(3).(*array.StringBuilder).Append(channels[i%len(channels)])
		b.Field(4).(*array.StringBuilder).Append("https://www.nexmark.com/item.htm?query=1&channel_id=" + strconv.Itoa(i*13%10000))
		b.Field(5).(*array.TimestampBuilder).Append(arrow.Timestamp(1_700_000_000_000 + int64(i)))
	}
	return b.NewRecord()
}

// BenchmarkEncodeKeptWriter measures the codecs' own cost per row: one
// IPC writer kept for every op (so zstd's encoder, about 20 MB of state
// per writer in arrow/go v17, is built once, not per epoch as the sink's
// files need), epochs of 10K and 150K rows of the passthrough's string
// column and of bid-like rows. It is the best zstd could do if the sink
// kept an encoder across epochs: the figures behind the sink's choice of
// LZ4 (docs/cluster.md, session 29).
func BenchmarkEncodeKeptWriter(b *testing.B) {
	mem := memory.NewGoAllocator()
	for _, kind := range []string{"pass", "bid"} {
		var rec arrow.Record
		if kind == "pass" {
			rec = stringRecord(mem, MaxRecordRows)
		} else {
			rec = bidRecord(mem, MaxRecordRows)
		}
		for _, rows := range []int{10_000, 150_000} {
			for _, codec := range []string{"lz4", "zstd"} {
				b.Run(fmt.Sprintf("%s/rows=%d/%s", kind, rows, codec), func(b *testing.B) {
					opt := ipc.WithLZ4()
					if codec == "zstd" {
						opt = ipc.WithZstd()
					}
					pw := &countingPayloads{}
					w := ipc.NewWriterWithPayloadWriter(pw, ipc.WithSchema(rec.Schema()), ipc.WithAllocator(mem), opt)
					defer w.Close()
					// The schema message and the encoder's first use are
					// outside the measurement.
					first := rec.NewSlice(0, 10)
					if err := w.Write(first); err != nil {
						b.Fatal(err)
					}
					first.Release()
					pw.n = 0
					var ru0, ru syscall.Rusage
					syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
					n := 0
					for b.Loop() {
						for left := rows; left > 0; left -= MaxRecordRows {
							s := rec.NewSlice(0, int64(min(left, MaxRecordRows)))
							if err := w.Write(s); err != nil {
								b.Fatal(err)
							}
							s.Release()
						}
						n += rows
					}
					syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
					b.ReportMetric(float64(ru.Utime.Nano()+ru.Stime.Nano()-ru0.Utime.Nano()-ru0.Stime.Nano())/float64(n), "cpu-ns/row")
					b.ReportMetric(float64(pw.n)/float64(n), "B/row")
				})
			}
		}
		rec.Release()
	}
}
