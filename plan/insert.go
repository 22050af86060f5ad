package plan

import (
	"context"
	"fmt"
	"strings"
	"sync"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// Inserter is a batch table that INSERT INTO can append rows to.
type Inserter interface {
	BatchTable
	// Append adds records (borrowed; the table retains what it keeps),
	// which have the table's schema, atomically: readers see all of them
	// or none.
	Append(records ...arrow.Record) error
}

// Appender is a table INSERT INTO appends to: an Inserter, or a stream
// that takes pushed rows (CREATE TABLE t (cols) USING memory), whose
// readers see the rows of one INSERT arrive together.
type Appender interface {
	Table
	// Append adds records (borrowed) of the table's schema atomically.
	Append(records ...arrow.Record) error
}

// Overwriter is a table INSERT OVERWRITE replaces the rows of.
type Overwriter interface {
	Appender
	// Overwrite replaces every row by records (borrowed) atomically.
	Overwrite(records ...arrow.Record) error
}

// appendRefuser is a table whose type has Append but that refuses rows
// (a stream other than a pushed one), so that INSERT fails at analysis.
type appendRefuser interface {
	AcceptsInserts() bool
}

// StaticTable is a batch table in memory that INSERT INTO appends to:
// what CREATE TABLE name (cols) USING parquet makes without a path
// (Spark's managed table; the engine keeps it in memory for the session).
// Safe for concurrent use.
type StaticTable struct {
	schema  *arrow.Schema
	mu      sync.RWMutex
	records []arrow.Record
}

// NewStaticTable returns an empty table of schema.
func NewStaticTable(schema *arrow.Schema) *StaticTable {
	return &StaticTable{schema: schema}
}

// Schema implements Table.
func (t *StaticTable) Schema() *arrow.Schema { return t.schema }

// Streaming implements Table.
func (t *StaticTable) Streaming() bool { return false }

// Scan implements BatchTable: a snapshot of the rows appended so far.
func (t *StaticTable) Scan(context.Context, memory.Allocator) (vector.Operator, error) {
	t.mu.RLock()
	defer t.mu.RUnlock()
	return vector.NewScan(t.schema, t.records...)
}

// Append implements Inserter.
func (t *StaticTable) Append(records ...arrow.Record) error {
	for i, r := range records {
		if !r.Schema().Equal(t.schema) {
			return fmt.Errorf("plan: insert record %d has schema %s, want %s", i, r.Schema(), t.schema)
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, r := range records {
		r.Retain()
		vector.SettleNullCounts(r) // concurrent queries read it: see vector.SettleNullCounts
		t.records = append(t.records, r)
	}
	return nil
}

// Overwrite implements Overwriter.
func (t *StaticTable) Overwrite(records ...arrow.Record) error {
	for i, r := range records {
		if !r.Schema().Equal(t.schema) {
			return fmt.Errorf("plan: insert record %d has schema %s, want %s", i, r.Schema(), t.schema)
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	old := t.records
	t.records = nil
	for _, r := range records {
		r.Retain()
		vector.SettleNullCounts(r) // concurrent queries read it: see vector.SettleNullCounts
		t.records = append(t.records, r)
	}
	for _, r := range old {
		r.Release()
	}
	return nil
}

// Release releases the rows.
func (t *StaticTable) Release() {
	t.mu.Lock()
	defer t.mu.Unlock()
	for _, r := range t.records {
		r.Release()
	}
	t.records = nil
}

// InsertStatement is an analyzed INSERT INTO: Plan yields rows of the
// table's schema (cast by position, as Spark's store assignment).
type InsertStatement struct {
	Name      string
	Table     Appender
	Overwrite bool // INSERT OVERWRITE: Table is an Overwriter
	Plan      Node
}

func (*InsertStatement) statementPlan() {}

// stampInsert stamps the session's options into an INSERT's plan: its
// query computes under the session's mode and time zone, as a SELECT does;
// the casts to the table's column types (the top projection analyzeInsert
// builds) are ANSI casts whatever the mode, in the session time zone, as
// Spark's default store assignment policy (ANSI) casts them.
func stampInsert(st *InsertStatement, opts Options) (*InsertStatement, error) {
	p, ok := st.Plan.(*Project)
	if !ok {
		return nil, fmt.Errorf("plan: INSERT INTO %s: the plan is a %T, not the projection to the table's columns", backquote(st.Name), st.Plan)
	}
	in, err := applyOptions(p.Input, opts)
	if err != nil {
		return nil, err
	}
	c := *p
	c.Input = in
	store := opts
	store.ANSI = true
	var top Node = &c
	if stamp := optionStamp(store); stamp != nil {
		if top, err = mapExprs(top, stamp); err != nil {
			return nil, err
		}
	}
	out := *st
	out.Plan = top
	return &out, nil
}

func analyzeInsert(b *budget, s *sql.Insert, cat Catalog) (*InsertStatement, error) {
	name := joinIdents(s.Name)
	if cat == nil {
		return nil, errorAt(s.Pos, errTableUnresolved, "The table or view %s cannot be found (no catalog).", backquote(name))
	}
	t, err := cat.Table(name)
	if err != nil {
		return nil, &Error{Pos: s.Pos, Msg: err.Error(), Err: err}
	}
	ins, ok := t.(Appender)
	if r, refuses := t.(appendRefuser); ok && refuses && !r.AcceptsInserts() {
		ok = false
	}
	if !ok {
		return nil, errorAt(s.Pos, ErrUnsupported, "INSERT INTO %s is not supported: only tables created with CREATE TABLE ... [USING parquet] (without a path) or CREATE TABLE ... USING memory accept inserts.", backquote(name))
	}
	if _, over := ins.(Overwriter); s.Overwrite && !over {
		return nil, errorAt(s.Pos, ErrUnsupported, "INSERT OVERWRITE %s is not supported: only the static tables of a session without a durable catalog can be overwritten; a stream's rows cannot be taken back.", backquote(name))
	}
	want := ins.Schema()
	// source[i] is the query column written to table column i; -1: NULL.
	source, err := insertColumns(s, name, want)
	if err != nil {
		return nil, err
	}
	n, err := analyzeQuery(b, s.Query, cat)
	if err != nil {
		return nil, err
	}
	got := n.Schema()
	if wantCols := countWritten(source); got.NumFields() != wantCols {
		return nil, errorAt(s.Pos, ErrType, "[INSERT_COLUMN_ARITY_MISMATCH] Cannot write to %s, the data to be inserted has %d columns, the target has %d columns.", backquote(name), got.NumFields(), wantCols)
	}
	exprs := make([]NamedExpr, want.NumFields())
	for i, f := range want.Fields() {
		var e Expr
		if source[i] < 0 {
			// A column left out of the list gets its default, NULL (Spark's
			// spark.sql.defaultColumn.useNullsForMissingDefaultValues).
			e = castTo(&Literal{Type: arrow.Null}, f.Type)
		} else {
			e = ColumnOf(got, source[i])
			if !arrow.TypeEqual(f.Type, e.DataType()) {
				e = castTo(e, f.Type)
			}
		}
		exprs[i] = NamedExpr{Name: f.Name, Expr: e}
	}
	p, err := NewProject(n, exprs)
	if err != nil {
		return nil, err
	}
	return &InsertStatement{Name: name, Table: ins, Overwrite: s.Overwrite, Plan: p}, nil
}

// insertColumns maps each table column to the position of the query column
// written to it: by position without a column list, by the list's names
// (case-insensitively, as Spark resolves them) with one.
func insertColumns(s *sql.Insert, name string, want *arrow.Schema) ([]int, error) {
	source := make([]int, want.NumFields())
	if s.Columns == nil {
		for i := range source {
			source[i] = i
		}
		return source, nil
	}
	for i := range source {
		source[i] = -1
	}
	for k, c := range s.Columns {
		idx := -1
		for i, f := range want.Fields() {
			if strings.EqualFold(f.Name, c.Name) {
				idx = i
				break
			}
		}
		if idx < 0 {
			return nil, errorAt(c.Pos, ErrUnresolved, "[UNRESOLVED_COLUMN.WITH_SUGGESTION] A column or function parameter with name %s cannot be resolved in the table %s.", backquote(c.Name), backquote(name))
		}
		if source[idx] >= 0 {
			return nil, errorAt(c.Pos, ErrType, "[COLUMN_ALREADY_EXISTS] The column %s already exists in the column list of INSERT INTO %s.", backquote(c.Name), backquote(name))
		}
		source[idx] = k
	}
	return source, nil
}

// countWritten is how many table columns the query writes.
func countWritten(source []int) int {
	n := 0
	for _, s := range source {
		if s >= 0 {
			n++
		}
	}
	return n
}

// ExecuteInsert runs an INSERT: it computes every row first and appends
// them at once, so that a failing query inserts nothing.
func ExecuteInsert(ctx context.Context, mem memory.Allocator, st *InsertStatement) error {
	n, err := Optimize(st.Plan)
	if err != nil {
		return err
	}
	op, err := Execute(ctx, mem, n, nil)
	if err != nil {
		return err
	}
	defer op.Close()
	recs, err := vector.Drain(ctx, op)
	if err != nil {
		return fmt.Errorf("INSERT INTO %s: %w", st.Name, err)
	}
	schema := st.Table.Schema()
	out := make([]arrow.Record, 0, len(recs))
	defer func() {
		for _, r := range out {
			r.Release()
		}
	}()
	for k, r := range recs {
		cols := make([]arrow.Array, r.NumCols())
		ok := true
		for i := range cols {
			cols[i] = r.Column(i)
			ok = ok && arrow.TypeEqual(cols[i].DataType(), schema.Field(i).Type)
		}
		if !ok {
			for _, r := range recs[k:] {
				r.Release()
			}
			return fmt.Errorf("INSERT INTO %s: the query's columns %s do not have the table's types %s: %w", st.Name, r.Schema(), schema, ErrType)
		}
		out = append(out, array.NewRecord(schema, cols, r.NumRows()))
		r.Release()
	}
	if st.Overwrite {
		return st.Table.(Overwriter).Overwrite(out...)
	}
	return st.Table.Append(out...)
}
