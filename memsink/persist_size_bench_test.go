package memsink_test

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"runtime/metrics"
	"strconv"
	"syscall"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/vector"
)

// passSchema is the cluster scaling test's passthrough table: one short
// string per event ("e123456").
var passSchema = arrow.NewSchema([]arrow.Field{{Name: "v", Type: vector.String, Nullable: true}}, nil)

// bidSchema is shaped like a Nexmark bid as a query's output carries it:
// integers, a low-cardinality string, a URL-like string and a timestamp.
var bidSchema = arrow.NewSchema([]arrow.Field{
	{Name: "auction", Type: vector.Int64},
	{Name: "bidder", Type: vector.Int64},
	{Name: "price", Type: vector.Int64},
	{Name: "channel", Type: vector.String},
	{Name: "url", Type: vector.String},
	{Name: "date_time", Type: arrow.FixedWidthTypes.Timestamp_ms},
}, nil)

// sizedEpoch builds an epoch of rows rows of schema (passSchema or
// bidSchema) in records of at most MaxRecordRows rows, deterministic.
func sizedEpoch(mem memory.Allocator, schema *arrow.Schema, rows int) []arrow.Record {
	var recs []arrow.Record
	channels := []string{"Google", "Facebook", "Baidu", "Apple"}
	for start := 0; start < rows; start += memsink.MaxRecordRows {
		n := min(memsink.MaxRecordRows, rows-start)
		b := array.NewRecordBuilder(mem, schema)
		for i := start; i < start+n; i++ {
			if schema == passSchema {
				b.Field(0).(*array.StringBuilder).Append("e" + strconv.Itoa(i))
				continue
			}
			auction := int64(1000 + i/7)
			b.Field(0).(*array.Int64Builder).Append(auction)
			b.Field(1).(*array.Int64Builder).Append(int64(2000 + i*31%5000))
			b.Field(2).(*array.Int64Builder).Append(int64(100 + i*7919%100000))
			b.Field(3).(*array.StringBuilder).Append(channels[i%len(channels)])
			b.Field(4).(*array.StringBuilder).Append("https://www.nexmark.com/item.htm?query=1&channel_id=" + strconv.Itoa(i*13%10000))
			b.Field(5).(*array.TimestampBuilder).Append(arrow.Timestamp(1_700_000_000_000 + int64(i)))
		}
		recs = append(recs, b.NewRecord())
		b.Release()
	}
	return recs
}

// BenchmarkPersistEpochSize commits epochs of 10K and 150K rows to a
// persisted Append table (every write synced): a single instance's epochs
// against a cluster instance's held ones (docs/cluster.md). Per row it
// reports the process's CPU (getrusage, user + system), the Go heap
// allocated (runtime/metrics), the minor page faults and the bytes the
// log grew by on disk; a persisted epoch should cost the same per row
// whatever its size. An op is one epoch. Every epoch is retained (the
// records are shared: the sink only retains them), so the log only grows.
func BenchmarkPersistEpochSize(b *testing.B) {
	for _, sc := range []struct {
		name   string
		schema *arrow.Schema
	}{{"pass", passSchema}, {"bid", bidSchema}} {
		for _, rows := range []int{10_000, 150_000} {
			b.Run(fmt.Sprintf("%s/rows=%d", sc.name, rows), func(b *testing.B) {
				persistEpochSize(b, sc.schema, rows)
			})
		}
	}
}

func persistEpochSize(b *testing.B, schema *arrow.Schema, rows int) {
	// The allocator a session and a server use when given none: its pool
	// recycles what the sink frees between epochs, as in production.
	mem := vector.NewDefaultAllocator()
	defer mem.Close()
	dir := b.TempDir()
	info := arrowstream.SinkInfo{QueryName: "q", Schema: schema, Mode: arrowstream.Append, CheckpointDir: dir}
	tbl, err := memsink.New(mem, info, memsink.Options{Persist: true, Writer: &checkpoint.Writer{}, CompactAfter: -1, Logger: quiet})
	if err != nil {
		b.Fatal(err)
	}
	defer tbl.Close()
	recs := sizedEpoch(mem, schema, rows)
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	ctx := context.Background()
	commit := func(e int64) {
		s, err := vector.NewScan(schema, recs...)
		if err != nil {
			b.Fatal(err)
		}
		if err := tbl.AddBatch(ctx, e, s); err != nil {
			b.Fatal(err)
		}
	}
	// One epoch first: the log's segment exists and the table's
	// structures are made, as in a running query.
	commit(0)
	disk0 := dirBytes(b, filepath.Join(dir, memsink.SinkDir))
	heap := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	metrics.Read(heap)
	heap0 := heap[0].Value.Uint64()
	var ru0 syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru0)
	e := int64(1)
	b.ResetTimer()
	for b.Loop() {
		commit(e)
		e++
	}
	b.StopTimer()
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	metrics.Read(heap)
	n := float64(e-1) * float64(rows)
	cpu := ru.Utime.Nano() + ru.Stime.Nano() - ru0.Utime.Nano() - ru0.Stime.Nano()
	b.ReportMetric(float64(cpu)/n, "cpu-ns/row")
	b.ReportMetric(float64(heap[0].Value.Uint64()-heap0)/n, "heap-B/row")
	b.ReportMetric(float64(ru.Minflt-ru0.Minflt)/n*1000, "faults/krow")
	b.ReportMetric(float64(dirBytes(b, filepath.Join(dir, memsink.SinkDir))-disk0)/n, "disk-B/row")
}

// dirBytes is the size of the files in dir.
func dirBytes(b *testing.B, dir string) int64 {
	ents, err := os.ReadDir(dir)
	if err != nil {
		b.Fatal(err)
	}
	var n int64
	for _, e := range ents {
		fi, err := e.Info()
		if err != nil {
			b.Fatal(err)
		}
		n += fi.Size()
	}
	return n
}
