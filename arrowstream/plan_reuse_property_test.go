package arrowstream

import (
	"context"
	"fmt"
	"math/rand"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream/arrowstreamtest"
	"github.com/arrowstream/arrowstream/arrowstream/internal/collectsink"
	"github.com/arrowstream/arrowstream/arrowstream/internal/engine"
	"github.com/arrowstream/arrowstream/arrowstream/pebblestate"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// reuseShape is a streaming query of TestReusedPlanMatchesFreshPlan over
// the streams a and b (eventSchema).
type reuseShape struct {
	name  string
	mode  OutputMode
	start func(s *Session) *DataFrame
}

var reuseShapes = []reuseShape{
	{"stateless", Append, func(s *Session) *DataFrame {
		// A filter and columns pushed into the scan, a project over a
		// filter (the fused selection) over a project.
		return s.SQLDataFrame(`SELECT k2, v1, k2 + v1 AS s FROM (SELECT key * 2 AS k2, v + 1 AS v1 FROM STREAM a WHERE v % 3 <> 0) WHERE k2 <> 4`)
	}},
	{"timestamp", Append, func(s *Session) *DataFrame {
		// current_timestamp() binds a constant of the epoch: rebuilt.
		return s.SQLDataFrame(`SELECT key, CAST(current_timestamp() AS BIGINT) > 0 AS now FROM STREAM a WHERE v IS NOT NULL`)
	}},
	{"windowed", Append, func(s *Session) *DataFrame {
		return s.ReadStream("a").
			WithColumn("eventTime", "timestamp_seconds(t)").
			WithWatermark("eventTime", "4 seconds").
			Where("v IS NULL OR v <> 3").
			GroupBy("key", "window(eventTime, '6 seconds', '2 seconds') AS w").Agg("count(*) AS c", "sum(v) AS s", "max(v) AS hi").
			Select("key", "CAST(w.start AS BIGINT) AS st", "c", "s", "hi")
	}},
	{"update", Update, func(s *Session) *DataFrame {
		return s.ReadStream("a").Where("key <> 2").
			GroupBy("key").Agg("count(*) AS c", "sum(v) AS s").
			Select("key", "c * 10 AS c10", "s")
	}},
	{"join", Append, func(s *Session) *DataFrame {
		return s.SQLDataFrame(`SELECT lk, CAST(lt AS BIGINT) AS lt, lv, rv FROM
			(SELECT key AS lk, lt, v AS lv FROM STREAM a WATERMARK timestamp_seconds(t) AS lt DELAY OF INTERVAL 6 SECONDS WHERE v <> 5) AS l
			JOIN (SELECT key AS rk, rt, v AS rv FROM STREAM b WATERMARK timestamp_seconds(t) AS rt DELAY OF INTERVAL 6 SECONDS) AS r
			ON lk = rk AND lv + rv <> 7 AND lt BETWEEN rt - INTERVAL 5 SECONDS AND rt + INTERVAL 3 SECONDS`)
	}},
}

// TestReusedPlanMatchesFreshPlan is a differential test of the compiled
// plan: every shape runs twice over the same random epochs (empty ones,
// NULLs, late rows, no-data batches), once with its stateless operators
// compiled once and rerun every epoch and once built afresh every epoch
// (ConfReusePlan false), with restarts at random epoch boundaries and, in
// "toggle", reuse switched on and off across them. Every epoch's new sink
// rows must be equal; both allocators end at zero. Each side runs on a
// manual clock with a ProcessingTime trigger, so that a step's rows for
// both streams land in one epoch on both sides: with ProcessAllAvailable
// a trigger could fall between the two streams' AddData on one side only,
// and a join's late-row drops depend on where the epochs are cut (a run
// of 20 failed once that way).
func TestReusedPlanMatchesFreshPlan(t *testing.T) {
	seeds := int64(2)
	if testing.Short() {
		seeds = 1
	}
	for _, shape := range reuseShapes {
		for _, restart := range []string{"none", "restart", "toggle"} {
			for seed := int64(1); seed <= seeds; seed++ {
				t.Run(fmt.Sprintf("%s/%s/seed=%d", shape.name, restart, seed), func(t *testing.T) {
					runReuseDifferential(t, shape, restart, "", seed)
				})
			}
		}
	}
	for _, shape := range reuseShapes {
		if shape.name != "windowed" && shape.name != "update" {
			continue
		}
		t.Run(shape.name+"/pebble", func(t *testing.T) { runReuseDifferential(t, shape, "restart", "pebble", 1) })
	}
}

// reuseSide is one of the two runs of the differential test.
type reuseSide struct {
	s     *Session
	clock *arrowstreamtest.ManualClock
	srcs  [2]*MemoryStream
	sink  *collectsink.Sink
	rows  *newRows
	dir   string
	q     *StreamingQuery
	reuse bool
}

func runReuseDifferential(t *testing.T, shape reuseShape, restart, provider string, seed int64) {
	ctx := context.Background()
	rng := rand.New(rand.NewSource(seed))
	var sides [2]*reuseSide
	for i := range sides {
		mem := poisonmem.New()
		t.Cleanup(func() { mem.AssertSize(t, 0) })
		clock := arrowstreamtest.NewManualClock(time.Unix(1_000_000, 0))
		s := NewSession(SessionOptions{Allocator: mem, Clock: clock, Conf: map[string]string{ConfShufflePartitions: fmt.Sprint(1 + seed%3)}})
		if provider != "" {
			pebblestate.Register(s)
			s.SetConf(ConfStateStoreProvider, provider)
		}
		side := &reuseSide{s: s, clock: clock, sink: &collectsink.Sink{}, dir: t.TempDir(), reuse: i == 0}
		side.rows = &newRows{sink: side.sink}
		for j, name := range []string{"a", "b"} {
			side.srcs[j] = NewMemoryStream(mem, eventSchema)
			defer side.srcs[j].Close()
			s.RegisterStream(name, side.srcs[j])
		}
		sides[i] = side
	}
	begin := func(side *reuseSide) {
		t.Helper()
		side.s.SetConf(engine.ConfReusePlan, fmt.Sprint(side.reuse))
		q, err := shape.start(side.s).WriteStream().Sink(side.sink).OutputMode(shape.mode).
			Trigger(ProcessingTime(time.Second)).Option("checkpointLocation", side.dir).Start(ctx)
		if err != nil {
			t.Fatalf("%s: %v", shape.name, err)
		}
		side.q = q
		waitForTrigger(t, side)
	}
	for _, side := range sides {
		begin(side)
		defer func() { side.q.Stop() }()
	}
	now := int64(100)
	written := 0
	for step := 0; step < 24; step++ {
		if restart != "none" && rng.Intn(4) == 0 {
			for _, side := range sides {
				side.q.Stop()
			}
			if restart == "toggle" {
				sides[0].reuse = !sides[0].reuse
			}
			for _, side := range sides {
				begin(side)
			}
		}
		var add [2][][]any
		for j := range add {
			if rng.Intn(3) == 0 {
				continue // nothing new on this stream
			}
			for n := rng.Intn(12); n > 0; n-- {
				ts := max(1, now-rng.Int63n(10))
				var v any
				if rng.Intn(6) > 0 {
					v = rng.Int63n(9)
				}
				add[j] = append(add[j], []any{rng.Int63n(5), ts, v})
			}
		}
		now += rng.Int63n(5)
		for _, side := range sides {
			for j := range add {
				if len(add[j]) == 0 {
					continue
				}
				if _, err := side.srcs[j].AddData(add[j]...); err != nil {
					t.Fatal(err)
				}
			}
			side.clock.Advance(time.Second)
			waitForTrigger(t, side)
		}
		got, want := sides[0].rows.take(), sides[1].rows.take()
		if !vt.RowsEqual(vt.SortRows(want), vt.SortRows(got)) {
			t.Fatalf("step %d: compiled plan (reuse %v) wrote\n%sthe plan built every epoch wrote\n%s", step, sides[0].reuse, vt.FormatRows(got), vt.FormatRows(want))
		}
		written += len(got)
	}
	if written == 0 {
		t.Fatalf("%s: neither side wrote a row in 24 steps: the triggers did not run", shape.name)
	}
}

// waitForTrigger waits until side's query has run the trigger due at its
// clock's time and waits for the next one (or has stopped, which fails
// the test with its error).
func waitForTrigger(t *testing.T, side *reuseSide) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Minute)
	for !side.clock.Waiting() && side.q.IsActive() {
		if time.Now().After(deadline) {
			t.Fatalf("reuse %v: the query did not wait for its next trigger within 5 minutes", side.reuse)
		}
		time.Sleep(time.Millisecond)
	}
	if err := side.q.Exception(); err != nil || !side.q.IsActive() {
		t.Fatalf("reuse %v: the query stopped: %v", side.reuse, err)
	}
}
