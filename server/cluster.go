package server

import (
	"context"
	"sort"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// ClusterMember is one instance in the consumer group of one streaming
// table (cluster mode, docs/cluster.md).
type ClusterMember struct {
	Table, Group, MemberID string
	// Address is the member's Flight SQL address.
	Address    string
	ClientHost string
	// Partitions are the Kafka partitions assigned to it ("topic-3").
	Partitions []string
	// Self marks this instance.
	Self bool
}

// ClusterLister describes the groups of the cluster tables running on
// this instance. It must be safe for concurrent use.
type ClusterLister interface {
	ClusterMembers(ctx context.Context) ([]ClusterMember, error)
}

// ClusterMembersTable is system.cluster_members over l: one row per
// member of each cluster table's group.
func ClusterMembersTable(l ClusterLister) SystemTable { return &clusterMembersTable{l} }

// AddSystemTables makes more system tables queryable as system.<name>
// (call it before the server starts).
func (e *SessionEngine) AddSystemTables(ts ...SystemTable) {
	e.system = append(e.system, ts...)
}

var clusterMembersSchema = arrow.NewSchema([]arrow.Field{
	{Name: "table_name", Type: vector.String},
	{Name: "group_id", Type: vector.String},
	{Name: "member_id", Type: vector.String},
	nullable("address", vector.String),
	nullable("client_host", vector.String),
	{Name: "num_partitions", Type: vector.Int64},
	{Name: "partitions", Type: vector.String},
	{Name: "is_self", Type: arrow.FixedWidthTypes.Boolean},
}, nil)

type clusterMembersTable struct{ l ClusterLister }

func (*clusterMembersTable) Name() string          { return "cluster_members" }
func (*clusterMembersTable) Schema() *arrow.Schema { return clusterMembersSchema }

func (t *clusterMembersTable) Records(ctx context.Context, mem memory.Allocator) ([]arrow.Record, error) {
	ms, err := t.l.ClusterMembers(ctx)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(ms, func(i, j int) bool {
		if ms[i].Table != ms[j].Table {
			return ms[i].Table < ms[j].Table
		}
		return ms[i].MemberID < ms[j].MemberID
	})
	b := array.NewRecordBuilder(mem, clusterMembersSchema)
	defer b.Release()
	for _, m := range ms {
		str(b, 0, m.Table)
		str(b, 1, m.Group)
		str(b, 2, m.MemberID)
		optStr(b, 3, m.Address)
		optStr(b, 4, m.ClientHost)
		b.Field(5).(*array.Int64Builder).Append(int64(len(m.Partitions)))
		str(b, 6, strings.Join(m.Partitions, ","))
		b.Field(7).(*array.BooleanBuilder).Append(m.Self)
	}
	return []arrow.Record{b.NewRecord()}, nil
}
