package kafka

import (
	"context"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/vector"
)

// BenchmarkHopCodec measures the repartition hop's CPU per event outside
// Kafka: hashing the key into 12 partitions, gathering each partition's
// rows, encoding them as zstd-compressed Arrow IPC (upstream), and
// decoding them (downstream) in one process, for an epoch of 12 × 8192 rows (one full
// record per partition; smaller epochs pay the per-record overhead of
// the IPC stream and the zstd frame over fewer rows). ns/event is the cost per row; the Kafka
// produce and fetch of the bytes come on top (bytes/event reports them).
func BenchmarkHopCodec(b *testing.B) {
	mem := memory.NewGoAllocator()
	const rows = 12 * hopRowsPerRecord // an epoch that fills one record per partition
	rec := hopRecord(mem, 0, rows, 1000)
	defer rec.Release()
	s := &hopSink{mem: mem, spec: stream.HopSpec{Schema: hopTestSchema, KeyColumns: []int{0}, Partitions: 12}}
	enc, err := newHopEncoder()
	if err != nil {
		b.Fatal(err)
	}
	defer enc.Close()
	dec, err := newHopDecoder()
	if err != nil {
		b.Fatal(err)
	}
	defer dec.Close()
	msg, err := hopSchemaMessage(mem, hopTestSchema)
	if err != nil {
		b.Fatal(err)
	}
	hashes := make([]int32, rows)
	idx := make([][]int32, 12)
	var bytes int64
	cpu0 := processCPU()
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if err := s.partitionRows(rec, hashes); err != nil {
			b.Fatal(err)
		}
		for p := range idx {
			idx[p] = idx[p][:0]
		}
		for r, h := range hashes {
			idx[h] = append(idx[h], int32(r))
		}
		for _, sel := range idx {
			part, err := vector.TakeRecord(mem, rec, sel)
			if err != nil {
				b.Fatal(err)
			}
			v, err := encodeHopBatch(mem, enc, hopTestSchema, part)
			part.Release()
			if err != nil {
				b.Fatal(err)
			}
			bytes += int64(len(v))
			out, err := decodeHopBatch(mem, dec, hopTestSchema, msg, v)
			if err != nil {
				b.Fatal(err)
			}
			for _, r := range out {
				r.Release()
			}
		}
	}
	b.StopTimer()
	events := float64(b.N) * rows
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/events, "ns/event")
	// CPU time (user + system) per event: the wall time above stretches
	// with the machine's load, the CPU time much less.
	b.ReportMetric(float64((processCPU()-cpu0).Nanoseconds())/events, "cpu-ns/event")
	b.ReportMetric(float64(bytes)/events, "bytes/event")
}

// processCPU is the process's user + system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// BenchmarkHopSourceEpochDecode measures a downstream epoch's decoding
// of one hop record of 4,000 rows: "kept" with the source's codec kept
// across epochs (hopCodec), "fresh" with a codec made per epoch as
// before (a zstd decoder, the schema message, a new decompression
// buffer). B/op is the Go heap an epoch allocates: in a process whose
// heap has not been recycled, fresh pages first touched (docs/cluster.md,
// session 30).
func BenchmarkHopSourceEpochDecode(b *testing.B) {
	mem := memory.NewGoAllocator()
	rec := hopRecord(mem, 0, 4000, 1000)
	defer rec.Release()
	enc, err := newHopEncoder()
	if err != nil {
		b.Fatal(err)
	}
	defer enc.Close()
	v, err := encodeHopBatch(mem, enc, hopTestSchema, rec)
	if err != nil {
		b.Fatal(err)
	}
	in := kafkaHopRows(mem, v)
	defer in.Release()
	for _, kept := range []bool{true, false} {
		name := "fresh"
		if kept {
			name = "kept"
		}
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			s := &hopSource{mem: mem, schema: hopTestSchema, topic: "hop"}
			for i := 0; i < b.N; i++ {
				if !kept {
					s.codec.close()
					s = &hopSource{mem: mem, schema: hopTestSchema, topic: "hop"}
				}
				in.Retain()
				scan, err := vector.NewScan(in.Schema(), in)
				if err != nil {
					b.Fatal(err)
				}
				op, err := s.decodeEpoch(scan)
				if err != nil {
					b.Fatal(err)
				}
				recs, err := vector.Drain(context.Background(), op)
				if err != nil {
					b.Fatal(err)
				}
				for _, r := range recs {
					r.Release()
				}
				if err := op.Close(); err != nil {
					b.Fatal(err)
				}
			}
			s.codec.close()
		})
	}
}
