package server

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// SessionEngine is the QueryEngine of a running Arrowstream: statements are
// planned by the session's planner over its catalog — sources and static
// tables, the memory-sink tables memsink.Install added, and the system
// tables — and DDL runs through Session.SQL (so CREATE STREAMING TABLE
// starts a query). It also lists the session's tables and routes DoPut
// ingest into memory sources (CREATE TABLE t (...) USING memory).
type SessionEngine struct {
	sess   *arrowstream.Session
	system []SystemTable
	run    func(ctx context.Context, text string) (*arrowstream.Result, error)
}

// RunStatementsWith makes the engine run DDL and commands through run
// instead of Session.SQL (the command records table definitions this way).
func (e *SessionEngine) RunStatementsWith(run func(ctx context.Context, text string) (*arrowstream.Result, error)) {
	e.run = run
}

// NewSessionEngine returns the engine over sess and makes the system tables
// queryable as system.<name>.
func NewSessionEngine(sess *arrowstream.Session, system []SystemTable) *SessionEngine {
	e := &SessionEngine{sess: sess, system: system, run: sess.SQL}
	sess.AddCatalog(systemCatalog{e})
	return e
}

// ForSession is the server configuration that serves sess: its memory-sink
// tables (cat, as given to memsink.Install), SQL through a SessionEngine,
// the system tables of its query manager, its tables and its memory
// sources for ingest. Fill in Addr, Auth, TLS and Limits on the result.
func ForSession(sess *arrowstream.Session, cat *memsink.Catalog) Config {
	queries := ManagerQueries(sess.Streams())
	system := SystemTables(queries)
	e := NewSessionEngine(sess, system)
	return Config{Sinks: cat, Engine: e, Tables: e, SystemTables: system, Ingest: e, Allocator: sess.Allocator(), Queries: queries}
}

// systemCatalog exposes the system tables to the planner.
type systemCatalog struct{ e *SessionEngine }

func (c systemCatalog) Table(name string) (plan.Table, error) {
	short, ok := strings.CutPrefix(strings.ToLower(name), SystemSchema+".")
	if ok {
		for _, t := range c.e.system {
			if strings.ToLower(t.Name()) == short {
				return systemPlanTable{t}, nil
			}
		}
	}
	return nil, fmt.Errorf("%w: %s", plan.ErrTableNotFound, name)
}

func (c systemCatalog) TableNames() []string {
	out := make([]string, len(c.e.system))
	for i, t := range c.e.system {
		out[i] = SystemSchema + "." + t.Name()
	}
	return out
}

type systemPlanTable struct{ t SystemTable }

func (p systemPlanTable) Schema() *arrow.Schema { return p.t.Schema() }
func (p systemPlanTable) Streaming() bool       { return false }
func (p systemPlanTable) Scan(ctx context.Context, mem memory.Allocator) (vector.Operator, error) {
	recs, err := p.t.Records(ctx, mem)
	if err != nil {
		return nil, err
	}
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	return vector.NewScan(p.t.Schema(), recs...)
}

// analyze parses and analyzes req.SQL under the client session's settings,
// seeing only the tables req.CanRead accepts (nil: all).
func (e *SessionEngine) analyze(ctx context.Context, req Request) (plan.Statement, error) {
	st, _, err := e.analyzeParams(ctx, req)
	return st, err
}

// analyzeParams is analyze, binding req.Params to the statement's
// placeholders; it also returns how many there are.
func (e *SessionEngine) analyzeParams(ctx context.Context, req Request) (plan.Statement, int, error) {
	stmt, n, err := parseParams(req)
	if err != nil {
		return nil, 0, err
	}
	opts, err := e.options(req.Settings)
	if err != nil {
		return nil, 0, err
	}
	var cat plan.Catalog = e.sess.Catalog()
	if req.CanRead != nil {
		cat = grantedCatalog{cat, req.CanRead}
	}
	if req.Overlay != nil {
		cat = overlayCatalog{req.Overlay, cat}
	}
	st, err := plan.AnalyzeContext(ctx, stmt, cat, plan.AnalyzeOptions{Session: &opts})
	return st, n, classify(err)
}

// grantedCatalog shows the planner only the tables a user may read; the
// others do not exist, also in "did you mean" suggestions.
type grantedCatalog struct {
	c       plan.Catalog
	canRead func(string) bool
}

func (g grantedCatalog) Table(name string) (plan.Table, error) {
	if !g.canRead(name) {
		return nil, fmt.Errorf("%w: %s", plan.ErrTableNotFound, name)
	}
	t, err := g.c.Table(name)
	if err != nil && errors.Is(err, plan.ErrTableNotFound) {
		return nil, fmt.Errorf("%w: %s", plan.ErrTableNotFound, name)
	}
	return t, err
}

func (g grantedCatalog) TableNames() []string {
	l, ok := g.c.(plan.TableLister)
	if !ok {
		return nil
	}
	var out []string
	for _, n := range l.TableNames() {
		if g.canRead(n) {
			out = append(out, n)
		}
	}
	return out
}

// overlayCatalog resolves names in over first, then in base.
type overlayCatalog struct{ over, base plan.Catalog }

func (o overlayCatalog) Table(name string) (plan.Table, error) {
	t, err := o.over.Table(name)
	if err == nil || !errors.Is(err, plan.ErrTableNotFound) {
		return t, err
	}
	return o.base.Table(name)
}

func (o overlayCatalog) TableNames() []string {
	if l, ok := o.base.(plan.TableLister); ok {
		return l.TableNames()
	}
	return nil
}

// classify maps planner errors onto the codes clients see. The class is
// added for errors.Is only, not to the text: the message already says
// "not found" or "already exists", and a prefix said it twice
// ("not found: ... table or view not found").
func classify(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, plan.ErrTableNotFound):
		return &classedError{class: ErrNotFound, err: err}
	case strings.Contains(err.Error(), "already exists"):
		return &classedError{class: ErrAlreadyExists, err: err}
	}
	return err
}

// classedError is err, also matching class under errors.Is, with err's
// message unchanged.
type classedError struct{ class, err error }

func (e *classedError) Error() string   { return e.err.Error() }
func (e *classedError) Unwrap() []error { return []error{e.class, e.err} }

// isRowCommand reports whether a catalog command returns rows.
func isRowCommand(st plan.Statement) bool {
	switch x := st.(type) {
	case *plan.QueryStatement, *plan.ExplainStatement:
		return true
	case *plan.CommandStatement:
		switch x.Stmt.(type) {
		case *sql.ShowTables, *sql.ShowFunctions, *sql.Describe, *sql.DescribeHistory, *sql.DescribeFunction, *sql.DescribeQuery, *sql.ShowColumns:
			return true
		}
	}
	return false
}

// Prepare implements QueryEngine.
func (e *SessionEngine) Prepare(ctx context.Context, req Request) (Statement, error) {
	if x := parseSet(req.SQL); x != nil && req.Settings != nil {
		// Checked now, applied when executed.
		if err := checkSet(x); err != nil {
			return Statement{}, err
		}
		return Statement{IsQuery: true, Schema: setSchema}, nil
	}
	schema, _, isQuery, n, err := e.plan(ctx, req)
	if err != nil {
		return Statement{}, err
	}
	return Statement{IsQuery: isQuery, Schema: schema, ParameterSchema: paramSchema(n, req.Params)}, nil
}

// Query implements QueryEngine.
func (e *SessionEngine) Query(ctx context.Context, req Request) (*arrow.Schema, OpenFunc, error) {
	if x := parseSet(req.SQL); x != nil && req.Settings != nil {
		return e.set(x, req.Settings)
	}
	schema, open, isQuery, _, err := e.plan(ctx, req)
	if err != nil {
		return nil, nil, err
	}
	if !isQuery {
		return nil, nil, fmt.Errorf("%q is a command, not a query: %w", firstWords(req.SQL), ErrUnsupported)
	}
	return schema, open, nil
}

// plan analyzes a statement and, for one that returns rows, its schema and
// the function that runs it; it also returns the number of placeholders.
func (e *SessionEngine) plan(ctx context.Context, req Request) (*arrow.Schema, OpenFunc, bool, int, error) {
	schema, open, isQuery, err := e.planBound(ctx, req)
	return schema, open, isQuery, e.lastParams(req), err
}

// lastParams counts the placeholders of req.SQL (0 when it does not parse).
func (e *SessionEngine) lastParams(req Request) int {
	if !strings.Contains(req.SQL, "$") {
		return 0
	}
	_, n, err := parseParams(Request{SQL: req.SQL})
	if err != nil {
		return 0
	}
	return n
}

func (e *SessionEngine) planBound(ctx context.Context, req Request) (*arrow.Schema, OpenFunc, bool, error) {
	st, n, err := e.analyzeParams(ctx, req)
	if err != nil {
		return nil, nil, false, err
	}
	if !isRowCommand(st) {
		return nil, nil, false, nil
	}
	if _, ok := st.(*plan.QueryStatement); !ok && n > 0 {
		return nil, nil, false, fmt.Errorf("parameters ($1 ...) are taken by queries only: %w", ErrUnsupported)
	}
	if _, ok := st.(*plan.CommandStatement); ok && req.CanRead != nil {
		// SHOW TABLES and DESCRIBE read the session's whole catalog.
		return nil, nil, false, fmt.Errorf("%q lists or describes tables beyond the user's grants; use the Flight SQL metadata calls (GetTables), which show only granted tables: %w",
			firstWords(req.SQL), ErrPermissionDenied)
	}
	opts, err := e.options(req.Settings)
	if err != nil {
		return nil, nil, false, err
	}
	zone := zoneName(opts)
	if q, ok := st.(*plan.QueryStatement); ok {
		schema := announced(q.Plan.Schema(), zone)
		mem := req.Mem
		if mem == nil {
			mem = e.sess.Allocator()
		}
		open := func(ctx context.Context) (vector.Operator, error) {
			op, err := plan.Execute(ctx, mem, q.Plan, nil)
			if err != nil {
				return nil, classify(err)
			}
			return conform(mem, op, schema), nil
		}
		return schema, open, true, nil
	}
	// EXPLAIN, SHOW TABLES, DESCRIBE: small results, computed when opened;
	// run once now for the schema.
	res, err := e.sess.SQL(ctx, req.SQL)
	if err != nil {
		return nil, nil, false, classify(err)
	}
	schema := announced(res.Schema, zone)
	res.Close()
	open := func(ctx context.Context) (vector.Operator, error) {
		res, err := e.sess.SQL(ctx, req.SQL)
		if err != nil {
			return nil, classify(err)
		}
		return conform(e.sess.Allocator(), res.Op, schema), nil
	}
	return schema, open, true, nil
}

// Exec implements QueryEngine.
func (e *SessionEngine) Exec(ctx context.Context, req Request) (int64, error) {
	if x := parseSet(req.SQL); x != nil && req.Settings != nil {
		_, _, err := e.set(x, req.Settings)
		return 0, err
	}
	if err := e.checkSessionDDL(ctx, req); err != nil {
		return 0, err
	}
	res, err := e.run(ctx, req.SQL)
	if err != nil {
		return 0, classify(err)
	}
	res.Close()
	return 0, nil
}

func firstWords(s string) string {
	f := strings.Fields(s)
	if len(f) > 2 {
		f = f[:2]
	}
	return strings.Join(f, " ")
}

// announced is the schema clients are told: dictionary columns decoded,
// every column nullable (the planner's nullability is not tracked
// precisely), metadata dropped.
// Timestamps are labelled with the session's time zone (display_zone.go).
func announced(s *arrow.Schema, zone string) *arrow.Schema {
	fields := make([]arrow.Field, s.NumFields())
	for i, f := range s.Fields() {
		fields[i] = arrow.Field{Name: f.Name, Type: displayType(vector.Unwrap(f.Type), zone), Nullable: true}
	}
	return arrow.NewSchema(fields, nil)
}

// conform makes op's records carry exactly schema (decoding dictionaries).
func conform(mem memory.Allocator, op vector.Operator, schema *arrow.Schema) vector.Operator {
	return &conformOp{Operator: op, mem: mem, schema: schema}
}

type conformOp struct {
	vector.Operator
	mem    memory.Allocator
	schema *arrow.Schema
}

func (c *conformOp) Schema() *arrow.Schema { return c.schema }

func (c *conformOp) Next(ctx context.Context) (arrow.Record, error) {
	rec, err := c.Operator.Next(ctx)
	if err != nil {
		return nil, err
	}
	if rec.Schema().Equal(c.schema) {
		return rec, nil
	}
	defer rec.Release()
	cols := make([]arrow.Array, rec.NumCols())
	for i, col := range rec.Columns() {
		d, err := vector.DecodeDictionary(c.mem, col)
		if err != nil {
			for _, done := range cols[:i] {
				done.Release()
			}
			return nil, err
		}
		cols[i] = relabel(d, c.schema.Field(i).Type)
		d.Release()
	}
	out := array.NewRecord(c.schema, cols, rec.NumRows())
	for _, col := range cols {
		col.Release()
	}
	return out, nil
}

// ListTables implements TableLister: the session's sources and static
// tables.
func (e *SessionEngine) ListTables(context.Context) ([]TableInfo, error) {
	var out []TableInfo
	for _, t := range e.sess.LocalTables() {
		out = append(out, TableInfo{DBSchema: DefaultSchema, Name: t.Name, Type: TableTypeTable, Schema: t.Schema})
	}
	return out, nil
}

// LookupIngest implements IngestTargets: memory sources accept DoPut.
func (e *SessionEngine) LookupIngest(name string) (IngestTarget, bool) {
	src, ok := e.sess.LookupStream(name)
	if !ok {
		return nil, false
	}
	ms, ok := src.(*arrowstream.MemoryStream)
	if !ok {
		return nil, false
	}
	return memoryIngest{ms}, true
}

type memoryIngest struct{ s *arrowstream.MemoryStream }

func (m memoryIngest) Schema() *arrow.Schema { return m.s.Schema() }

// Append adds the batch as one offset of the stream.
func (m memoryIngest) Append(_ context.Context, rec arrow.Record) error {
	if rec.Schema().Equal(m.s.Schema()) {
		_, err := m.s.AddRecord(rec)
		return err
	}
	// Nullability or metadata differ (the server checked names and types):
	// present the columns under the stream's schema.
	re := array.NewRecord(m.s.Schema(), rec.Columns(), rec.NumRows())
	defer re.Release()
	_, err := m.s.AddRecord(re)
	return err
}
