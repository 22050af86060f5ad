package main

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/internal/testutil"
)

// TestRunRemovesStaleCatalogTemps: temp files that killed processes left
// under the root's reserved directory (the catalog log's, a static table's
// rows') stay while another process holds the root's lock, and are removed
// by the next process to take it; names that are not exactly temp names
// stay.
func TestRunRemovesStaleCatalogTemps(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "t.sql")
	src := "CREATE TABLE b USING `rate-micro-batch` OPTIONS (rowsPerBatch '3');\n" +
		"CREATE STREAMING TABLE s AS SELECT value FROM STREAM b;\n"
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	ck := filepath.Join(dir, "ck")
	reserved := filepath.Join(ck, arrowstream.ReservedDir)
	stale := []string{
		filepath.Join(reserved, "catalog", ".3.0123456700000000.tmp"),
		filepath.Join(reserved, "tables", "t", ".00000000000000000001.rows.89abcdef00000000.tmp"),
	}
	keep := []string{
		filepath.Join(reserved, "catalog", ".notes.tmp"),
		filepath.Join(reserved, "catalog", "3.0123456700000000.tmp"),
	}
	for _, p := range append(append([]string(nil), stale...), keep...) {
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("half a \x00 file"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"--checkpoint", ck, "--http", "", "--addr", "127.0.0.1:0", "--status", "off", file}

	// Another process holds the root: refused, nothing removed.
	l, err := lockRoot(ck, "serve")
	if err != nil {
		t.Fatal(err)
	}
	env, _, _ := testEnv(nil)
	var locked *errRootLocked
	if err := runCmd(context.Background(), args, env); !errors.As(err, &locked) {
		t.Fatalf("run beside the holder: %v", err)
	}
	for _, p := range stale {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("a process refused the root removed %s: %v", p, err)
		}
	}
	l.release()

	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	env, _, _ = testEnv(nil)
	go func() { done <- runCmd(ctx, args, env) }()
	deadline := time.Now().Add(testutil.Scaled(time.Minute))
	for !committed(t, filepath.Join(ck, "s")) {
		if time.Now().After(deadline) {
			cancel()
			<-done
			t.Fatal("no epoch committed")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("run: %v", err)
	}
	for _, p := range stale {
		if _, err := os.Stat(p); err == nil {
			t.Errorf("%s is still there after the run", p)
		}
	}
	for _, p := range keep {
		if _, err := os.Stat(p); err != nil {
			t.Errorf("%s: %v", p, err)
		}
	}
}
