package server

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
)

type rebalanceList struct {
	rs  []ClusterRebalance
	err error
}

func (l rebalanceList) ClusterRebalances(context.Context) ([]ClusterRebalance, error) {
	return l.rs, l.err
}

func TestClusterRebalancesTable(t *testing.T) {
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	start := time.Date(2026, 1, 1, 0, 0, 1, 0, time.UTC)
	tbl := ClusterRebalancesTable(rebalanceList{rs: []ClusterRebalance{
		{Table: "t", Group: "c-t", Start: start, Generation: 3, Assigned: []string{"ev-1", "ev-2"}, Owned: 6, Paused: 1500 * time.Millisecond, Resumed: true},
		{Table: "t", Group: "c-t", Start: start.Add(time.Second), Generation: 4, Revoked: []string{"ev-2"}, Lost: []string{"ev-7"}, Owned: 5},
	}})
	if tbl.Name() != "cluster_rebalances" {
		t.Fatalf("name %s", tbl.Name())
	}
	recs, err := tbl.Records(context.Background(), mem)
	if err != nil {
		t.Fatal(err)
	}
	defer releaseAll(recs)
	r := recs[0]
	if !r.Schema().Equal(tbl.Schema()) || r.NumRows() != 2 {
		t.Fatalf("rows: %v", r)
	}
	if got := r.Column(2).(*array.Timestamp).Value(0); got != arrow.Timestamp(start.UnixMicro()) {
		t.Fatalf("start_time %v", got)
	}
	if r.Column(3).(*array.Int64).Value(1) != 4 || r.Column(4).(*array.Int64).Value(0) != 2 ||
		r.Column(5).(*array.String).Value(0) != "ev-1,ev-2" || r.Column(6).(*array.Int64).Value(1) != 1 ||
		r.Column(7).(*array.String).Value(1) != "ev-2" || r.Column(8).(*array.String).Value(1) != "ev-7" ||
		r.Column(9).(*array.Int64).Value(1) != 5 {
		t.Fatalf("columns: %v", r)
	}
	// Paused is null until processing resumed.
	if r.Column(10).(*array.Int64).Value(0) != 1500 || !r.Column(10).IsNull(1) {
		t.Fatalf("paused_ms: %v", r.Column(10))
	}
}

func TestClusterRebalancesTableError(t *testing.T) {
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	want := errors.New("group unreachable")
	if _, err := ClusterRebalancesTable(rebalanceList{err: want}).Records(context.Background(), mem); !errors.Is(err, want) {
		t.Fatalf("error %v, want %v", err, want)
	}
}
