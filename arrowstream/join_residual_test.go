package arrowstream

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/internal/collectsink"
	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// TestJoinResidualOncePerEpoch: an inner stream-stream join evaluates its
// residual condition once per epoch over the candidate pairs of all its
// state partitions, not once per partition and stored batch (which at 200
// partitions was most of a small epoch's cost). The condition is a
// counting user function; the join runs over 8 partitions with keys that
// reach all of them, is restarted from its checkpoint twice, and its rows
// must equal a nested-loop model's. Every Arrow buffer is released.
func TestJoinResidualOncePerEpoch(t *testing.T) {
	ctx := context.Background()
	checked := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer checked.AssertSize(t, 0)
	s := NewSession(SessionOptions{Allocator: checked, Conf: map[string]string{ConfShufflePartitions: "8"}})
	var calls atomic.Int64
	err := s.RegisterFunction(&plan.ScalarFunction{
		Name: "passes", Args: []arrow.DataType{vector.Int64, vector.Int64}, Result: arrow.FixedWidthTypes.Boolean, Deterministic: true,
		Eval: func(_ context.Context, mem memory.Allocator, args []arrow.Array) (arrow.Array, error) {
			calls.Add(1)
			l, r := args[0].(*array.Int64), args[1].(*array.Int64)
			b := array.NewBooleanBuilder(mem)
			defer b.Release()
			for i := 0; i < l.Len(); i++ {
				b.Append(l.Value(i)+r.Value(i) != 7)
			}
			return b.NewArray(), nil
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	srcs := [2]*MemoryStream{NewMemoryStream(checked, joinEventSchema), NewMemoryStream(checked, joinEventSchema)}
	for i, name := range []string{"l", "r"} {
		defer srcs[i].Close()
		s.RegisterStream(name, srcs[i])
	}
	query := `SELECT l.k AS lk, l.ts AS lt, l.v AS lv, r.ts AS rt, r.v AS rv
FROM STREAM l JOIN STREAM r ON l.k = r.k AND passes(l.v, r.v)`
	dir := t.TempDir()
	sink := &collectsink.Sink{}
	start := func() *StreamingQuery {
		t.Helper()
		q, err := s.SQLDataFrame(query).WriteStream().Sink(sink).OutputMode(Append).Option("checkpointLocation", dir).Start(ctx)
		if err != nil {
			t.Fatalf("start %s: %v", query, err)
		}
		return q
	}
	q := start()
	defer func() { q.Stop() }()

	rng := rand.New(rand.NewSource(7))
	var kept [2][]joinEvent
	ts := int64(0)
	lastID := int64(-1)
	for epoch := 0; epoch < 12; epoch++ {
		var batch [2][]joinEvent
		for i := range batch {
			for n := 0; n < 40; n++ {
				ts++
				batch[i] = append(batch[i], joinEvent{k: int64(rng.Intn(32)), t: ts, v: int64(rng.Intn(8))})
			}
			kept[i] = append(kept[i], batch[i]...)
		}
		before := calls.Load()
		addJoinEvents(t, checked, srcs, batch)
		if err := q.ProcessAllAvailable(ctx); err != nil {
			t.Fatal(err)
		}
		// The two sides' records may reach the query in one epoch or two.
		// Each epoch's pairs, 40 new rows over 32 keys against all earlier
		// ones, fall in every partition: one evaluation for all.
		id := q.LastProgress().BatchID
		if got, epochs := calls.Load()-before, id-lastID; got > epochs {
			t.Fatalf("%d epochs evaluated the residual condition %d times, want once each", epochs, got)
		}
		lastID = id
		if epoch == 4 || epoch == 8 {
			if err := q.Stop(); err != nil {
				t.Fatal(err)
			}
			q = start()
		}
	}
	if err := q.Stop(); err != nil {
		t.Fatal(err)
	}
	var got, want []string
	for _, r := range sink.All() {
		got = append(got, fmt.Sprint(r))
	}
	for _, l := range kept[0] {
		for _, r := range kept[1] {
			if l.k == r.k && l.v+r.v != 7 {
				want = append(want, fmt.Sprint([]any{l.k, l.t, l.v, r.t, r.v}))
			}
		}
	}
	slices.Sort(got)
	slices.Sort(want)
	if !slices.Equal(got, want) {
		t.Fatalf("got %d rows, want %d\n got %v\nwant %v", len(got), len(want), got, want)
	}
	if len(want) < 100 {
		t.Fatalf("the model's answer has %d rows: the test checks little", len(want))
	}
}
