package server

import (
	"context"
	"sort"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/flight"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"

	"github.com/arrowstream/arrowstream/sql"
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

// ClusterLocalHeader, on a Flight SQL request, asks for this instance's
// rows of cluster tables only (what a gathering instance sends the
// others; a multi-endpoint FlightInfo's tickets say the same).
const ClusterLocalHeader = "x-arrowstream-cluster-local"

type clusterLocalKey struct{}

// withLocal marks ctx cluster-local when the ticket asks for it.
func withLocal(ctx context.Context, tk Ticket) context.Context {
	if !tk.Local {
		return ctx
	}
	return context.WithValue(ctx, clusterLocalKey{}, true)
}

// ClusterLocal reports whether a request reads this instance's rows of
// cluster tables only: its ticket says so (a multi-endpoint FlightInfo) or
// it carries ClusterLocalHeader.
func ClusterLocal(ctx context.Context) bool {
	if v, _ := ctx.Value(clusterLocalKey{}).(bool); v {
		return true
	}
	md, ok := metadata.FromIncomingContext(ctx)
	return ok && len(md.Get(ClusterLocalHeader)) > 0
}

// ClusterLocator locates the rows of cluster tables. It must be safe for
// concurrent use.
type ClusterLocator interface {
	// TableLocations returns the Flight SQL addresses (host:port) of every
	// live instance holding rows of table, this one included; ok is false
	// when table is not a cluster table.
	TableLocations(ctx context.Context, table string) (addrs []string, ok bool, err error)
}

// clusterEndpoints turns a FlightInfo whose ticket reads table locally
// into one endpoint per instance of a cluster table (each endpoint's
// location is that instance's address), so that Flight and ADBC clients
// read the instances in parallel. Other tables keep their one endpoint.
func (s *Server) clusterEndpoints(ctx context.Context, table string, info *flight.FlightInfo, ticket *flight.Ticket) (*flight.FlightInfo, error) {
	if s.cfg.Cluster == nil || ClusterLocal(ctx) {
		return info, nil
	}
	addrs, ok, err := s.cfg.Cluster.TableLocations(ctx, table)
	if err != nil {
		return nil, statusOf(err, codes.Unavailable)
	}
	if !ok {
		return info, nil
	}
	info.Endpoint = info.Endpoint[:0]
	for _, a := range addrs {
		info.Endpoint = append(info.Endpoint, &flight.FlightEndpoint{Ticket: ticket, Location: []*flight.Location{{Uri: "grpc://" + a}}})
	}
	// Counts and order describe one instance's rows, not the cluster's.
	info.TotalRecords, info.TotalBytes, info.Ordered = -1, -1, false
	return info, nil
}

// clusterStatementInfo gives a statement that reads a cluster table whole
// (SELECT * or plain columns FROM it, nothing else: its result is then the
// union of each instance's result over its own rows) one endpoint per
// instance, each with a ticket that runs the statement locally there.
// Other statements keep their one endpoint, which gathers the rows.
func (q *sqlServer) clusterStatementInfo(ctx context.Context, text string, info *flight.FlightInfo) (*flight.FlightInfo, error) {
	if q.s.cfg.Cluster == nil || ClusterLocal(ctx) {
		return info, nil // a local read stays local
	}
	table, ok := plainTableRead(text)
	if !ok {
		return info, nil
	}
	t, err := statementTicket(Ticket{Version: TicketVersion, Query: text, Local: true})
	if err != nil {
		return nil, statusOf(err, codes.Internal)
	}
	return q.s.clusterEndpoints(ctx, table, info, t)
}

// plainTableRead returns the table a statement reads when it is
// SELECT * | col, ... FROM table (no WHERE, grouping, ordering, limit,
// distinct or set operation): a statement each instance can answer over
// its own rows.
func plainTableRead(text string) (string, bool) {
	st, err := sql.Parse(text)
	if err != nil {
		return "", false
	}
	qu, ok := st.(*sql.Query)
	if !ok || len(qu.With) > 0 || len(qu.OrderBy) > 0 || qu.Limit != nil || qu.Offset != nil {
		return "", false
	}
	sel, ok := qu.Body.(*sql.Select)
	if !ok || sel.Distinct || len(sel.From) != 1 || sel.Where != nil || len(sel.GroupBy) > 0 || sel.GroupingSets != nil ||
		sel.GroupByAll || sel.Having != nil || len(sel.Windows) > 0 || sel.Qualify != nil {
		return "", false
	}
	for _, it := range sel.Items {
		switch it.Expr.(type) {
		case *sql.Star, *sql.ColumnRef:
		default:
			return "", false
		}
	}
	ref, ok := sel.From[0].(*sql.TableRef)
	if !ok || ref.Stream || ref.Version != nil || ref.Watermark != nil || len(ref.Name) != 1 {
		return "", false
	}
	return ref.Name[0].Name, true
}
