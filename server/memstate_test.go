package server

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/flight/flightsql"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/memsink"
)

// The tests of this file run streaming tables whose operators' live state
// outgrows a small --query-memory through a server on loopback, created
// and watched with a Flight SQL client: each table must FAIL with
// RESOURCE_EXHAUSTED naming the limit and the operator's state, the
// others keep running, and once the tables are dropped the checked
// allocator and the server's memory pool are back to where they were.

// stateLimit is the per-table memory limit of these tests.
const stateLimit = 12 << 20

// stateServer is a server whose streaming tables run on its accounting
// allocators, over a checked allocator.
type stateServer struct {
	srv  *Server
	mem  *memory.CheckedAllocator
	sess *arrowstream.Session
	cl   *flightsql.Client
}

func startStateServer(t *testing.T) *stateServer {
	t.Helper()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	sess := arrowstream.NewSession(arrowstream.SessionOptions{Allocator: mem, CheckpointRoot: t.TempDir(), NoSync: true})
	// Few state partitions: what an epoch costs per partition stays
	// small beside the state, whose growth is what meets the limit.
	sess.SetConf("spark.sql.shuffle.partitions", "4")
	cat := memsink.NewCatalog()
	// Tables keep their last epoch only: what the limit meets is the
	// operators' state, not the rows the tables keep.
	memsink.Install(sess, cat, memsink.Options{MaxEpochs: 1})
	cfg := ForSession(sess, cat)
	cfg.Allocator = mem
	cfg.Limits = Limits{QueryMemoryBytes: stateLimit, QueryTimeout: 2 * time.Minute}
	srv := startServer(t, cfg)
	sess.SetStreamingAllocator(srv.StreamingAllocator)
	t.Cleanup(func() {
		sess.Streams().StopAll()
		// Dropped tables and drained queries ask for a return of memory
		// to the OS: let it end before the leak check.
		srv.ret.wg.Wait()
	})
	return &stateServer{srv: srv, mem: mem, sess: sess, cl: sqlClient(t, srv)}
}

// rows runs sql and returns its cells as strings.
func (s *stateServer) rows(t *testing.T, sql string) [][]string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	info, err := s.cl.Execute(ctx, sql)
	if err != nil {
		t.Fatalf("%s: %v", sql, err)
	}
	var out [][]string
	for _, ep := range info.Endpoint {
		rdr, err := s.cl.DoGet(ctx, ep.Ticket)
		if err != nil {
			t.Fatalf("%s: %v", sql, err)
		}
		for rdr.Next() {
			rec := rdr.Record()
			for i := 0; i < int(rec.NumRows()); i++ {
				row := make([]string, rec.NumCols())
				for j := range row {
					row[j] = rec.Column(j).ValueStr(i)
				}
				out = append(out, row)
			}
		}
		err = rdr.Err()
		rdr.Release()
		if err != nil && !errors.Is(err, io.EOF) {
			t.Fatalf("%s: %v", sql, err)
		}
	}
	return out
}

// query returns the row of system.streaming_queries of table name
// (status, exception, last epoch), or nil.
func (s *stateServer) query(t *testing.T, name string) []string {
	t.Helper()
	for _, r := range s.rows(t, "SELECT name, status, exception, last_epoch FROM system.streaming_queries") {
		if r[0] == name {
			return r[1:]
		}
	}
	return nil
}

// waitFailed waits until table name is FAILED and returns its exception.
func (s *stateServer) waitFailed(t *testing.T, name string) string {
	t.Helper()
	var last []string
	deadline := time.Now().Add(3 * time.Minute)
	for {
		last = s.query(t, name)
		if last != nil && last[0] == "FAILED" {
			return last[1]
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not FAILED after 3 minutes: %v", name, last)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// lastEpoch is table name's last epoch (-1: none yet).
func (s *stateServer) lastEpoch(t *testing.T, name string) int64 {
	t.Helper()
	r := s.query(t, name)
	if r == nil {
		t.Fatalf("%s is not in system.streaming_queries", name)
	}
	n, err := strconv.ParseInt(r[2], 10, 64)
	if err != nil {
		return -1
	}
	return n
}

// stateCase is one operator kind: the statement of a table (or a
// function starting it through the Go API) whose state grows without
// bound, and the state its failure must name.
type stateCase struct {
	name  string
	sql   string
	start func(ctx context.Context, sess *arrowstream.Session) (*arrowstream.StreamingQuery, error)
	state string
}

// stateCases grow their state from the rate tables ticks and tocks
// (unique values, event time now; slow for the session windows, whose
// epochs cost more memory while they run than their state grows by, so
// that on a loaded machine, where epochs hold more rows, the state and
// not the epoch meets the limit): no watermark passes the state, and the
// outputs stay empty or small.
var stateCases = []stateCase{
	{name: "join_state", state: "stream-stream join state",
		sql: `CREATE STREAMING TABLE join_state AS SELECT a.value FROM STREAM ticks a JOIN STREAM tocks b
			ON a.value = b.value AND a.value + b.value < 0`},
	// Wide rows: the join's stored rows' Arrow buffers, which it
	// allocates itself, are most of its memory. Its sources are slower,
	// so that on a loaded machine no single epoch's projection outgrows
	// the limit before the join's state does.
	// What breaks the limit is the join's own Arrow buffers (named
	// "stream-stream join (stateful operator 0)") or its changelog's
	// copy of them ("state store of stateful operator 0
	// (symmetricHashJoin), the epoch's writes"): both name the operator.
	{name: "join_rows", state: "stateful operator 0",
		sql: `CREATE STREAMING TABLE join_rows AS SELECT a.value FROM
			(SELECT value, repeat('x', 400) AS pad FROM STREAM wide_a) a JOIN
			(SELECT value, repeat('y', 400) AS pad FROM STREAM wide_b) b
			ON a.value = b.value AND length(a.pad) + length(b.pad) + a.value < 0`},
	{name: "dedup_state", state: "deduplication state",
		start: func(ctx context.Context, sess *arrowstream.Session) (*arrowstream.StreamingQuery, error) {
			return sess.ReadStream("ticks").DropDuplicates("value").Select("value").
				WriteStream().Format("memory").QueryName("dedup_state").Start(ctx)
		}},
	// The sessions live in the operator (the memory provider's stores
	// keep no copy of them): its own reservation is named.
	{name: "session_state", state: "session window state",
		sql: `CREATE STREAMING TABLE session_state AS SELECT value, count(*) AS n FROM STREAM slow
			WATERMARK timestamp DELAY OF INTERVAL 1 HOUR GROUP BY session_window(timestamp, '1 hour'), value`},
	{name: "topn_state", state: "streaming top-N state",
		sql: `CREATE STREAMING TABLE topn_state TBLPROPERTIES ('outputMode' = 'update') AS SELECT value, ts FROM (SELECT value, timestamp AS ts,
			row_number() OVER (PARTITION BY value ORDER BY timestamp) AS rn FROM STREAM ticks) WHERE rn <= 1`},
	{name: "over_state", state: "streaming OVER state",
		sql: `CREATE STREAMING TABLE over_state AS SELECT value, sum(value) OVER (PARTITION BY g
			ORDER BY timestamp ROWS BETWEEN 3 PRECEDING AND CURRENT ROW) AS s FROM (SELECT value, value % 1000 AS g, timestamp
			FROM STREAM ticks WATERMARK timestamp DELAY OF INTERVAL 1 HOUR)`},
	{name: "distinct_state", state: "streaming DISTINCT aggregate state",
		sql: `CREATE STREAMING TABLE distinct_state AS SELECT window.start, count(DISTINCT value) AS n FROM STREAM ticks
			WATERMARK timestamp DELAY OF INTERVAL 1 HOUR GROUP BY window(timestamp, '1 hour')`},
	{name: "count_state", state: "streaming aggregation state",
		sql: `CREATE STREAMING TABLE count_state TBLPROPERTIES ('outputMode' = 'update') AS SELECT value, count(*) AS n
			FROM STREAM ticks GROUP BY value`},
	// Complete mode: every epoch sorts the whole result, which an
	// explode makes far larger than the aggregation's few groups.
	{name: "sort_complete", state: "Sort",
		sql: `CREATE STREAMING TABLE sort_complete TBLPROPERTIES ('outputMode' = 'complete') AS SELECT g, x
			FROM (SELECT value % 4 AS g, count(*) AS n FROM STREAM ticks GROUP BY value % 4)
			LATERAL VIEW explode(sequence(1, n)) t AS x ORDER BY x DESC, g`},
	{name: "collect_state", state: "streaming aggregation state",
		sql: `CREATE STREAMING TABLE collect_state AS SELECT window.start, collect_list(value) AS vs FROM STREAM ticks
			WATERMARK timestamp DELAY OF INTERVAL 1 HOUR GROUP BY window(timestamp, '1 hour')`},
}

// TestStreamingStateMemoryLimit: every operator kind's live state counts
// against its table's memory limit. Each table fails with the limit's
// RESOURCE_EXHAUSTED naming its state, a table whose state is small keeps
// running meanwhile, and dropping them all brings the checked allocator
// and the server's pool back to their starting point.
func TestStreamingStateMemoryLimit(t *testing.T) {
	s := startStateServer(t)
	base := s.mem.CurrentAlloc()
	ctx := context.Background()
	s.rows(t, "CREATE TABLE ticks USING rate OPTIONS (rowsPerSecond '20000')")
	s.rows(t, "CREATE TABLE tocks USING rate OPTIONS (rowsPerSecond '20000')")
	s.rows(t, "CREATE TABLE slow USING rate OPTIONS (rowsPerSecond '5000')")
	s.rows(t, "CREATE TABLE wide_a USING rate OPTIONS (rowsPerSecond '5000')")
	s.rows(t, "CREATE TABLE wide_b USING rate OPTIONS (rowsPerSecond '5000')")
	// The canary keeps no state and no rows (its filter passes none).
	s.rows(t, "CREATE STREAMING TABLE canary AS SELECT value FROM STREAM ticks WHERE value < 0")
	cases := stateCases
	if testing.Short() {
		cases = cases[:3]
	}
	for _, tc := range cases {
		if tc.start != nil {
			if _, err := tc.start(ctx, s.sess); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
		} else {
			s.rows(t, tc.sql)
		}
	}
	// Every table fails, in any order, within one generous deadline; on
	// failure each table's row is reported.
	deadline := time.Now().Add(3 * time.Minute)
	status := map[string][]string{}
	for {
		done := true
		for _, tc := range cases {
			r := s.query(t, tc.name)
			status[tc.name] = r
			done = done && r != nil && r[0] == "FAILED"
		}
		if done || time.Now().After(deadline) {
			break
		}
		time.Sleep(100 * time.Millisecond)
	}
	for _, tc := range cases {
		r := status[tc.name]
		if r == nil || r[0] != "FAILED" {
			t.Errorf("%s: not FAILED after 3 minutes: %v", tc.name, r)
			continue
		}
		for _, want := range []string{"RESOURCE_EXHAUSTED", fmt.Sprintf("memory limit of %d bytes", stateLimit), tc.state} {
			if !strings.Contains(r[1], want) {
				t.Errorf("%s: failed with %q, want it to name %q", tc.name, r[1], want)
			}
		}
		t.Logf("%s: %s", tc.name, r[1])
		// Every allocation and reservation names what made it.
		if strings.Contains(r[1], "unnamed") || !strings.Contains(r[1], " more in ") {
			t.Errorf("%s: failed with %q: the operator that allocated is not named", tc.name, r[1])
		}
	}
	// The canary was not stopped by the others' failures: it goes on.
	if r := s.query(t, "canary"); r == nil || r[0] == "FAILED" || r[0] == "STOPPED" {
		t.Fatalf("canary: %v, want it running", r)
	}
	from := s.lastEpoch(t, "canary")
	deadline = time.Now().Add(2 * time.Minute)
	for s.lastEpoch(t, "canary") <= from+1 {
		if time.Now().After(deadline) {
			t.Fatalf("canary made no progress past epoch %d", from)
		}
		time.Sleep(50 * time.Millisecond)
	}
	for _, tc := range cases {
		s.rows(t, "DROP TABLE "+tc.name)
	}
	s.rows(t, "DROP TABLE canary")
	waitFor(t, time.Minute, "every table's memory to be released", func() bool {
		return s.mem.CurrentAlloc() == base && s.srv.pool.inUse.Load() == 0
	})
}

// TestStreamingStateRestartPolicy: a table with restartPolicy
// 'on-failure' whose state outgrows the limit is not restarted (its state
// is rebuilt from the checkpoint and the same epochs replay, so it would
// break the limit again): it is FAILED at once with the limit's error
// naming its state and saying so; the server's pool is drained once it
// is dropped.
func TestStreamingStateRestartPolicy(t *testing.T) {
	s := startStateServer(t)
	s.rows(t, "CREATE TABLE ticks USING rate OPTIONS (rowsPerSecond '20000')")
	s.rows(t, "CREATE TABLE tocks USING rate OPTIONS (rowsPerSecond '20000')")
	s.rows(t, `CREATE STREAMING TABLE join_restart TBLPROPERTIES ('restartPolicy' = 'on-failure',
		'restartMaxAttempts' = '2', 'restartBackoff' = '10 ms') AS SELECT a.value FROM STREAM ticks a
		JOIN STREAM tocks b ON a.value = b.value AND a.value + b.value < 0`)
	ex := s.waitFailed(t, "join_restart")
	for _, want := range []string{"RESOURCE_EXHAUSTED", "stream-stream join state", "not restarted"} {
		if !strings.Contains(ex, want) {
			t.Errorf("failed with %q, want it to name %q", ex, want)
		}
	}
	if strings.Contains(ex, "consecutive restarts") {
		t.Errorf("failed with %q: a memory limit failure was restarted", ex)
	}
	s.rows(t, "DROP TABLE join_restart")
	waitFor(t, time.Minute, "the table's memory to be released", func() bool { return s.srv.pool.inUse.Load() == 0 })
}
