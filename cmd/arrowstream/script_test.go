package main

import (
	"bytes"
	"context"
	"log/slog"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/internal/testutil"
)

func TestSplitScript(t *testing.T) {
	src := "-- leading comment; with a semicolon\n" +
		"SELECT 'a;b' AS s, \"c;d\" AS t, `e;``f` AS u;\n" +
		"/* block; /* nested; */ still; */ SELECT 2 AS two;;\n" +
		"SELECT 'it\\'s;' AS q -- trailing; comment\n"
	stmts, err := splitScript(src)
	if err != nil {
		t.Fatal(err)
	}
	if len(stmts) != 3 {
		t.Fatalf("got %d statements: %q", len(stmts), stmts)
	}
	// Positions are kept: the second statement's SELECT is on line 3.
	lines := strings.Split(stmts[1], "\n")
	if len(lines) != 3 || !strings.Contains(lines[2], "SELECT 2") {
		t.Fatalf("second statement lost its position: %q", stmts[1])
	}
	if stmts, err := splitScript("  \n-- only a comment\n;"); err != nil || len(stmts) != 0 {
		t.Fatalf("empty script: %q, %v", stmts, err)
	}
}

// newTestEngine returns an engine over a temporary checkpoint, stopped at
// the end of the test.
func newTestEngine(t *testing.T) *engine {
	t.Helper()
	// Warnings and errors only: the tests' output stays readable.
	logger := slog.New(slog.NewTextHandler(os.Stderr, &slog.HandlerOptions{Level: slog.LevelWarn}))
	e := newEngine(engineOptions{checkpointRoot: t.TempDir(), logger: logger})
	t.Cleanup(func() {
		if left := e.stop(10 * time.Second); len(left) > 0 {
			t.Errorf("queries did not stop: %v", left)
		}
	})
	return e
}

func TestRunScriptPrintsAndReportsErrors(t *testing.T) {
	ctx := context.Background()
	e := newTestEngine(t)
	var out bytes.Buffer
	src := "CREATE TABLE ticks USING `rate-micro-batch` OPTIONS (rowsPerBatch 5);\n" +
		"SELECT 1 AS one, 'x' AS s, CAST(NULL AS BIGINT) AS n;\nSHOW TABLES;\n"
	if err := runScript(ctx, e, "t.sql", src, &out, 0); err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"| one | s | n    |", "|   1 | x | NULL |", "(1 row)", "ticks"} {
		if !strings.Contains(out.String(), want) {
			t.Errorf("output lacks %q:\n%s", want, out.String())
		}
	}
	// A syntax error names the file, line and column, and shows the line.
	err := runScript(ctx, e, "bad.sql", "SELECT 1;\n\nSELEC 2;\n", &out, 0)
	if err == nil || !strings.Contains(err.Error(), "bad.sql:3:1") || !strings.Contains(err.Error(), "^") {
		t.Fatalf("syntax error: %v", err)
	}
	// An analysis error in a later statement names the file.
	err = runScript(ctx, e, "bad2.sql", "SELECT 1;\nSELECT nope FROM ticks;\n", &out, 0)
	if err == nil || !strings.HasPrefix(err.Error(), "bad2.sql:") {
		t.Fatalf("analysis error: %v", err)
	}
}

func TestRunFileWithoutStreamingTablesReturns(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "batch.sql")
	if err := os.WriteFile(file, []byte("SELECT 40 + 2 AS answer;"), 0o644); err != nil {
		t.Fatal(err)
	}
	env, out, errb := testEnv(nil)
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(3*time.Minute))
	defer cancel()
	err := runCmd(ctx, []string{"--checkpoint", filepath.Join(dir, "ck"), "--http", "", "--addr", "", file}, env)
	if err != nil {
		t.Fatalf("%v\n%s", err, errb)
	}
	if !strings.Contains(out.String(), "42") {
		t.Fatalf("output: %s", out)
	}
}

// TestRunMissingFileStartsNothing: `arrowstream run nosuch.sql` names the
// file and starts nothing: no checkpoint root (with a catalog and a lock)
// is made for a file that does not exist, and no server is started first.
func TestRunMissingFileStartsNothing(t *testing.T) {
	dir := t.TempDir()
	ck := filepath.Join(dir, "ck")
	missing := filepath.Join(dir, "nosuch.sql")
	env, out, errb := testEnv(nil)
	err := runCmd(context.Background(), []string{"--checkpoint", ck, "--http", "", "--addr", "", missing}, env)
	if err == nil || !strings.Contains(err.Error(), missing) {
		t.Fatalf("run of a missing file: %v, want an error naming %s", err, missing)
	}
	if _, serr := os.Stat(ck); !os.IsNotExist(serr) {
		t.Errorf("run of a missing file made the checkpoint root %s (stat: %v)", ck, serr)
	}
	if strings.Contains(errb.String(), "serving") || out.Len() > 0 {
		t.Errorf("run of a missing file started something:\nstdout: %s\nstderr: %s", out, errb)
	}
}
