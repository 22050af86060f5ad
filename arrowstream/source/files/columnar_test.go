package files

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/ipc"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

func TestColumnarFormats(t *testing.T) {
	rows := []vt.Row{{int64(1), "a"}, {int64(2), nil}, {nil, "c"}}
	nameOnly := arrow.NewSchema([]arrow.Field{{Name: "name", Type: vector.String, Nullable: true}}, nil)
	wrongType := arrow.NewSchema([]arrow.Field{{Name: "id", Type: vector.String, Nullable: true}}, nil)
	missing := arrow.NewSchema([]arrow.Field{{Name: "zz", Type: vector.String, Nullable: true}}, nil)
	tests := []struct {
		name    string
		format  Format
		stream  bool // Arrow IPC stream format instead of the file format
		schema  *arrow.Schema
		want    []vt.Row
		wantErr string
	}{
		{name: "parquet inferred", format: Parquet, want: rows},
		{name: "arrow file inferred", format: Arrow, want: rows},
		{name: "arrow stream inferred", format: Arrow, stream: true, want: rows},
		{name: "parquet column by name", format: Parquet, schema: nameOnly, want: []vt.Row{{"a"}, {nil}, {"c"}}},
		{name: "arrow stream column by name", format: Arrow, stream: true, schema: nameOnly, want: []vt.Row{{"a"}, {nil}, {"c"}}},
		{name: "parquet wrong type", format: Parquet, schema: wrongType, wantErr: "column id is int64 in the file, the schema says utf8"},
		{name: "arrow missing column", format: Arrow, schema: missing, wantErr: "has no column zz"},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			mem := vt.NewAllocator(t)
			dir := t.TempDir()
			rec := vt.BuildRecord(mem, testSchema, rows)
			if tc.stream {
				f, err := os.Create(filepath.Join(dir, "s.arrows"))
				if err != nil {
					t.Fatal(err)
				}
				w := ipc.NewWriter(f, ipc.WithSchema(testSchema), ipc.WithAllocator(mem))
				if err := w.Write(rec); err != nil {
					t.Fatal(err)
				}
				w.Close()
				f.Close()
				rec.Release()
			} else {
				sink, err := NewSink(mem, testSchema, arrowstream.Append, SinkOptions{Format: tc.format, Path: dir, NoSync: true})
				if err != nil {
					t.Fatal(err)
				}
				feed := vt.NewFeed(testSchema, rec)
				rec.Release()
				if err := sink.AddBatch(context.Background(), 0, feed); err != nil {
					t.Fatal(err)
				}
			}
			o, _ := ParseOptions(tc.format, map[string]string{"path": dir})
			s, err := NewSource(mem, tc.schema, o)
			if err != nil {
				t.Fatal(err)
			}
			got, err := readAll(t, s)
			if tc.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tc.wantErr) {
					t.Fatalf("error %v, want %q", err, tc.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if !vt.RowsEqual(tc.want, got) {
				t.Fatalf("rows %v, want %v", got, tc.want)
			}
		})
	}
	// Garbage is an error naming the file, not a panic.
	dir := t.TempDir()
	writeFile(t, dir, "x.parquet", "not parquet at all", 0)
	s := newTestSource(t, vt.NewAllocator(t), Parquet, testSchema, map[string]string{"path": dir})
	if _, err := readAll(t, s); err == nil || !strings.Contains(err.Error(), "x.parquet") {
		t.Fatalf("garbage parquet: %v", err)
	}
}
