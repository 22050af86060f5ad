package arrowstream

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/internal/collectsink"
	"github.com/arrowstream/arrowstream/vector"
)

// maxBidSchema: a bid with a nullable price and an event time.
var maxBidSchema = arrow.NewSchema([]arrow.Field{
	{Name: "a", Type: arrow.PrimitiveTypes.Int64},
	{Name: "price", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "ts", Type: vector.Timestamp},
}, nil)

// TestJoinMaxBoundProperty: a join of a stream to the per-window maximum
// of the same stream (Nexmark q7's shape) whose rows side keeps out of
// its state the rows below a window's running maximum (plan.JoinMaxBound)
// answers exactly as the same query whose max the planner cannot see
// through (max(price) + 0: the join keeps every row). Random prices with
// many ties and NULLs, event times on a 250 ms grid and on each window's
// last millisecond (a row there joins two windows: BETWEEN is inclusive),
// late rows, tumbling and sliding windows, 1, 3 or 4 partitions, with and
// without no-data epochs, a range reaching past the window's end or not,
// and both
// queries stopped and restarted from their checkpoints at random epochs;
// a far-future row closes every window at the end. The pruned run must
// have skipped rows, so that the comparison checks the pruning.
func TestJoinMaxBoundProperty(t *testing.T) {
	for seed := int64(1); seed <= 8; seed++ {
		for _, sliding := range []bool{false, true} {
			t.Run(fmt.Sprintf("sliding=%v/seed%d", sliding, seed), func(t *testing.T) {
				runJoinMaxBoundProperty(t, seed, sliding)
			})
		}
	}
}

func runJoinMaxBoundProperty(t *testing.T, seed int64, sliding bool) {
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewSource(seed))
	conf := map[string]string{ConfShufflePartitions: []string{"1", "3", "4"}[seed%3]}
	s := NewSession(SessionOptions{Allocator: mem, Conf: conf})
	if seed%2 == 1 {
		// Without no-data epochs a window closes in an epoch with rows:
		// its max row meets the epoch's new rows, stored or not.
		s.SetConf("spark.sql.streaming.noDataMicroBatches.enabled", "false")
	}
	win := "window(ts, '2 seconds')"
	if sliding {
		win = "window(ts, '2 seconds', '1 second')"
	}
	const wm = "WATERMARK ts DELAY OF INTERVAL 1 SECOND"
	// reach: rows up to 3 s after a window's end join it too, so that a
	// new row may meet a max row stored in an earlier epoch.
	upper := "M.rt"
	if seed%4 >= 2 {
		upper = "M.rt + INTERVAL 3 SECONDS"
	}
	queryOf := func(src, maxExpr string) string {
		return fmt.Sprintf(`SELECT B.a, B.price, CAST(B.ts AS STRING) AS ts, CAST(M.rt AS STRING) AS rt
FROM STREAM %[1]s %[2]s AS B
JOIN (SELECT %[3]s AS m, window.end - INTERVAL 1 MILLISECOND AS rt FROM STREAM %[1]s %[2]s GROUP BY %[4]s) M
  ON B.price = M.m AND B.ts BETWEEN M.rt - INTERVAL 2 SECONDS AND %[5]s`, src, wm, maxExpr, win, upper)
	}
	type run struct {
		src     *MemoryStream
		query   string
		dir     string
		sink    *collectsink.Sink
		q       *StreamingQuery
		skipped int64
	}
	runs := []*run{{query: queryOf("p", "max(price)")}, {query: queryOf("h", "max(price) + 0")}}
	for i, r := range runs {
		r.src = NewMemoryStream(mem, maxBidSchema)
		defer r.src.Close()
		s.RegisterStream([]string{"p", "h"}[i], r.src)
		r.dir, r.sink = t.TempDir(), &collectsink.Sink{}
	}
	start := func(r *run) {
		t.Helper()
		q, err := s.SQLDataFrame(r.query).WriteStream().Sink(r.sink).OutputMode(Append).Option("checkpointLocation", r.dir).Start(ctx)
		if err != nil {
			t.Fatalf("start %s: %v", r.query, err)
		}
		r.q = q
	}
	stop := func(r *run) {
		t.Helper()
		for _, p := range r.q.RecentProgress() {
			for _, op := range p.StateOperators {
				r.skipped += op.CustomMetrics["numRowsNotStoredByMaxBound"]
			}
		}
		if err := r.q.Stop(); err != nil {
			t.Fatal(err)
		}
	}
	for _, r := range runs {
		start(r)
	}
	now := int64(10_000) // ms
	add := func(rows [][3]int64, nulls []bool) {
		for _, r := range runs {
			b := array.NewRecordBuilder(mem, maxBidSchema)
			for i, row := range rows {
				b.Field(0).(*array.Int64Builder).Append(row[0])
				if nulls[i] {
					b.Field(1).AppendNull()
				} else {
					b.Field(1).(*array.Int64Builder).Append(row[1])
				}
				b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(row[2] * 1000))
			}
			rec := b.NewRecord()
			b.Release()
			_, err := r.src.AddRecord(rec)
			rec.Release()
			if err != nil {
				t.Fatal(err)
			}
			if err := r.q.ProcessAllAvailable(ctx); err != nil {
				t.Fatal(err)
			}
		}
	}
	id := int64(0)
	for epoch := 0; epoch < 25; epoch++ {
		n := 1 + rng.Intn(30)
		rows := make([][3]int64, 0, n)
		nulls := make([]bool, 0, n)
		for ; n > 0; n-- {
			var ts int64
			switch rng.Intn(4) {
			case 0: // a window's last millisecond (windows end on whole seconds)
				ts = (now/1000-int64(rng.Intn(3)))*1000 - 1
			case 1: // late or nearly: up to 4 s back
				ts = now - int64(rng.Intn(16))*250
			default:
				ts = now - int64(rng.Intn(6))*250
			}
			id++
			rows = append(rows, [3]int64{id, int64(rng.Intn(5)), ts})
			nulls = append(nulls, rng.Intn(10) == 0)
		}
		add(rows, nulls)
		now += int64(rng.Intn(5)) * 250
		if rng.Intn(5) == 0 {
			for _, r := range runs {
				stop(r)
				start(r)
			}
		}
	}
	add([][3]int64{{0, 0, now + 100_000}}, []bool{false})
	for _, r := range runs {
		stop(r)
	}
	answers := make([][]string, 2)
	for i, r := range runs {
		for _, row := range r.sink.All() {
			answers[i] = append(answers[i], fmt.Sprint(row))
		}
		slices.Sort(answers[i])
	}
	if !slices.Equal(answers[0], answers[1]) {
		t.Fatalf("pruned run vs keeping run:\n got %d rows %v\nwant %d rows %v", len(answers[0]), answers[0], len(answers[1]), answers[1])
	}
	if len(answers[1]) < 5 {
		t.Fatalf("the answer has %d rows: the test checks little", len(answers[1]))
	}
	if runs[0].skipped == 0 || runs[1].skipped != 0 {
		t.Fatalf("rows not stored: pruned run %d, keeping run %d: want some and none", runs[0].skipped, runs[1].skipped)
	}
	boundary := 0
	for _, row := range runs[0].sink.All() {
		if strings.HasSuffix(fmt.Sprint(row[2]), ".999") {
			boundary++
		}
	}
	t.Logf("%d rows (%d on a window's last millisecond), %d rows not stored", len(answers[0]), boundary, runs[0].skipped)
}

// TestJoinMaxBoundAfterRestart: a restarted query reads the running
// maxima again from the rows its join stored, so a row below a window's
// maximum seen before the restart is not stored, and the answer is still
// the window's maximum row.
func TestJoinMaxBoundAfterRestart(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := NewSession(SessionOptions{Allocator: mem, Conf: map[string]string{ConfShufflePartitions: "2"}})
	src := NewMemoryStream(mem, maxBidSchema)
	defer src.Close()
	s.RegisterStream("bids", src)
	query := `SELECT B.a, B.price FROM STREAM bids WATERMARK ts DELAY OF INTERVAL 1 SECOND AS B
JOIN (SELECT max(price) AS m, window.end - INTERVAL 1 MILLISECOND AS rt
      FROM STREAM bids WATERMARK ts DELAY OF INTERVAL 1 SECOND GROUP BY window(ts, '2 seconds')) M
  ON B.price = M.m AND B.ts BETWEEN M.rt - INTERVAL 2 SECONDS AND M.rt`
	dir, sink := t.TempDir(), &collectsink.Sink{}
	start := func() *StreamingQuery {
		q, err := s.SQLDataFrame(query).WriteStream().Sink(sink).OutputMode(Append).Option("checkpointLocation", dir).Start(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	add := func(q *StreamingQuery, a, price, ms int64) {
		b := array.NewRecordBuilder(mem, maxBidSchema)
		b.Field(0).(*array.Int64Builder).Append(a)
		b.Field(1).(*array.Int64Builder).Append(price)
		b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(ms * 1000))
		rec := b.NewRecord()
		b.Release()
		_, err := src.AddRecord(rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
		if err := q.ProcessAllAvailable(ctx); err != nil {
			t.Fatal(err)
		}
	}
	skipped := func(q *StreamingQuery) int64 {
		var n int64
		for _, p := range q.RecentProgress() {
			for _, op := range p.StateOperators {
				n += op.CustomMetrics["numRowsNotStoredByMaxBound"]
			}
		}
		return n
	}
	q := start()
	add(q, 1, 5, 10_500) // window [10 s, 12 s): max 5
	if err := q.Stop(); err != nil {
		t.Fatal(err)
	}
	q = start()
	defer func() { q.Stop() }()
	add(q, 2, 3, 10_600) // below the max seen before the restart
	if n := skipped(q); n != 1 {
		t.Errorf("after the restart %d rows not stored, want 1 (the maxima read again from the stored rows)", n)
	}
	add(q, 3, 0, 100_000) // closes the window
	if err := q.Stop(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range sink.All() {
		got = append(got, fmt.Sprint(r))
	}
	if want := []string{"[1 5]"}; !slices.Equal(got, want) {
		t.Fatalf("answer %v, want %v", got, want)
	}
}
