package security

import (
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// cpuTicks is the CPU time process pid has used, in clock ticks
// (/proc/<pid>/stat utime + stime).
func cpuTicks(pid int) (int64, error) {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0, err
	}
	// Fields after the command (which may hold spaces) start after ")".
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+1:]))
	if len(f) < 13 {
		return 0, os.ErrInvalid
	}
	u, err1 := strconv.ParseInt(f[11], 10, 64)
	s, err2 := strconv.ParseInt(f[12], 10, 64)
	if err1 != nil || err2 != nil {
		return 0, os.ErrInvalid
	}
	return u + s, nil
}

// TestSignalStopsRunningWork: SIGTERM and SIGINT stop a server that is
// running a cross join that would never end (a Flight SQL query) and a
// streaming aggregation over a rate source: the process exits cleanly by
// itself (exit status 0, no "did not stop in time"), and the client's
// query is cancelled as the stop begins, ending with Unavailable saying
// the server is shutting down (the time it took is logged). The wait is on the
// server's CPU time (the query is running), with generous deadlines.
func TestSignalStopsRunningWork(t *testing.T) {
	for _, sig := range []syscall.Signal{syscall.SIGTERM, syscall.SIGINT} {
		t.Run(sig.String(), func(t *testing.T) {
			e := startServe(t)
			pid := e.cmd.Process.Pid
			if _, err := cpuTicks(pid); err != nil {
				t.Skipf("no CPU time to read here: %v", err)
			}
			c := e.admin()
			c.mustRun(t, "CREATE TABLE fast USING rate OPTIONS (rowsPerSecond '50000')")
			c.mustRun(t, "CREATE STREAMING TABLE big AS SELECT value FROM STREAM fast")
			c.mustRun(t, "CREATE STREAMING TABLE agg TBLPROPERTIES ('outputMode' = 'update') AS SELECT value % 1000 AS k, count(*) AS n FROM STREAM fast GROUP BY value % 1000")
			waitFor(t, "10000 rows in big", func() bool {
				rows, err := c.run(t, "SELECT count(*) FROM big")
				if err != nil || len(rows) != 1 {
					return false
				}
				n, _ := strconv.Atoi(rows[0][0])
				return n >= 10000
			})
			done := make(chan error, 1)
			before, _ := cpuTicks(pid)
			go func() {
				_, err := c.exec(c.ctx, "SELECT count(*) FROM big a CROSS JOIN big b CROSS JOIN big c")
				done <- err
			}()
			waitFor(t, "the cross join to run (a second of the server's CPU)", func() bool {
				now, err := cpuTicks(pid)
				return err == nil && now-before >= 100
			})
			select {
			case err := <-done:
				t.Fatalf("the cross join ended before the signal: %v", err)
			default:
			}
			sent := time.Now()
			if err := e.cmd.Process.Signal(sig); err != nil {
				t.Fatal(err)
			}
			// The running statement is cancelled as the stop begins, and
			// its client told why (it used to run on until the shutdown's
			// grace ran out and the connection was cut).
			select {
			case err := <-done:
				t.Logf("the client's query ended %v after %v: %v", time.Since(sent).Round(time.Millisecond), sig, err)
				if err == nil {
					t.Error("the cross join returned a result: it was not stopped")
				} else if status.Code(err) != codes.Unavailable || !strings.Contains(err.Error(), "the server is shutting down") {
					t.Errorf("client saw %v, want Unavailable saying the server is shutting down", err)
				}
			case <-time.After(2 * time.Minute):
				t.Error("the client's query still hangs 2 minutes after the signal")
			}
			select {
			case err := <-e.exited:
				e.exited <- err
				if err != nil {
					t.Errorf("the server exited with %v after %v", err, sig)
				}
			case <-time.After(2 * time.Minute):
				t.Fatalf("the server was still up 2 minutes after %v", sig)
			}
			t.Logf("exited %v after %v", time.Since(sent).Round(time.Millisecond), sig)
			if out := e.output(); strings.Contains(out, "did not stop in time") {
				t.Errorf("queries did not stop in time:\n%s", out)
			}
		})
	}
}
