package main

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/internal/testutil"
)

// TestRootLock: a held root refuses a second locker (flock conflicts
// between two opens, also within one process) with the holder's
// description; released, it can be taken again.
func TestRootLock(t *testing.T) {
	root := t.TempDir()
	l, err := lockRoot(root, "serve")
	if err != nil {
		t.Fatal(err)
	}
	if err := l.describe("serve", []string{"Flight SQL grpc://127.0.0.1:1", "web UI http://127.0.0.1:2/"}); err != nil {
		t.Fatal(err)
	}
	_, err = lockRoot(root, "run")
	var locked *errRootLocked
	if !errors.As(err, &locked) {
		t.Fatalf("second lock: %v", err)
	}
	wantStart := fmt.Sprintf("checkpoint root %s is in use by another arrowstream process: pid %d (arrowstream serve, started ", root, os.Getpid())
	wantEnd := ", Flight SQL grpc://127.0.0.1:1, web UI http://127.0.0.1:2/).\n" +
		"Two processes on one root would overwrite each other's checkpoints: stop that process, or pass another --checkpoint"
	if msg := err.Error(); !strings.HasPrefix(msg, wantStart) || !strings.HasSuffix(msg, wantEnd) {
		t.Fatalf("refusal:\n%s\nwant %q ... %q", msg, wantStart, wantEnd)
	}
	// A holder that has not described itself yet.
	if msg := (&errRootLocked{root: "/r"}).Error(); !strings.HasPrefix(msg, "checkpoint root /r is in use by another arrowstream process: a process that is starting (it has not written its PID yet).") {
		t.Fatalf("refusal without holder: %s", msg)
	}
	l.release()
	l2, err := lockRoot(root, "run")
	if err != nil {
		t.Fatalf("lock after release: %v", err)
	}
	l2.release()
}

// TestRunNotPersistedTableHint: a table with 'persist'='false' cannot
// resume (its rows are gone); the error says why and what to do.
func TestRunNotPersistedTableHint(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "np.sql")
	src := "CREATE TABLE b USING `rate-micro-batch` OPTIONS (rowsPerBatch '3');\n" +
		"CREATE STREAMING TABLE np TBLPROPERTIES ('persist' = 'false') AS SELECT value FROM STREAM b;\n"
	if err := os.WriteFile(file, []byte(src), 0o644); err != nil {
		t.Fatal(err)
	}
	ck := filepath.Join(dir, "ck")
	args := []string{"--checkpoint", ck, "--http", "", "--addr", "127.0.0.1:0", "--status", "off", file}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	env, _, _ := testEnv(nil)
	go func() { done <- runCmd(ctx, args, env) }()
	deadline := time.Now().Add(testutil.Scaled(time.Minute))
	for {
		if committed(t, filepath.Join(ck, "np")) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("no epoch committed")
		}
		time.Sleep(20 * time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("first run: %v", err)
	}
	env, _, _ = testEnv(nil)
	err := runCmd(context.Background(), args, env)
	if err == nil {
		t.Fatal("the second run resumed a table whose rows were not kept")
	}
	for _, want := range []string{
		"This query does not support recovering from checkpoint location. Delete " + filepath.Join(ck, "np", checkpoint.EpochLogDir) + " to start over.",
		"(the table's earlier rows were not kept: it has 'persist'='false', or its checkpoint is from an older version. " +
			"CREATE OR REPLACE STREAMING TABLE starts it over, archiving the checkpoint; without 'persist'='false' a table is recoverable)",
	} {
		if !strings.Contains(err.Error(), want) {
			t.Errorf("error lacks %q:\n%v", want, err)
		}
	}
}

// committed reports whether the checkpoint has a committed epoch.
func committed(t *testing.T, ckpt string) bool {
	t.Helper()
	if ok, _ := checkpoint.HasEpochLog(ckpt); !ok {
		return false
	}
	log, err := checkpoint.OpenCommitLog(ckpt, &checkpoint.Writer{NoSync: true})
	if err != nil {
		return false // a segment being written: look again
	}
	defer log.Close()
	_, _, ok, _ := log.Latest()
	return ok
}
