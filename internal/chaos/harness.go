package chaos

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"time"

	"github.com/arrowstream/arrowstream/checkpoint"
)

// Config configures a harness run.
type Config struct {
	// Cycles is the number of kill-and-restart cycles before the final
	// run to completion.
	Cycles int
	// Records is the workload's input size.
	Records int64
	// Seed drives every choice of the harness (kill step, which write,
	// timer delay): the same seed makes the same choices. Timer kills land
	// wherever the child is at that moment, which scheduling varies.
	Seed int64
	// Workload names the workload (NewWorkload).
	Workload string
	// Dir holds the run's directories; it must be empty or missing.
	Dir string
	// Command returns the command that re-executes a binary calling
	// MaybeRunWorker; the harness adds the worker's environment variable.
	Command func() *exec.Cmd
	// MinDelay and MaxDelay bound the timer kills (defaults 10ms, 400ms).
	MinDelay, MaxDelay time.Duration
	// MaxKillAfter bounds which write an armed hook kills in (default 60).
	MaxKillAfter int
	// FinishTimeout is how long a run to completion may show no progress
	// (no file of its directory written, grown or added) before it is
	// given up (default 5 minutes); a slow run that keeps moving is
	// never cut short.
	FinishTimeout time.Duration
	// NoSync skips fsync in the workers.
	NoSync bool
	// Progress, when set, receives a line per cycle.
	Progress io.Writer
	// KillKinds, when set, aims the kills inside writes at files of these
	// kinds (as the report counts them: "state pack", "metadata", ...).
	KillKinds []string
	// Conf is added to every worker's session conf (for instance
	// stateStore.provider=pebble).
	Conf map[string]string
}

func (c *Config) defaults() {
	if c.MinDelay <= 0 {
		c.MinDelay = 10 * time.Millisecond
	}
	if c.MaxDelay <= c.MinDelay {
		c.MaxDelay = c.MinDelay + 390*time.Millisecond
	}
	if c.MaxKillAfter <= 0 {
		c.MaxKillAfter = 60
	}
	if c.FinishTimeout <= 0 {
		c.FinishTimeout = 5 * time.Minute
	}
}

// Report is the outcome of a harness run.
type Report struct {
	Cycles  int
	Records int64
	// Lost and Duplicated are input records, summed over the outputs.
	Lost, Duplicated int64
	// Mismatched counts output groups whose weight is right but whose
	// other values differ.
	Mismatched int64
	// Diffs has the comparison of each output.
	Diffs map[string]Diff
	// HookKills counts the kills inside checkpoint writes, by step;
	// KindKills by the kind of file being written; TimerKills the others.
	HookKills  map[string]int
	KindKills  map[string]int
	TimerKills int
	// OtherKills counts children that died of SIGKILL before their timer
	// with no kill-log line (not sent by the harness).
	OtherKills int
	// TempFiles lists, after each kill cycle, the temp files of
	// interrupted atomic writes (checkpoint.IsTempName) under the run's
	// directory, relative to it; TempFilesLeft those after the final run.
	// A restart that holds the checkpoint's lock removes those of earlier
	// processes (checkpoint.RemoveStaleTemps), so they must not pile up
	// over the cycles.
	TempFiles     [][]string
	TempFilesLeft []string
	// Elapsed is the whole run (reference run included); Reference is the
	// uninterrupted run alone.
	Elapsed, Reference time.Duration
}

// Line is the summary line: "cycles=N records=N lost=L duplicated=D".
func (r *Report) Line() string {
	return fmt.Sprintf("cycles=%d records=%d lost=%d duplicated=%d", r.Cycles, r.Records, r.Lost, r.Duplicated)
}

// OK reports whether nothing was lost, duplicated or changed.
func (r *Report) OK() bool { return r.Lost == 0 && r.Duplicated == 0 && r.Mismatched == 0 }

// Details describes the kills and the differences, one fact per line.
func (r *Report) Details() string {
	var b strings.Builder
	fmt.Fprintf(&b, "kills: %d in checkpoint writes, %d by timer\n", sum(r.HookKills), r.TimerKills)
	if r.OtherKills > 0 {
		fmt.Fprintf(&b, "  %d more children died of SIGKILL not sent by the harness\n", r.OtherKills)
	}
	for _, m := range []map[string]int{r.HookKills, r.KindKills} {
		keys := make([]string, 0, len(m))
		for k := range m {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			fmt.Fprintf(&b, "  %-26s %d\n", k, m[k])
		}
	}
	names := make([]string, 0, len(r.Diffs))
	for n := range r.Diffs {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		d := r.Diffs[n]
		fmt.Fprintf(&b, "output %s: lost=%d duplicated=%d mismatched=%d\n", n, d.Lost, d.Duplicated, d.Mismatched)
		for _, e := range d.Examples {
			fmt.Fprintf(&b, "  %s\n", e)
		}
	}
	most := 0
	for _, t := range r.TempFiles {
		most = max(most, len(t))
	}
	fmt.Fprintf(&b, "temp files of interrupted writes: at most %d after a kill, %d after the final run\n", most, len(r.TempFilesLeft))
	fmt.Fprintf(&b, "time: %s (uninterrupted run %s)\n", r.Elapsed.Round(time.Millisecond), r.Reference.Round(time.Millisecond))
	return b.String()
}

func sum(m map[string]int) int {
	n := 0
	for _, v := range m {
		n += v
	}
	return n
}

// Run runs the workload once uninterrupted, then again under cfg.Cycles
// seeded kills with a restart after each, then to completion, and compares
// the two results. An error means the harness could not do its job (a
// worker failed to restart, for instance); lost or duplicated records are
// reported in the Report, not as an error.
func Run(ctx context.Context, cfg Config) (*Report, error) {
	cfg.defaults()
	if cfg.Command == nil {
		return nil, errors.New("chaos: Config.Command is required")
	}
	wl, err := NewWorkload(cfg.Workload, cfg.Records)
	if err != nil {
		return nil, err
	}
	start := time.Now()
	var params map[string]string
	if p, ok := wl.(Preparer); ok {
		var cleanup func()
		if params, cleanup, err = p.Prepare(ctx); err != nil {
			return nil, err
		}
		defer cleanup()
	}
	rep := &Report{Cycles: cfg.Cycles, Records: cfg.Records, HookKills: map[string]int{}, KindKills: map[string]int{}}
	refDir, runDir := filepath.Join(cfg.Dir, "reference"), filepath.Join(cfg.Dir, "chaos")
	base := WorkerConfig{Workload: cfg.Workload, Records: cfg.Records, KillStep: NoKill, NoSync: cfg.NoSync, FinishTimeout: cfg.FinishTimeout, Params: params, Conf: cfg.Conf, KillKinds: cfg.KillKinds}

	ref := base
	ref.Dir, ref.Finish = refDir, true
	if err := runToEnd(ctx, cfg, ref); err != nil {
		return nil, fmt.Errorf("chaos: uninterrupted run: %w", err)
	}
	rep.Reference = time.Since(start)
	want, err := readResult(filepath.Join(refDir, resultFile))
	if err != nil {
		return nil, err
	}

	modelDiffs := checkModel(wl, want)

	rng := rand.New(rand.NewPCG(uint64(cfg.Seed), 0x5eed))
	for i := 0; i < cfg.Cycles; i++ {
		w := base
		w.Dir = runDir
		if s := rng.IntN(5); s < 4 {
			w.KillStep, w.KillAfter = checkpoint.WriteStep(s), int64(rng.IntN(cfg.MaxKillAfter))
		}
		delay := cfg.MinDelay + time.Duration(rng.Int64N(int64(cfg.MaxDelay-cfg.MinDelay)))
		how, path, err := killCycle(ctx, cfg, w, delay)
		if err != nil {
			return nil, fmt.Errorf("chaos: cycle %d: %w", i, err)
		}
		switch how {
		case "timer":
			rep.TimerKills++
		case "unattributed":
			rep.OtherKills++
		default:
			rep.HookKills[how]++
			rep.KindKills[fileKind(runDir, path)]++
		}
		rep.TempFiles = append(rep.TempFiles, tempFiles(runDir))
		if cfg.Progress != nil {
			fmt.Fprintf(cfg.Progress, "cycle %d: killed %s %s\n", i, how, path)
		}
	}
	last := base
	last.Dir, last.Finish = runDir, true
	if err := runToEnd(ctx, cfg, last); err != nil {
		return nil, fmt.Errorf("chaos: final run after %d kills: %w", cfg.Cycles, err)
	}
	rep.TempFilesLeft = tempFiles(runDir)
	got, err := readResult(filepath.Join(runDir, resultFile))
	if err != nil {
		return nil, err
	}
	rep.Diffs = Compare(want, got)
	for name, d := range modelDiffs {
		rep.Diffs[name] = d
	}
	for _, d := range rep.Diffs {
		rep.Lost += d.Lost
		rep.Duplicated += d.Duplicated
		rep.Mismatched += d.Mismatched
	}
	rep.Elapsed = time.Since(start)
	return rep, nil
}

func command(cfg Config, w WorkerConfig) (*exec.Cmd, *bytes.Buffer, error) {
	text, err := json.Marshal(w)
	if err != nil {
		return nil, nil, err
	}
	cmd := cfg.Command()
	cmd.Env = append(os.Environ(), WorkerEnvVar+"="+string(text))
	var stderr bytes.Buffer
	cmd.Stderr = &limitWriter{w: &stderr, n: 1 << 16}
	return cmd, &stderr, nil
}

// runToEnd runs a finishing worker and waits for it.
func runToEnd(ctx context.Context, cfg Config, w WorkerConfig) error {
	cmd, stderr, err := command(cfg, w)
	if err != nil {
		return err
	}
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("start worker: %w", err)
	}
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	// The worker gives up by itself after FinishTimeout without progress;
	// this is the backstop for a worker that hangs without exiting.
	stall := newStallWatch(treeSize(w.Dir), cfg.FinishTimeout+30*time.Second)
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	for {
		select {
		case err := <-done:
			if err != nil {
				return fmt.Errorf("worker: %w\n%s", err, stderr)
			}
			return nil
		case <-tick.C:
			if !stall.stalled() {
				continue
			}
			cmd.Process.Kill()
			<-done
			return fmt.Errorf("worker did not finish: no progress in %s for %s\n%s", w.Dir, cfg.FinishTimeout+30*time.Second, stderr)
		case <-ctx.Done():
			cmd.Process.Kill()
			<-done
			return fmt.Errorf("worker did not finish: %w\n%s", ctx.Err(), stderr)
		}
	}
}

// killCycle starts a worker and kills it delay after the worker reports
// that it started (workerStarted) unless its write hook killed it first.
// The timer does not count the process's initialization (the Go runtime
// and the packages' init, 230-320 ms of a 10-400 ms delay at load 9 on two
// cores), where most timer kills landed before and tested nothing of the
// engine. It returns how the worker died ("timer" or the write step) and,
// for a hook kill, the file being written.
func killCycle(ctx context.Context, cfg Config, w WorkerConfig, delay time.Duration) (how, path string, err error) {
	cmd, stderr, err := command(cfg, w)
	if err != nil {
		return "", "", err
	}
	before := countLines(filepath.Join(w.Dir, killLog))
	pr, pw, err := os.Pipe()
	if err != nil {
		return "", "", fmt.Errorf("worker output pipe: %w", err)
	}
	defer pr.Close()
	cmd.Stdout = pw
	err = cmd.Start()
	pw.Close() // the child holds its own copy
	if err != nil {
		return "", "", fmt.Errorf("start worker: %w", err)
	}
	started := time.Now()
	// The first line (or the end of the output, should the worker die
	// before writing it) starts the timer; the rest is drained so that
	// the worker never blocks on a full pipe.
	ready := make(chan struct{})
	go func() {
		br := bufio.NewReader(pr)
		br.ReadString('\n')
		close(ready)
		io.Copy(io.Discard, br)
	}()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	var timerC <-chan time.Time
	readyC := ready
	for {
		select {
		case <-readyC:
			readyC = nil
			timer := time.NewTimer(delay)
			defer timer.Stop()
			timerC = timer.C
		case err := <-done:
			if !killedBySignal(err) {
				return "", "", fmt.Errorf("worker exited on its own (%v) instead of being killed:\n%s", err, stderr)
			}
			how, p, ok, err := hookKill(w.Dir, before)
			if err != nil || ok {
				return how, p, err
			}
			// Killed, but not by its hook (seen once, under the race
			// detector, cause unknown): still a crash to recover from,
			// counted apart.
			return "unattributed", fmt.Sprintf("after %s (armed %s, write %d)", time.Since(started).Round(time.Millisecond), w.KillStep, w.KillAfter), nil
		case <-timerC:
			cmd.Process.Signal(syscall.SIGKILL)
			err := <-done
			if err != nil && !killedBySignal(err) {
				return "", "", fmt.Errorf("worker failed before its kill: %v\n%s", err, stderr)
			}
			// The hook may have noted its write and be sending its own
			// SIGKILL as the timer fires: the worker died in that write.
			if how, p, ok, err := hookKill(w.Dir, before); err != nil || ok {
				return how, p, err
			}
			return "timer", fmt.Sprintf("after %s", delay.Round(time.Millisecond)), nil
		case <-ctx.Done():
			cmd.Process.Kill()
			<-done
			return "", "", ctx.Err()
		}
	}
}

// hookKill reads the write a worker's hook noted in the kill log after
// its first before lines: ok is false when there is none.
func hookKill(dir string, before int) (how, path string, ok bool, err error) {
	lines := readLines(filepath.Join(dir, killLog))
	if len(lines) <= before {
		return "", "", false, nil
	}
	var step int
	if _, err := fmt.Sscanf(lines[len(lines)-1], "%d\t%s", &step, &path); err != nil {
		return "", "", false, fmt.Errorf("kill log line %q: %w", lines[len(lines)-1], err)
	}
	return checkpoint.WriteStep(step).String(), path, true, nil
}

func killedBySignal(err error) bool {
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return false
	}
	ws, ok := ee.Sys().(syscall.WaitStatus)
	return ok && ws.Signaled() && ws.Signal() == syscall.SIGKILL
}

func readLines(path string) []string {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil
	}
	return strings.Split(strings.TrimSuffix(string(b), "\n"), "\n")
}

func countLines(path string) int { return len(readLines(path)) }

// fileKind names the kind of checkpoint file at path (under dir).
func fileKind(dir, path string) string {
	rel, err := filepath.Rel(dir, path)
	if err != nil {
		rel = path
	}
	rel = filepath.ToSlash(rel)
	base := filepath.Base(rel)
	switch {
	case strings.Contains(rel, "/"+checkpoint.EpochLogDir+"/"):
		return "epoch log"
	case strings.Contains(rel, "/offsets/"):
		return "offsets"
	case strings.Contains(rel, "/commits/"):
		return "commits"
	case base == "metadata":
		return "metadata"
	case strings.Contains(rel, "/state/"+checkpoint.StateLogDir+"/"):
		return "state log"
	case strings.Contains(rel, "/state/") && strings.HasSuffix(base, ".delta"):
		return "state delta"
	case strings.Contains(rel, "/state/") && strings.HasSuffix(base, ".snapshot"):
		return "state snapshot"
	case strings.Contains(rel, "/state/") && strings.HasSuffix(base, ".segment"):
		return "state snapshot segment"
	case strings.Contains(rel, "/state/") && strings.HasSuffix(base, ".pack"):
		return "state pack"
	case strings.Contains(rel, "/state/") && strings.HasSuffix(base, ".pebble"):
		return "pebble version"
	case strings.Contains(rel, "/state/") && strings.HasSuffix(base, ".sst"):
		return "pebble sst"
	case strings.Contains(rel, "/state/"):
		return "state other (" + base + ")"
	case strings.Contains(rel, "/sinks/memory/") && strings.HasSuffix(base, ".view.arrow"):
		return "memsink view"
	case strings.Contains(rel, "/sinks/memory/"):
		return "memsink epoch"
	case strings.Contains(rel, "/sources/"):
		return "source"
	}
	return "other (" + base + ")"
}

// limitWriter keeps the first n bytes written to it.
type limitWriter struct {
	w io.Writer
	n int
}

func (l *limitWriter) Write(p []byte) (int, error) {
	if l.n > 0 {
		k := min(len(p), l.n)
		l.w.Write(p[:k])
		l.n -= k
	}
	return len(p), nil
}

// checkModel compares the reference result with the workload's brute-force
// model, when it has one: the differences are reported as outputs named
// "<output> (reference vs model)", lost and duplicated counted as the
// reference run's.
func checkModel(wl Workload, want Result) map[string]Diff {
	m, ok := wl.(Modeler)
	if !ok {
		return nil
	}
	model := m.Model()
	ref := Result{}
	for name := range model {
		ref[name] = want[name]
	}
	out := map[string]Diff{}
	for name, d := range Compare(model, ref) {
		out[name+" (reference vs model)"] = d
	}
	return out
}

// tempFiles lists the temp files of interrupted atomic writes under dir,
// relative to it, in lexical order.
func tempFiles(dir string) []string {
	var out []string
	filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err == nil && d.Type().IsRegular() && checkpoint.IsTempName(d.Name()) {
			if rel, err := filepath.Rel(dir, p); err == nil {
				out = append(out, rel)
			}
		}
		return nil
	})
	return out
}
