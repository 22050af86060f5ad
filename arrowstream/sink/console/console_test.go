package console_test

import (
	"bytes"
	"context"
	"flag"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/arrowstream/sink/console"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
)

var update = flag.Bool("update", false, "rewrite the golden files in testdata")

// checkGolden compares got with testdata/<name>.golden (or rewrites it
// with -update).
func checkGolden(t *testing.T, name string, got []byte) {
	t.Helper()
	path := filepath.Join("testdata", name+".golden")
	if *update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("output differs from %s:\n--- got\n%s--- want\n%s", path, got, want)
	}
}

var (
	basicSchema = arrow.NewSchema([]arrow.Field{
		{Name: "id", Type: vector.Int64, Nullable: true},
		{Name: "name", Type: vector.String, Nullable: true},
		{Name: "score", Type: vector.Float64, Nullable: true},
		{Name: "ok", Type: vector.Boolean, Nullable: true},
	}, nil)
	typesSchema = arrow.NewSchema([]arrow.Field{
		{Name: "ts", Type: vector.Timestamp, Nullable: true},
		{Name: "d", Type: vector.Date, Nullable: true},
		{Name: "price", Type: &arrow.Decimal128Type{Precision: 10, Scale: 2}, Nullable: true},
		{Name: "raw", Type: vector.Binary, Nullable: true},
		{Name: "tags", Type: arrow.ListOf(vector.String), Nullable: true},
		{Name: "window", Type: vector.WindowType, Nullable: true},
	}, nil)
)

func TestConsoleGolden(t *testing.T) {
	cases := []struct {
		name   string
		schema *arrow.Schema
		opts   map[string]string
		epoch  int64
		json   []string // one record per element
	}{
		{"basic", basicSchema, nil, 0, []string{
			`[{"id":1,"name":"apple","score":1,"ok":true},{"id":22,"name":null,"score":2.5,"ok":false},{"id":null,"name":"","score":-0.125,"ok":null}]`}},
		{"truncate", basicSchema, nil, 3, []string{
			`[{"id":1,"name":"a string that is much longer than twenty characters","score":1e300,"ok":true}]`}},
		{"no_truncate", basicSchema, map[string]string{"truncate": "false"}, 3, []string{
			`[{"id":1,"name":"a string that is much longer than twenty characters","score":1e300,"ok":true},{"id":12345,"name":"line\nbreak","score":0.5,"ok":false}]`}},
		{"num_rows", basicSchema, map[string]string{"numRows": "2"}, 7, []string{
			`[{"id":1},{"id":2},{"id":3}]`, `[{"id":4},{"id":5}]`}},
		{"num_rows_one", basicSchema, map[string]string{"numRows": "1"}, 7, []string{`[{"id":1},{"id":2}]`}},
		{"num_rows_exact", basicSchema, map[string]string{"numRows": "2"}, 7, []string{`[{"id":1},{"id":2}]`}},
		{"empty", basicSchema, nil, 12, nil},
		{"types", typesSchema, nil, 1, []string{
			`[{"ts":"2024-03-01T12:30:00Z","d":"2024-03-01","price":"12.50","raw":"AP8=","tags":["a","b"],"window":{"start":"2024-03-01T12:30:00.5Z","end":"2024-03-01T12:35:00Z"}},` +
				`{"ts":null,"d":null,"price":null,"raw":null,"tags":[],"window":null}]`}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			mem := poisonmem.New()
			defer mem.AssertSize(t, 0)
			var recs []arrow.Record
			for _, js := range tc.json {
				rec, _, err := array.RecordFromJSON(mem, tc.schema, strings.NewReader(js))
				if err != nil {
					t.Fatal(err)
				}
				recs = append(recs, rec)
			}
			scan, err := vector.NewScan(tc.schema, recs...)
			for _, r := range recs {
				r.Release()
			}
			if err != nil {
				t.Fatal(err)
			}
			var out bytes.Buffer
			s, err := console.New(arrowstream.SinkInfo{Schema: tc.schema, Options: tc.opts}, console.Options{Out: &out})
			if err != nil {
				t.Fatal(err)
			}
			if err := s.AddBatch(context.Background(), tc.epoch, scan); err != nil {
				t.Fatal(err)
			}
			checkGolden(t, tc.name, out.Bytes())
		})
	}
}

func TestConsoleBadOptions(t *testing.T) {
	for _, opts := range []map[string]string{{"numRows": "x"}, {"numRows": "-1"}, {"truncate": "maybe"}} {
		_, err := console.New(arrowstream.SinkInfo{Schema: basicSchema, Options: opts}, console.Options{})
		for k := range opts {
			if err == nil || !strings.Contains(err.Error(), k) {
				t.Errorf("options %v: error %v, want one naming %s", opts, err, k)
			}
		}
	}
}

// TestConsoleQuery runs a streaming query into format("console") through a
// Session and checks the whole output of two epochs.
func TestConsoleQuery(t *testing.T) {
	ctx := context.Background()
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	s := arrowstream.NewSession(arrowstream.SessionOptions{Allocator: mem, NoSync: true})
	var out bytes.Buffer
	console.InstallWith(s, console.Options{Out: &out})
	schema := arrow.NewSchema([]arrow.Field{{Name: "word", Type: vector.String}}, nil)
	src := arrowstream.NewMemoryStream(mem, schema)
	defer src.Close()
	s.RegisterStream("words", src)
	q, err := s.ReadStream("words").GroupBy("word").Agg("count(*) AS n").OrderBy("word").
		WriteStream().Format("console").OutputMode(arrowstream.Complete).Option("numRows", "2").
		Option("checkpointLocation", t.TempDir()).Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Stop()
	for _, batch := range [][]string{{"b", "a", "b"}, {"c", "a"}} {
		// One block per batch: an idle query starts an epoch as soon as a
		// block arrives, so the epochs are the blocks.
		rows := make([][]any, len(batch))
		for i, w := range batch {
			rows[i] = []any{w}
		}
		if _, err := src.AddData(rows...); err != nil {
			t.Fatal(err)
		}
		if err := q.ProcessAllAvailable(ctx); err != nil {
			t.Fatal(err)
		}
	}
	q.Stop()
	if d := q.LastProgress().Sink.Description; d != "ConsoleSink[numRows=2, truncate=true]" {
		t.Errorf("sink description %q", d)
	}
	checkGolden(t, "query", out.Bytes())
}

func TestConsoleFloatText(t *testing.T) {
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{{Name: "f", Type: vector.Float64}}, nil)
	rec, _, err := array.RecordFromJSON(mem, schema, strings.NewReader(`[{"f":1e300},{"f":-2.5e-5},{"f":12345678},{"f":0.001},{"f":0}]`))
	if err != nil {
		t.Fatal(err)
	}
	scan, err := vector.NewScan(schema, rec)
	rec.Release()
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	s, _ := console.New(arrowstream.SinkInfo{Schema: schema}, console.Options{Out: &out})
	if err := s.AddBatch(context.Background(), 0, scan); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"|  1.0E300|", "|-2.5E-5|", "|1.2345678E7|", "|    0.001|", "|      0.0|"} {
		if !strings.Contains(out.String(), strings.Trim(want, "| ")+"|") {
			t.Errorf("output lacks %s:\n%s", want, out.String())
		}
	}
}

// TestConsoleQueriesShareAWriter: two queries printing to one buffer
// through one InstallWith never write at the same time (run with -race)
// and each epoch's block stays whole.
func TestConsoleQueriesShareAWriter(t *testing.T) {
	ctx := context.Background()
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	s := arrowstream.NewSession(arrowstream.SessionOptions{Allocator: mem, NoSync: true})
	var out bytes.Buffer
	console.InstallWith(s, console.Options{Out: &out})
	schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: vector.Int64}}, nil)
	var queries []*arrowstream.StreamingQuery
	var srcs []*arrowstream.MemoryStream
	for i := range 2 {
		src := arrowstream.NewMemoryStream(mem, schema)
		defer src.Close()
		name := fmt.Sprintf("in%d", i)
		s.RegisterStream(name, src)
		q, err := s.ReadStream(name).WriteStream().Format("console").Option("checkpointLocation", t.TempDir()).Start(ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer q.Stop()
		queries = append(queries, q)
		srcs = append(srcs, src)
	}
	for round := range 20 {
		for _, src := range srcs {
			if _, err := src.AddData([]any{int64(round)}); err != nil {
				t.Fatal(err)
			}
		}
	}
	for _, q := range queries {
		if err := q.ProcessAllAvailable(ctx); err != nil {
			t.Fatal(err)
		}
		q.Stop()
	}
	blocks := strings.Split(out.String(), "-------------------------------------------\nBatch: ")
	for _, b := range blocks[1:] {
		if strings.Count(b, "+---+") != 3 || !strings.HasSuffix(b, "+\n\n") {
			t.Fatalf("interleaved block %q", b)
		}
	}
}
