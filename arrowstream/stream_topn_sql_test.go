package arrowstream

import (
	"context"
	"testing"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// The SQL form of a top-N over an Update-mode aggregation, into a memory
// table kept as a view (updateAsView): the table holds, per key, the two
// values with the largest sums (keyed by key and rn), the retracted rows replaced by the rows
// that moved up; it survives a restart of the query.
func TestStreamingTopNOverUpdateSQLView(t *testing.T) {
	ctx := context.Background()
	mem := poisonmem.New()
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	s := NewSession(SessionOptions{Allocator: mem, Conf: map[string]string{ConfShufflePartitions: "2"}})
	cat := memsink.NewCatalog()
	t.Cleanup(func() {
		for _, name := range cat.List() {
			if tb, ok := cat.Drop(name); ok {
				tb.Close()
			}
		}
	})
	memsink.Install(s, cat, memsink.Options{})
	src := NewMemoryStream(mem, eventSchema)
	defer src.Close()
	s.RegisterStream("events", src)
	ckpt := t.TempDir()
	create := "CREATE STREAMING TABLE top2 TBLPROPERTIES ('outputMode' = 'update', 'updateAsView' = 'true', 'checkpointLocation' = '" + ckpt + "') AS " +
		"SELECT key, t, sum(v) AS s, row_number() OVER (PARTITION BY key ORDER BY sum(v) DESC, t) AS rn " +
		"FROM STREAM events GROUP BY key, t QUALIFY rn <= 2"
	start := func() *StreamingQuery {
		t.Helper()
		res, err := s.SQL(ctx, create)
		if err != nil {
			t.Fatal(err)
		}
		res.Close()
		for _, a := range s.Streams().Active() {
			if a.Name() == "top2" {
				return a
			}
		}
		t.Fatal("no query top2")
		return nil
	}
	q := start()
	step := func(events [][3]int64, want []vt.Row) {
		t.Helper()
		addEvents(t, src, events...)
		if err := q.ProcessAllAvailable(ctx); err != nil {
			t.Fatal(err)
		}
		res, err := s.SQL(ctx, "SELECT key, t, s, rn FROM top2")
		if err != nil {
			t.Fatal(err)
		}
		recs, err := vector.Drain(ctx, res.Op)
		res.Close()
		if err != nil {
			t.Fatal(err)
		}
		got := vt.RowsOf(recs...)
		for _, r := range recs {
			r.Release()
		}
		if !vt.RowsEqual(vt.SortRows(want), vt.SortRows(got)) {
			t.Fatalf("after %v:\n%swant\n%s", events, vt.FormatRows(got), vt.FormatRows(want))
		}
	}
	r := func(k, t, s int64, rn int32) vt.Row { return vt.Row{k, t, s, rn} }
	step([][3]int64{{1, 1, 5}, {1, 2, 3}, {1, 3, 1}, {2, 1, 4}}, []vt.Row{r(1, 1, 5, 1), r(1, 2, 3, 2), r(2, 1, 4, 1)})
	// 1/1 drops to -5: 1/3 moves in from rank 3.
	step([][3]int64{{1, 1, -10}}, []vt.Row{r(1, 2, 3, 1), r(1, 3, 1, 2), r(2, 1, 4, 1)})
	if err := q.Stop(); err != nil {
		t.Fatal(err)
	}
	q = start()
	defer q.Stop()
	step([][3]int64{{1, 3, 5}, {2, 2, 9}}, []vt.Row{r(1, 3, 6, 1), r(1, 2, 3, 2), r(2, 2, 9, 1), r(2, 1, 4, 2)})
}
