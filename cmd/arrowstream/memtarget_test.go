package main

import (
	"bufio"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/internal/testutil"
)

// TestServeMemoryTarget starts the real server with --memory-target and
// tables that hold data (an append table fed by a rate source and a
// stateful aggregation): /metrics reports the bytes they hold, and the Go
// runtime's soft memory limit (go_gc_gomemlimit_bytes) is the limit the
// target set for them, at least the base plus the ratio per held byte and
// at most --memory-limit.
func TestServeMemoryTarget(t *testing.T) {
	if testing.Short() {
		t.Skip("builds and runs the binary")
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	init := filepath.Join(dir, "init.sql")
	sql := `CREATE TABLE events USING rate OPTIONS (rowsPerSecond '50000');
CREATE STREAMING TABLE kept AS SELECT value, CAST(value AS STRING) AS s FROM STREAM events;
CREATE STREAMING TABLE counts TBLPROPERTIES ('outputMode' = 'update', 'updateAsView' = 'true') AS SELECT value % 100000 AS k, count(*) AS n FROM STREAM events GROUP BY value % 100000;
`
	if err := os.WriteFile(init, []byte(sql), 0o644); err != nil {
		t.Fatal(err)
	}
	const ceiling = 1 << 30
	p := startProcess(t, bin, "serve", "--checkpoint", filepath.Join(dir, "ck"), "--http", "127.0.0.1:0", "--addr", "127.0.0.1:0",
		"--status", "off", "--memory-target", "1.25", "--memory-limit", strconv.Itoa(ceiling), "--init", init)
	if p.httpURL == "" {
		t.Fatalf("no web UI address in the banner:\n%s", p.output())
	}

	var last map[string]float64
	deadline := time.Now().Add(testutil.Scaled(3 * time.Minute))
	for {
		m := scrapeMetrics(t, p.httpURL+"metrics")
		last = m
		held, limit, base, goLimit := m["arrowstream_memory_held_bytes"], m["arrowstream_memory_target_limit_bytes"], m["arrowstream_memory_target_base_bytes"], m["go_gc_gomemlimit_bytes"]
		if held >= 8<<20 && base > 0 && limit >= base+1.25*held && limit == goLimit {
			if limit > ceiling {
				t.Fatalf("limit %v over --memory-limit %d", limit, ceiling)
			}
			t.Logf("held %.1f MiB, base %.1f MiB, limit %.1f MiB", held/(1<<20), base/(1<<20), limit/(1<<20))
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("no limit set for 8 MiB held within the deadline: held %v, base %v, target limit %v, runtime limit %v", held, base, limit, goLimit)
		}
		time.Sleep(200 * time.Millisecond)
	}
	// The aggregation holds state (the held bytes count it besides the
	// tables: arrowstream's TestMemoryTargetFollowsHeldBytes).
	if !hasPrefix(last, "arrowstream_query_state_bytes{") {
		t.Fatalf("no state bytes reported")
	}
	p.interrupt(t)
}

// hasPrefix reports whether a positive sample's name starts with prefix.
func hasPrefix(m map[string]float64, prefix string) bool {
	for k, v := range m {
		if strings.HasPrefix(k, prefix) && v > 0 {
			return true
		}
	}
	return false
}

// scrapeMetrics reads a Prometheus text page: each sample under its name
// with its labels, and under its bare name when it has none.
func scrapeMetrics(t *testing.T, url string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		b, _ := io.ReadAll(resp.Body)
		t.Fatalf("GET %s: %s\n%s", url, resp.Status, b)
	}
	out := map[string]float64{}
	sc := bufio.NewScanner(resp.Body)
	sc.Buffer(make([]byte, 1<<20), 1<<20)
	for sc.Scan() {
		line := sc.Text()
		if line == "" || line[0] == '#' {
			continue
		}
		i := strings.LastIndexByte(line, ' ')
		if i < 0 {
			continue
		}
		v, err := strconv.ParseFloat(line[i+1:], 64)
		if err != nil {
			continue
		}
		out[line[:i]] = v
	}
	return out
}
