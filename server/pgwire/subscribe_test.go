package pgwire

import (
	"bytes"
	"context"
	"errors"
	"os"
	"os/exec"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	"github.com/arrowstream/arrowstream/internal/testutil"
	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/server"
	"github.com/arrowstream/arrowstream/vector"
)

var subSchema = arrow.NewSchema([]arrow.Field{{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)

// commit adds an epoch of ids to tab.
func commit(t *testing.T, f *fixture, tab *memsink.Table, epoch int64, ids ...int64) {
	t.Helper()
	b := array.NewInt64Builder(f.mem)
	b.AppendValues(ids, nil)
	col := b.NewArray()
	b.Release()
	rec := array.NewRecord(subSchema, []arrow.Array{col}, int64(len(ids)))
	col.Release()
	scan, err := vector.NewScan(subSchema, rec)
	rec.Release()
	if err != nil {
		t.Fatal(err)
	}
	if err := tab.AddBatch(context.Background(), epoch, scan); err != nil {
		t.Fatal(err)
	}
}

// TestSubscribePgx: SUBSCRIBE over the simple protocol sends the rows of
// each epoch committed after it started, with _epoch and
// _commit_timestamp, as they commit (two epochs read while the
// statement runs); a CancelRequest (pgx cancels the context) ends it
// with 57014 and the connection goes on. In the extended protocol it is
// refused (0A000); a user without a grant on the table does not find it.
func TestSubscribePgx(t *testing.T) {
	f := startFixture(t, fixtureOpts{})
	tab := f.addTable(t, "events", subSchema)
	c := pgxConnect(t, f.dsn("alice", "", ""))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	rows, err := c.Query(ctx, "SUBSCRIBE events", pgx.QueryExecModeSimpleProtocol)
	if err != nil {
		t.Fatal(err)
	}
	names := []string{}
	for _, fd := range rows.FieldDescriptions() {
		names = append(names, fd.Name)
	}
	if strings.Join(names, ",") != "id,_epoch,_commit_timestamp" {
		t.Fatalf("columns %v", names)
	}
	type row struct{ id, epoch int64 }
	got := make(chan row)
	done := make(chan error, 1)
	go func() {
		for rows.Next() {
			var r row
			var ts time.Time
			if err := rows.Scan(&r.id, &r.epoch, &ts); err != nil {
				done <- err
				return
			}
			got <- r
		}
		done <- rows.Err()
	}()
	want := func(w row) {
		t.Helper()
		select {
		case r := <-got:
			if r != w {
				t.Fatalf("row %v, want %v", r, w)
			}
		case err := <-done:
			t.Fatalf("subscription ended: %v", err)
		case <-time.After(testutil.Scaled(time.Minute)):
			t.Fatalf("row %v never came", w)
		}
	}
	commit(t, f, tab, 1, 10, 11)
	want(row{10, 1})
	want(row{11, 1})
	commit(t, f, tab, 2, 20)
	want(row{20, 2})
	cancel()
	select {
	case err := <-done:
		var pe *pgconn.PgError
		if err == nil || !errors.As(err, &pe) && !errors.Is(err, context.Canceled) {
			t.Fatalf("after cancel: %v", err)
		}
		if pe != nil && pe.Code != "57014" {
			t.Fatalf("after cancel: %v", err)
		}
	case <-time.After(testutil.Scaled(time.Minute)):
		t.Fatal("subscription not canceled")
	}
	rows.Close()
	c2 := pgxConnect(t, f.dsn("alice", "", ""))
	var n int64
	if err := c2.QueryRow(context.Background(), "SELECT count(*) FROM events").Scan(&n); err != nil || n != 3 {
		t.Fatalf("after the subscription: %d %v", n, err)
	}
	_, err = c2.Prepare(context.Background(), "sub", "SUBSCRIBE events")
	wantState(t, err, "0A000")
	_, err = c2.Exec(context.Background(), "SUBSCRIBE nope", pgx.QueryExecModeSimpleProtocol)
	wantState(t, err, "42P01")
}

// TestSubscribePsql: psql runs SUBSCRIBE (it shows a result only when it
// ends, so this checks that it starts and that psql's Ctrl-C, a
// CancelRequest, ends it with 57014).
func TestSubscribePsql(t *testing.T) {
	f := startFixture(t, fixtureOpts{})
	f.addTable(t, "events", subSchema)
	path, err := exec.LookPath("psql")
	if err != nil {
		t.Skipf("psql is not installed (Debian: postgresql-client): %v", err)
	}
	cmd := exec.Command(path, "-X", "-v", "VERBOSITY=verbose", "-h", pgHost(f), "-p", pgPort(f), "-U", "alice", "-d", "arrowstream", "-c", "SUBSCRIBE events")
	cmd.Env = append(os.Environ(), "PGCONNECT_TIMEOUT=30", "PGOPTIONS=")
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(testutil.Scaled(time.Minute))
	for !f.pg.running() {
		if time.Now().After(deadline) {
			_ = cmd.Process.Kill()
			t.Fatalf("the subscription never started: %s", out.String())
		}
		time.Sleep(10 * time.Millisecond)
	}
	if err := cmd.Process.Signal(os.Interrupt); err != nil {
		t.Fatal(err)
	}
	waited := make(chan error, 1)
	go func() { waited <- cmd.Wait() }()
	select {
	case <-waited:
	case <-time.After(testutil.Scaled(time.Minute)):
		_ = cmd.Process.Kill()
		t.Fatal("psql did not end after Ctrl-C")
	}
	if !strings.Contains(out.String(), "57014") {
		t.Fatalf("psql output: %s", out.String())
	}
}

// TestSubscribeClientCloses: a client that closes its connection during
// a SUBSCRIBE ends the subscription at once, without waiting for a
// commit (the statement slot and the connection are released).
func TestSubscribeClientCloses(t *testing.T) {
	f := startFixture(t, fixtureOpts{})
	f.addTable(t, "events", subSchema)
	c, err := pgx.Connect(context.Background(), f.dsn("alice", "", ""))
	if err != nil {
		t.Fatal(err)
	}
	go func() {
		rows, err := c.Query(context.Background(), "SUBSCRIBE events", pgx.QueryExecModeSimpleProtocol)
		if err == nil {
			for rows.Next() {
			}
			rows.Close()
		}
	}()
	deadline := time.Now().Add(testutil.Scaled(time.Minute))
	for !f.pg.running() {
		if time.Now().After(deadline) {
			t.Fatal("the subscription never started")
		}
		time.Sleep(5 * time.Millisecond)
	}
	_ = c.PgConn().Conn().Close()
	for f.pg.running() || f.pg.connections() > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the subscription outlived its connection")
		}
		time.Sleep(5 * time.Millisecond)
	}
}

// TestSubscribeSlowClientStalls: a subscriber that reads nothing holds
// back only its own subscription — commits go on, the server keeps at
// most a write buffer for it — and is dropped by the stall rule
// (StallTimeout) once its connection stops taking bytes.
func TestSubscribeSlowClientStalls(t *testing.T) {
	f := startFixture(t, fixtureOpts{server: func(c *server.Config) { c.Limits.StallTimeout = 300 * time.Millisecond }})
	tab := f.addTable(t, "events", subSchema)
	c, err := pgx.Connect(context.Background(), f.dsn("alice", "", ""))
	if err != nil {
		t.Fatal(err)
	}
	// Send SUBSCRIBE and never read: the raw connection is left alone.
	if _, err := c.PgConn().Conn().Write(append([]byte{'Q', 0, 0, 0, byte(4 + len("SUBSCRIBE events") + 1)}, "SUBSCRIBE events\x00"...)); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(testutil.Scaled(time.Minute))
	for !f.pg.running() {
		if time.Now().After(deadline) {
			t.Fatal("the subscription never started")
		}
		time.Sleep(5 * time.Millisecond)
	}
	ids := make([]int64, 64<<10)
	for epoch := int64(1); epoch <= 40; epoch++ { // ~40 MB of rows in text
		commit(t, f, tab, epoch, ids...)
	}
	for f.pg.connections() > 0 {
		if time.Now().After(deadline) {
			t.Fatal("the stalled subscriber was not dropped")
		}
		time.Sleep(10 * time.Millisecond)
	}
	_ = c.PgConn().Conn().Close()
}
