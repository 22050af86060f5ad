package ysb

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/arrowstream/arrowstream/bench/harness"
)

// PeerResult is one line the DuckDB peer program (bench/peers/duckdb,
// cmd/ysbpeer) prints: a measured run of the YSB query on DuckDB over the
// data of Generate(Events, EventsPerSecond, Seed), and whether its answer
// matched Data.Reference (which Arrowstream's answer also matched in the
// same run).
type PeerResult struct {
	Peer    string  `json:"peer"`
	Threads int     `json:"threads"`
	Events  int     `json:"events"`
	WallSec float64 `json:"wall_s"`
	CPUSec  float64 `json:"cpu_s"`
	// AnswerOK is false when DuckDB's counts differ from the reference;
	// Diff says how. Such a run's time does not count.
	AnswerOK bool   `json:"answer_ok"`
	Diff     string `json:"diff,omitempty"`
}

// DuckDBAvailable says whether the DuckDB peer can run from dir: the
// directory holds the peer module, and `go` and a C compiler are on PATH
// with cgo not disabled. The reason names what is missing.
func DuckDBAvailable(dir string) (ok bool, reason string) {
	if dir == "" {
		return false, "the peer module bench/peers/duckdb was not found (run from the repository, or pass --duckdb-dir)"
	}
	if _, err := os.Stat(filepath.Join(dir, "go.mod")); err != nil {
		return false, fmt.Sprintf("%s has no go.mod", dir)
	}
	if _, err := exec.LookPath("go"); err != nil {
		return false, "no go toolchain on PATH (the peer is built with cgo)"
	}
	if os.Getenv("CGO_ENABLED") == "0" {
		return false, "CGO_ENABLED=0"
	}
	cc := os.Getenv("CC")
	if cc == "" {
		cc = "gcc"
		if _, err := exec.LookPath(cc); err != nil {
			cc = "cc"
		}
	}
	if _, err := exec.LookPath(strings.Fields(cc + " x")[0]); err != nil {
		return false, "no C compiler on PATH (DuckDB links with cgo)"
	}
	return true, ""
}

// FindDuckDBDir looks for bench/peers/duckdb from the working directory
// upwards (the command is normally run from the repository).
func FindDuckDBDir() string {
	dir, err := os.Getwd()
	if err != nil {
		return ""
	}
	for {
		p := filepath.Join(dir, "bench", "peers", "duckdb")
		if _, err := os.Stat(filepath.Join(p, "go.mod")); err == nil {
			return p
		}
		up := filepath.Dir(dir)
		if up == dir {
			return ""
		}
		dir = up
	}
}

// runDuckDB runs the DuckDB peer program as a subprocess (its own module,
// built with cgo) over the same generated events and turns its lines into
// figures with ratios to Arrowstream's dictionary-input throughput. A
// skipped peer is one figure-less log line and a "skipped" figure.
func runDuckDB(ctx context.Context, cfg harness.Config, o Options, events int, ours float64) ([]harness.Figure, error) {
	skip := o.DuckDBSkip
	if skip == "" {
		if ok, why := DuckDBAvailable(o.DuckDBDir); !ok {
			skip = why
		}
	}
	var bin string
	if skip == "" {
		var cleanup func()
		var err error
		if bin, cleanup, skip, err = BuildDuckDBPeer(ctx, o.DuckDBDir, "./cmd/ysbpeer"); err != nil {
			return nil, err
		}
		if cleanup != nil {
			defer cleanup()
		}
	}
	if skip != "" {
		cfg.Logger.Warn("DuckDB peer skipped", "reason", skip)
		return []harness.Figure{{Workload: "ysb-dict", Figure: "skipped", Unit: "", Peer: "duckdb", Source: skip}}, nil
	}
	ctx, cancel := context.WithTimeout(ctx, 15*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin,
		"-events", fmt.Sprint(events), "-seed", fmt.Sprint(cfg.Seed),
		"-rate", fmt.Sprint(EventsPerSecond), "-threads", fmt.Sprintf("1,%d", runtime.NumCPU()))
	cmd.Dir = o.DuckDBDir
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		return nil, fmt.Errorf("ysb: DuckDB peer (./cmd/ysbpeer of %s): %w: %s", o.DuckDBDir, err, lastLines(stderr.String(), 5))
	}
	var figs []harness.Figure
	sc := bufio.NewScanner(bytes.NewReader(out))
	for line := 1; sc.Scan(); line++ {
		var r PeerResult
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			return nil, fmt.Errorf("ysb: DuckDB peer output line %d: %w", line, err)
		}
		if !r.AnswerOK {
			return nil, fmt.Errorf("ysb: DuckDB peer %s gave a wrong answer (its time does not count): %s", r.Peer, r.Diff)
		}
		if r.Events != events {
			return nil, fmt.Errorf("ysb: DuckDB peer %s ran %d events, want %d", r.Peer, r.Events, events)
		}
		rate := harness.PerCore(float64(r.Events), time.Duration(r.WallSec*float64(time.Second)), time.Duration(r.CPUSec*float64(time.Second)))
		figs = append(figs, harness.Figure{Workload: "ysb-dict", Figure: "throughput", Value: rate, Unit: "events/s/core", Peer: r.Peer, Ratio: ratio(ours, rate)})
	}
	return figs, nil
}

func lastLines(s string, n int) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return strings.Join(lines[max(len(lines)-n, 0):], " | ")
}
