package main

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/internal/testutil"
)

// buildBinary builds the arrowstream command into a temporary directory.
func buildBinary(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "arrowstream")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// process is a running `arrowstream run` with its output captured.
type process struct {
	cmd       *exec.Cmd
	mu        sync.Mutex
	out       bytes.Buffer // stdout and stderr, interleaved
	httpURL   string
	flightURI string
	ready     chan struct{} // closed once the banner is printed
	exited    chan error
}

var (
	bannerWeb    = regexp.MustCompile(`web UI +(http://\S+/)`)
	bannerFlight = regexp.MustCompile(`Flight SQL +(grpc://\S+)`)
)

func startRun(t *testing.T, bin, ckDir string) *process {
	t.Helper()
	return startProcess(t, bin, "run", "--checkpoint", ckDir, "--http", "127.0.0.1:0", "--addr", "127.0.0.1:0",
		"--status", "log", "--status-interval", "1s")
}

// startProcess runs the binary with args and waits for its banner.
func startProcess(t *testing.T, bin string, args ...string) *process {
	t.Helper()
	p := &process{ready: make(chan struct{}), exited: make(chan error, 1)}
	p.cmd = exec.Command(bin, args...)
	p.cmd.Env = append(os.Environ(), "ARROWSTREAM_LOG_LEVEL=info")
	stdout, _ := p.cmd.StdoutPipe()
	p.cmd.Stderr = writerFunc(func(b []byte) (int, error) {
		p.mu.Lock()
		defer p.mu.Unlock()
		return p.out.Write(b)
	})
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() {
		sc := bufio.NewScanner(stdout)
		closed := false
		for sc.Scan() {
			line := sc.Text()
			p.mu.Lock()
			p.out.WriteString(line + "\n")
			if m := bannerWeb.FindStringSubmatch(line); m != nil {
				p.httpURL = m[1]
			}
			if m := bannerFlight.FindStringSubmatch(line); m != nil {
				p.flightURI = m[1]
			}
			if strings.HasPrefix(line, "Press Ctrl-C") && !closed {
				close(p.ready)
				closed = true
			}
			p.mu.Unlock()
		}
		p.exited <- p.cmd.Wait()
	}()
	t.Cleanup(func() {
		if p.cmd.ProcessState == nil {
			p.cmd.Process.Kill()
		}
		if t.Failed() {
			t.Logf("output of %s:\n%s", bin, p.output())
		}
	})
	select {
	case <-p.ready:
	case err := <-p.exited:
		t.Fatalf("run exited before serving: %v\n%s", err, p.output())
	case <-time.After(testutil.Scaled(3 * time.Minute)):
		t.Fatalf("no banner after 30 s:\n%s", p.output())
	}
	return p
}

type writerFunc func([]byte) (int, error)

func (f writerFunc) Write(b []byte) (int, error) { return f(b) }

func (p *process) output() string {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.out.String()
}

// interrupt sends SIGINT and waits for a clean exit; it returns how long
// the process took to exit.
func (p *process) interrupt(t *testing.T) time.Duration {
	t.Helper()
	start := time.Now()
	if err := p.cmd.Process.Signal(syscall.SIGINT); err != nil {
		t.Fatal(err)
	}
	select {
	case err := <-p.exited:
		if err != nil {
			t.Fatalf("run exited with %v after SIGINT", err)
		}
	case <-time.After(testutil.Scaled(2 * time.Minute)):
		t.Fatalf("run did not exit 15 s after SIGINT")
	}
	return time.Since(start)
}

// windowRow is a row of page_views.
type windowRow struct {
	start, end, page string
	views            int64
}

// windows reads page_views: through Flight SQL once the server is wired
// in (flightWired), through the web UI's JSON API until then.
func (p *process) windows(t *testing.T) []windowRow {
	t.Helper()
	var rows [][]any
	if flightWired {
		env, out, errb := testEnv(nil)
		err := queryCmd(context.Background(), []string{"--uri", p.flightURI, "--format", "json",
			"SELECT CAST(window_start AS STRING) AS s, CAST(window_end AS STRING) AS e, page, views FROM page_views"}, env)
		if err != nil {
			t.Fatalf("Flight SQL query: %v\n%s", err, errb)
		}
		dec := json.NewDecoder(out)
		for {
			var r struct {
				S, E, Page string
				Views      float64
			}
			if err := dec.Decode(&r); err == io.EOF {
				break
			} else if err != nil {
				t.Fatal(err)
			}
			rows = append(rows, []any{r.S, r.E, r.Page, r.Views})
		}
	} else {
		var tr tableRows
		getJSON(t, p.httpURL+"api/tables/page_views?limit=0", &tr)
		rows = tr.Rows
	}
	out := make([]windowRow, len(rows))
	for i, r := range rows {
		out[i] = windowRow{fmt.Sprint(r[0]), fmt.Sprint(r[1]), fmt.Sprint(r[2]), int64(r[3].(float64))}
	}
	return out
}

// query returns the run's page_views query and its progress.
func (p *process) pageViews(t *testing.T) (queryInfo, []arrowstream.StreamingQueryProgress) {
	t.Helper()
	var qs []queryInfo
	getJSON(t, p.httpURL+"api/queries", &qs)
	for _, q := range qs {
		if q.Name == "page_views" {
			var ps []arrowstream.StreamingQueryProgress
			getJSON(t, p.httpURL+"api/queries/"+q.ID+"/progress", &ps)
			return q, ps
		}
	}
	t.Fatalf("no page_views query: %+v", qs)
	return queryInfo{}, nil
}

// TestRunSubprocess is the acceptance test of `arrowstream run`: the demo
// on a fresh checkpoint serves windows within 10 s, SIGINT stops it
// cleanly, and a second run continues from the checkpoint (epoch numbers
// continue, no window is counted twice).
func TestRunSubprocess(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	ck := t.TempDir()

	first := startRun(t, bin, ck)
	if !flightWired {
		t.Log("Flight SQL is not wired in yet (flight.go): reading the tables through the HTTP API")
	} else if first.flightURI == "" {
		t.Fatalf("no Flight SQL URI in the banner:\n%s", first.output())
	}
	began := time.Now()
	var before []windowRow
	for len(before) == 0 {
		if time.Since(began) > testutil.Scaled(time.Minute) {
			t.Fatalf("no window in page_views a minute after the start")
		}
		time.Sleep(200 * time.Millisecond)
		before = first.windows(t)
	}
	t.Logf("first windows after %s: %d rows", time.Since(began).Round(time.Millisecond), len(before))
	time.Sleep(2 * time.Second) // a few more epochs
	q1, ps1 := first.pageViews(t)
	before = first.windows(t)
	took := first.interrupt(t)
	t.Logf("SIGINT to exit: %s", took.Round(time.Millisecond))
	if took > 3*time.Second {
		t.Errorf("stopping took %s, want about a second", took)
	}
	if !strings.Contains(first.output(), "msg=stopped") {
		t.Errorf("no clean stop logged")
	}
	lastEpoch := ps1[len(ps1)-1].BatchID

	second := startRun(t, bin, ck)
	var q2 queryInfo
	var ps2 []arrowstream.StreamingQueryProgress
	deadline := time.Now().Add(testutil.Scaled(3 * time.Minute))
	for {
		q2, ps2 = second.pageViews(t)
		if len(ps2) > 0 && q2.BatchID > lastEpoch+1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("the second run made no progress past epoch %d: %+v", lastEpoch, q2)
		}
		time.Sleep(200 * time.Millisecond)
	}
	if q2.ID != q1.ID || q2.RunID == q1.RunID {
		t.Errorf("query id %s → %s, run id %s → %s: want the same id and a new run id", q1.ID, q2.ID, q1.RunID, q2.RunID)
	}
	// Epoch numbers continue where the first run stopped (an epoch that was
	// running at the interrupt runs again with the same number).
	if got := ps2[0].BatchID; got <= lastEpoch || got > lastEpoch+3 {
		t.Errorf("the second run started at epoch %d; the first ended at %d", got, lastEpoch)
	}
	// Wait for a window the first run did not write, then check that no
	// window is counted twice and the first run's windows are unchanged.
	newest := ""
	for _, w := range before {
		newest = max(newest, w.start)
	}
	var after []windowRow
	deadline = time.Now().Add(testutil.Scaled(3 * time.Minute))
	for {
		after = second.windows(t)
		fresh := false
		for _, w := range after {
			fresh = fresh || w.start > newest
		}
		if fresh {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no new window after the restart (newest before: %s)", newest)
		}
		time.Sleep(300 * time.Millisecond)
	}
	seen := map[string]int64{}
	for _, w := range after {
		key := w.start + " " + w.page
		if _, dup := seen[key]; dup {
			t.Errorf("window %s counted twice", key)
		}
		seen[key] = w.views
	}
	for _, w := range before {
		if v, ok := seen[w.start+" "+w.page]; !ok || v != w.views {
			t.Errorf("window %s %s: %d views before the restart, %d (present %v) after", w.start, w.page, w.views, v, ok)
		}
	}
	t.Logf("epochs: first run up to %d, second run from %d; windows: %d before, %d after", lastEpoch, ps2[0].BatchID, len(before), len(after))
	second.interrupt(t)
}
