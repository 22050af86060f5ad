package plan

import (
	"fmt"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/sql"
)

// View is a temporary view: a name for an analyzed query. Reading it
// inlines the query's plan (as a CTE is inlined), so it shows the current
// rows of the tables it reads, as Spark's temporary views do.
type View struct {
	Name string
	Plan Node
}

// Schema implements Table.
func (v *View) Schema() *arrow.Schema { return v.Plan.Schema() }

// Streaming implements Table: a view over a streaming source is read with
// STREAM like the source.
func (v *View) Streaming() bool { return v.Plan.IsStreaming() }

// CreateViewStatement is an analyzed CREATE [OR REPLACE] TEMPORARY VIEW:
// the session registers View in its catalog.
type CreateViewStatement struct {
	View        *View
	OrReplace   bool
	IfNotExists bool
}

func (*CreateViewStatement) statementPlan() {}

// analyzeCreateView analyzes the view's query and applies its column list.
func analyzeCreateView(b *budget, s *sql.CreateView, cat Catalog) (*CreateViewStatement, error) {
	if s.OrReplace && s.IfNotExists {
		return nil, errorAt(s.Pos, ErrType, "CREATE VIEW with both IF NOT EXISTS and REPLACE is not allowed.")
	}
	n, err := analyzeQuery(b, s.Query, cat)
	if err != nil {
		return nil, err
	}
	if s.Columns != nil {
		names := make([]string, len(s.Columns))
		for i, c := range s.Columns {
			names[i] = c.Name
		}
		if n, err = toDF(n, names, s.Pos); err != nil {
			return nil, err
		}
	}
	name := joinIdents(s.Name)
	if s.Global {
		// Spark keeps global temporary views in the global_temp database:
		// read as global_temp.name only.
		if len(s.Name) > 2 || len(s.Name) == 2 && !strings.EqualFold(s.Name[0].Name, GlobalTempDatabase) {
			return nil, errorAt(s.Pos, ErrType, "[TEMP_VIEW_NAME_TOO_MANY_NAME_PARTS] A global temporary view is named name or global_temp.name, not %s.", name)
		}
		name = GlobalTempDatabase + "." + s.Name[len(s.Name)-1].Name
	}
	return &CreateViewStatement{
		View:      &View{Name: name, Plan: n},
		OrReplace: s.OrReplace, IfNotExists: s.IfNotExists,
	}, nil
}

// values analyzes VALUES rows: each row is a SELECT of its expressions
// without FROM, named col1, col2, ..., and the rows are a UNION ALL, so
// that every column gets the rows' common type as in Spark's inline
// tables.
func (a *analyzer) values(v *sql.Values) (*scope, error) {
	if len(v.Rows) == 0 {
		return nil, errorAt(v.Pos, ErrType, "VALUES needs at least one row.")
	}
	width := len(v.Rows[0])
	nodes := make([]Node, len(v.Rows))
	for i, row := range v.Rows {
		if len(row) != width {
			return nil, errorAt(v.Pos, ErrType, "[INVALID_INLINE_TABLE.NUM_COLUMNS_MISMATCH] Invalid inline table: expected %d columns but found %d columns in row %d.", width, len(row), i)
		}
		items := make([]*sql.SelectItem, len(row))
		for c, e := range row {
			if err := checkInlineValue(e); err != nil {
				return nil, err
			}
			alias := sql.Ident{Pos: e.Position(), Name: fmt.Sprintf("col%d", c+1)}
			items[c] = &sql.SelectItem{Pos: e.Position(), Expr: e, Alias: &alias}
		}
		sc, err := a.selectQuery(&sql.Select{Pos: v.Pos, Items: items}, nil)
		if err != nil {
			return nil, err
		}
		if nodes[i], err = a.finish(sc); err != nil {
			return nil, err
		}
	}
	n := nodes[0]
	if len(nodes) > 1 {
		var err error
		if n, err = unionOf(v.Pos, nodes); err != nil {
			return nil, err
		}
	}
	return &scope{node: n, cols: make([]scopeCol, n.Schema().NumFields())}, nil
}

// checkInlineValue refuses what an inline table may not hold: column
// references, subqueries and aggregates (Spark: "cannot evaluate
// expression ... in inline table definition").
func checkInlineValue(e sql.Expr) error {
	var bad sql.Node
	sql.Inspect(e, func(n sql.Node) bool {
		if bad != nil {
			return false
		}
		switch x := n.(type) {
		case *sql.ColumnRef:
			bad = x
		case *sql.FuncCall:
			if IsAggregateFunction(x.Name.Name) {
				bad = x
			}
		}
		return bad == nil
	})
	if bad != nil {
		return errorAt(bad.Position(), ErrType, "[INVALID_INLINE_TABLE.CANNOT_EVALUATE_EXPRESSION_IN_INLINE_TABLE] Invalid inline table: cannot evaluate the expression %s in inline table definition.", strings.TrimSpace(sql.Format(bad)))
	}
	return nil
}
