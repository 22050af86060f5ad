package security

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow-adbc/go/adbc"
	adbcflight "github.com/apache/arrow-adbc/go/adbc/driver/flightsql"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"
)

// TestLargeStatements: a statement just under the limit runs end to end
// (its ticket is accepted by DoGet), one over it is refused before
// planning, and a FlightInfo does not echo the statement.
func TestLargeStatements(t *testing.T) {
	e := startServe(t)
	c := e.admin()
	// ~1 MB of SQL, with characters JSON escapes (<, >, &) that grew the
	// old ticket past its limit.
	lit := strings.Repeat("<&>", 330_000)
	sql := fmt.Sprintf("SELECT length('%s') AS n", lit)
	ctx, cancel := context.WithCancel(c.ctx)
	defer cancel()
	info, err := c.Execute(ctx, sql)
	if err != nil {
		t.Fatalf("a %d-byte statement: %v", len(sql), err)
	}
	t.Logf("a %d-byte statement: FlightInfo of %d bytes", len(sql), proto.Size(info))
	if n := proto.Size(info); n > 2*len(sql)+(64<<10) {
		t.Errorf("FlightInfo of a %d-byte statement is %d bytes: the statement travels more than once", len(sql), n)
	}
	if info.FlightDescriptor != nil {
		t.Errorf("FlightInfo echoes the descriptor (%d bytes)", proto.Size(info.FlightDescriptor))
	}
	rows, err := c.exec(ctx, sql)
	if err != nil {
		t.Fatalf("DoGet of a %d-byte statement's ticket: %v", len(sql), err)
	}
	if len(rows) != 1 || rows[0][0] != fmt.Sprint(len(lit)) {
		t.Errorf("result %v, want [[%d]]", rows, len(lit))
	}
	// 10 MB: refused before planning, with the limit and its flag.
	huge := fmt.Sprintf("SELECT '%s' AS s", strings.Repeat("x", 10<<20))
	_, err = c.Execute(ctx, huge)
	refused(t, "10 MB statement", err, codes.InvalidArgument, "statement of", "longer than the limit of 1048576 bytes", "--max-statement-bytes")
	e.alive(t)
}

// TestFailedQueriesStay: a streaming query that fails stays in
// system.streaming_queries with status FAILED and its error.
func TestFailedQueriesStay(t *testing.T) {
	e := startServe(t)
	c := e.admin()
	in := filepath.Join(e.data, "landing")
	if err := os.MkdirAll(in, 0o755); err != nil {
		t.Fatal(err)
	}
	c.mustRun(t, fmt.Sprintf("CREATE TABLE landing (id BIGINT) USING csv OPTIONS (path '%s', mode 'FAILFAST')", in))
	c.mustRun(t, "CREATE STREAMING TABLE ids AS SELECT id FROM STREAM landing")
	if err := os.WriteFile(filepath.Join(in, "bad.csv"), []byte("not-a-number\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	var rows [][]string
	waitFor(t, "the query to be listed as FAILED", func() bool {
		rows = c.mustRun(t, "SELECT name, status, exception FROM system.streaming_queries")
		return len(rows) == 1 && rows[0][1] == "FAILED"
	})
	if rows[0][0] != "ids" || !strings.Contains(rows[0][2], "bad.csv") {
		t.Errorf("failed query row %v: want name ids and an exception naming bad.csv", rows[0])
	}
	e.alive(t)
}

// TestADBCFileAttack: the ADBC driver meets the same refusal as the
// Flight SQL client.
func TestADBCFileAttack(t *testing.T) {
	e := startServe(t)
	db, err := adbcflight.NewDriver(memory.DefaultAllocator).NewDatabase(map[string]string{
		adbc.OptionKeyURI: "grpc://" + e.flight, adbc.OptionKeyUsername: adminUser, adbc.OptionKeyPassword: adminPass,
	})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	ctx := context.Background()
	cnxn, err := db.Open(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer cnxn.Close()
	stmt, err := cnxn.NewStatement()
	if err != nil {
		t.Fatal(err)
	}
	defer stmt.Close()
	if err := stmt.SetSqlQuery("CREATE TABLE pw USING csv OPTIONS (path '/etc/passwd', sep ':')"); err != nil {
		t.Fatal(err)
	}
	_, err = stmt.ExecuteUpdate(ctx)
	var ae adbc.Error
	if err == nil {
		t.Fatal("ADBC: /etc/passwd accepted")
	}
	if !strings.Contains(err.Error(), "/etc/passwd") || !strings.Contains(err.Error(), "--data-dir") {
		t.Errorf("ADBC error %q must name the path and --data-dir", err)
	}
	if ok := asADBC(err, &ae); ok && ae.Code != adbc.StatusUnauthorized {
		t.Errorf("ADBC status %v, want Unauthorized (PERMISSION_DENIED)", ae.Code)
	}
	e.alive(t)
}
