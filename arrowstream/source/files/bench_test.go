package files

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/csv"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/file"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

var benchSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: vector.Int64, Nullable: true},
	{Name: "x", Type: vector.Float64, Nullable: true},
	{Name: "name", Type: vector.String, Nullable: true},
}, nil)

const (
	bareChunkRows    = 8192 // rows per record of the bare readers
	benchFiles       = 4
	benchRowsPerFile = 50_000
)

// writeBenchFiles writes the same rows in every format under dir/<format>.
func writeBenchFiles(b *testing.B, dir string) {
	mem := memory.NewGoAllocator()
	for f := 0; f < benchFiles; f++ {
		var c, j strings.Builder
		rows := make([]vt.Row, benchRowsPerFile)
		for i := range rows {
			id := int64(f*benchRowsPerFile + i)
			x := float64(id) * 0.25
			name := fmt.Sprintf("user-%d", id%1000)
			rows[i] = vt.Row{id, x, name}
			fmt.Fprintf(&c, "%d,%g,%s\n", id, x, name)
			fmt.Fprintf(&j, `{"id":%d,"x":%g,"name":%q}`+"\n", id, x, name)
		}
		for format, text := range map[Format]string{CSV: c.String(), JSON: j.String()} {
			d := filepath.Join(dir, string(format))
			os.MkdirAll(d, 0o755)
			writeFile(b, d, fmt.Sprintf("f%d.%s", f, format), text, f)
		}
		rec := vt.BuildRecord(mem, benchSchema, rows)
		for _, format := range []Format{Parquet, Arrow} {
			sink, err := NewSink(mem, benchSchema, arrowstream.Append, SinkOptions{Format: format, Path: filepath.Join(dir, string(format)), NoSync: true})
			if err != nil {
				b.Fatal(err)
			}
			rec.Retain()
			if err := sink.AddBatch(context.Background(), int64(f), vt.NewFeed(benchSchema, rec)); err != nil {
				b.Fatal(err)
			}
			rec.Release()
		}
		rec.Release()
	}
}

// bareRead reads every file of dir with arrow's own reader, as a program
// without the engine would, and returns the rows.
func bareRead(b *testing.B, mem memory.Allocator, format Format, files []fileInfo) int64 {
	var rows int64
	for _, fi := range files {
		f, err := os.Open(fi.Path)
		if err != nil {
			b.Fatal(err)
		}
		switch format {
		case CSV, JSON:
			data, _ := os.ReadFile(fi.Path)
			var r array.RecordReader
			if format == CSV {
				r = csv.NewReader(bytes.NewReader(data), benchSchema, csv.WithAllocator(mem), csv.WithChunk(bareChunkRows), csv.WithNullReader(true, ""))
			} else {
				r = array.NewJSONReader(bytes.NewReader(data), benchSchema, array.WithAllocator(mem), array.WithChunk(bareChunkRows))
			}
			for r.Next() {
				rows += r.Record().NumRows()
			}
			r.Release()
		case Parquet:
			pf, err := file.NewParquetReader(f, file.WithReadProps(parquet.NewReaderProperties(mem)))
			if err != nil {
				b.Fatal(err)
			}
			fr, _ := pqarrow.NewFileReader(pf, pqarrow.ArrowReadProperties{BatchSize: parquetBatchRows}, mem)
			rr, err := fr.GetRecordReader(context.Background(), nil, nil)
			if err != nil {
				b.Fatal(err)
			}
			for rr.Next() {
				rows += rr.Record().NumRows()
			}
			rr.Release()
			pf.Close()
		case Arrow:
			fr, err := ipc.NewFileReader(f, ipc.WithAllocator(mem))
			if err != nil {
				b.Fatal(err)
			}
			for i := 0; i < fr.NumRecords(); i++ {
				rec, _ := fr.RecordAt(i)
				rows += rec.NumRows()
				rec.Release()
			}
			fr.Close()
		}
		f.Close()
	}
	return rows
}

// BenchmarkFileSource reads the same generated file set (4 files, 200k
// rows of bigint, double, string) with the file source (LatestOffset, Read,
// drain) and with the bare arrow reader, interleaved in each iteration, and
// reports both rates and their ratio.
//
//	go test -run '^$' -bench BenchmarkFileSource -benchtime 3x ./arrowstream/source/files/
func BenchmarkFileSource(b *testing.B) {
	dir := b.TempDir()
	writeBenchFiles(b, dir)
	for _, format := range []Format{CSV, JSON, Parquet, Arrow} {
		b.Run(string(format), func(b *testing.B) {
			mem := memory.NewGoAllocator()
			path := filepath.Join(dir, string(format))
			files, err := listFiles(path, nil)
			if err != nil {
				b.Fatal(err)
			}
			var srcTime, bareTime time.Duration
			var srcRows, bareRows int64
			b.ResetTimer()
			for i := 0; i < b.N; i++ {
				t0 := time.Now()
				bareRows += bareRead(b, mem, format, files)
				t1 := time.Now()
				o, _ := ParseOptions(format, map[string]string{"path": path})
				s, err := NewSource(mem, benchSchema, o)
				if err != nil {
					b.Fatal(err)
				}
				end, err := s.LatestOffset(context.Background())
				if err != nil {
					b.Fatal(err)
				}
				op, err := s.Read(context.Background(), nil, end)
				if err != nil {
					b.Fatal(err)
				}
				for {
					rec, err := op.Next(context.Background())
					if err != nil {
						break
					}
					srcRows += rec.NumRows()
					rec.Release()
				}
				op.Close()
				srcTime += time.Since(t1)
				bareTime += t1.Sub(t0)
			}
			if srcRows != bareRows || srcRows != int64(b.N*benchFiles*benchRowsPerFile) {
				b.Fatalf("source read %d rows, bare reader %d", srcRows, bareRows)
			}
			b.ReportMetric(float64(srcRows)/srcTime.Seconds(), "rows/s")
			b.ReportMetric(float64(bareRows)/bareTime.Seconds(), "bare_rows/s")
			b.ReportMetric(bareTime.Seconds()/srcTime.Seconds(), "vs_bare")
		})
	}
}
