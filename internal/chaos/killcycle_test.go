package chaos

import (
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"
)

// TestTimerCountsFromWorkerStart: a cycle's timer starts when the worker
// reports that it started, not when its process is spawned, so that a
// short delay kills the workload and not the process's initialization
// (the arrowstream binary's Go runtime and package init took 230-320 ms
// at load 9, most of the 10-400 ms delays). The stand-in worker spends
// 300 ms "initializing", leaves a mark, and only then reports; a 20 ms
// timer counted from the spawn would kill it before the mark.
func TestTimerCountsFromWorkerStart(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	mark := filepath.Join(dir, "initialized")
	script := "sleep 0.3; : > " + mark + "; echo '" + workerStarted + "'; exec sleep 30"
	cfg := Config{Command: func() *exec.Cmd { return exec.Command("sh", "-c", script) }}
	cfg.defaults()
	w := WorkerConfig{Workload: "memsink", Records: 1, Dir: dir, KillStep: NoKill}
	how, _, err := killCycle(context.Background(), cfg, w, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if how != "timer" {
		t.Fatalf("killed by %q, want the timer", how)
	}
	if _, err := os.Stat(mark); err != nil {
		t.Fatalf("the timer killed the worker before it reported its start: %v", err)
	}
}

// TestTimerKillAfterHookNote: a worker whose hook noted its write in the
// kill log died in that write even when the cycle's timer fired before
// the hook's own SIGKILL arrived; the cycle counts it as a kill inside
// the write, not a timer kill (the stateful runs reported "0 in
// checkpoint writes" beside a kill log with a line).
func TestTimerKillAfterHookNote(t *testing.T) {
	if _, err := exec.LookPath("sh"); err != nil {
		t.Skip("no sh")
	}
	dir := t.TempDir()
	script := "printf '0\\t" + filepath.Join(dir, "x", "metadata") + "\\n' >> " + filepath.Join(dir, killLog) +
		"; echo '" + workerStarted + "'; exec sleep 30"
	cfg := Config{Command: func() *exec.Cmd { return exec.Command("sh", "-c", script) }}
	cfg.defaults()
	w := WorkerConfig{Workload: "memsink", Records: 1, Dir: dir, KillStep: 0, KillAfter: 0}
	how, path, err := killCycle(context.Background(), cfg, w, 20*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if how != "before temp write" || filepath.Base(path) != "metadata" {
		t.Fatalf("killed by %q in %q, want the hook's write", how, path)
	}
}
