package server

import (
	"context"
	"sort"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/flight"
	"github.com/apache/arrow/go/v17/arrow/flight/flightsql"
	"github.com/apache/arrow/go/v17/arrow/flight/flightsql/schema_ref"
	pb "github.com/apache/arrow/go/v17/arrow/flight/gen/flight"
	"google.golang.org/grpc/codes"
	"google.golang.org/protobuf/proto"

	"github.com/arrowstream/arrowstream/vector"
)

// The catalog calls answer with exactly the result schemas of the Flight
// SQL specification (schema_ref): the ADBC driver rejects any other.

// metadataInfo is the FlightInfo of a catalog command: its ticket is the
// command itself, answered by doGet.
func (q *sqlServer) metadataInfo(desc *flight.FlightDescriptor, schema *arrow.Schema) (*flight.FlightInfo, error) {
	return &flight.FlightInfo{
		Schema:           flight.SerializeSchema(schema, q.s.mem),
		FlightDescriptor: desc,
		Endpoint:         []*flight.FlightEndpoint{{Ticket: &flight.Ticket{Ticket: desc.Cmd}}},
		TotalRecords:     -1,
		TotalBytes:       -1,
	}, nil
}

// GetFlightInfoCatalogs implements flightsql.Server.
func (q *sqlServer) GetFlightInfoCatalogs(_ context.Context, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return q.metadataInfo(desc, schema_ref.Catalogs)
}

// GetFlightInfoSchemas implements flightsql.Server.
func (q *sqlServer) GetFlightInfoSchemas(_ context.Context, _ flightsql.GetDBSchemas, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return q.metadataInfo(desc, schema_ref.DBSchemas)
}

// GetFlightInfoTables implements flightsql.Server.
func (q *sqlServer) GetFlightInfoTables(_ context.Context, cmd flightsql.GetTables, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	if cmd.GetIncludeSchema() {
		return q.metadataInfo(desc, schema_ref.TablesWithIncludedSchema)
	}
	return q.metadataInfo(desc, schema_ref.Tables)
}

// GetFlightInfoTableTypes implements flightsql.Server.
func (q *sqlServer) GetFlightInfoTableTypes(_ context.Context, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return q.metadataInfo(desc, schema_ref.TableTypes)
}

// GetFlightInfoPrimaryKeys implements flightsql.Server: tables have no
// primary keys, so the result is empty.
func (q *sqlServer) GetFlightInfoPrimaryKeys(_ context.Context, _ flightsql.TableRef, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return q.metadataInfo(desc, schema_ref.PrimaryKeys)
}

// GetFlightInfoExportedKeys implements flightsql.Server (empty).
func (q *sqlServer) GetFlightInfoExportedKeys(_ context.Context, _ flightsql.TableRef, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return q.metadataInfo(desc, schema_ref.ExportedKeys)
}

// GetFlightInfoImportedKeys implements flightsql.Server (empty).
func (q *sqlServer) GetFlightInfoImportedKeys(_ context.Context, _ flightsql.TableRef, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return q.metadataInfo(desc, schema_ref.ImportedKeys)
}

// GetFlightInfoCrossReference implements flightsql.Server (empty).
func (q *sqlServer) GetFlightInfoCrossReference(_ context.Context, _ flightsql.CrossTableRef, desc *flight.FlightDescriptor) (*flight.FlightInfo, error) {
	return q.metadataInfo(desc, schema_ref.CrossReference)
}

// metadata answers a catalog command's DoGet with owned records.
func (q *sqlServer) metadata(ctx context.Context, cmd proto.Message) (*arrow.Schema, []arrow.Record, error) {
	switch cmd := cmd.(type) {
	case *pb.CommandGetCatalogs:
		b := array.NewRecordBuilder(q.s.mem, schema_ref.Catalogs)
		defer b.Release()
		b.Field(0).(*array.StringBuilder).Append(q.s.cfg.Catalog)
		return schema_ref.Catalogs, []arrow.Record{b.NewRecord()}, nil
	case *pb.CommandGetDbSchemas:
		b := array.NewRecordBuilder(q.s.mem, schema_ref.DBSchemas)
		defer b.Release()
		if q.catalogMatches(cmd.Catalog) {
			for _, name := range []string{DefaultSchema, SystemSchema} {
				if cmd.DbSchemaFilterPattern == nil || likeMatch(*cmd.DbSchemaFilterPattern, name, true) {
					b.Field(0).(*array.StringBuilder).Append(q.s.cfg.Catalog)
					b.Field(1).(*array.StringBuilder).Append(name)
				}
			}
		}
		return schema_ref.DBSchemas, []arrow.Record{b.NewRecord()}, nil
	case *pb.CommandGetTables:
		return q.tables(ctx, cmd)
	case *pb.CommandGetTableTypes:
		b := array.NewRecordBuilder(q.s.mem, schema_ref.TableTypes)
		defer b.Release()
		for _, t := range []string{TableTypeStreaming, TableTypeSystem, TableTypeTable} {
			b.Field(0).(*array.StringBuilder).Append(t)
		}
		return schema_ref.TableTypes, []arrow.Record{b.NewRecord()}, nil
	case *pb.CommandGetPrimaryKeys:
		return emptyResult(q, schema_ref.PrimaryKeys)
	case *pb.CommandGetExportedKeys:
		return emptyResult(q, schema_ref.ExportedKeys)
	case *pb.CommandGetImportedKeys:
		return emptyResult(q, schema_ref.ImportedKeys)
	case *pb.CommandGetCrossReference:
		return emptyResult(q, schema_ref.CrossReference)
	}
	return nil, nil, statusf(codes.Unimplemented, "DoGet of %T is not supported", cmd)
}

func emptyResult(q *sqlServer, schema *arrow.Schema) (*arrow.Schema, []arrow.Record, error) {
	b := array.NewRecordBuilder(q.s.mem, schema)
	defer b.Release()
	return schema, []arrow.Record{b.NewRecord()}, nil
}

// catalogMatches applies a catalog filter: nil matches all, "" matches
// tables without a catalog (none here).
func (q *sqlServer) catalogMatches(c *string) bool {
	return c == nil || strings.EqualFold(*c, q.s.cfg.Catalog)
}

// allTables lists the sink tables, the lister's tables and the system
// tables, sorted by schema and name.
func (s *Server) allTables(ctx context.Context) ([]TableInfo, error) {
	var out []TableInfo
	for _, name := range s.cfg.Sinks.List() {
		if t, ok := s.cfg.Sinks.Lookup(name); ok {
			out = append(out, TableInfo{DBSchema: DefaultSchema, Name: name, Type: TableTypeStreaming, Schema: t.Schema()})
		}
	}
	if s.cfg.Tables != nil {
		more, err := s.cfg.Tables.ListTables(ctx)
		if err != nil {
			return nil, err
		}
		out = append(out, more...)
	}
	for _, t := range s.cfg.SystemTables {
		out = append(out, TableInfo{DBSchema: SystemSchema, Name: t.Name(), Type: TableTypeSystem, Schema: t.Schema()})
	}
	if can := s.readFilter(ctx); can != nil {
		kept := out[:0]
		for _, t := range out {
			name := t.Name
			if t.DBSchema == SystemSchema {
				name = SystemSchema + "." + name
			}
			if can(name) {
				kept = append(kept, t)
			}
		}
		out = kept
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].DBSchema != out[j].DBSchema {
			return out[i].DBSchema < out[j].DBSchema
		}
		return strings.ToLower(out[i].Name) < strings.ToLower(out[j].Name)
	})
	return out, nil
}

// tables answers GetTables: one record (the ADBC driver reads only the
// first one in GetTableSchema).
func (q *sqlServer) tables(ctx context.Context, cmd *pb.CommandGetTables) (*arrow.Schema, []arrow.Record, error) {
	schema := schema_ref.Tables
	if cmd.GetIncludeSchema() {
		schema = schema_ref.TablesWithIncludedSchema
	}
	b := array.NewRecordBuilder(q.s.mem, schema)
	defer b.Release()
	if !q.catalogMatches(cmd.Catalog) {
		return schema, []arrow.Record{b.NewRecord()}, nil
	}
	all, err := q.s.allTables(ctx)
	if err != nil {
		return nil, nil, statusOf(err, codes.Internal)
	}
	types := map[string]bool{}
	for _, t := range cmd.GetTableTypes() {
		types[strings.ToUpper(t)] = true
	}
	for _, t := range all {
		switch {
		case cmd.DbSchemaFilterPattern != nil && !likeMatch(*cmd.DbSchemaFilterPattern, t.DBSchema, true),
			cmd.TableNameFilterPattern != nil && !likeMatch(*cmd.TableNameFilterPattern, t.Name, true),
			len(types) > 0 && !types[strings.ToUpper(t.Type)]:
			continue
		}
		b.Field(0).(*array.StringBuilder).Append(q.s.cfg.Catalog)
		b.Field(1).(*array.StringBuilder).Append(t.DBSchema)
		b.Field(2).(*array.StringBuilder).Append(t.Name)
		b.Field(3).(*array.StringBuilder).Append(t.Type)
		if cmd.GetIncludeSchema() {
			b.Field(4).(*array.BinaryBuilder).Append(flight.SerializeSchema(t.Schema, q.s.mem))
		}
	}
	return schema, []arrow.Record{b.NewRecord()}, nil
}

// describeSchema renders columns as "name type, ..." with Spark type
// names, for error messages.
func describeSchema(s *arrow.Schema) string {
	if s == nil {
		return ""
	}
	parts := make([]string, s.NumFields())
	for i, f := range s.Fields() {
		parts[i] = f.Name + " " + vector.TypeName(f.Type)
	}
	return strings.Join(parts, ", ")
}
