package main

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/arrowstream/arrowstream/checkpoint"
)

// TestServeRestoresAroundBadRecordedName: `arrowstream serve` restarted
// on a catalog that an earlier build wrote with tables named
// `../../../esc` and `.` (written here by hand, in the catalog's record
// format) serves every other table, logs an error naming each bad one and
// the DROP that removes it, and reads, writes and moves nothing outside
// the checkpoint root; the DROPs, over Flight SQL, succeed and touch no
// file (before, they moved the directory outside the root into the
// archive, and archived every static table's rows), and the next restart
// is clean.
func TestServeRestoresAroundBadRecordedName(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	parent := t.TempDir()
	ck := filepath.Join(parent, "a", "ck")
	// `../../../esc` keeps its rows at <ck>/_arrowstream/tables/../../../esc, outside the root.
	esc := filepath.Join(parent, "a", "esc")
	if err := os.MkdirAll(esc, 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(esc, "keep"), []byte("not a table's"), 0o644); err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(ck, 0o755); err != nil {
		t.Fatal(err)
	}
	args := []string{"serve", "--checkpoint", ck, "--http", "127.0.0.1:0", "--addr", "127.0.0.1:0", "--status", "off"}

	first := startProcess(t, bin, args...)
	flightRows(t, first.flightURI, "CREATE TABLE good (a INT)")
	flightRows(t, first.flightURI, "INSERT INTO good VALUES (1), (2)")
	first.interrupt(t)

	lg, err := checkpoint.OpenLog(filepath.Join(ck, "_arrowstream", "catalog"), &checkpoint.Writer{NoSync: true})
	if err != nil {
		t.Fatal(err)
	}
	seqs, err := lg.Epochs()
	if err != nil || len(seqs) == 0 {
		t.Fatalf("the catalog of the first run: %v, %v", seqs, err)
	}
	next := seqs[len(seqs)-1] + 1
	for i, def := range []map[string]string{
		{"name": "../../../esc", "kind": "source", "sql": "CREATE TABLE `../../../esc` (a INT)"},
		// `.` keeps its rows in <ck>/_arrowstream/tables itself: its DROP
		// archived every static table's rows.
		{"name": ".", "kind": "source", "sql": "CREATE TABLE `.` (a INT)"},
		{"name": "later", "kind": "view", "sql": "CREATE VIEW later AS SELECT a FROM good"},
	} {
		body, _ := json.Marshal(map[string]any{"format": 1, "op": "create", "def": def, "time": "2026-01-02T03:04:05Z"})
		if ok, err := lg.Add(next+int64(i), body); !ok || err != nil {
			t.Fatalf("write catalog record: %v %v", ok, err)
		}
	}
	outside := func() []string {
		var out []string
		filepath.WalkDir(parent, func(p string, d os.DirEntry, err error) error {
			if p == ck {
				return filepath.SkipDir
			}
			out = append(out, p)
			return err
		})
		return out
	}
	before := outside()

	second := startProcess(t, bin, args...)
	var names []string
	for _, r := range flightRows(t, second.flightURI, "SHOW TABLES") {
		if n := fmt.Sprint(r["tableName"]); !strings.HasPrefix(n, "system.") {
			names = append(names, n)
		}
	}
	if got := strings.Join(names, ","); got != "good,later" {
		t.Errorf("tables served after the restart: %s, want good,later", got)
	}
	if rows := flightRows(t, second.flightURI, "SELECT count(*) AS n FROM later"); len(rows) != 1 || rows[0]["n"].(float64) != 2 {
		t.Errorf("later (over good) after the restart: %v", rows)
	}
	out := second.output()
	var logged string
	for _, line := range strings.Split(out, "\n") {
		if strings.Contains(line, "cannot restore a table from the catalog") {
			logged += line + "\n"
		}
	}
	for _, want := range []string{"ERROR", "table=../../../esc", "under the checkpoint root", "DROP TABLE `../../../esc`", "table=. ", "DROP TABLE `.`"} {
		if !strings.Contains(logged, want) {
			t.Errorf("the restore's error log does not say %q: %q", want, logged)
		}
	}
	flightRows(t, second.flightURI, "DROP TABLE `../../../esc`")
	flightRows(t, second.flightURI, "DROP TABLE `.`")
	if got := outside(); !slices.Equal(got, before) {
		t.Errorf("files outside the checkpoint root changed:\nbefore %q\nafter  %q", before, got)
	}
	second.interrupt(t)

	third := startProcess(t, bin, args...)
	if strings.Contains(third.output(), "cannot restore") {
		t.Errorf("a table is refused after the DROP:\n%s", third.output())
	}
	if rows := flightRows(t, third.flightURI, "SELECT count(*) AS n FROM good"); len(rows) != 1 || rows[0]["n"].(float64) != 2 {
		t.Errorf("good after the DROP and a restart: %v", rows)
	}
	third.interrupt(t)
	if got := outside(); !slices.Equal(got, before) {
		t.Errorf("files outside the checkpoint root changed:\nbefore %q\nafter  %q", before, got)
	}
}
