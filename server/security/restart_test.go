package security

import (
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"google.golang.org/grpc/codes"
)

// TestRestartPolicyGivesUp: a streaming table with restartPolicy
// 'on-failure' whose source keeps failing restarts restartMaxAttempts
// times, then stays in system.streaming_queries as FAILED with the cause
// and the number of restarts.
func TestRestartPolicyGivesUp(t *testing.T) {
	e := startServe(t)
	c := e.admin()
	in := filepath.Join(e.data, "landing")
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	c.mustRun(t, fmt.Sprintf("CREATE TABLE landing (id BIGINT) USING csv OPTIONS (path '%s', mode 'FAILFAST')", in))
	c.mustRun(t, `CREATE STREAMING TABLE ids TBLPROPERTIES ('restartPolicy' = 'on-failure',
		'restartMaxAttempts' = '2', 'restartBackoff' = '10 ms') AS SELECT id FROM STREAM landing`)
	if err := os.WriteFile(filepath.Join(in, "bad.csv"), []byte("not-a-number\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var rows [][]string
	waitFor(t, "the query to be listed as FAILED", func() bool {
		rows = c.mustRun(t, "SELECT name, status, exception FROM system.streaming_queries")
		return len(rows) == 1 && rows[0][1] == "FAILED"
	})
	if ex := rows[0][2]; !strings.Contains(ex, "bad.csv") || !strings.Contains(ex, "after 2 consecutive restarts") {
		t.Errorf("failed query row %v: want an exception naming bad.csv after 2 restarts", rows[0])
	}
	e.alive(t)
}

// TestRestartPolicyRefused: bad restart settings are refused when the
// table is created, naming the setting.
func TestRestartPolicyRefused(t *testing.T) {
	e := startServe(t)
	c := e.admin()
	c.mustRun(t, "CREATE TABLE ticks USING rate OPTIONS (rowsPerSecond '10')")
	for _, tc := range []struct{ props, want string }{
		{`'restartPolicy' = 'always'`, `restartPolicy "always"`},
		{`'restartMaxAttempts' = '5'`, "need restartPolicy 'on-failure'"},
		{`'restartPolicy' = 'on-failure', 'restartMaxAttempts' = '-1'`, `restartMaxAttempts "-1"`},
		{`'restartPolicy' = 'on-failure', 'restartBackoff' = '10 days'`, "at most 5m0s"},
		{`'restartPolicie' = 'on-failure'`, "did you mean"},
	} {
		_, err := c.run(t, "CREATE STREAMING TABLE t TBLPROPERTIES ("+tc.props+") AS SELECT value FROM STREAM ticks")
		refused(t, tc.props, err, codes.InvalidArgument, tc.want)
	}
	e.alive(t)
}
