package plan

import (
	"context"
	"fmt"
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
		t.records = append(t.records, r)
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
	Name  string
	Table Inserter
	Plan  Node
}

func (*InsertStatement) statementPlan() {}

func analyzeInsert(b *budget, s *sql.Insert, cat Catalog) (*InsertStatement, error) {
	name := joinIdents(s.Name)
	if cat == nil {
		return nil, errorAt(s.Pos, errTableUnresolved, "The table or view %s cannot be found (no catalog).", backquote(name))
	}
	t, err := cat.Table(name)
	if err != nil {
		return nil, &Error{Pos: s.Pos, Msg: err.Error(), Err: err}
	}
	ins, ok := t.(Inserter)
	if !ok {
		return nil, errorAt(s.Pos, ErrUnsupported, "INSERT INTO %s is not supported: only tables created with CREATE TABLE ... USING parquet (without a path) accept inserts.", backquote(name))
	}
	n, err := analyzeQuery(b, s.Query, cat)
	if err != nil {
		return nil, err
	}
	want := ins.Schema()
	got := n.Schema()
	if got.NumFields() != want.NumFields() {
		return nil, errorAt(s.Pos, ErrType, "Cannot write to %s, the data to be inserted has %d columns, the table has %d columns.", backquote(name), got.NumFields(), want.NumFields())
	}
	exprs := make([]NamedExpr, want.NumFields())
	for i, f := range want.Fields() {
		var e Expr = ColumnOf(got, i)
		if !arrow.TypeEqual(f.Type, e.DataType()) {
			e = castTo(e, f.Type)
		}
		exprs[i] = NamedExpr{Name: f.Name, Expr: e}
	}
	p, err := NewProject(n, exprs)
	if err != nil {
		return nil, err
	}
	return &InsertStatement{Name: name, Table: ins, Plan: p}, nil
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
	return st.Table.Append(out...)
}
