package security

import (
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// TestMalformedRecordErrorBounded is a streaming table that fails on a
// malformed CSV record of 8 MiB and restarts on failure (found in session
// 37): the error quoted the record whole, twice, so each of its five
// restarts logged a line of 16 MiB (100 MB of log), its status and
// system.streaming_queries' exception held 16 MiB, and the server's RSS
// went from 68 to 412 MiB. Now the error names the file, the line and the
// column and quotes at most a kilobyte of the record; a query's error is
// bounded to 4 KiB wherever it is logged, kept or shown.
func TestMalformedRecordErrorBounded(t *testing.T) {
	e := startServe(t)
	c := e.admin()
	pid := e.cmd.Process.Pid
	base := restingRSS(t, pid)
	hwm := watchRSS(t, pid)
	in := filepath.Join(e.data, "landing")
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	c.mustRun(t, fmt.Sprintf("CREATE TABLE landing (id BIGINT) USING csv OPTIONS (path '%s', mode 'FAILFAST')", in))
	c.mustRun(t, `CREATE STREAMING TABLE ids TBLPROPERTIES ('restartPolicy' = 'on-failure',
		'restartMaxAttempts' = '3', 'restartBackoff' = '10 ms') AS SELECT id FROM STREAM landing`)
	logBefore := len(e.output())
	if err := os.WriteFile(filepath.Join(in, "bad.csv"), []byte(strings.Repeat("n", 8<<20)+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var rows [][]string
	waitFor(t, "the query to be listed as FAILED", func() bool {
		rows = c.mustRun(t, "SELECT name, status, length(exception), exception FROM system.streaming_queries")
		return len(rows) == 1 && rows[0][1] == "FAILED"
	})
	hwm.end(t, "a streaming table failing on an 8 MiB record", base)
	n, _ := strconv.Atoi(rows[0][2])
	if ex := rows[0][3]; n > 8<<10 || !strings.Contains(ex, "bad.csv line 1 column id") || !strings.Contains(ex, "after 3 consecutive restarts") {
		t.Errorf("exception of %d bytes: %s; want at most 8 KiB naming bad.csv line 1 column id after 3 restarts", n, short(ex))
	}
	restarts := 0
	for _, line := range strings.Split(e.output()[logBefore:], "\n") {
		if strings.Contains(line, "restarting from its checkpoint") {
			restarts++
		}
		if len(line) > 16<<10 {
			t.Errorf("a log line of %d bytes: %s", len(line), short(line))
		}
	}
	if restarts != 3 {
		t.Errorf("%d restarts logged, want 3", restarts)
	}
	t.Logf("log %d bytes for the failure and its 3 restarts; exception %d bytes", len(e.output())-logBefore, n)
	e.alive(t)
}
