package plan

import (
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/sql"
)

// The builder functions below are the DataFrame operations of the
// conformance scenarios (streamtest/testdata/conformance/FORMAT.md). They
// take expressions as strings in the SQL dialect's syntax (docs/sql.md), resolve them
// against the input node's columns (qualified by Alias or the scanned
// table's name) and return a new node; the SQL analyzer builds its plans
// with the same code. Errors name the bad input and suggest close names.

// Builder builds DataFrame operations under a session's settings: its
// Options (ANSI mode, time zone, legacy switches) decide coercions while
// expressions resolve and are stamped into the new operators' casts and
// calls, as AnalyzeWith does for SQL, and its functions resolve user
// function calls. So a DataFrame expression means what the same
// expression means in the session's SQL. The zero Builder uses the
// defaults (ANSI, UTC, no user functions); the package-level functions
// below are the zero Builder's methods.
type Builder struct {
	opts  Options
	set   bool
	funcs FunctionCatalog
}

// NewBuilder returns a Builder with the session's options and user
// functions (funcs may be nil).
func NewBuilder(opts Options, funcs FunctionCatalog) Builder {
	return Builder{opts: opts, set: true, funcs: funcs}
}

// budget returns the analysis settings of one operation: nil (the
// defaults) for the zero Builder.
func (bd Builder) budget() *budget {
	if !bd.set && bd.funcs == nil {
		return nil
	}
	b := newBudget(context.Background(), 0)
	if bd.set {
		b.setOptions(bd.opts)
	}
	b.funcs = bd.funcs
	return b
}

// finish stamps the builder's options into the operators an operation
// added on top of inputs (the inputs were stamped when they were built).
func (bd Builder) finish(n Node, err error, inputs ...Node) (Node, error) {
	if err != nil || !bd.set {
		return n, err
	}
	return applyOptionsAbove(n, bd.opts, inputs)
}

// Read returns the streaming scan of source name, or the plan of the
// streaming view name.
func Read(cat Catalog, name string) (Node, error) { return readNamed(cat, name, true) }

// ReadStatic returns the batch scan of table name, or the plan of the
// view name (spark.table reads views as FROM does).
func ReadStatic(cat Catalog, name string) (Node, error) { return readNamed(cat, name, false) }

func readNamed(cat Catalog, name string, stream bool) (Node, error) {
	a := &analyzer{cat: cat}
	if v := a.view(name); v != nil {
		if stream != v.Streaming() {
			if stream {
				return nil, errorAt(sql.Pos{}, ErrStreaming, "View %s is not streaming: read it as a table.", backquote(name))
			}
			return nil, errorAt(sql.Pos{}, ErrStreaming, "View %s reads a stream: read it with readStream.", backquote(name))
		}
		qual := name
		if i := strings.LastIndexByte(qual, '.'); i >= 0 {
			qual = qual[i+1:]
		}
		return &SubqueryAlias{Input: v.Plan, Alias: qual}, nil
	}
	return a.scan(sql.Pos{}, name, stream)
}

// Alias names input so that its columns resolve as name.col.
func Alias(input Node, name string) Node { return &SubqueryAlias{Input: input, Alias: name} }

func wrap(what string, err error) error {
	return fmt.Errorf("%s: %w", what, err)
}

// ResolveExpr resolves one expression over input's columns.
func (bd Builder) ResolveExpr(input Node, expr string) (Expr, error) {
	e, err := sql.ParseExpr(expr)
	if err != nil {
		return nil, wrap(fmt.Sprintf("expression %q", expr), err)
	}
	r := &resolver{b: bd.budget(), sc: scopeOf(input)}
	x, err := r.expr(e)
	if err != nil {
		return nil, wrap(fmt.Sprintf("expression %q", expr), err)
	}
	return x, nil
}

// ResolveExpr is Builder{}.ResolveExpr.
func ResolveExpr(input Node, expr string) (Expr, error) { return Builder{}.ResolveExpr(input, expr) }

func parseItems(items []string) ([]*sql.SelectItem, error) {
	out := make([]*sql.SelectItem, len(items))
	for i, s := range items {
		it, err := sql.ParseSelectItem(s)
		if err != nil {
			return nil, wrap(fmt.Sprintf("select item %q", s), err)
		}
		out[i] = it
	}
	return out, nil
}

// Select is select(items...): each item is "expr [AS name]", * or t.*.
// An item may be explode(...) (one per select) or window(...); aggregate
// items make it a global aggregation, as in Spark.
func (bd Builder) Select(input Node, items ...string) (Node, error) {
	its, err := parseItems(items)
	if err != nil {
		return nil, err
	}
	sc, err := selectBlock(scopeOf(input), selectSpec{items: its, b: bd.budget()})
	if err != nil {
		return nil, wrap("select "+quoteList(items), err)
	}
	return bd.finish(sc.node, nil, input)
}

// Select is Builder{}.Select.
func Select(input Node, items ...string) (Node, error) { return Builder{}.Select(input, items...) }

// SelectExprs projects already resolved expressions.
func SelectExprs(input Node, items ...NamedExpr) (Node, error) {
	return NewProject(input, items)
}

// Where is filter(cond) / where(cond).
func (bd Builder) Where(input Node, cond string) (Node, error) {
	e, err := sql.ParseExpr(cond)
	if err != nil {
		return nil, wrap(fmt.Sprintf("filter %q", cond), err)
	}
	r := &resolver{b: bd.budget(), sc: scopeOf(input), clause: "WHERE"}
	c, err := r.expr(e)
	if err == nil {
		c, err = requireBoolean(e.Position(), "filter", c)
	}
	if err != nil {
		return nil, wrap(fmt.Sprintf("filter %q", cond), err)
	}
	f, err := NewFilter(input, c)
	if err != nil {
		return nil, err
	}
	return bd.finish(f, nil, input)
}

// Where is Builder{}.Where.
func Where(input Node, cond string) (Node, error) { return Builder{}.Where(input, cond) }

// WithColumn is withColumn(name, expr): it replaces a column of that name
// (case-insensitively) in place, or appends a new one.
func (bd Builder) WithColumn(input Node, name, expr string) (Node, error) {
	e, err := sql.ParseExpr(expr)
	if err != nil {
		return nil, wrap(fmt.Sprintf("withColumn %q", name), err)
	}
	sc := scopeOf(input)
	special := map[sql.Expr]Expr{}
	r := &resolver{b: bd.budget(), sc: sc, clause: "withColumn", special: special}
	var x Expr
	if f, ok := e.(*sql.FuncCall); ok && (strings.EqualFold(f.Name.Name, "window") || isGenerator(f.Name.Name)) {
		// window and explode add rows: go through a select.
		s := input.Schema()
		items := []string{}
		for _, fl := range s.Fields() {
			if !strings.EqualFold(fl.Name, name) {
				items = append(items, "`"+strings.ReplaceAll(fl.Name, "`", "``")+"`")
			}
		}
		items = append(items, expr+" AS `"+strings.ReplaceAll(name, "`", "``")+"`")
		return bd.Select(input, items...)
	}
	if x, err = r.expr(e); err != nil {
		return nil, wrap(fmt.Sprintf("withColumn %q", name), err)
	}
	s := input.Schema()
	exprs := make([]NamedExpr, 0, s.NumFields()+1)
	replaced := false
	for i, f := range s.Fields() {
		if strings.EqualFold(f.Name, name) {
			exprs = append(exprs, NamedExpr{Name: name, Expr: x})
			replaced = true
			continue
		}
		exprs = append(exprs, NamedExpr{Name: f.Name, Expr: ColumnOf(s, i)})
	}
	if !replaced {
		exprs = append(exprs, NamedExpr{Name: name, Expr: x})
	}
	n, err := NewProject(input, exprs)
	return bd.finish(n, err, input)
}

// WithColumn is Builder{}.WithColumn.
func WithColumn(input Node, name, expr string) (Node, error) {
	return Builder{}.WithColumn(input, name, expr)
}

// ToDF is toDF(names...): renames every column by position.
func ToDF(input Node, names ...string) (Node, error) {
	n, err := toDF(input, names, sql.Pos{})
	if err != nil {
		return nil, wrap("toDF", err)
	}
	return n, nil
}

// WithWatermark is withWatermark(column, delay): delay is an interval
// string such as "10 seconds".
func (bd Builder) WithWatermark(input Node, column, delay string) (Node, error) {
	what := fmt.Sprintf("withWatermark(%q, %q)", column, delay)
	e, err := sql.ParseExpr(column)
	if err != nil {
		return nil, wrap(what, err)
	}
	r := &resolver{b: bd.budget(), sc: scopeOf(input), clause: "withWatermark"}
	x, err := r.expr(e)
	if err != nil {
		return nil, wrap(what, err)
	}
	c, ok := x.(*ColumnRef)
	if !ok {
		return nil, wrap(what, fmt.Errorf("%s is not a column: %w", x, ErrType))
	}
	iv, err := sql.ParseInterval(delay)
	if err != nil {
		return nil, wrap(what, fmt.Errorf("%v: %w", err, ErrType))
	}
	ms, err := delayMs(iv)
	if err != nil {
		return nil, wrap(what, fmt.Errorf("%v: %w", err, ErrType))
	}
	w, err := NewEventTimeWatermark(input, c.Index, ms)
	if err != nil {
		return nil, wrap(what, err)
	}
	return w, nil
}

// WithWatermark is Builder{}.WithWatermark.
func WithWatermark(input Node, column, delay string) (Node, error) {
	return Builder{}.WithWatermark(input, column, delay)
}

// GroupBy is groupBy(keys...).agg(aggs...): keys are "expr [AS name]"
// (window(...) and session_window(...) included), aggs aggregate items
// such as "count(*) AS count". The output is the keys then the
// aggregates.
func (bd Builder) GroupBy(input Node, keys []string, aggs []string) (Node, error) {
	what := "groupBy " + quoteList(keys) + ".agg " + quoteList(aggs)
	kits, err := parseItems(keys)
	if err != nil {
		return nil, wrap(what, err)
	}
	aits, err := parseItems(aggs)
	if err != nil {
		return nil, wrap(what, err)
	}
	groupBy := make([]sql.Expr, len(kits))
	for i, k := range kits {
		groupBy[i] = k.Expr
		if k.Alias == nil {
			if _, ok := k.Expr.(*sql.FuncCall); ok {
				// window(...) without an alias is named window, as Spark.
				continue
			}
		}
	}
	spec := selectSpec{items: append(kits, aits...), groupBy: groupBy, grouped: true, b: bd.budget()}
	sc, err := selectBlock(scopeOf(input), spec)
	if err != nil {
		return nil, wrap(what, err)
	}
	return bd.finish(sc.node, nil, input)
}

// GroupBy is Builder{}.GroupBy.
func GroupBy(input Node, keys []string, aggs []string) (Node, error) {
	return Builder{}.GroupBy(input, keys, aggs)
}

// DropDuplicates is dropDuplicates(cols...) (all columns when none), or
// with withinWatermark dropDuplicatesWithinWatermark.
func DropDuplicates(input Node, cols []string, withinWatermark bool) (Node, error) {
	sc := scopeOf(input)
	keys := make([]int, 0, len(cols))
	for _, c := range cols {
		e, err := sql.ParseExpr(c)
		if err != nil {
			return nil, wrap(fmt.Sprintf("dropDuplicates %q", c), err)
		}
		ref, ok := e.(*sql.ColumnRef)
		if !ok {
			return nil, wrap(fmt.Sprintf("dropDuplicates %q", c), fmt.Errorf("not a column name: %w", ErrType))
		}
		x, err := sc.lookup(ref.Parts, ref.Pos)
		if err != nil {
			return nil, wrap(fmt.Sprintf("dropDuplicates %q", c), err)
		}
		col, ok := x.(*ColumnRef)
		if !ok {
			return nil, wrap(fmt.Sprintf("dropDuplicates %q", c), fmt.Errorf("%s is a struct field, not a column: %w", c, ErrType))
		}
		keys = append(keys, col.Index)
	}
	if withinWatermark && len(EventTimeColumns(input.Schema())) == 0 {
		return nil, fmt.Errorf("dropDuplicatesWithinWatermark: the input has no event-time column; define a watermark with withWatermark first: %w", ErrStreaming)
	}
	return &Deduplicate{Input: input, Keys: keys, WithinWatermark: withinWatermark}, nil
}

// ParseJoinType maps the DataFrame API's join type names (inner,
// left_outer, left, right_outer, full_outer, outer, full, left_semi, semi,
// left_anti, anti, cross) to a JoinType.
func ParseJoinType(s string) (JoinType, error) {
	switch strings.ToLower(strings.ReplaceAll(strings.TrimSpace(s), " ", "_")) {
	case "", "inner", "cross":
		return InnerJoin, nil
	case "left_outer", "left", "leftouter":
		return LeftOuterJoin, nil
	case "right_outer", "right", "rightouter":
		return RightOuterJoin, nil
	case "full_outer", "outer", "full", "fullouter":
		return FullOuterJoin, nil
	case "left_semi", "semi", "leftsemi":
		return LeftSemiJoin, nil
	case "left_anti", "anti", "leftanti":
		return LeftAntiJoin, nil
	}
	return 0, fmt.Errorf("unsupported join type %q (supported: inner, cross, left_outer, right_outer, full_outer, left_semi, left_anti): %w", s, ErrUnsupported)
}

// JoinOn is join(right, expr, type): on is a condition over both sides
// (qualified names come from Alias or the scanned tables).
func (bd Builder) JoinOn(left, right Node, on string, joinType string) (Node, error) {
	what := fmt.Sprintf("join on %q", on)
	typ, err := ParseJoinType(joinType)
	if err != nil {
		return nil, wrap(what, err)
	}
	l, r := scopeOf(left), scopeOf(right)
	var cond Expr
	if strings.TrimSpace(on) != "" {
		e, err := sql.ParseExpr(on)
		if err != nil {
			return nil, wrap(what, err)
		}
		both := &scope{node: newJoinInput(left, right), cols: append(append([]scopeCol(nil), l.cols...), r.cols...)}
		c, err := (&resolver{b: bd.budget(), sc: both, clause: "join condition"}).expr(e)
		if err == nil {
			cond, err = requireBoolean(e.Position(), "join condition", c)
		}
		if err != nil {
			return nil, wrap(what, err)
		}
	}
	sc, err := joinScopes(l, r, typ, cond)
	if err != nil {
		return nil, wrap(what, err)
	}
	return bd.finish(sc.node, nil, left, right)
}

// JoinOn is Builder{}.JoinOn.
func JoinOn(left, right Node, on string, joinType string) (Node, error) {
	return Builder{}.JoinOn(left, right, on, joinType)
}

// JoinUsing is join(right, Seq(cols...), type): an equi-join on columns
// of the same name; the output has them once, first.
func (bd Builder) JoinUsing(left, right Node, using []string, joinType string) (Node, error) {
	what := "join using " + quoteList(using)
	typ, err := ParseJoinType(joinType)
	if err != nil {
		return nil, wrap(what, err)
	}
	if len(using) == 0 {
		return nil, wrap(what, fmt.Errorf("no columns: %w", ErrType))
	}
	sc, err := joinUsing(scopeOf(left), scopeOf(right), typ, using, sql.Pos{}, false)
	if err != nil {
		return nil, wrap(what, err)
	}
	return bd.finish(sc.node, nil, left, right)
}

// JoinUsing is Builder{}.JoinUsing.
func JoinUsing(left, right Node, using []string, joinType string) (Node, error) {
	return Builder{}.JoinUsing(left, right, using, joinType)
}

// UnionAll is union(others...): by position, widening column types.
func (bd Builder) UnionAll(inputs ...Node) (Node, error) {
	if len(inputs) == 0 {
		return nil, fmt.Errorf("union of nothing: %w", ErrType)
	}
	n, err := unionOf(sql.Pos{}, inputs)
	if err != nil {
		return nil, wrap("union", err)
	}
	return bd.finish(n, nil, inputs...)
}

// UnionAll is Builder{}.UnionAll.
func UnionAll(inputs ...Node) (Node, error) { return Builder{}.UnionAll(inputs...) }

// WithLimit is limit(n).
func WithLimit(input Node, n int64) (Node, error) {
	if n < 0 {
		return nil, fmt.Errorf("limit: The limit expression must be equal to or greater than 0, but got %d: %w", n, ErrType)
	}
	return &Limit{Input: input, N: n}, nil
}

// OrderBy is orderBy(items...): "expr [ASC|DESC] [NULLS FIRST|LAST]".
func (bd Builder) OrderBy(input Node, items ...string) (Node, error) {
	sc := scopeOf(input)
	r := &resolver{b: bd.budget(), sc: sc, clause: "ORDER BY"}
	keys := make([]SortKey, len(items))
	for i, s := range items {
		o, err := sql.ParseOrderItem(s)
		if err != nil {
			return nil, wrap(fmt.Sprintf("orderBy %q", s), err)
		}
		e, err := r.expr(o.Expr)
		if err != nil {
			return nil, wrap(fmt.Sprintf("orderBy %q", s), err)
		}
		keys[i] = SortKey{Expr: e, Desc: o.Desc, Nulls: nullOrder(o.Nulls)}
	}
	if len(keys) == 0 {
		return input, nil
	}
	return bd.finish(&Sort{Input: input, Keys: keys}, nil, input)
}

// OrderBy is Builder{}.OrderBy.
func OrderBy(input Node, items ...string) (Node, error) { return Builder{}.OrderBy(input, items...) }

// FlatMapSpec describes groupByKey(key).flatMapGroupsWithState(...).
type FlatMapSpec struct {
	// Key is the grouping expression ("expr [AS name]").
	Key string
	// Func is the engine's handle for the user function; FuncName names
	// it in EXPLAIN.
	Func     any
	FuncName string
	// OutputSchema is the schema of the rows the function returns.
	OutputSchema *arrow.Schema
	// Mode is the function's output mode (Update or Append; Update for
	// mapGroupsWithState).
	Mode    OutputMode
	Timeout GroupStateTimeout
	// MapGroups selects mapGroupsWithState (one output row per call).
	MapGroups bool
}

// FlatMapGroups is groupByKey(...).flatMapGroupsWithState(...) or
// mapGroupsWithState(...).
func (bd Builder) FlatMapGroups(input Node, spec FlatMapSpec) (Node, error) {
	what := fmt.Sprintf("flatMapGroupsWithState(key %q)", spec.Key)
	if spec.OutputSchema == nil {
		return nil, wrap(what, fmt.Errorf("no output schema: %w", ErrType))
	}
	it, err := sql.ParseSelectItem(spec.Key)
	if err != nil {
		return nil, wrap(what, err)
	}
	r := &resolver{b: bd.budget(), sc: scopeOf(input), clause: "groupByKey"}
	k, err := r.expr(it.Expr)
	if err != nil {
		return nil, wrap(what, err)
	}
	name := AutoName(k)
	if it.Alias != nil {
		name = it.Alias.Name
	}
	if spec.MapGroups {
		spec.Mode = Update
	}
	if spec.Mode == Complete {
		return nil, wrap(what, fmt.Errorf("the function's output mode must be Update or Append, not Complete: %w", ErrStreaming))
	}
	return bd.finish(&FlatMapGroupsWithState{Input: input, Keys: []NamedExpr{{Name: name, Expr: k}}, Func: spec.Func, FuncName: spec.FuncName,
		OutputSchema: spec.OutputSchema, Mode: spec.Mode, Timeout: spec.Timeout, MapGroups: spec.MapGroups}, nil, input)
}

// FlatMapGroups is Builder{}.FlatMapGroups.
func FlatMapGroups(input Node, spec FlatMapSpec) (Node, error) {
	return Builder{}.FlatMapGroups(input, spec)
}

func quoteList(items []string) string {
	q := make([]string, len(items))
	for i, s := range items {
		q[i] = fmt.Sprintf("%q", s)
	}
	return "[" + strings.Join(q, ", ") + "]"
}
