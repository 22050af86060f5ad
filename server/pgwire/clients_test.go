package pgwire

import (
	"bytes"
	"context"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/internal/testutil"
)

var update = flag.Bool("update", false, "rewrite the golden files of the client tests")

// runClient runs a client program with a deadline; it skips the test when
// the program is not installed.
func runClient(t *testing.T, env []string, name string, args ...string) string {
	t.Helper()
	path, err := exec.LookPath(name)
	if err != nil {
		t.Skipf("%s is not installed (Debian: postgresql-client, python3-psycopg2, python3-pandas): %v", name, err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(2*time.Minute))
	defer cancel()
	cmd := exec.CommandContext(ctx, path, args...)
	cmd.Env = append(os.Environ(), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\nstdout:\n%s\nstderr:\n%s", name, strings.Join(args, " "), err, out.String(), errb.String())
	}
	if errb.Len() > 0 {
		t.Logf("%s stderr:\n%s", name, errb.String())
	}
	return out.String()
}

func golden(t *testing.T, name, got string) {
	t.Helper()
	path := filepath.Join("testdata", name)
	if *update {
		if err := os.WriteFile(path, []byte(got), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (run with -update to create it)", err)
	}
	if string(want) != got {
		t.Fatalf("%s differs:\n--- got\n%s\n--- want\n%s", name, got, want)
	}
}

// TestPsql runs psql (the real client) against the endpoint: SELECTs of
// every type in psql's aligned output, several statements in one query,
// SHOW and SET of the session's parameters, an error with its SQLSTATE,
// and the catalog commands \dt, \d TABLE, \l and \dn, whose pg_catalog
// queries run through the planner.
func TestPsql(t *testing.T) {
	f := startFixture(t, fixtureOpts{})
	f.addTable(t, "types_t", typesSchema, typesRecord(f.mem))
	host, port := pgHost(f), pgPort(f)
	script := `\set VERBOSITY verbose
SELECT id, b, i2, i4, f4, f8, n, s, by, d, ts, tstz, iv, js, arr, sarr FROM types_t ORDER BY id;
SELECT count(*) AS n FROM types_t; SELECT max(i4) AS m FROM types_t;
SHOW client_encoding;
SET TimeZone = 'America/New_York';
SELECT tstz FROM types_t WHERE id = 1;
SELECT * FROM nope;
BEGIN;
SELECT s FROM types_t WHERE id = 2;
COMMIT;
\dt
\d types_t
\l
\dn
`
	file := filepath.Join(t.TempDir(), "script.sql")
	if err := os.WriteFile(file, []byte(script), 0o600); err != nil {
		t.Fatal(err)
	}
	out := runClient(t, []string{"PGCONNECT_TIMEOUT=30", "PGOPTIONS="}, "psql", "-X", "-h", host, "-p", port, "-U", "alice", "-d", "arrowstream",
		"-f", file)
	golden(t, "psql.out", out)
}

// TestPandas reads a query with pandas.read_sql over a psycopg2
// connection and checks the DataFrame's values and dtypes: timestamps as
// datetime64, numbers as numbers.
func TestPandas(t *testing.T) {
	f := startFixture(t, fixtureOpts{})
	f.addTable(t, "types_t", typesSchema, typesRecord(f.mem))
	if err := exec.Command("/usr/bin/python3", "-c", "import psycopg2, pandas").Run(); err != nil {
		t.Skipf("python3-psycopg2 and python3-pandas are not installed: %v", err)
	}
	prog := `
import sys, warnings
warnings.simplefilter("ignore")
import pandas as pd, psycopg2
conn = psycopg2.connect(host=sys.argv[1], port=int(sys.argv[2]), user="alice", dbname="arrowstream")
df = pd.read_sql("SELECT id, i4, f8, n, s, ts, tstz, d, b FROM types_t ORDER BY id", conn)
print(df.dtypes.to_string())
print(df.to_string())
conn.close()
`
	out := runClient(t, nil, "/usr/bin/python3", "-c", prog, pgHost(f), pgPort(f))
	golden(t, "pandas.out", out)
}

func pgHost(f *fixture) string { h, _, _ := strings.Cut(f.pg.Addr().String(), ":"); return h }
func pgPort(f *fixture) string { _, p, _ := strings.Cut(f.pg.Addr().String(), ":"); return p }
