package security

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestStreamingTableQuota: a user may not start more streaming tables
// than --max-streaming-tables-per-user, nor all users more than
// --max-streaming-tables.
func TestStreamingTableQuota(t *testing.T) {
	e := startServe(t, "--max-streaming-tables-per-user", "2", "--max-streaming-tables", "3")
	c := e.admin()
	c.mustRun(t, "CREATE TABLE ticks USING rate OPTIONS (rowsPerSecond '10')")
	c.mustRun(t, "CREATE STREAMING TABLE q1 AS SELECT value FROM STREAM ticks")
	c.mustRun(t, "CREATE STREAMING TABLE q2 AS SELECT value FROM STREAM ticks")
	_, err := c.run(t, "CREATE STREAMING TABLE q3 AS SELECT value FROM STREAM ticks")
	refused(t, "third table of one user", err, codes.ResourceExhausted, "quota exceeded", `"admin"`, "--max-streaming-tables-per-user")
	// Dropping one frees the slot.
	c.mustRun(t, "DROP TABLE q2")
	waitFor(t, "the dropped query to stop", func() bool {
		_, err := c.run(t, "CREATE STREAMING TABLE q3 AS SELECT value FROM STREAM ticks")
		return err == nil
	})
	e.alive(t)
}

// TestServerStreamingTableQuota: the server-wide bound counts every
// user's tables.
func TestServerStreamingTableQuota(t *testing.T) {
	e := startServe(t, "--max-streaming-tables", "2")
	c := e.admin()
	c.mustRun(t, "CREATE TABLE ticks USING rate OPTIONS (rowsPerSecond '10')")
	for i := 1; i <= 2; i++ {
		c.mustRun(t, "CREATE STREAMING TABLE q"+strconv.Itoa(i)+" AS SELECT value FROM STREAM ticks")
	}
	_, err := c.run(t, "CREATE STREAMING TABLE q3 AS SELECT value FROM STREAM ticks")
	refused(t, "third table on the server", err, codes.ResourceExhausted, "quota exceeded", "--max-streaming-tables")
	e.alive(t)
}

// TestCheckpointQuota: a running streaming table whose checkpoint grows
// past --max-checkpoint-bytes is stopped, FAILED in
// system.streaming_queries with RESOURCE_EXHAUSTED naming the limit; and
// while the running tables hold more than the limit no new one is
// created (a table under a long trigger interval sits still at its first
// epoch's size, which the limit is set to).
func TestCheckpointQuota(t *testing.T) {
	e := startServe(t, "--max-checkpoint-bytes", "1")
	c := e.admin()
	c.mustRun(t, "CREATE TABLE ticks USING rate OPTIONS (rowsPerSecond '10')")
	c.mustRun(t, "CREATE STREAMING TABLE q1 AS SELECT value FROM STREAM ticks")
	var rows [][]string
	waitFor(t, "the growing table to be stopped", func() bool {
		rows = c.mustRun(t, "SELECT name, status, exception FROM system.streaming_queries")
		return len(rows) == 1 && rows[0][1] == "FAILED"
	})
	if ex := rows[0][2]; !strings.Contains(ex, "RESOURCE_EXHAUSTED") || !strings.Contains(ex, `"q1" stopped`) || !strings.Contains(ex, "--max-checkpoint-bytes") {
		t.Errorf("stopped table row %v: want RESOURCE_EXHAUSTED naming q1 and --max-checkpoint-bytes", rows[0])
	}
	e.alive(t)
}

// TestStateQuota: a streaming aggregation whose state (its latest
// memoryUsedBytes) grows past --max-state-bytes is stopped, FAILED in
// system.streaming_queries with RESOURCE_EXHAUSTED naming the table and
// the flag, and while the running tables hold more than the limit no
// new one starts.
func TestStateQuota(t *testing.T) {
	e := startServe(t, "--max-state-bytes", "1")
	c := e.admin()
	c.mustRun(t, "CREATE TABLE ticks USING rate OPTIONS (rowsPerSecond '100')")
	c.mustRun(t, "CREATE STREAMING TABLE agg TBLPROPERTIES ('outputMode' = 'complete') AS SELECT value % 10 AS k, count(*) AS n FROM STREAM ticks GROUP BY value % 10")
	var rows [][]string
	waitFor(t, "the aggregation to be stopped", func() bool {
		rows = c.mustRun(t, "SELECT name, status, exception FROM system.streaming_queries")
		return len(rows) == 1 && rows[0][1] == "FAILED"
	})
	if ex := rows[0][2]; !strings.Contains(ex, "RESOURCE_EXHAUSTED") || !strings.Contains(ex, `"agg" stopped`) || !strings.Contains(ex, "--max-state-bytes") {
		t.Errorf("stopped table row %v: want RESOURCE_EXHAUSTED naming agg and --max-state-bytes", rows[0])
	}
	e.alive(t)
}

// TestStalledReadersReleased: DoGet streams whose client reads nothing
// hold a concurrent-query slot only until --stall-timeout cancels them.
func TestStalledReadersReleased(t *testing.T) {
	e := startServe(t, "--stall-timeout", "2s", "--max-concurrent-queries-per-user", "1")
	c := e.admin()
	big := fillBigTable(t, c)
	// A second connection opens a large result and never reads it.
	stalled := e.admin()
	ctx, cancel := context.WithCancel(stalled.ctx)
	defer cancel()
	info, err := stalled.Execute(ctx, "SELECT a.value * 100000 + b.value AS k FROM "+big+" a CROSS JOIN "+big+" b")
	if err != nil {
		t.Fatal(err)
	}
	rdr, err := stalled.DoGet(ctx, info.Endpoint[0].Ticket)
	if err != nil {
		t.Fatal(err)
	}
	defer rdr.Release()
	// While it holds the user's only slot, another statement is refused...
	var qerr error
	waitFor(t, "the stalled stream to hold the slot", func() bool {
		_, qerr = c.run(t, "SELECT 1")
		return qerr != nil
	})
	refused(t, "second statement of a user with one slot", qerr, codes.ResourceExhausted, "quota exceeded", "--max-concurrent-queries-per-user")
	// ...until the stall timeout cancels the stalled stream.
	start := time.Now()
	waitFor(t, "the stall timeout to free the slot", func() bool {
		_, qerr = c.run(t, "SELECT 1")
		return qerr == nil
	})
	t.Logf("slot freed %v after the refusal (stall timeout 2s)", time.Since(start).Round(100*time.Millisecond))
	waitFor(t, "the stall to be logged", func() bool { return strings.Contains(e.output(), "result stream stalled") })
	e.alive(t)
}

// fillBigTable makes a streaming table of at least 3000 rows and returns
// its name.
func fillBigTable(t *testing.T, c *client) string {
	t.Helper()
	c.mustRun(t, "CREATE TABLE fast USING rate OPTIONS (rowsPerSecond '5000')")
	c.mustRun(t, "CREATE STREAMING TABLE big AS SELECT value FROM STREAM fast")
	waitFor(t, "3000 rows in big", func() bool {
		rows, err := c.run(t, "SELECT count(*) FROM big")
		if err != nil || len(rows) != 1 {
			return false
		}
		n, _ := strconv.Atoi(rows[0][0])
		return n >= 3000
	})
	c.mustRun(t, "DROP TABLE fast")
	return "big"
}

// TestManyStalledReaders is issue 17's 256 DoGets that never read (+720
// MB held until the 5-minute query timeout): one user opens 256 large
// result streams, each on a connection of its own, and reads none. The
// per-user quota of concurrent queries (default 16) refuses the streams
// past it with RESOURCE_EXHAUSTED naming the quota, the server's resident
// set stays bounded while they stall, --stall-timeout cancels the stalled
// ones, and the user's slots come back.
func TestManyStalledReaders(t *testing.T) {
	const stallBound = 256 << 20
	e := startServe(t, "--stall-timeout", "5s")
	pid := e.cmd.Process.Pid
	if _, err := vmRSS(pid); err != nil {
		t.Skipf("no resident set to read here: %v", err)
	}
	c := e.admin()
	big := fillBigTable(t, c)
	base := restingRSS(t, pid)
	w := watchRSS(t, pid)
	var opened, refused int
	var refusal error
	for range 256 {
		s := e.admin()
		ctx, cancel := context.WithCancel(s.ctx)
		defer cancel()
		info, err := s.Execute(ctx, "SELECT a.value * 100000 + b.value AS k FROM "+big+" a CROSS JOIN "+big+" b")
		if err == nil {
			var rdr interface{ Release() }
			rdr, err = s.DoGet(ctx, info.Endpoint[0].Ticket)
			if err == nil {
				opened++
				defer rdr.Release()
				continue
			}
		}
		if status.Code(err) != codes.ResourceExhausted {
			t.Fatalf("stream %d: %v, want a stalled stream or RESOURCE_EXHAUSTED", opened+refused, err)
		}
		refused++
		refusal = err
	}
	close(w.stop)
	<-w.done
	t.Logf("256 streams asked for: %d opened, %d refused (%v); RSS peaked at %d MiB (resting %d MiB)", opened, refused, refusal, w.peak.Load()>>20, base>>20)
	if refused == 0 || !strings.Contains(refusal.Error(), "--max-concurrent-queries-per-user") {
		t.Errorf("%d of 256 stalled streams opened, none refused naming --max-concurrent-queries-per-user", opened)
	}
	if w.peak.Load() > base+stallBound {
		t.Errorf("the stalled streams took the server's RSS to %d MiB, more than %d MiB over its resting %d MiB", w.peak.Load()>>20, stallBound>>20, base>>20)
	}
	waitFor(t, "the stall timeout to cancel the stalled streams", func() bool { return strings.Contains(e.output(), "result stream stalled") })
	waitFor(t, "the user's slots to come back", func() bool {
		_, err := c.run(t, "SELECT 1")
		return err == nil
	})
	e.alive(t)
}
