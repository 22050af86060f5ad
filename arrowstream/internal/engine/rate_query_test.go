package engine

import (
	"context"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream/internal/collectsink"
	"github.com/arrowstream/arrowstream/arrowstream/source/rate"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// The rate-micro-batch source in a query: each epoch reads its rows.
func TestRateMicroBatchSourceInQuery(t *testing.T) {
	ctx := context.Background()
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	src, err := rate.NewRateMicroBatchSource(mem, rate.RateMicroBatchOptions{RowsPerBatch: 3, StartTimestampMs: 5000, AdvanceMillisPerBatch: 1000})
	if err != nil {
		t.Fatal(err)
	}
	sink := &collectsink.Sink{}
	q := startTestQuery(t, t.TempDir(), src, sink, &funcExecutor{}, processingTime(0))
	waitFor(t, func() bool { return len(sink.All()) >= 6 })
	q.Stop()
	rows := sink.All()
	want := []vt.Row{{5_000_000, 0}, {5_000_000, 1}, {5_000_000, 2}, {6_000_000, 3}, {6_000_000, 4}, {6_000_000, 5}}
	if !vt.RowsEqual(want, rows[:6]) {
		t.Fatalf("rows:\n%s", vt.FormatRows(rows[:6]))
	}
	_ = ctx
	if _, err := rate.NewRateMicroBatchSource(mem, rate.RateMicroBatchOptions{}); err == nil {
		t.Error("rowsPerBatch 0 accepted")
	}
}
