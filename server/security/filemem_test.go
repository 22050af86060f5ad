package security

import (
	"bufio"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"testing"

	"google.golang.org/grpc/codes"
)

// TestFileReadsCounted: the CSV source reads a file as a stream, counted
// against the query's memory limit (--query-memory 64 MiB). A 192 MB CSV
// file is counted in full while the server's resident set grows by less
// than the file's size (the peak is logged); a 1 GB file without a line end (sparse) is refused with
// RESOURCE_EXHAUSTED naming the limit and the file, having read no more
// than the limit; the server keeps serving.
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
	e.alive(t)
}
