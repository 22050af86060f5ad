package arrowstream

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/arrowstreamtest"
	"github.com/arrowstream/arrowstream/arrowstream/internal/collectsink"
)

// TestJoinScratchSecondEpochSmaller: the join's per-epoch flags and
// index slices are scratch its partition keeps across epochs (a new
// row's matched flag, a semi join's arrival flag, the probe's pairs and
// heads). One partition, so every epoch reuses the same scratch: the
// first epoch brings 6 left rows that all match, the second 2 left rows
// of a key no right row has (fewer rows than the first, in the first's
// positions). A flag left over from the first epoch would mark them
// matched: the outer joins would lose their null rows, the semi join
// would emit them. The sink must hold exactly the nested-loop model's
// rows after a far-future pair moves the watermark past every stored row.
func TestJoinScratchSecondEpochSmaller(t *testing.T) {
	for _, typ := range []string{"LEFT OUTER JOIN", "FULL OUTER JOIN", "LEFT SEMI JOIN", "INNER JOIN"} {
		t.Run(strings.ReplaceAll(typ, " ", "_"), func(t *testing.T) {
			runJoinScratchEpochs(t, typ)
		})
	}
}

func runJoinScratchEpochs(t *testing.T, typ string) {
	ctx := context.Background()
	checked := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer checked.AssertSize(t, 0)
	clock := arrowstreamtest.NewManualClock(time.Unix(1_000_000, 0))
	s := NewSession(SessionOptions{Allocator: checked, Conf: map[string]string{ConfShufflePartitions: "1"}, Clock: clock})
	srcs := [2]*MemoryStream{NewMemoryStream(checked, joinEventSchema), NewMemoryStream(checked, joinEventSchema)}
	for i, name := range []string{"l", "r"} {
		defer srcs[i].Close()
		s.RegisterStream(name, srcs[i])
	}
	side := func(name, p string) string {
		return fmt.Sprintf(`(SELECT k AS %sk, %st, v AS %sv FROM STREAM %s WATERMARK timestamp_seconds(ts) AS %st DELAY OF INTERVAL 10 SECONDS) AS %s`,
			p, p, p, name, p, p)
	}
	// The model's condition (joinModel, ranged) with its residual.
	cond := "lk = rk AND lv + rv <> 7 AND lv <> 3 AND lt BETWEEN rt - INTERVAL 8 SECONDS AND rt + INTERVAL 3 SECONDS"
	cols := "CAST(lk AS STRING) AS lk, CAST(lt AS BIGINT) AS lt, lv, CAST(rk AS STRING) AS rk, CAST(rt AS BIGINT) AS rt, rv"
	if typ == "LEFT SEMI JOIN" {
		cols = "CAST(lk AS STRING) AS lk, CAST(lt AS BIGINT) AS lt, lv"
	}
	query := fmt.Sprintf("SELECT %s FROM %s %s %s ON %s", cols, side("l", "l"), typ, side("r", "r"), cond)
	sink := &collectsink.Sink{}
	q, err := s.SQLDataFrame(query).WriteStream().Sink(sink).OutputMode(Append).
		Trigger(ProcessingTime(time.Second)).Option("checkpointLocation", t.TempDir()).Start(ctx)
	if err != nil {
		t.Fatalf("start %s: %v", query, err)
	}
	defer func() { q.Stop() }()
	waitForJoinTrigger(t, clock, q)
	process := func() {
		t.Helper()
		for range 2 {
			clock.Advance(time.Second)
			waitForJoinTrigger(t, clock, q)
		}
	}
	epochs := [][2][]joinEvent{
		// Epoch 1: six left rows of key 1, each matched by the right
		// rows of the same epoch (new against new) and of key 1.
		{
			{{k: 1, t: 20, v: 1}, {k: 1, t: 21, v: 1}, {k: 1, t: 22, v: 2}, {k: 1, t: 20, v: 0}, {k: 1, t: 21, v: 2}, {k: 1, t: 22, v: 1}},
			{{k: 1, t: 22, v: 1}, {k: 1, t: 21, v: 0}},
		},
		// Epoch 2: two left rows of key 2 (no right row has it) and a
		// right row of key 3 (no left row has it): nothing matches.
		{
			{{k: 2, t: 23, v: 1}, {k: 2, t: 23, v: 2}},
			{{k: 3, t: 23, v: 1}},
		},
		// A far-future pair: the watermark passes every stored row.
		{{{k: 99, t: 2000, v: 0}}, {{k: 99, t: 2000, v: 0}}},
	}
	var kept [2][]joinEvent
	for _, batch := range epochs {
		kept[0] = append(kept[0], batch[0]...)
		kept[1] = append(kept[1], batch[1]...)
		addJoinEvents(t, checked, srcs, batch)
		process()
	}
	if err := q.Stop(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range sink.All() {
		got = append(got, fmt.Sprint(r))
	}
	want := joinModel(typ, true, kept)
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("%s:\n got %d rows %v\nwant %d rows %v", query, len(got), got, len(want), want)
	}
}
