package memsink_test

import (
	"context"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/arrowstream/arrowstreamtest"
	"github.com/arrowstream/arrowstream/internal/testutil"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

var intSchema = arrow.NewSchema([]arrow.Field{{Name: "value", Type: vector.Int64}}, nil)

// waitRows waits until the table shows n rows.
func waitRows(t *testing.T, tbl *memsink.Table, n int64) {
	t.Helper()
	deadline := time.Now().Add(testutil.Scaled(2 * time.Minute))
	for {
		ch := tbl.Changed()
		snap := tbl.Snapshot()
		got := snap.NumRows()
		snap.Release()
		if got == n {
			return
		}
		select {
		case <-ch:
		case <-time.After(time.Until(deadline)):
			t.Fatalf("table shows %d rows; want %d", got, n)
		}
	}
}

// With continuous.visibility=arrival, rows are readable before their epoch
// commits; the commit replaces them without doubling, and time travel sees
// only committed epochs.
func TestContinuousArrivalVisibility(t *testing.T) {
	ctx := context.Background()
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	clock := arrowstreamtest.NewManualClock(time.Unix(0, 0))
	s := arrowstream.NewSession(arrowstream.SessionOptions{Allocator: mem, Clock: clock})
	cat := memsink.NewCatalog()
	defer func() {
		if tbl, ok := cat.Drop("out"); ok {
			tbl.Close()
		}
	}()
	memsink.Install(s, cat, memsink.Options{})
	src := arrowstream.NewMemoryStream(mem, intSchema)
	defer src.Close()
	s.RegisterStream("input", src)
	q, err := s.ReadStream("input").Select("value * 2 AS doubled").WriteStream().Format("memory").QueryName("out").
		Trigger(arrowstream.Continuous(time.Hour)).Option("continuous.visibility", "arrival").
		Option("checkpointLocation", t.TempDir()).Start(ctx)
	if err != nil {
		t.Fatal(err)
	}
	defer q.Stop()
	tbl, ok := cat.Lookup("out")
	if !ok {
		t.Fatal("no table")
	}
	if _, err := src.AddData([]any{int64(1)}, []any{int64(2)}); err != nil {
		t.Fatal(err)
	}
	waitRows(t, tbl, 2)
	if e := tbl.LatestEpoch(); e != -1 {
		t.Fatalf("latest epoch %d before any commit; want -1", e)
	}
	if _, err := src.AddData([]any{int64(3)}); err != nil {
		t.Fatal(err)
	}
	waitRows(t, tbl, 3)
	if err := q.ProcessAllAvailable(ctx); err != nil { // commits the open epoch
		t.Fatal(err)
	}
	snap := tbl.Snapshot()
	rows := vt.RowsOf(snap.Records()...)
	snap.Release()
	if want := []vt.Row{{int64(2)}, {int64(4)}, {int64(6)}}; !vt.RowsEqual(want, vt.SortRows(rows)) {
		t.Fatalf("after commit:\n%swant\n%s", vt.FormatRows(rows), vt.FormatRows(want))
	}
	if e := tbl.LatestEpoch(); e != 0 {
		t.Fatalf("latest epoch %d; want 0", e)
	}
	// A failure discards uncommitted rows: stop with rows shown but not
	// committed, and they disappear (the restarted query replays them).
	if _, err := src.AddData([]any{int64(4)}); err != nil {
		t.Fatal(err)
	}
	waitRows(t, tbl, 4)
	q.Stop()
	waitRows(t, tbl, 3)
}

// A continuous streaming table from SQL over the rate source (which cannot
// notify, so it is polled): committed epochs hold each even value once.
func TestContinuousSQLStreamingTable(t *testing.T) {
	ctx := context.Background()
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	s := arrowstream.NewSession(arrowstream.SessionOptions{Allocator: mem, CheckpointRoot: t.TempDir()})
	cat := memsink.NewCatalog()
	memsink.Install(s, cat, memsink.Options{})
	sqlRows(t, s, "CREATE TABLE r USING rate OPTIONS (rowsPerSecond 2000)")
	res, err := s.SQL(ctx, `CREATE STREAMING TABLE evens TBLPROPERTIES ('trigger' = 'continuous 20 ms', 'continuous.pollInterval' = '2 ms')
		AS SELECT value FROM STREAM r WHERE value % 2 = 0`)
	if err != nil {
		t.Fatal(err)
	}
	q := res.Query
	defer func() {
		q.Stop()
		if tbl, ok := cat.Drop("evens"); ok {
			tbl.Close()
		}
	}()
	deadline := time.Now().Add(testutil.Scaled(3 * time.Minute))
	for {
		if p := q.LastProgress(); p != nil && p.BatchID >= 3 && p.NumInputRows > 0 {
			break
		}
		if time.Now().After(deadline) || !q.IsActive() {
			t.Fatalf("no epochs committed: %v", q.Exception())
		}
		time.Sleep(5 * time.Millisecond)
	}
	rows := sqlRows(t, s, "SELECT value FROM evens")
	seen := map[int64]bool{}
	for _, r := range rows {
		v := r[0].(int64)
		if v%2 != 0 || seen[v] {
			t.Fatalf("value %d odd or repeated in %d rows", v, len(rows))
		}
		seen[v] = true
	}
	if len(rows) == 0 {
		t.Fatal("no rows")
	}
}
