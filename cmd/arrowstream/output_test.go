package main

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
)

// sampleStream is a two-record result with a null, a timestamp, a struct
// and a string needing escapes.
func sampleStream(t *testing.T, mem memory.Allocator) recordStream {
	t.Helper()
	win := arrow.StructOf(arrow.Field{Name: "start", Type: vector.Timestamp}, arrow.Field{Name: "end", Type: vector.Timestamp})
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "n", Type: vector.Int64, Nullable: true},
		{Name: "s", Type: vector.String, Nullable: true},
		{Name: "ts", Type: vector.Timestamp, Nullable: true},
		{Name: "w", Type: win, Nullable: true},
		{Name: "d", Type: vector.Float64, Nullable: true},
	}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	add := func(n any, s any, tsSec int64, d float64) {
		vector.AppendValue(b.Field(0), n)
		vector.AppendValue(b.Field(1), s)
		b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(tsSec * 1e6))
		sb := b.Field(3).(*array.StructBuilder)
		sb.Append(true)
		sb.FieldBuilder(0).(*array.TimestampBuilder).Append(arrow.Timestamp(tsSec * 1e6))
		sb.FieldBuilder(1).(*array.TimestampBuilder).Append(arrow.Timestamp((tsSec + 10) * 1e6))
		b.Field(4).(*array.Float64Builder).Append(d)
	}
	add(int64(12345), "a,\"b\"\nc", 1_700_000_000, 0.5)
	r1 := b.NewRecord()
	add(nil, nil, 1_700_000_010, 2)
	r2 := b.NewRecord()
	defer r1.Release()
	defer r2.Release()
	scan, err := vector.NewScan(schema, r1, r2)
	if err != nil {
		t.Fatal(err)
	}
	return scan
}

func TestWriteResultFormats(t *testing.T) {
	ctx := context.Background()
	want := map[string]string{
		formatTable: "+-------+----------+---------------------+--------------------------------------------+-----+\n" +
			"| n     | s        | ts                  | w                                          | d   |\n" +
			"+-------+----------+---------------------+--------------------------------------------+-----+\n" +
			"| 12345 | a,\"b\"\\nc | 2023-11-14 22:13:20 | {2023-11-14 22:13:20, 2023-11-14 22:13:30} | 0.5 |\n" +
			"|  NULL | NULL     | 2023-11-14 22:13:30 | {2023-11-14 22:13:30, 2023-11-14 22:13:40} |   2 |\n" +
			"+-------+----------+---------------------+--------------------------------------------+-----+\n" +
			"(2 rows)\n",
		formatCSV: "n,s,ts,w,d\n12345,\"a,\"\"b\"\"\nc\",2023-11-14 22:13:20,\"{2023-11-14 22:13:20, 2023-11-14 22:13:30}\",0.5\n" +
			",,2023-11-14 22:13:30,\"{2023-11-14 22:13:30, 2023-11-14 22:13:40}\",2\n",
		formatJSON: `{"n":12345,"s":"a,\"b\"\nc","ts":"2023-11-14T22:13:20Z","w":{"start":"2023-11-14T22:13:20Z","end":"2023-11-14T22:13:30Z"},"d":0.5}` + "\n" +
			`{"n":null,"s":null,"ts":"2023-11-14T22:13:30Z","w":{"start":"2023-11-14T22:13:30Z","end":"2023-11-14T22:13:40Z"},"d":2}` + "\n",
	}
	for format, w := range want {
		t.Run(format, func(t *testing.T) {
			mem := poisonmem.New()
			defer mem.AssertSize(t, 0)
			var out bytes.Buffer
			src := sampleStream(t, mem)
			defer src.(vector.Operator).Close()
			if err := writeResult(ctx, &out, format, src, 0); err != nil {
				t.Fatal(err)
			}
			if out.String() != w {
				t.Fatalf("got:\n%s\nwant:\n%s", out.String(), w)
			}
		})
	}
	t.Run("table max rows", func(t *testing.T) {
		var out bytes.Buffer
		src := sampleStream(t, memory.DefaultAllocator)
		if err := writeResult(ctx, &out, formatTable, src, 1); err != nil {
			t.Fatal(err)
		}
		if !strings.HasSuffix(out.String(), "(2 rows, 1 shown)\n") {
			t.Fatal(out.String())
		}
	})
	t.Run(formatArrow, func(t *testing.T) {
		var out bytes.Buffer
		if err := writeResult(ctx, &out, formatArrow, sampleStream(t, memory.DefaultAllocator), 0); err != nil {
			t.Fatal(err)
		}
		r, err := ipc.NewReader(&out)
		if err != nil {
			t.Fatal(err)
		}
		defer r.Release()
		rows := 0
		for r.Next() {
			rows += int(r.Record().NumRows())
		}
		if rows != 2 || r.Schema().NumFields() != 5 {
			t.Fatalf("read back %d rows, schema %s", rows, r.Schema())
		}
	})
}
