package testutil

import (
	"errors"
	"os"
	"os/exec"
	"sync/atomic"
	"testing"
	"time"
)

func startTestChild(t *testing.T, mode string) *Child {
	t.Helper()
	exe, err := os.Executable()
	if err != nil {
		t.Fatal(err)
	}
	c, err := StartChild(exe, childEnv+"="+mode)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestWaitReturnsTheExit(t *testing.T) {
	c := startTestChild(t, "exit")
	err := c.Wait(nil, 0)
	var ee *exec.ExitError
	if !errors.As(err, &ee) || ee.ExitCode() != 3 {
		t.Fatalf("Wait = %v, want exit status 3", err)
	}
}

// TestWaitUntilCountsProgress: done sees how far progress moved, and the
// wait ends when it says so, however long that takes.
func TestWaitUntilCountsProgress(t *testing.T) {
	c := startTestChild(t, "wait")
	defer c.Kill()
	var n atomic.Int64
	n.Store(100)
	stop := make(chan struct{})
	defer close(stop)
	go func() {
		for {
			select {
			case <-stop:
				return
			case <-time.After(time.Millisecond):
				n.Add(1)
			}
		}
	}()
	exited, err := c.WaitUntil(func() int64 { return n.Load() }, func(moved int64) bool { return moved >= 5 }, 0)
	if exited || err != nil {
		t.Fatalf("WaitUntil = %v, %v; want done", exited, err)
	}
	if got := n.Load(); got < 105 {
		t.Fatalf("returned at progress %d, before it moved by 5", got)
	}
}

// TestWaitStalls: a child that shows no progress (no output, no files) is
// killed after the stall period and the error says so.
func TestWaitStalls(t *testing.T) {
	c := startTestChild(t, "wait")
	err := c.Wait(func() int64 { return 7 }, 300*time.Millisecond)
	if !errors.Is(err, ErrStalled) {
		t.Fatalf("Wait = %v, want ErrStalled", err)
	}
	select {
	case <-c.Done():
		t.Fatal("the stalled child's exit was left unread: it was not killed")
	default:
	}
}

func TestTreeAndCountProgress(t *testing.T) {
	dir := t.TempDir()
	tree, count := TreeProgress(dir), CountProgress(dir)
	if tree() != 0 || count() != 0 {
		t.Fatalf("empty dir: tree %d count %d", tree(), count())
	}
	os.WriteFile(dir+"/0", []byte("abc"), 0o644)
	os.WriteFile(dir+"/.0.tmp", nil, 0o644)
	if got := tree(); got != 2+3 {
		t.Fatalf("tree = %d, want 5 (two files, three bytes)", got)
	}
	if got := count(); got != 1 {
		t.Fatalf("count = %d, want 1 (only numbered entries)", got)
	}
	if got := Any(tree, count)(); got != 6 {
		t.Fatalf("Any = %d, want 6", got)
	}
	if got := CountProgress(dir + "/missing")(); got != 0 {
		t.Fatalf("missing dir counts %d", got)
	}
}

func TestScaled(t *testing.T) {
	t.Setenv(TimeScaleEnv, "2.5")
	if got := Scaled(time.Second); got != 2500*time.Millisecond {
		t.Fatalf("Scaled = %v", got)
	}
	t.Setenv(TimeScaleEnv, "nonsense")
	if got := Scaled(time.Second); got != time.Second {
		t.Fatalf("Scaled with a bad scale = %v", got)
	}
}
