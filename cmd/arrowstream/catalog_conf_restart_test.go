package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/internal/testutil"
)

// kolkataMidnight is TIMESTAMP '2020-01-01 00:00:00' read in
// Asia/Kolkata (UTC+05:30), in seconds since the epoch.
const kolkataMidnight = 1577836800 - 19800

// tzRows reads the tzs table: every row's tz must be want, and the
// values 0, 1, 2, ... each once. It returns the row count.
func tzRows(t *testing.T, uri string, want int64) int {
	t.Helper()
	rows := flightRows(t, uri, "SELECT value, tz FROM tzs ORDER BY value")
	for i, r := range rows {
		if v := r["value"].(float64); int(v) != i {
			t.Fatalf("tzs row %d has value %v, want %d: rows lost or duplicated", i, v, i)
		}
		if tz := int64(r["tz"].(float64)); tz != want {
			t.Fatalf("tzs row %d (value %v) has tz %d, want %d: the table ran without the time zone it was created with", i, r["value"], tz, want)
		}
	}
	return len(rows)
}

// TestServeRestartKeepsTableSettings: serve creates a streaming table
// from an --init script whose SETs shape it (a time zone, the number of
// shuffle partitions); the process is stopped and started again without
// the script (serve restores its catalog). The restarted table runs
// under the settings it was created with: every row, before and after
// the restart, reads a zone-less timestamp literal in the script's time
// zone. Before the catalog recorded them, the rows after the restart
// read it in UTC (and a cluster table was planned with another number of
// hop partitions, or refused).
func TestServeRestartKeepsTableSettings(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	init := filepath.Join(dir, "init.sql")
	script := `SET spark.sql.session.timeZone = Asia/Kolkata;
SET spark.sql.shuffle.partitions = 3;
CREATE TABLE events USING rate OPTIONS (rowsPerSecond '50');
CREATE STREAMING TABLE tzs AS SELECT value, CAST(TIMESTAMP '2020-01-01 00:00:00' AS BIGINT) AS tz FROM STREAM events;
`
	if err := os.WriteFile(init, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	ck := filepath.Join(dir, "ck")
	args := []string{"serve", "--checkpoint", ck, "--http", "127.0.0.1:0", "--addr", "127.0.0.1:0", "--status", "off"}

	first := startProcess(t, bin, append(args, "--init", init)...)
	n1 := waitTzRows(t, first.flightURI, 10)
	first.interrupt(t)

	second := startProcess(t, bin, args...)
	n2 := waitTzRows(t, second.flightURI, n1+10)
	// The session itself has no SET: only the table keeps its settings.
	if rows := flightRows(t, second.flightURI, "SELECT CAST(TIMESTAMP '2020-01-01 00:00:00' AS BIGINT) AS tz"); len(rows) != 1 || int64(rows[0]["tz"].(float64)) != 1577836800 {
		t.Errorf("the restarted session's own time zone: %v, want the default (the table's settings are the table's)", rows)
	}
	if !strings.Contains(second.output(), `msg="restored the catalog" tables="events, tzs" failed=""`) {
		t.Errorf("no restore logged")
	}
	second.interrupt(t)
	t.Logf("tzs: %d rows before the restart, %d after", n1, n2)
}

// waitTzRows waits until tzs holds more than n rows, all in Asia/Kolkata.
func waitTzRows(t *testing.T, uri string, n int) int {
	t.Helper()
	deadline := time.Now().Add(testutil.Scaled(3 * time.Minute))
	for {
		if got := tzRows(t, uri, kolkataMidnight); got > n {
			return got
		}
		if time.Now().After(deadline) {
			t.Fatalf("tzs did not grow past %d rows", n)
		}
		time.Sleep(200 * time.Millisecond)
	}
}
