package files

import (
	"context"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/internal/testutil"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/memsink"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// addCSVFiles writes files first..last-1 of 10 rows each (ids file*10+i).
func addCSVFiles(t *testing.T, dir string, first, last int) {
	t.Helper()
	for f := first; f < last; f++ {
		var b strings.Builder
		for i := 0; i < 10; i++ {
			fmt.Fprintf(&b, "%d,n%d\n", f*10+i, f)
		}
		writeFile(t, dir, fmt.Sprintf("in-%03d.csv", f), b.String(), f)
	}
}

func newEngineSession(mem memory.Allocator) (*arrowstream.Session, *memsink.Catalog) {
	s := arrowstream.NewSession(arrowstream.SessionOptions{Allocator: mem, NoSync: true,
		Conf: map[string]string{arrowstream.ConfShufflePartitions: "2"}})
	Install(s)
	cat := memsink.NewCatalog()
	memsink.Install(s, cat, memsink.Options{})
	return s, cat
}

// sqlIDs runs a query whose first column is a bigint id and returns the
// ids sorted.
func sqlIDs(t *testing.T, s *arrowstream.Session, q string) []int64 {
	t.Helper()
	ctx := context.Background()
	res, err := s.SQL(ctx, q)
	if err != nil {
		t.Fatal(err)
	}
	rows, err := drain(t, res.Op)
	if err != nil {
		t.Fatal(err)
	}
	var ids []int64
	for _, r := range rows {
		ids = append(ids, r[0].(int64))
	}
	sort.Slice(ids, func(i, j int) bool { return ids[i] < ids[j] })
	return ids
}

// checkExactlyOnce fails unless ids are 0..n-1, each once.
func checkExactlyOnce(t *testing.T, what string, ids []int64, n int) {
	t.Helper()
	if len(ids) != n {
		t.Fatalf("%s: %d rows, want %d", what, len(ids), n)
	}
	for i, id := range ids {
		if id != int64(i) {
			t.Fatalf("%s: row %d is id %d (missing or repeated ids)", what, i, id)
		}
	}
}

// TestRestartExactlyOnce stops two queries over a file directory mid-stream
// (one into the memory sink, one into the Parquet file sink), adds files,
// restarts them from their checkpoints, and finds every record exactly
// once in both outputs; the file sink's output is read back by batch SQL.
func TestRestartExactlyOnce(t *testing.T) {
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	in, out, ck := t.TempDir(), t.TempDir(), t.TempDir()
	s, cat := newEngineSession(mem)
	defer closeCatalog(cat)
	addCSVFiles(t, in, 0, 4)
	start := func(trigger arrowstream.Trigger) []*arrowstream.StreamingQuery {
		df := s.ReadStreamFormat("csv").Schema(testSchema).Option("maxFilesPerTrigger", "1").Load(in)
		q1, err := df.WriteStream().Format("memory").QueryName("mem_out").Option("persist", "true").
			Option("checkpointLocation", filepath.Join(ck, "mem")).Trigger(trigger).Start(ctx)
		if err != nil {
			t.Fatal(err)
		}
		q2, err := df.WriteStream().Format("parquet").Option("path", out).
			Option("checkpointLocation", filepath.Join(ck, "files")).Trigger(trigger).Start(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return []*arrowstream.StreamingQuery{q1, q2}
	}
	// The first run stops mid-stream: its first trigger takes one file,
	// the next would come an hour later.
	qs := start(arrowstream.ProcessingTime(time.Hour))
	deadline := time.Now().Add(testutil.Scaled(2 * time.Minute))
	for qs[0].LastProgress() == nil || qs[1].LastProgress() == nil {
		if time.Now().After(deadline) {
			t.Fatal("no progress")
		}
		time.Sleep(5 * time.Millisecond)
	}
	for _, q := range qs {
		if err := q.Stop(); err != nil {
			t.Fatal(err)
		}
	}
	if got := sqlIDs(t, s, "SELECT id FROM mem_out"); len(got) != 10 {
		t.Fatalf("the first run wrote %d rows, want one file's 10", len(got))
	}
	addCSVFiles(t, in, 4, 7)
	qs = start(arrowstream.ProcessingTime(20 * time.Millisecond))
	for _, q := range qs {
		if err := q.ProcessAllAvailable(ctx); err != nil {
			t.Fatal(err)
		}
	}
	p := qs[0].LastProgress()
	if len(p.Sources) != 1 || p.Sources[0].Metrics["numMalformedRows"] != "0" || !strings.Contains(p.Sources[0].Description, "FileStreamSource") {
		t.Fatalf("source progress %+v", p.Sources)
	}
	for _, q := range qs {
		if err := q.Stop(); err != nil {
			t.Fatal(err)
		}
	}
	checkExactlyOnce(t, "memory sink", sqlIDs(t, s, "SELECT id FROM mem_out"), 70)
	if _, err := s.SQL(ctx, "CREATE TABLE back USING parquet OPTIONS (path '"+out+"')"); err != nil {
		t.Fatal(err)
	}
	checkExactlyOnce(t, "file sink read back by SELECT", sqlIDs(t, s, "SELECT id FROM back"), 70)
	checkExactlyOnce(t, "file sink read back by the file source", streamIDs(t, s, out), 70)
}

// streamIDs reads a sink output directory with the file source (a stream
// run with AvailableNow) into a memory table.
func streamIDs(t *testing.T, s *arrowstream.Session, dir string) []int64 {
	t.Helper()
	ctx := context.Background()
	q, err := s.ReadStreamFormat("parquet").Load(dir).WriteStream().Format("memory").QueryName("readback").
		Trigger(arrowstream.AvailableNow()).Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if err := q.AwaitTermination(ctx); err != nil {
		t.Fatal(err)
	}
	return sqlIDs(t, s, "SELECT id FROM readback")
}

func TestSinkRejectsOtherModes(t *testing.T) {
	mem := vt.NewAllocator(t)
	s, cat := newEngineSession(mem)
	defer closeCatalog(cat)
	in := t.TempDir()
	addCSVFiles(t, in, 0, 1)
	df := s.ReadStreamFormat("csv").Schema(testSchema).Load(in).GroupBy("name").Count()
	_, err := df.WriteStream().Format("parquet").OutputMode(arrowstream.Complete).Option("path", t.TempDir()).Start(context.Background())
	if err == nil || !strings.Contains(err.Error(), "does not support complete output mode") {
		t.Fatalf("complete mode into the file sink: %v", err)
	}
}

// closeCatalog releases the memory sink's tables.
func closeCatalog(cat *memsink.Catalog) {
	for _, n := range cat.List() {
		if t, ok := cat.Drop(n); ok {
			t.Close()
		}
	}
}

// TestFailFastStopsQuery: a malformed line in FAILFAST mode fails the query
// with the file and line in its exception.
func TestFailFastStopsQuery(t *testing.T) {
	mem := vt.NewAllocator(t)
	s, cat := newEngineSession(mem)
	defer closeCatalog(cat)
	in := t.TempDir()
	writeFile(t, in, "bad.csv", badCSV, 0)
	q, err := s.ReadStreamFormat("csv").Schema(testSchema).Option("mode", "FAILFAST").Load(in).
		WriteStream().Format("memory").QueryName("ff").Start(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	err = q.AwaitTermination(context.Background())
	if err == nil || !strings.Contains(err.Error(), "bad.csv line 3 column id") {
		t.Fatalf("query ended with %v", err)
	}
}
