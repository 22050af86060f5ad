package server

import (
	"context"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/arrowstream/arrowstream/arrowstream"
)

type epochZeroQueries struct{}

func (epochZeroQueries) Queries() []QueryState {
	return []QueryState{{ID: "q", RunID: "r", Name: "t", Status: "ACTIVE", Recent: []*arrowstream.StreamingQueryProgress{
		{ID: "q", RunID: "r", BatchID: 0, Timestamp: "2026-01-01T00:00:00.000Z",
			EventTime: map[string]string{"watermark": "1970-01-01T00:00:00.000Z"}, Sink: arrowstream.SinkProgress{NumOutputRows: -1}},
		{ID: "q", RunID: "r", BatchID: 1, Timestamp: "2026-01-01T00:00:01.000Z",
			EventTime: map[string]string{"watermark": "2026-01-01T00:00:00.500Z"}, Sink: arrowstream.SinkProgress{NumOutputRows: 7}},
	}}}
}

// TestQueryProgressEpochZeroNulls: epoch 0's placeholder watermark
// (1970-01-01) and unknown output rows (-1) show as NULL, later epochs as
// their values.
func TestQueryProgressEpochZeroNulls(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.DefaultAllocator)
	defer mem.AssertSize(t, 0)
	tbl := SystemTables(epochZeroQueries{})[1]
	recs, err := tbl.Records(context.Background(), mem)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseAll(recs)
	r := recs[0]
	if !r.Schema().Equal(tbl.Schema()) || r.NumRows() != 2 {
		t.Fatalf("query_progress: %v", r)
	}
	if !r.Column(9).IsNull(0) || !r.Column(10).IsNull(0) {
		t.Errorf("epoch 0: watermark %v, num_output_rows %v; want NULL, NULL", r.Column(9), r.Column(10))
	}
	if r.Column(9).IsNull(1) || r.Column(10).(*array.Int64).Value(1) != 7 {
		t.Errorf("epoch 1: watermark %v, num_output_rows %v", r.Column(9), r.Column(10))
	}
}
