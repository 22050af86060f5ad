package security

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// Attacks of issue 17 on running work, against the real binary: one
// server (a 64 MiB query memory limit, a 20 s query timeout) shared by the
// cases, each of which ends with the server answering the next query and
// its resident set bounded.
//
// rssBound is how far above its resting size the server's resident set
// may go during a case: the query limit, the Go runtime's slack and the
// rate source's batches; issue 17's cross join grew to 8.7 GB.
const rssBound = 768 << 20

// rssWatch samples the server's resident set every 50 ms until stop and
// reports the highest value seen.
type rssWatch struct {
	peak atomic.Int64
	stop chan struct{}
	done chan struct{}
}

func watchRSS(t *testing.T, pid int) *rssWatch {
	t.Helper()
	w := &rssWatch{stop: make(chan struct{}), done: make(chan struct{})}
	go func() {
		defer close(w.done)
		for {
			if now, err := vmRSS(pid); err == nil && now > w.peak.Load() {
				w.peak.Store(now)
			}
			select {
			case <-w.stop:
				return
			case <-time.After(50 * time.Millisecond):
			}
		}
	}()
	return w
}

// end stops the sampling and fails the test when the peak went past
// base+rssBound.
func (w *rssWatch) end(t *testing.T, what string, base int64) {
	t.Helper()
	close(w.stop)
	<-w.done
	t.Logf("%s: RSS peaked at %d MiB (resting %d MiB before)", what, w.peak.Load()>>20, base>>20)
	if w.peak.Load() > base+rssBound {
		t.Errorf("%s: the server's RSS reached %d MiB, more than %d MiB over its resting %d MiB", what, w.peak.Load()>>20, rssBound>>20, base>>20)
	}
}

// idleCPU waits until the server stops burning CPU (two consecutive
// half-second windows under a tenth of a core), as after a stopped query.
func idleCPU(t *testing.T, pid int, what string) {
	t.Helper()
	prev, _ := cpuTicks(pid)
	quiet := 0
	waitFor(t, what, func() bool {
		time.Sleep(450 * time.Millisecond)
		now, err := cpuTicks(pid)
		if err != nil {
			t.Fatalf("reading the server's CPU time: %v", err)
		}
		if now-prev <= 5 {
			quiet++
		} else {
			quiet = 0
		}
		prev = now
		return quiet >= 2
	})
}

// TestRunningWorkAttacks: on the real binary with real clients, the rows
// of the attack table that were tested in-process only.
func TestRunningWorkAttacks(t *testing.T) {
	const limit = 64 << 20
	e := startServe(t, "--query-memory", strconv.Itoa(limit), "--query-timeout", "20s")
	pid := e.cmd.Process.Pid
	if _, err := vmRSS(pid); err != nil {
		t.Skipf("no resident set to read here: %v", err)
	}
	if _, err := cpuTicks(pid); err != nil {
		t.Skipf("no CPU time to read here: %v", err)
	}
	c := e.admin()
	c.mustRun(t, "CREATE TABLE fast USING rate OPTIONS (rowsPerSecond '50000')")
	c.mustRun(t, "CREATE STREAMING TABLE big AS SELECT value FROM STREAM fast")
	waitFor(t, "20000 rows in big", func() bool {
		rows, err := c.run(t, "SELECT count(*) FROM big")
		if err != nil || len(rows) != 1 {
			return false
		}
		n, _ := strconv.Atoi(rows[0][0])
		return n >= 20000
	})
	c.mustRun(t, "DROP TABLE fast")
	base := restingRSS(t, pid)

	t.Run("modulo join under the memory limit", func(t *testing.T) {
		w := watchRSS(t, pid)
		_, err := c.run(t, "SELECT a.value * 1000000 + b.value AS k, count(*) FROM big a JOIN big b ON a.value % 3 = b.value % 3 GROUP BY 1 ORDER BY 2 DESC LIMIT 3")
		refused(t, "modulo join under a 64 MiB limit", err, codes.ResourceExhausted, "RESOURCE_EXHAUSTED", "memory limit of 67108864 bytes", "QueryMemoryBytes")
		w.end(t, "modulo join", base)
		e.alive(t)
	})

	// A count over a three-way cross join of 20K rows (8·10^12 rows) runs
	// until something stops it.
	const endless = "SELECT count(*) FROM big a CROSS JOIN big b CROSS JOIN big c"
	t.Run("query timeout of a running join", func(t *testing.T) {
		w := watchRSS(t, pid)
		_, err := c.run(t, endless)
		refused(t, "three-way cross join under a 20 s query timeout", err, codes.DeadlineExceeded, "query timeout of 20s")
		idleCPU(t, pid, "the server to stop working on the timed-out query")
		w.end(t, "timed-out join", base)
		e.alive(t)
	})

	t.Run("client cancel of a running aggregation", func(t *testing.T) {
		w := watchRSS(t, pid)
		ctx, cancel := context.WithCancel(c.ctx)
		defer cancel()
		done := make(chan error, 1)
		before, _ := cpuTicks(pid)
		go func() {
			_, err := c.exec(ctx, "SELECT a.value % 1000 AS k, count(*) FROM big a CROSS JOIN big b GROUP BY 1")
			done <- err
		}()
		waitFor(t, "the aggregation to run (a second of the server's CPU)", func() bool {
			now, err := cpuTicks(pid)
			return err == nil && now-before >= 100
		})
		select {
		case err := <-done:
			t.Fatalf("the aggregation ended before the cancel: %v", err)
		default:
		}
		cancel()
		if err := <-done; status.Code(err) != codes.Canceled {
			t.Fatalf("client saw %v, want Canceled", err)
		}
		idleCPU(t, pid, "the server to stop working on the cancelled query")
		w.end(t, "cancelled aggregation", base)
		e.alive(t)
	})

	t.Run("huge rate source", func(t *testing.T) {
		_, err := c.run(t, "CREATE TABLE huge USING rate OPTIONS (rowsPerSecond '1000000000000')")
		refused(t, "rate of 10^12 rows a second", err, codes.InvalidArgument, "rowsPerSecond")
		e.alive(t)
	})

	t.Run("DROP TABLE of a running streaming table", func(t *testing.T) {
		// A rate source at a high rate and a streaming aggregation over it,
		// running; DROP TABLE returns and the query is gone.
		w := watchRSS(t, pid)
		c.mustRun(t, "CREATE TABLE quick USING rate OPTIONS (rowsPerSecond '1000000')")
		c.mustRun(t, "CREATE STREAMING TABLE counts TBLPROPERTIES ('outputMode' = 'complete') AS SELECT value % 100000 AS k, count(*) AS n FROM STREAM quick GROUP BY value % 100000")
		waitFor(t, "the streaming aggregation to commit an epoch", func() bool {
			rows, err := c.run(t, "SELECT count(*) FROM counts")
			return err == nil && len(rows) == 1 && rows[0][0] != "0"
		})
		c.mustRun(t, "DROP TABLE counts")
		c.mustRun(t, "DROP TABLE quick")
		rows := c.mustRun(t, "SELECT name, status FROM system.streaming_queries")
		for _, r := range rows {
			if r[0] == "counts" && r[1] == "RUNNING" {
				t.Errorf("the dropped table's query still runs: %v", rows)
			}
		}
		idleCPU(t, pid, "the server to stop working on the dropped table")
		w.end(t, "dropped streaming table", base)
		e.alive(t)
	})

	t.Run("planning huge expressions", func(t *testing.T) {
		w := watchRSS(t, pid)
		terms := strings.Repeat("1+", 9_999) + "1"
		rows := c.mustRun(t, "SELECT "+terms+" AS n")
		if len(rows) != 1 || rows[0][0] != "10000" {
			t.Errorf("SELECT 1+1+…+1 (10K terms) = %v, want 10000", rows)
		}
		var b strings.Builder
		b.WriteString("SELECT CASE")
		for i := range 50_000 {
			fmt.Fprintf(&b, " WHEN value=%d THEN %d", i, i)
		}
		b.WriteString(" END AS c FROM big LIMIT 1")
		if b.Len() < 1<<20 {
			t.Fatalf("the CASE statement is %d bytes, want it over --max-statement-bytes", b.Len())
		}
		_, err := c.run(t, b.String())
		refused(t, "a 50K-branch CASE over the statement limit", err, codes.InvalidArgument, "--max-statement-bytes")
		// Shorter branches: 30K of them fit the statement limit but not the
		// expression-node limit; 20K plan and run.
		caseOf := func(branches int) string {
			b.Reset()
			b.WriteString("SELECT CASE")
			for i := range branches {
				fmt.Fprintf(&b, " WHEN value=%d THEN 1", i)
			}
			b.WriteString(" END AS c FROM big WHERE value = 7")
			return b.String()
		}
		_, err = c.run(t, caseOf(30_000))
		refused(t, "a 30K-branch CASE over the expression limit", err, codes.InvalidArgument, "100000 expression nodes", "MaxExprNodes")
		rows = c.mustRun(t, caseOf(20_000))
		if len(rows) != 1 || rows[0][0] != "1" {
			t.Errorf("20K-branch CASE = %v, want one row of 1", rows)
		}
		idleCPU(t, pid, "the server to be idle after planning")
		w.end(t, "huge expressions", base)
		e.alive(t)
	})
}
