package pgwire

import (
	"context"
	"fmt"
	"hash/fnv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/server"
	"github.com/arrowstream/arrowstream/vector"
)

// The PostgreSQL endpoint's pg_catalog and information_schema are tables
// the planner reads like any other (pgCatalog is the session's catalog
// overlay, server.FrontendSession.SetCatalog). Their rows are computed
// when a statement scans them, from the tables the session's user may
// see at that moment (the list Flight SQL's GetTables shows), so a user
// without a grant on a table does not find it in pg_class either. The
// relations tools join but that have nothing to say here (pg_index,
// pg_constraint, pg_description, ...) have PostgreSQL's columns and no
// rows.

// Schema OIDs (pg_namespace.oid). default takes PostgreSQL's OID of
// public, the schema tools expect user tables in.
const (
	oidNspCatalog = 11
	oidNspDefault = 2200
	oidNspInfo    = 13000
	oidNspSystem  = 16383
	oidOwner      = 10 // the one role that owns everything
	oidDatabase   = 16300
	oidHeapAM     = 2
	// firstCatalogOID is the OID of the first catalog relation; user
	// relations take OIDs from firstUserOID up, as in PostgreSQL.
	firstCatalogOID = 12000
)

// Schemas of the catalog relations.
const (
	pgCatalogSchema = "pg_catalog"
	infoSchema      = "information_schema"
)

// nspOID is the OID of a schema name (0 if unknown).
func nspOID(schema string) int64 {
	switch strings.ToLower(schema) {
	case pgCatalogSchema:
		return oidNspCatalog
	case server.DefaultSchema:
		return oidNspDefault
	case infoSchema:
		return oidNspInfo
	case server.SystemSchema:
		return oidNspSystem
	}
	return 0
}

// relOID is a user table's OID: a hash of its qualified name, so that it
// stays the same across statements (tools look a table's OID up in one
// statement and use it in the next) and does not depend on which other
// tables exist.
func relOID(schema, name string) int64 {
	h := fnv.New32a()
	h.Write([]byte(strings.ToLower(schema) + "." + strings.ToLower(name)))
	return firstUserOID + int64(h.Sum32()%(1<<30))
}

// relation is one row of pg_class: a user table or a catalog relation.
type relation struct {
	oid    int64
	schema string
	name   string
	kind   string // relkind: "r" table, "v" view
	fields []arrow.Field
}

// snapshot is what one statement's catalog relations are computed from.
type snapshot struct {
	rels     []relation
	user     string
	settings [][2]string // pg_settings rows: name, value
}

// catalogRelation is a relation of pg_catalog or information_schema.
type catalogRelation struct {
	schema string
	name   string
	cols   []arrow.Field
	// rows appends the relation's rows to b; nil: no rows.
	rows func(s *snapshot, b *rowBuilder)
}

// pgCatalog is the overlay catalog of a connection.
type pgCatalog struct{ c *conn }

// Table resolves pg_catalog.x, information_schema.x and, as PostgreSQL's
// search path does, an unqualified pg_x.
func (p pgCatalog) Table(name string) (plan.Table, error) {
	lower := strings.ToLower(name)
	schema, rel, qualified := strings.Cut(lower, ".")
	if !qualified {
		schema, rel = pgCatalogSchema, lower
		if !strings.HasPrefix(rel, "pg_") {
			return nil, fmt.Errorf("%w: %s", plan.ErrTableNotFound, name)
		}
	}
	for i := range catalogRelations {
		r := &catalogRelations[i]
		if r.schema == schema && r.name == rel {
			return relTable{r, p.c}, nil
		}
	}
	return nil, fmt.Errorf("%w: %s", plan.ErrTableNotFound, name)
}

// relTable is a catalog relation as a planner table.
type relTable struct {
	r *catalogRelation
	c *conn
}

func (t relTable) Schema() *arrow.Schema { return arrow.NewSchema(t.r.cols, nil) }
func (t relTable) Streaming() bool       { return false }

func (t relTable) Scan(ctx context.Context, mem memory.Allocator) (vector.Operator, error) {
	schema := t.Schema()
	b := newRowBuilder(mem, schema)
	defer b.release()
	if t.r.rows != nil {
		s, err := t.c.catalogSnapshot(ctx)
		if err != nil {
			return nil, fmt.Errorf("%s.%s: %w", t.r.schema, t.r.name, err)
		}
		t.r.rows(s, b)
	}
	rec := b.b.NewRecord()
	defer rec.Release()
	return vector.NewScan(schema, rec)
}

// catalogSnapshot lists the relations the session's user may see now.
func (c *conn) catalogSnapshot(ctx context.Context) (*snapshot, error) {
	tabs, err := c.sess.Tables(ctx)
	if err != nil {
		return nil, err
	}
	s := &snapshot{user: c.sess.User()}
	for _, t := range tabs {
		var fields []arrow.Field
		if t.Schema != nil {
			fields = t.Schema.Fields()
		}
		s.rels = append(s.rels, relation{oid: relOID(t.DBSchema, t.Name), schema: t.DBSchema, name: t.Name, kind: "r", fields: fields})
	}
	for i, r := range catalogRelations {
		kind := "r"
		if r.schema == infoSchema {
			kind = "v"
		}
		s.rels = append(s.rels, relation{oid: int64(firstCatalogOID + i), schema: r.schema, name: r.name, kind: kind, fields: r.cols})
	}
	for _, name := range sortedParams() {
		s.settings = append(s.settings, [2]string{name, c.param(name)})
	}
	return s, nil
}

// rowBuilder appends rows of Go values to a record builder.
type rowBuilder struct {
	b *array.RecordBuilder
}

func newRowBuilder(mem memory.Allocator, schema *arrow.Schema) *rowBuilder {
	return &rowBuilder{b: array.NewRecordBuilder(mem, schema)}
}

func (r *rowBuilder) release() { r.b.Release() }

// add appends one row: nil is NULL; int, int64, string and bool go to
// columns of their type.
func (r *rowBuilder) add(vals ...any) {
	if len(vals) != len(r.b.Fields()) {
		panic(fmt.Sprintf("pgwire: catalog row of %d values for %d columns", len(vals), len(r.b.Fields())))
	}
	for i, v := range vals {
		fb := r.b.Field(i)
		if v == nil {
			fb.AppendNull()
			continue
		}
		switch fb := fb.(type) {
		case *array.Int64Builder:
			switch x := v.(type) {
			case int:
				fb.Append(int64(x))
			case int64:
				fb.Append(x)
			case uint32:
				fb.Append(int64(x))
			case int16:
				fb.Append(int64(x))
			}
		case *array.Int32Builder:
			switch x := v.(type) {
			case int:
				fb.Append(int32(x))
			case int16:
				fb.Append(int32(x))
			}
		case *array.Int16Builder:
			switch x := v.(type) {
			case int:
				fb.Append(int16(x))
			case int16:
				fb.Append(x)
			}
		case *array.Float32Builder:
			fb.Append(float32(v.(float64)))
		case *array.BooleanBuilder:
			fb.Append(v.(bool))
		case *array.StringBuilder:
			fb.Append(v.(string))
		default:
			panic(fmt.Sprintf("pgwire: catalog column %d of type %s", i, fb.Type()))
		}
	}
}
