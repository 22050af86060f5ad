package arrowstream

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/internal/collectsink"
	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/vector"
)

// selfMaxSchema: an event with a nullable key and an event time.
var selfMaxSchema = arrow.NewSchema([]arrow.Field{
	{Name: "key", Type: vector.Int64, Nullable: true},
	{Name: "ts", Type: vector.Timestamp},
}, nil)

// selfMaxShapes are Nexmark q5's shape and variants, as (the reduced
// query's condition and max side, the same with the value hidden from the
// planner by + 0). "rowsfilter" filters the counts the join reads (a
// subset: still reduced); "mfilter"
// filters the max side, which must not be reduced (its max then reads a
// subset of the counts: a count above it but below the counts' max
// passes).
var selfMaxShapes = []struct {
	name, cond, plain, maxWhere, rowsWhere string
	reduced                                bool
}{
	{name: "q5", cond: "c.n >= m.mx", plain: "c.n + 0 >= m.mx", reduced: true},
	{name: "flipped", cond: "m.mx <= c.n", plain: "m.mx <= c.n + 0", reduced: true},
	{name: "equal", cond: "c.n = m.mx", plain: "c.n + 0 = m.mx", reduced: true},
	{name: "rowsfilter", cond: "c.n >= m.mx", plain: "c.n + 0 >= m.mx", rowsWhere: "WHERE c.n > 1", reduced: true},
	{name: "mfilter", cond: "c.n >= m.mx", plain: "c.n + 0 >= m.mx", maxWhere: "WHERE n < 3"},
}

// TestJoinSelfMaxProperty: a join of a windowed count with its own max per
// window (Nexmark q5's shape, plan.JoinSelfMax), whose rows side drops the
// counts below their window's largest in the epoch, answers exactly as
// the same query whose comparison the planner cannot see through (c.n + 0:
// every count is read). Random keys (few, with NULLs: many ties at the
// max), event times on a 250 ms grid, late rows, tumbling and sliding
// windows, 1, 3 or 4 partitions, with and without no-data epochs and
// shared subplans, both queries stopped and restarted from their
// checkpoints at random epochs; a far-future row closes every window at
// the end. The reduced run must have dropped rows (and the other none),
// so that the comparison checks the reduction.
func TestJoinSelfMaxProperty(t *testing.T) {
	seeds := int64(6)
	if testing.Short() {
		seeds = 2
	}
	for _, shape := range selfMaxShapes {
		for seed := int64(1); seed <= seeds; seed++ {
			t.Run(fmt.Sprintf("%s/seed%d", shape.name, seed), func(t *testing.T) {
				runJoinSelfMaxProperty(t, seed, shape.cond, shape.plain, shape.maxWhere, shape.rowsWhere, shape.reduced)
			})
		}
	}
}

func runJoinSelfMaxProperty(t *testing.T, seed int64, cond, plainCond, maxWhere, rowsWhere string, reduced bool) {
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewSource(seed))
	conf := map[string]string{ConfShufflePartitions: []string{"1", "3", "4"}[seed%3]}
	s := NewSession(SessionOptions{Allocator: mem, Conf: conf})
	if seed%2 == 1 {
		s.SetConf("spark.sql.streaming.noDataMicroBatches.enabled", "false")
	}
	if seed%4 >= 2 {
		s.SetConf(stream.ConfShareStatefulSubplans, "false")
	}
	win := "window(ts, '2 seconds')"
	if seed%3 != 0 {
		win = "window(ts, '4 seconds', '2 seconds')"
	}
	queryOf := func(src, cond string) string {
		return fmt.Sprintf(`WITH c AS (
  SELECT key, count(*) AS n, window
  FROM STREAM %[1]s WATERMARK ts DELAY OF INTERVAL 1 SECOND
  GROUP BY key, %[2]s)
SELECT c.key, c.n, CAST(c.window.start AS STRING) AS ws
FROM (SELECT * FROM c %[5]s) c JOIN (SELECT window AS w, max(n) AS mx FROM c %[4]s GROUP BY window) m
  ON c.window = m.w AND %[3]s`, src, win, cond, maxWhere, rowsWhere)
	}
	type run struct {
		src     *MemoryStream
		query   string
		dir     string
		sink    *collectsink.Sink
		q       *StreamingQuery
		dropped int64
	}
	runs := []*run{{query: queryOf("r", cond)}, {query: queryOf("h", plainCond)}}
	for i, r := range runs {
		r.src = NewMemoryStream(mem, selfMaxSchema)
		defer r.src.Close()
		s.RegisterStream([]string{"r", "h"}[i], r.src)
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
				r.dropped += op.CustomMetrics["numRowsDroppedBelowWindowMax"]
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
	add := func(keys []int64, nulls []bool, ts []int64) {
		for _, r := range runs {
			b := array.NewRecordBuilder(mem, selfMaxSchema)
			for i := range keys {
				if nulls[i] {
					b.Field(0).AppendNull()
				} else {
					b.Field(0).(*array.Int64Builder).Append(keys[i])
				}
				b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(ts[i] * 1000))
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
	for epoch := 0; epoch < 30; epoch++ {
		n := 1 + rng.Intn(25)
		keys, nulls, ts := make([]int64, n), make([]bool, n), make([]int64, n)
		for i := range keys {
			keys[i] = int64(rng.Intn(6))
			nulls[i] = rng.Intn(12) == 0
			if rng.Intn(4) == 0 {
				ts[i] = now - int64(rng.Intn(20))*250 // late or nearly: up to 5 s back
			} else {
				ts[i] = now - int64(rng.Intn(6))*250
			}
		}
		add(keys, nulls, ts)
		now += int64(rng.Intn(6)) * 250
		if rng.Intn(5) == 0 {
			for _, r := range runs {
				stop(r)
				start(r)
			}
		}
	}
	add([]int64{0}, []bool{false}, []int64{now + 100_000})
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
		t.Fatalf("reduced run vs plain run:\n got %d rows %v\nwant %d rows %v", len(answers[0]), answers[0], len(answers[1]), answers[1])
	}
	if len(answers[1]) < 5 {
		t.Fatalf("the answer has %d rows: the test checks little", len(answers[1]))
	}
	if runs[1].dropped != 0 || (runs[0].dropped == 0) == reduced {
		t.Fatalf("rows dropped: reduced run %d, plain run %d: want some (%v) and none", runs[0].dropped, runs[1].dropped, reduced)
	}
	t.Logf("%d rows, %d counts dropped below their window's max", len(answers[0]), runs[0].dropped)
}
