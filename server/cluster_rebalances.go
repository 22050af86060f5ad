package server

import (
	"context"
	"strings"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// ClusterRebalance is one rebalance of a cluster table's consumer group
// as this instance saw it (docs/cluster.md, operations).
type ClusterRebalance struct {
	Table, Group string
	// Start is when this instance first heard of the rebalance.
	Start      time.Time
	Generation int32
	// Assigned, Revoked and Lost name partitions ("topic-3").
	Assigned, Revoked, Lost []string
	// Owned is the number of partitions this instance owned afterwards.
	Owned int
	// Paused is how long its processing of the table paused (from Start
	// to its next claim or commit of input); Resumed is false while it
	// has not resumed.
	Paused  time.Duration
	Resumed bool
}

// ClusterRebalanceLister lists this instance's recent rebalances. It
// must be safe for concurrent use.
type ClusterRebalanceLister interface {
	ClusterRebalances(ctx context.Context) ([]ClusterRebalance, error)
}

// ClusterRebalancesTable is system.cluster_rebalances over l: one row per
// recent rebalance of each cluster table's group seen by this instance,
// oldest first per table.
func ClusterRebalancesTable(l ClusterRebalanceLister) SystemTable { return &clusterRebalancesTable{l} }

var clusterRebalancesSchema = arrow.NewSchema([]arrow.Field{
	{Name: "table_name", Type: vector.String},
	{Name: "group_id", Type: vector.String},
	{Name: "start_time", Type: vector.Timestamp},
	{Name: "generation", Type: vector.Int64},
	{Name: "num_assigned", Type: vector.Int64},
	{Name: "assigned", Type: vector.String},
	{Name: "num_revoked", Type: vector.Int64},
	{Name: "revoked", Type: vector.String},
	{Name: "lost", Type: vector.String},
	{Name: "owned_after", Type: vector.Int64},
	nullable("paused_ms", vector.Int64),
}, nil)

type clusterRebalancesTable struct{ l ClusterRebalanceLister }

func (*clusterRebalancesTable) Name() string          { return "cluster_rebalances" }
func (*clusterRebalancesTable) Schema() *arrow.Schema { return clusterRebalancesSchema }

func (t *clusterRebalancesTable) Records(ctx context.Context, mem memory.Allocator) ([]arrow.Record, error) {
	rs, err := t.l.ClusterRebalances(ctx)
	if err != nil {
		return nil, err
	}
	b := array.NewRecordBuilder(mem, clusterRebalancesSchema)
	defer b.Release()
	for _, r := range rs {
		str(b, 0, r.Table)
		str(b, 1, r.Group)
		b.Field(2).(*array.TimestampBuilder).Append(arrow.Timestamp(r.Start.UnixMicro()))
		b.Field(3).(*array.Int64Builder).Append(int64(r.Generation))
		b.Field(4).(*array.Int64Builder).Append(int64(len(r.Assigned)))
		str(b, 5, strings.Join(r.Assigned, ","))
		b.Field(6).(*array.Int64Builder).Append(int64(len(r.Revoked)))
		str(b, 7, strings.Join(r.Revoked, ","))
		str(b, 8, strings.Join(r.Lost, ","))
		b.Field(9).(*array.Int64Builder).Append(int64(r.Owned))
		if r.Resumed {
			b.Field(10).(*array.Int64Builder).Append(r.Paused.Milliseconds())
		} else {
			b.Field(10).AppendNull()
		}
	}
	return []arrow.Record{b.NewRecord()}, nil
}
