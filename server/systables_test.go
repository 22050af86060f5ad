package server

import (
	"context"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
)

func TestSystemTables(t *testing.T) {
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	tables := SystemTables(fakeQueries{})
	if tables[0].Name() != "streaming_queries" || tables[1].Name() != "query_progress" {
		t.Fatalf("names %s, %s", tables[0].Name(), tables[1].Name())
	}
	recs, err := tables[0].Records(context.Background(), mem)
	if err != nil {
		t.Fatal(err)
	}
	r := recs[0]
	if !r.Schema().Equal(tables[0].Schema()) || r.NumRows() != 1 {
		t.Fatalf("streaming_queries: %v", r)
	}
	wm := time.Date(2026, 1, 1, 0, 0, 0, 500e6, time.UTC)
	if got := r.Column(6).(*array.Timestamp).Value(0); got != arrow.Timestamp(wm.UnixMicro()) {
		t.Fatalf("watermark %v", got)
	}
	if r.Column(7).(*array.Float64).Value(0) != 1000 || !r.Column(8).IsNull(0) || !r.Column(9).IsNull(0) {
		t.Fatalf("rates/exception: %v", r)
	}
	releaseAll(recs)

	recs, err = tables[1].Records(context.Background(), mem)
	if err != nil {
		t.Fatal(err)
	}
	r = recs[0]
	if r.NumRows() != 2 || r.Column(3).(*array.Int64).Value(1) != 4 || !r.Column(9).IsNull(0) || r.Column(9).IsNull(1) {
		t.Fatalf("query_progress: %v", r)
	}
	releaseAll(recs)

	// An idle manager has no rows.
	recs, err = SystemTables(ManagerQueries(arrowstream.NewQueryManager(nil)))[0].Records(context.Background(), mem)
	if err != nil || recs[0].NumRows() != 0 {
		t.Fatalf("empty manager: %v %v", recs, err)
	}
	releaseAll(recs)
}
