package plan

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// Statement is an analyzed statement: *QueryStatement,
// *ExplainStatement, *StreamingTableStatement or *CommandStatement.
type Statement interface {
	statementPlan()
}

// QueryStatement is an analyzed SELECT: its logical plan.
type QueryStatement struct {
	Plan Node
}

// ExplainStatement is EXPLAIN [EXTENDED] of an analyzed statement.
type ExplainStatement struct {
	Extended bool
	Stmt     Statement
	// Source is the explained statement as canonical SQL (the parsed plan
	// of EXPLAIN EXTENDED).
	Source string
}

// StreamingTableStatement is CREATE [OR REFRESH] STREAMING TABLE name
// [TBLPROPERTIES (...)] AS query, with the query analyzed.
type StreamingTableStatement struct {
	Name       string
	OrRefresh  bool
	Properties map[string]string // keys lower-cased
	Query      Node
}

// CommandStatement is a catalog command the engine executes itself:
// CREATE TABLE, DROP TABLE, SHOW TABLES, DESCRIBE, DESCRIBE HISTORY.
type CommandStatement struct {
	Stmt sql.Statement
}

func (*QueryStatement) statementPlan()          {}
func (*ExplainStatement) statementPlan()        {}
func (*StreamingTableStatement) statementPlan() {}
func (*CommandStatement) statementPlan()        {}

// Analyze resolves a parsed statement against cat (with the default
// AnalyzeOptions; AnalyzeContext takes a context and options).
func Analyze(stmt sql.Statement, cat Catalog) (Statement, error) {
	return analyzeStatement(newBudget(context.Background(), 0), stmt, cat)
}

func analyzeStatement(b *budget, stmt sql.Statement, cat Catalog) (Statement, error) {
	switch s := stmt.(type) {
	case *sql.Query:
		n, err := analyzeQuery(b, s, cat)
		if err != nil {
			return nil, err
		}
		return &QueryStatement{Plan: n}, nil
	case *sql.Explain:
		inner, err := analyzeStatement(b, s.Stmt, cat)
		if err != nil {
			return nil, err
		}
		return &ExplainStatement{Extended: s.Extended, Stmt: inner, Source: sql.Format(s.Stmt)}, nil
	case *sql.CreateStreamingTable:
		n, err := analyzeQuery(b, s.Query, cat)
		if err != nil {
			return nil, err
		}
		props := map[string]string{}
		for _, p := range s.Properties {
			props[strings.ToLower(p.Key)] = p.Value
		}
		return &StreamingTableStatement{Name: joinIdents(s.Name), OrRefresh: s.OrRefresh, Properties: props, Query: n}, nil
	case *sql.CreateView:
		return analyzeCreateView(b, s, cat)
	case *sql.Insert:
		return analyzeInsert(b, s, cat)
	case nil:
		return nil, errors.New("plan: nil statement")
	}
	return &CommandStatement{Stmt: stmt}, nil
}

// AnalyzeWith is Analyze under the session's options (ANSI mode, time
// zone), recorded in every cast and call of the plan. The TBLPROPERTIES of
// CREATE STREAMING TABLE (spark.sql.ansi.enabled,
// spark.sql.session.timeZone) override them for that table's query.
func AnalyzeWith(stmt sql.Statement, cat Catalog, opts Options) (Statement, error) {
	b := newBudget(context.Background(), 0)
	b.setOptions(opts)
	if opts.TimestampNTZ {
		sessionTimestampTypes(stmt)
	}
	st, err := analyzeStatement(b, stmt, cat)
	if err != nil {
		return nil, err
	}
	return stampStatement(st, opts)
}

func stampStatement(st Statement, opts Options) (Statement, error) {
	switch x := st.(type) {
	case *QueryStatement:
		n, err := applyOptions(x.Plan, opts)
		if err != nil {
			return nil, err
		}
		return &QueryStatement{Plan: n}, nil
	case *ExplainStatement:
		inner, err := stampStatement(x.Stmt, opts)
		if err != nil {
			return nil, err
		}
		c := *x
		c.Stmt = inner
		return &c, nil
	case *InsertStatement:
		return stampInsert(x, opts)
	case *StreamingTableStatement:
		o, err := OptionsFromConf(opts, x.Properties)
		if err != nil {
			return nil, err
		}
		n, err := applyOptions(x.Query, o)
		if err != nil {
			return nil, err
		}
		c := *x
		c.Query = n
		return &c, nil
	}
	return st, nil
}

// AnalyzeSQLWith is AnalyzeSQL under opts.
func AnalyzeSQLWith(text string, cat Catalog, opts Options) (Node, error) {
	st, err := sql.Parse(text)
	if err != nil {
		return nil, err
	}
	q, ok := st.(*sql.Query)
	if !ok {
		return nil, errorAt(st.Position(), ErrUnsupported, "Expected a query, got another statement.")
	}
	b := newBudget(context.Background(), 0)
	b.setOptions(opts)
	if opts.TimestampNTZ {
		sessionTimestampTypes(q)
	}
	n, err := analyzeQuery(b, q, cat)
	if err != nil {
		return nil, err
	}
	return applyOptions(n, opts)
}

// AnalyzeSQL parses and analyzes one SELECT statement.
func AnalyzeSQL(text string, cat Catalog) (Node, error) {
	st, err := sql.Parse(text)
	if err != nil {
		return nil, err
	}
	q, ok := st.(*sql.Query)
	if !ok {
		return nil, errorAt(st.Position(), ErrUnsupported, "Expected a query, got another statement.")
	}
	return AnalyzeQuery(q, cat)
}

// AnalyzeQuery resolves a query against cat and returns its logical plan.
func AnalyzeQuery(q *sql.Query, cat Catalog) (Node, error) {
	return analyzeQuery(newBudget(context.Background(), 0), q, cat)
}

func analyzeQuery(b *budget, q *sql.Query, cat Catalog) (Node, error) {
	if !b.legacySwitches().CTECorrected {
		if err := checkNestedCTENames(q); err != nil {
			return nil, err
		}
	}
	if fc, ok := cat.(FunctionCatalog); ok && b != nil {
		b.funcs = fc
	}
	a := &analyzer{cat: cat, b: b}
	sc, err := a.query(q)
	if err != nil {
		return nil, err
	}
	return a.finish(sc)
}

// analyzer holds the state of one statement's analysis.
type analyzer struct {
	cat   Catalog
	b     *budget // context and size limits; nil checks nothing
	ctes  []map[string]*cteDef
	depth int
	// outer holds the enclosing queries' scopes while a subquery is
	// analyzed; subqueries numbers subquery expressions.
	outer      []*outerCtx
	subqueries int
	// cteRegion, region and cteBlocked order CTE lookups under the LEGACY
	// precedence policy (cte_legacy.go).
	cteRegion  []int
	region     int
	cteBlocked int
}

type cteDef struct {
	sc *scope
}

// maxQueryDepth bounds nesting of subqueries and CTEs.
const maxQueryDepth = 200

// finish returns the node of a top-level scope, dropping hidden columns.
func (a *analyzer) finish(sc *scope) (Node, error) {
	hidden := false
	for _, c := range sc.cols {
		hidden = hidden || c.hidden
	}
	if !hidden {
		return sc.node, nil
	}
	return dropHidden(sc)
}

// dropHidden projects away a scope's hidden columns.
func dropHidden(sc *scope) (Node, error) {
	s := sc.node.Schema()
	var exprs []NamedExpr
	for i, c := range sc.cols {
		if !c.hidden {
			exprs = append(exprs, NamedExpr{Name: s.Field(i).Name, Expr: ColumnOf(s, i)})
		}
	}
	return NewProject(sc.node, exprs)
}

func (a *analyzer) lookupCTE(name string) *cteDef {
	k := strings.ToLower(name)
	if a.b.legacySwitches().CTELegacy {
		return a.lookupCTELegacy(k)
	}
	for i := len(a.ctes) - 1; i >= 0; i-- {
		if d, ok := a.ctes[i][k]; ok {
			return d
		}
	}
	return nil
}

// query analyzes a complete query: CTEs, body, ORDER BY and LIMIT.
func (a *analyzer) query(q *sql.Query) (*scope, error) {
	a.depth++
	defer func() { a.depth-- }()
	if a.depth > maxQueryDepth {
		return nil, errorAt(q.Pos, ErrUnsupported, "Queries nest too deeply (more than %d levels).", maxQueryDepth)
	}
	if len(q.With) > 0 {
		a.ctes = append(a.ctes, map[string]*cteDef{})
		a.cteRegion = append(a.cteRegion, a.region)
		defer func() {
			a.ctes = a.ctes[:len(a.ctes)-1]
			a.cteRegion = a.cteRegion[:len(a.cteRegion)-1]
		}()
		for _, c := range q.With {
			k := strings.ToLower(c.Name.Name)
			if _, dup := a.ctes[len(a.ctes)-1][k]; dup {
				return nil, errorAt(c.Pos, ErrAmbiguous, "CTE definition can't have duplicate names: %s.", backquote(c.Name.Name))
			}
			leave := a.enterCTEBody()
			sc, err := a.query(c.Query)
			leave()
			if err != nil {
				return nil, err
			}
			n, err := a.finish(sc)
			if err != nil {
				return nil, err
			}
			if len(c.Columns) > 0 {
				names := make([]string, len(c.Columns))
				for i, id := range c.Columns {
					names[i] = id.Name
				}
				if n, err = toDF(n, names, c.Pos); err != nil {
					return nil, err
				}
			}
			a.ctes[len(a.ctes)-1][k] = &cteDef{sc: &scope{node: n, cols: make([]scopeCol, n.Schema().NumFields())}}
		}
	}
	var sc *scope
	var err error
	// SORT BY is analyzed as ORDER BY (ordinals, aliases, hidden input
	// columns), then its Sort is marked local.
	orderBy := q.OrderBy
	if len(q.SortBy) > 0 {
		orderBy = q.SortBy
	}
	if sel, ok := q.Body.(*sql.Select); ok {
		sc, err = a.selectQuery(sel, orderBy)
	} else {
		if sc, err = a.body(q.Body); err == nil && len(orderBy) > 0 {
			sc, err = a.orderOutput(sc, orderBy)
		}
	}
	if err != nil {
		return nil, err
	}
	if len(q.SortBy) > 0 {
		markLocalSort(sc.node)
	}
	if err := a.distributeBy(sc, q.DistributeBy); err != nil {
		return nil, err
	}
	if q.Limit != nil || q.Offset != nil {
		// Spark's Offset alone keeps every row after the skipped ones.
		l := &Limit{Input: sc.node, N: math.MaxInt64}
		if q.Limit != nil {
			if l.N, err = limitValue(q.Limit, "limit"); err != nil {
				return nil, err
			}
		}
		if q.Offset != nil {
			if l.Offset, err = limitValue(q.Offset, "offset"); err != nil {
				return nil, err
			}
		}
		if l.N != math.MaxInt64 || l.Offset > 0 { // OFFSET 0 alone is no operator
			sc = &scope{node: l, cols: sc.cols}
		}
	}
	return sc, nil
}

// limitValue evaluates a LIMIT or OFFSET expression (what names which): a
// constant non-negative integer, with Spark's INVALID_LIMIT_LIKE_EXPRESSION
// messages.
func limitValue(e sql.Expr, what string) (int64, error) {
	r := &resolver{sc: &scope{node: &Values{schema: emptySchema}}, clause: strings.ToUpper(what)}
	x, err := r.expr(e)
	if err != nil {
		return 0, errorAt(e.Position(), ErrType, "The %s expression must be an integer constant, but got %s.", what, sql.Format(e))
	}
	if !isConstant(x) {
		return 0, errorAt(e.Position(), ErrType, "The %s expression must evaluate to a constant value, but got %s.", what, sql.Format(e))
	}
	if !vector.IsIntegral(x.DataType()) {
		return 0, errorAt(e.Position(), ErrType, "The %s expression must be an integer constant, but got %s.", what, sql.Format(e))
	}
	l, err := foldConstant(x)
	if err != nil {
		return 0, errorAt(e.Position(), ErrType, "The %s expression %s is invalid: %v.", what, sql.Format(e), err)
	}
	var n int64
	switch v := l.Value.(type) {
	case int32:
		n = int64(v)
	case int64:
		n = v
	default:
		return 0, errorAt(e.Position(), ErrType, "The %s expression must not be null.", what)
	}
	if n < 0 {
		return 0, errorAt(e.Position(), ErrType, "The %s expression must be equal to or greater than 0, but got %d.", what, n)
	}
	return n, nil
}

// body analyzes a query body: a select, a union or a nested query.
func (a *analyzer) body(b sql.QueryBody) (*scope, error) {
	switch x := b.(type) {
	case *sql.Select:
		return a.selectQuery(x, nil)
	case *sql.Query:
		return a.query(x)
	case *sql.Union:
		if x.Op != sql.SetUnion {
			return a.setOp(x)
		}
		return a.union(x)
	case *sql.Values:
		return a.values(x)
	}
	return nil, errorAt(b.Position(), ErrUnsupported, "Unsupported query body.")
}

func (a *analyzer) selectQuery(s *sql.Select, orderBy []*sql.OrderItem) (*scope, error) {
	in, err := a.fromClause(s.From, s.Pos)
	if err != nil {
		return nil, err
	}
	groupBy := s.GroupBy
	if s.GroupByAll {
		if groupBy, err = groupByAll(s); err != nil {
			return nil, err
		}
	}
	return selectBlock(in, selectSpec{
		b: a.b, a: a,
		pos: s.Pos, items: s.Items, where: s.Where, groupBy: groupBy, grouped: len(groupBy) > 0 || s.GroupingSets != nil || s.GroupByAll,
		groupingSets: s.GroupingSets, groupByListLen: s.GroupByListLen,
		having: s.Having, orderBy: orderBy, distinct: s.Distinct,
		windows: s.Windows, qualify: s.Qualify,
	})
}

// orderOutput sorts a union's (or nested query's) output: ORDER BY may
// name output columns only.
func (a *analyzer) orderOutput(sc *scope, items []*sql.OrderItem) (*scope, error) {
	out := sc.node.Schema()
	r := &resolver{b: a.b, sc: sc, clause: "ORDER BY"}
	keys := make([]SortKey, len(items))
	for i, o := range items {
		if k, ok, err := ordinalOf(o.Expr, out.NumFields(), "ORDER BY", a.b.legacySwitches().NoOrderByOrdinal); err != nil {
			return nil, err
		} else if ok {
			keys[i] = SortKey{Expr: ColumnOf(out, k), Desc: o.Desc, Nulls: nullOrder(o.Nulls)}
			continue
		}
		e, err := r.expr(o.Expr)
		if err != nil {
			return nil, err
		}
		keys[i] = SortKey{Expr: e, Desc: o.Desc, Nulls: nullOrder(o.Nulls)}
	}
	return &scope{node: &Sort{Input: sc.node, Keys: keys}, cols: sc.cols}, nil
}

// union analyzes left UNION [ALL] right; chains of UNION ALL become one
// Union node.
func (a *analyzer) union(u *sql.Union) (*scope, error) {
	var inputs []sql.QueryBody
	var flatten func(b sql.QueryBody)
	flatten = func(b sql.QueryBody) {
		if x, ok := b.(*sql.Union); ok && x.Op == sql.SetUnion && x.All && u.All {
			flatten(x.Left)
			flatten(x.Right)
			return
		}
		inputs = append(inputs, b)
	}
	if u.All {
		flatten(u.Left)
		flatten(u.Right)
	} else {
		inputs = []sql.QueryBody{u.Left, u.Right}
	}
	nodes := make([]Node, len(inputs))
	for i, in := range inputs {
		sc, err := a.body(in)
		if err != nil {
			return nil, err
		}
		if nodes[i], err = a.finish(sc); err != nil {
			return nil, err
		}
	}
	if err := a.legacySetOpCheck(u.Pos, nodes); err != nil {
		return nil, err
	}
	n, err := unionOf(u.Pos, nodes)
	if err != nil {
		return nil, err
	}
	if !u.All {
		if n, err = distinctOf(n); err != nil {
			return nil, err
		}
	}
	return &scope{node: n, cols: make([]scopeCol, n.Schema().NumFields())}, nil
}

// unionOf widens the inputs' column types to common types (inserting
// casts) and unions them.
func unionOf(pos sql.Pos, nodes []Node) (Node, error) {
	first := nodes[0].Schema()
	for i, n := range nodes[1:] {
		if n.Schema().NumFields() != first.NumFields() {
			return nil, errorAt(pos, ErrType, "Union can only be performed on tables with the same number of columns, but the first table has %d columns and the %s table has %d columns.",
				first.NumFields(), ordinalWord(i+2), n.Schema().NumFields())
		}
	}
	targets := make([]arrow.DataType, first.NumFields())
	for c := range targets {
		types := make([]arrow.DataType, len(nodes))
		for i, n := range nodes {
			types[i] = n.Schema().Field(c).Type
		}
		t, ok := commonType(types)
		if !ok {
			names := make([]string, len(types))
			for i, t := range types {
				names[i] = vector.TypeName(t)
			}
			return nil, errorAt(pos, ErrType, "Union can only be performed on tables with compatible column types: column %d (%s) has types %s.",
				c+1, backquote(first.Field(c).Name), joinStrings(names))
		}
		if isNullType(t) {
			t = arrow.Null
		}
		targets[c] = t
	}
	dts := unionDTFields(nodes)
	out := make([]Node, len(nodes))
	for i, n := range nodes {
		s := n.Schema()
		need := false
		exprs := make([]NamedExpr, s.NumFields())
		for c := range exprs {
			col := ColumnOf(s, c)
			var e Expr = col
			if !arrow.TypeEqual(s.Field(c).Type, targets[c]) {
				e = castTo(e, targets[c])
				need = true
			} else if col.dt != dts[c] {
				col.dt = dts[c]
				need = true
			}
			exprs[c] = NamedExpr{Name: s.Field(c).Name, Expr: e}
		}
		out[i] = n
		if need {
			p, err := NewProject(n, exprs)
			if err != nil {
				return nil, err
			}
			out[i] = p
		}
	}
	u, err := NewUnion(out...)
	if err != nil {
		return nil, errorAt(pos, ErrType, "%v", trimSentinel(err))
	}
	return u, nil
}

// unionDTFields is, per column, the fields of the day-time interval type
// Spark widens the inputs' types to: the span of all inputs' fields, 0
// (unknown) when one input's are unknown.
func unionDTFields(nodes []Node) []dtFields {
	out := make([]dtFields, nodes[0].Schema().NumFields())
	for c := range out {
		for i, n := range nodes {
			f := dtFieldsOfField(n.Schema().Field(c))
			if f == 0 {
				out[c] = 0
				break
			}
			if i == 0 {
				out[c] = f
				continue
			}
			as, ae := out[c].fields()
			bs, be := f.fields()
			out[c] = knownDT(min(as, bs), max(ae, be))
		}
	}
	return out
}

// toDF renames every column of n by position.
func toDF(n Node, names []string, pos sql.Pos) (Node, error) {
	s := n.Schema()
	if len(names) != s.NumFields() {
		return nil, errorAt(pos, ErrType, "The number of columns doesn't match: old column names (%d): %s; new column names (%d): %s.",
			s.NumFields(), strings.Trim(fieldNames(s), "[]"), len(names), strings.Join(names, ", "))
	}
	exprs := make([]NamedExpr, len(names))
	for i, nm := range names {
		exprs[i] = NamedExpr{Name: nm, Expr: ColumnOf(s, i)}
	}
	return NewProject(n, exprs)
}

// versionOf reads VERSION AS OF's literal.
func versionOf(l *sql.Literal) (int64, error) {
	v, err := strconv.ParseInt(strings.TrimSpace(l.Value), 10, 64)
	if err != nil || v < 0 {
		return 0, errorAt(l.Pos, ErrType, "VERSION AS OF needs a non-negative epoch number, got %s.", sql.Format(l))
	}
	return v, nil
}

// delayMs converts a watermark delay as Spark does: a month counts 31
// days.
func delayMs(iv sql.Interval) (int64, error) {
	const day = int64(86_400_000)
	ms := int64(iv.Months)*31*day + int64(iv.Days)*day + iv.Micros/1000
	if iv.Months > 1<<20 || iv.Months < -(1<<20) {
		return 0, fmt.Errorf("the delay %v is out of range", iv)
	}
	return ms, nil
}
