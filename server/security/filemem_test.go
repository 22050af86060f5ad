package security

import (
	"bufio"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"
	"google.golang.org/grpc/codes"
)

// TestFileReadsCounted: the CSV source reads a file as a stream, counted
// against the query's memory limit (--query-memory 64 MiB). A 192 MB CSV
// file is counted in full while the server's resident set grows by less
// than the file's size (the peak is logged); a 1 GB file without a line end (sparse) is refused with
// RESOURCE_EXHAUSTED naming the limit and the file, having read no more
// than the limit; a Parquet file of one 96 MB page is refused the same
// way, with the server's RSS growing by less than the page; the server
// keeps serving.
func TestFileReadsCounted(t *testing.T) {
	const limit = 64 << 20
	e := startServe(t, "--query-memory", strconv.Itoa(limit))
	pid := e.cmd.Process.Pid
	c := e.admin()

	big := filepath.Join(e.data, "big.csv")
	f, err := os.Create(big)
	if err != nil {
		t.Fatal(err)
	}
	w := bufio.NewWriterSize(f, 1<<20)
	fmt.Fprintln(w, "id,name")
	const rows = 2_000_000
	for i := range rows {
		fmt.Fprintf(w, "%d,a name of some ninety bytes to make the file large: row %030d\n", i, i)
	}
	if err := w.Flush(); err != nil {
		t.Fatal(err)
	}
	st, _ := f.Stat()
	f.Close()
	c.mustRun(t, fmt.Sprintf("CREATE TABLE bigcsv (id BIGINT, name STRING) USING csv OPTIONS (path '%s', header 'true')", big))
	before := restingRSS(t, pid)
	watch := watchRSS(t, pid)
	got := c.mustRun(t, "SELECT count(*), max(id) FROM bigcsv")
	watch.end(t, fmt.Sprintf("count over a %d MB CSV file", st.Size()>>20), before)
	if grew := watch.peak.Load() - before; grew >= st.Size() {
		t.Errorf("the server's RSS grew by %d MiB reading a %d MiB file: read whole?", grew>>20, st.Size()>>20)
	}
	if len(got) != 1 || got[0][0] != strconv.Itoa(rows) {
		t.Fatalf("count(*) = %v, want %d", got, rows)
	}

	huge := filepath.Join(e.data, "huge.csv")
	if err := os.WriteFile(huge, []byte("id,name\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	if err := os.Truncate(huge, 1<<30); err != nil {
		t.Fatal(err)
	}
	c.mustRun(t, fmt.Sprintf("CREATE TABLE hugecsv (id BIGINT, name STRING) USING csv OPTIONS (path '%s', header 'true')", huge))
	before = restingRSS(t, pid)
	watch = watchRSS(t, pid)
	_, err = c.run(t, "SELECT count(*) FROM hugecsv")
	watch.end(t, "a 1 GB file without a line end", before)
	refused(t, "a 1 GB line under a 64 MiB limit", err, codes.ResourceExhausted, "RESOURCE_EXHAUSTED", "memory limit of 67108864 bytes", huge)

	// A Parquet file whose one page holds 96 MB: its pages are reserved
	// (page and compressed bytes), so the read is refused naming the
	// limit and the file before the page is read, and the column chunk is
	// streamed, not copied whole (twice) onto the heap.
	pq := filepath.Join(e.data, "pages.parquet")
	writeOnePageParquet(t, pq, 2, 48<<20)
	c.mustRun(t, fmt.Sprintf("CREATE TABLE bigpq (s STRING) USING parquet OPTIONS (path '%s')", pq))
	before = restingRSS(t, pid)
	watch = watchRSS(t, pid)
	_, err = c.run(t, "SELECT max(length(s)) FROM bigpq")
	watch.end(t, "a Parquet file of one 96 MB page", before)
	refused(t, "a 96 MB Parquet page under a 64 MiB limit", err, codes.ResourceExhausted, "RESOURCE_EXHAUSTED", "memory limit of 67108864 bytes", pq)
	if grew := watch.peak.Load() - before; grew >= 96<<20 {
		t.Errorf("the server's RSS grew by %d MiB refusing a 96 MB Parquet page under a 64 MiB limit", grew>>20)
	}
	e.alive(t)
}

// writeOnePageParquet writes, at path, a Parquet file of one string
// column "s" of rows random letters values of size bytes, Snappy
// (incompressible), in one row group of one page.
func writeOnePageParquet(t *testing.T, path string, rows, size int) {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{{Name: "s", Type: arrow.BinaryTypes.String}}, nil)
	b := array.NewStringBuilder(memory.NewGoAllocator())
	rng := rand.NewChaCha8([32]byte{1})
	buf := make([]byte, size)
	for range rows {
		_, _ = rng.Read(buf)
		for i, c := range buf {
			buf[i] = 'a' + c%26
		}
		b.Append(string(buf))
	}
	col := b.NewArray()
	b.Release()
	rec := array.NewRecord(schema, []arrow.Array{col}, int64(rows))
	col.Release()
	defer rec.Release()
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	props := parquet.NewWriterProperties(parquet.WithCompression(compress.Codecs.Snappy), parquet.WithDictionaryDefault(false),
		parquet.WithDataPageSize(1<<30), parquet.WithMaxRowGroupLength(int64(rows)))
	w, err := pqarrow.NewFileWriter(schema, f, props, pqarrow.DefaultWriterProps())
	if err == nil {
		err = w.Write(rec)
		if cerr := w.Close(); err == nil {
			err = cerr
		}
	}
	if err != nil {
		t.Fatal(err)
	}
}
