package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/internal/testutil"
)

// flightRows runs a statement through the query command (a Flight SQL
// client over gRPC) and returns its rows as JSON objects.
func flightRows(t *testing.T, uri, text string) []map[string]any {
	t.Helper()
	env, out, errb := testEnv(nil)
	if err := queryCmd(context.Background(), []string{"--uri", uri, "--format", "json", text}, env); err != nil {
		t.Fatalf("%s: %v\n%s", text, err, errb)
	}
	var rows []map[string]any
	dec := json.NewDecoder(out)
	for {
		var r map[string]any
		if err := dec.Decode(&r); err == io.EOF {
			break
		} else if err != nil {
			t.Fatalf("%s: %v", text, err)
		}
		rows = append(rows, r)
	}
	return rows
}

// evenValues reads the evens table: its values, which must be 0, 2, 4, ...
// each once (the rate source counts from 0: a gap is a lost row, a repeat
// a duplicated one).
func evenValues(t *testing.T, uri string) int {
	t.Helper()
	rows := flightRows(t, uri, "SELECT value FROM evens ORDER BY value")
	for i, r := range rows {
		if v := r["value"].(float64); int(v) != 2*i {
			t.Fatalf("evens row %d is %v, want %d: rows lost or duplicated", i, v, 2*i)
		}
	}
	return len(rows)
}

// waitEvens waits until evens holds more than n rows.
func waitEvens(t *testing.T, uri string, n int) int {
	t.Helper()
	deadline := time.Now().Add(testutil.Scaled(3 * time.Minute))
	for {
		if got := evenValues(t, uri); got > n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("evens did not grow past %d rows", n)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// queryID is the id of the running query name, from the web UI's API.
func (p *process) queryID(t *testing.T, name string) string {
	t.Helper()
	var qs []queryInfo
	getJSON(t, p.httpURL+"api/queries", &qs)
	for _, q := range qs {
		if q.Name == name && q.Status == "active" {
			return q.ID
		}
	}
	t.Fatalf("no active query %s: %+v", name, qs)
	return ""
}

const evensSQL = `CREATE TABLE events USING rate OPTIONS (rowsPerSecond '50');
CREATE STREAMING TABLE evens AS SELECT value FROM STREAM events WHERE value % 2 = 0;
`

// TestRunFileRestartContinues is the acceptance test of the durable
// catalog with `run FILE`: the simplest file (an append table, no
// properties), SIGINT, the same command again: the table continues with
// the same query id and no row lost or duplicated. While it runs, a
// second process on the same checkpoint root is refused, naming the
// holder's PID and address.
func TestRunFileRestartContinues(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	file := filepath.Join(dir, "my.sql")
	if err := os.WriteFile(file, []byte(evensSQL), 0o644); err != nil {
		t.Fatal(err)
	}
	ck := filepath.Join(dir, "ck")
	args := []string{"run", "--checkpoint", ck, "--http", "127.0.0.1:0", "--addr", "127.0.0.1:0", "--status", "log", file}

	first := startProcess(t, bin, args...)
	id1 := first.queryID(t, "evens")
	n1 := waitEvens(t, first.flightURI, 10)
	first.interrupt(t)

	second := startProcess(t, bin, args...)
	if id2 := second.queryID(t, "evens"); id2 != id1 {
		t.Errorf("query id %s after the restart, want %s", id2, id1)
	}
	n2 := waitEvens(t, second.flightURI, n1+10)
	if !strings.Contains(second.output(), `msg="restored the catalog" tables="events, evens" failed=""`) {
		t.Errorf("no restore logged")
	}

	// A third process on the same root is refused at start.
	out, err := exec.Command(bin, args...).CombinedOutput()
	if ee, ok := err.(*exec.ExitError); !ok || ee.ExitCode() != 1 {
		t.Fatalf("second process on the root: %v\n%s", err, out)
	}
	want := fmt.Sprintf("arrowstream run: checkpoint root %s is in use by another arrowstream process: pid %d (arrowstream run, started ", ck, second.cmd.Process.Pid)
	if !strings.Contains(string(out), want) || !strings.Contains(string(out), ", Flight SQL "+second.flightURI+", ") ||
		!strings.Contains(string(out), ", web UI "+second.httpURL+")") ||
		!strings.Contains(string(out), "Two processes on one root would overwrite each other's checkpoints: stop that process, or pass another --checkpoint") {
		t.Errorf("refusal does not name the holder:\n%s\nwant %q", out, want)
	}
	second.interrupt(t)
	t.Logf("evens: %d rows before the restart, %d after", n1, n2)
}

// TestServeFlightDDLRestart: tables created over Flight SQL survive a
// restart of serve: sources, views and streaming tables come back, and
// the streaming table continues.
func TestServeFlightDDLRestart(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	ck := t.TempDir()
	args := []string{"serve", "--checkpoint", ck, "--http", "127.0.0.1:0", "--addr", "127.0.0.1:0", "--status", "off"}

	first := startProcess(t, bin, args...)
	for _, stmt := range strings.Split(strings.TrimSpace(evensSQL), ";\n") {
		flightRows(t, first.flightURI, strings.TrimSuffix(stmt, ";"))
	}
	flightRows(t, first.flightURI, "CREATE VIEW small AS SELECT value FROM evens WHERE value < 10")
	id1 := first.queryID(t, "evens")
	n1 := waitEvens(t, first.flightURI, 10)
	first.interrupt(t)

	second := startProcess(t, bin, args...)
	var names []string
	for _, r := range flightRows(t, second.flightURI, "SHOW TABLES") {
		if n := fmt.Sprint(r["tableName"]); !strings.HasPrefix(n, "system.") {
			names = append(names, n)
		}
	}
	if got := strings.Join(names, ","); got != "evens,events,small" {
		t.Errorf("tables after the restart: %s", got)
	}
	if id2 := second.queryID(t, "evens"); id2 != id1 {
		t.Errorf("query id %s after the restart, want %s", id2, id1)
	}
	waitEvens(t, second.flightURI, n1+10)
	if rows := flightRows(t, second.flightURI, "SELECT count(*) AS n FROM small"); len(rows) != 1 || rows[0]["n"].(float64) != 5 {
		t.Errorf("view small: %v", rows)
	}
	// DROP is durable too.
	flightRows(t, second.flightURI, "DROP VIEW small")
	second.interrupt(t)
	third := startProcess(t, bin, args...)
	names = names[:0]
	for _, r := range flightRows(t, third.flightURI, "SHOW TABLES") {
		if n := fmt.Sprint(r["tableName"]); !strings.HasPrefix(n, "system.") {
			names = append(names, n)
		}
	}
	if got := strings.Join(names, ","); got != "evens,events" {
		t.Errorf("tables after DROP VIEW and a restart: %s", got)
	}
	third.interrupt(t)
}
