package plan

import (
	"github.com/apache/arrow/go/v17/arrow"

	"errors"
	"strings"

	"github.com/arrowstream/arrowstream/sql"
)

// oneRow is the input of a SELECT without FROM: one row, no columns.
func oneRow() *scope {
	return &scope{node: &Values{Rows: [][]any{{}}, schema: emptySchema}}
}

// fromClause analyzes a FROM clause; comma-separated items are joined
// without a condition.
func (a *analyzer) fromClause(items []sql.FromItem, pos sql.Pos) (*scope, error) {
	if len(items) == 0 {
		return oneRow(), nil
	}
	sc, err := a.fromItem(items[0])
	if err != nil {
		return nil, err
	}
	for _, it := range items[1:] {
		if x, ok := it.(*sql.SubqueryRef); ok && x.Lateral {
			if sc, err = a.lateralJoin(sc, x, InnerJoin, nil); err != nil {
				return nil, err
			}
			continue
		}
		r, err := a.fromItem(it)
		if err != nil {
			return nil, err
		}
		if sc, err = joinScopes(sc, r, InnerJoin, nil); err != nil {
			return nil, err
		}
	}
	return sc, nil
}

func (a *analyzer) fromItem(it sql.FromItem) (*scope, error) {
	switch x := it.(type) {
	case *sql.TableRef:
		return a.tableRef(x)
	case *sql.SubqueryRef:
		sc, err := a.query(x.Query)
		if err != nil {
			return nil, err
		}
		return a.subqueryRefScope(x, sc)
	case *sql.TableFunc:
		sc, err := a.tableFunc(x)
		if err != nil || x.Columns == nil {
			return sc, err
		}
		// range(-5, 6) t(i): the alias names the columns too, by position.
		return renamedByAlias(sc, x.Columns, x.Alias, x.Alias.Name)
	case *sql.Join:
		return a.join(x)
	case *sql.Pivot:
		return a.pivot(x)
	case *sql.Unpivot:
		return a.unpivot(x)
	case *sql.LateralView:
		return a.lateralView(x)
	}
	return nil, errorAt(it.Position(), ErrUnsupported, "Unsupported FROM item.")
}

// subqueryRefScope is the scope of the FROM item x whose query analyzed
// to sc: its column aliases, watermark and alias applied.
func (a *analyzer) subqueryRefScope(x *sql.SubqueryRef, sc *scope) (*scope, error) {
	n, err := a.finish(sc)
	if err != nil {
		return nil, err
	}
	if x.Columns != nil {
		names := make([]string, len(x.Columns))
		for i, c := range x.Columns {
			names[i] = c.Name
		}
		if n, err = toDF(n, names, x.Pos); err != nil {
			return nil, err
		}
	}
	sc = &scope{node: n, cols: make([]scopeCol, n.Schema().NumFields())}
	if x.Watermark != nil {
		if sc, err = applyWatermark(sc, x.Watermark); err != nil {
			return nil, err
		}
	}
	if x.Alias != nil {
		return withQualifier(&SubqueryAlias{Input: sc.node, Alias: x.Alias.Name}, x.Alias.Name), nil
	}
	return sc, nil
}

func (a *analyzer) tableRef(x *sql.TableRef) (*scope, error) {
	name := joinIdents(x.Name)
	qual := x.Name[len(x.Name)-1].Name
	if x.Alias != nil {
		qual = x.Alias.Name
	}
	var sc *scope
	if d := a.lookupCTE(name); d != nil && len(x.Name) == 1 && !x.Stream && x.Version == nil {
		sc = withQualifier(&SubqueryAlias{Input: d.sc.node, Alias: qual}, qual)
	} else if v := a.view(name); v != nil {
		if x.Version != nil {
			return nil, errorAt(x.Version.Pos, ErrUnsupported, "View %s does not support VERSION AS OF (time travel needs a sink table).", backquote(name))
		}
		if x.Stream != v.Streaming() {
			if x.Stream {
				return nil, errorAt(x.Pos, ErrStreaming, "View %s is not streaming: read it without STREAM.", backquote(name))
			}
			return nil, errorAt(x.Pos, ErrStreaming, "View %s reads a stream: read it with STREAM %s.", backquote(name), name)
		}
		sc = withQualifier(&SubqueryAlias{Input: v.Plan, Alias: qual}, qual)
	} else {
		scan, err := a.scan(x.Pos, name, x.Stream)
		if err != nil {
			return nil, err
		}
		if x.Version != nil {
			v, err := versionOf(x.Version)
			if err != nil {
				return nil, err
			}
			if _, ok := scan.Table.(VersionedTable); !ok || x.Stream {
				return nil, errorAt(x.Version.Pos, ErrUnsupported, "Table %s does not support VERSION AS OF (time travel needs a sink table).", backquote(name))
			}
			scan.Read, scan.Version = ReadVersion, v
		}
		sc = withQualifier(scan, qual)
	}
	if dc, ok := a.cat.(DatabaseCatalog); ok && x.Alias == nil && (len(x.Name) > 1 || a.lookupCTE(name) == nil) {
		if db := dc.TableDatabase(name); db != "" {
			for i := range sc.cols {
				sc.cols[i].db = db
			}
		}
	}
	if x.Watermark != nil {
		var err error
		if sc, err = applyWatermark(sc, x.Watermark); err != nil {
			return nil, err
		}
		for i := range sc.cols {
			sc.cols[i].qual = qual
		}
	}
	if x.Columns != nil {
		// t AS x(a, b): the alias renames the columns too, by position.
		return renamedByAlias(sc, x.Columns, x.Alias, qual)
	}
	return sc, nil
}

// view returns the catalog's view called name, or nil.
func (a *analyzer) view(name string) *View {
	if a.cat == nil {
		return nil
	}
	t, err := a.cat.Table(name)
	if err != nil {
		return nil
	}
	v, _ := t.(*View)
	return v
}

// scan looks a table up in the catalog.
func (a *analyzer) scan(pos sql.Pos, name string, stream bool) (*Scan, error) {
	if a.cat == nil {
		return nil, errorAt(pos, errTableUnresolved, "The table or view %s cannot be found (no catalog).", backquote(name))
	}
	t, err := a.cat.Table(name)
	if err != nil {
		if errors.Is(err, ErrTableNotFound) {
			var names []string
			if l, ok := a.cat.(TableLister); ok {
				names = l.TableNames()
			}
			for _, m := range a.ctes {
				for k := range m {
					names = append(names, k)
				}
			}
			return nil, errorAt(pos, errTableUnresolved, "The table or view %s cannot be found.%s", backquote(name), didYouMean(name, names))
		}
		return nil, &Error{Pos: pos, Msg: err.Error(), Err: err}
	}
	s, err := NewScan(name, t, stream)
	if err != nil {
		return nil, &Error{Pos: pos, Msg: trimSentinel(err) + ".", Err: err}
	}
	return s, nil
}

// tableFunc analyzes table_changes('name', from[, to]).
func (a *analyzer) tableFunc(x *sql.TableFunc) (*scope, error) {
	if strings.EqualFold(x.Name.Name, "range") {
		return a.rangeTable(x)
	}
	if !strings.EqualFold(x.Name.Name, "table_changes") {
		return nil, errorAt(x.Name.Pos, ErrUnresolved, "Could not resolve %s to a table-valued function.%s", backquote(x.Name.Name), didYouMean(x.Name.Name, []string{"range", "table_changes"}))
	}
	if len(x.Args) < 2 || len(x.Args) > 3 {
		return nil, errorAt(x.Pos, ErrType, "table_changes needs a table name and 1 or 2 epochs, got %d arguments.", len(x.Args))
	}
	nameLit, ok := x.Args[0].(*sql.Literal)
	if !ok || nameLit.Kind != sql.LitString {
		return nil, errorAt(x.Args[0].Position(), ErrType, "The first argument of table_changes must be a table name string, not %s.", sql.Format(x.Args[0]))
	}
	epochs := make([]int64, 2)
	epochs[1] = -1
	for i, e := range x.Args[1:] {
		l, ok := e.(*sql.Literal)
		if !ok || l.Kind != sql.LitInt && l.Kind != sql.LitBigInt {
			return nil, errorAt(e.Position(), ErrType, "The epochs of table_changes must be integer literals, not %s.", sql.Format(e))
		}
		v, err := versionOf(l)
		if err != nil {
			return nil, err
		}
		epochs[i] = v
	}
	scan, err := a.scan(x.Pos, nameLit.Value, false)
	if err != nil {
		return nil, err
	}
	if _, ok := scan.Table.(ChangesTable); !ok {
		return nil, errorAt(x.Pos, ErrUnsupported, "Table %s does not support table_changes (it needs a sink table).", backquote(nameLit.Value))
	}
	scan.Read, scan.From, scan.To = ReadChanges, epochs[0], epochs[1]
	scan.withSchema()
	qual := "table_changes"
	if x.Alias != nil {
		qual = x.Alias.Name
	}
	sc := withQualifier(scan, qual)
	if x.Watermark != nil {
		if sc, err = applyWatermark(sc, x.Watermark); err != nil {
			return nil, err
		}
	}
	return sc, nil
}

var joinKinds = map[sql.JoinKind]JoinType{
	sql.JoinInner: InnerJoin, sql.JoinCross: InnerJoin, sql.JoinLeft: LeftOuterJoin, sql.JoinRight: RightOuterJoin,
	sql.JoinFull: FullOuterJoin, sql.JoinSemi: LeftSemiJoin, sql.JoinAnti: LeftAntiJoin,
}

func (a *analyzer) join(x *sql.Join) (*scope, error) {
	l, err := a.fromItem(x.Left)
	if err != nil {
		return nil, err
	}
	if sr, ok := x.Right.(*sql.SubqueryRef); ok && sr.Lateral {
		return a.lateralJoin(l, sr, joinKinds[x.Kind], x.On)
	}
	r, err := a.fromItem(x.Right)
	if err != nil {
		return nil, err
	}
	typ := joinKinds[x.Kind]
	if x.Natural {
		names := naturalColumns(l, r)
		if len(names) == 0 {
			return joinScopes(l, r, typ, nil)
		}
		return joinUsing(l, r, typ, names, x.Pos, true)
	}
	if len(x.Using) > 0 {
		names := make([]string, len(x.Using))
		for i, u := range x.Using {
			names[i] = u.Name
		}
		return joinUsing(l, r, typ, names, x.Using[0].Pos, true)
	}
	var cond Expr
	if x.On != nil {
		both := &scope{node: newJoinInput(l.node, r.node), cols: append(append([]scopeCol(nil), l.cols...), r.cols...)}
		res := &resolver{a: a, b: a.b, sc: both, clause: "ON", noOuter: true}
		c, err := res.expr(x.On)
		if err != nil {
			return nil, err
		}
		if cond, err = requireBoolean(x.On.Position(), "ON", c); err != nil {
			return nil, err
		}
		if hasSubquery(cond) {
			return joinOnSubqueries(x.On.Position(), l, r, typ, cond)
		}
	}
	return joinScopes(l, r, typ, cond)
}

// naturalColumns are the names of NATURAL JOIN's USING list: the visible
// columns of the left side (in its order) that the right side has too.
func naturalColumns(l, r *scope) []string {
	right := map[string]bool{}
	for i, f := range r.node.Schema().Fields() {
		if !r.cols[i].hidden {
			right[strings.ToLower(f.Name)] = true
		}
	}
	var names []string
	seen := map[string]bool{}
	for i, f := range l.node.Schema().Fields() {
		k := strings.ToLower(f.Name)
		if !l.cols[i].hidden && right[k] && !seen[k] {
			seen[k] = true
			names = append(names, f.Name)
		}
	}
	return names
}

// joinScopes joins two scopes with a resolved condition.
func joinScopes(l, r *scope, typ JoinType, cond Expr) (*scope, error) {
	j, err := NewJoin(l.node, r.node, typ, cond)
	if err != nil {
		return nil, err
	}
	cols := append([]scopeCol(nil), l.cols...)
	if typ != LeftSemiJoin && typ != LeftAntiJoin {
		cols = append(cols, r.cols...)
	}
	return &scope{node: j, cols: cols}, nil
}

// joinUsing joins on equal USING columns. The output has the USING
// columns first (coalesced for a full outer join, the right side's for a
// right outer join), then the other left columns, then the other right
// ones. With keepHidden (SQL) the original key columns stay reachable as
// l.key and r.key.
func joinUsing(l, r *scope, typ JoinType, names []string, pos sql.Pos, keepHidden bool) (*scope, error) {
	ls, rs := l.node.Schema(), r.node.Schema()
	nl := ls.NumFields()
	find := func(sc *scope, name, side string) (int, error) {
		found := -1
		for i, f := range sc.node.Schema().Fields() {
			if !sc.cols[i].hidden && strings.EqualFold(f.Name, name) {
				if found >= 0 {
					return -1, errorAt(pos, ErrAmbiguous, "USING column %s is ambiguous on the %s side of the join.", backquote(name), side)
				}
				found = i
			}
		}
		if found < 0 {
			return -1, errorAt(pos, ErrUnresolved, "USING column %s cannot be resolved on the %s side of the join. The %s-side columns: %s.%s",
				backquote(name), side, side, fieldNames(sc.node.Schema()), didYouMean(name, sc.candidates()))
		}
		return found, nil
	}
	li, ri := make([]int, len(names)), make([]int, len(names))
	var cond Expr
	for k, n := range names {
		var err error
		if li[k], err = find(l, n, "left"); err != nil {
			return nil, err
		}
		if ri[k], err = find(r, n, "right"); err != nil {
			return nil, err
		}
		le, re := coerceComparison(ColumnOf(ls, li[k]), shift(ColumnOf(rs, ri[k]), nl))
		eq, err := newCall(pos, "=", le, re)
		if err != nil {
			return nil, err
		}
		if cond == nil {
			cond = eq
		} else {
			cond = mustCall("and", cond, eq)
		}
	}
	j, err := NewJoin(l.node, r.node, typ, cond)
	if err != nil {
		return nil, err
	}
	j.Using = names
	js := j.Schema()
	var exprs []NamedExpr
	var cols []scopeCol
	isKey := func(idx []int, i int) bool {
		for _, k := range idx {
			if k == i {
				return true
			}
		}
		return false
	}
	for k := range names {
		lc, rc := ColumnOf(js, li[k]), (*ColumnRef)(nil)
		name := ls.Field(li[k]).Name
		var e Expr = lc
		if typ != LeftSemiJoin && typ != LeftAntiJoin {
			rc = ColumnOf(js, nl+ri[k])
			switch typ {
			case RightOuterJoin:
				e = rc
			case FullOuterJoin:
				args, err := coerceAll(pos, "USING", []Expr{lc, rc})
				if err != nil {
					return nil, err
				}
				if e, err = newCall(pos, "coalesce", args...); err != nil {
					return nil, err
				}
			}
		}
		exprs = append(exprs, NamedExpr{Name: name, Expr: e})
		cols = append(cols, scopeCol{})
	}
	for i := 0; i < nl; i++ {
		if !isKey(li, i) || keepHidden {
			exprs = append(exprs, NamedExpr{Name: ls.Field(i).Name, Expr: ColumnOf(js, i)})
			cols = append(cols, scopeCol{qual: l.cols[i].qual, hidden: l.cols[i].hidden || isKey(li, i)})
		}
	}
	if typ != LeftSemiJoin && typ != LeftAntiJoin {
		for i := 0; i < rs.NumFields(); i++ {
			if !isKey(ri, i) || keepHidden {
				exprs = append(exprs, NamedExpr{Name: rs.Field(i).Name, Expr: ColumnOf(js, nl+i)})
				cols = append(cols, scopeCol{qual: r.cols[i].qual, hidden: r.cols[i].hidden || isKey(ri, i)})
			}
		}
	}
	p, err := NewProject(j, exprs)
	if err != nil {
		return nil, err
	}
	return &scope{node: p, cols: cols}, nil
}

// shift moves a right-side column reference past the left columns.
func shift(c *ColumnRef, by int) *ColumnRef {
	out := *c
	out.Index += by
	return &out
}

// applyWatermark applies a FROM item's watermark clause: WATERMARK expr
// [AS name] DELAY OF interval. A named expression becomes a new column.
func applyWatermark(sc *scope, w *sql.Watermark) (*scope, error) {
	r := &resolver{sc: sc, clause: "WATERMARK"}
	e, err := r.expr(w.Expr)
	if err != nil {
		return nil, err
	}
	col := -1
	if w.Name != nil {
		s := sc.node.Schema()
		exprs := make([]NamedExpr, 0, s.NumFields()+1)
		for i, f := range s.Fields() {
			exprs = append(exprs, NamedExpr{Name: f.Name, Expr: ColumnOf(s, i)})
		}
		exprs = append(exprs, NamedExpr{Name: w.Name.Name, Expr: e})
		p, err := NewProject(sc.node, exprs)
		if err != nil {
			return nil, err
		}
		sc = &scope{node: p, cols: append(append([]scopeCol(nil), sc.cols...), scopeCol{})}
		col = len(exprs) - 1
	} else if c, ok := e.(*ColumnRef); ok {
		col = c.Index
	} else {
		return nil, errorAt(w.Expr.Position(), ErrType, "The watermark expression %s must be a column or be named with AS.", e)
	}
	iv, err := w.Delay.Value()
	if err != nil {
		return nil, errorAt(w.Delay.Pos, ErrType, "%v.", err)
	}
	ms, err := delayMs(iv)
	if err != nil {
		return nil, errorAt(w.Delay.Pos, ErrType, "%v.", err)
	}
	wm, err := NewEventTimeWatermark(sc.node, col, ms)
	if err != nil {
		return nil, errorAt(w.Pos, ErrType, "%s.", trimSentinel(err))
	}
	return &scope{node: wm, cols: sc.cols}, nil
}

// joinInput is the pseudo node a join condition resolves against: the
// left columns followed by the right ones.
type joinInput struct {
	l, r   Node
	schema *arrow.Schema
}

func newJoinInput(l, r Node) *joinInput {
	return &joinInput{l: l, r: r, schema: joinedSchema(l.Schema(), r.Schema())}
}

func (j *joinInput) Schema() *arrow.Schema { return j.schema }
func (j *joinInput) Children() []Node      { return []Node{j.l, j.r} }
func (j *joinInput) IsStreaming() bool     { return j.l.IsStreaming() || j.r.IsStreaming() }
func (j *joinInput) String() string        { return "JoinInput" }

// renamedByAlias renames sc's columns by position to an alias's column
// list (t AS x(a, b), range(1, 3) t(i)) under the qualifier qual; a list
// of the wrong length is an error at the alias.
func renamedByAlias(sc *scope, cols []sql.Ident, alias *sql.Ident, qual string) (*scope, error) {
	names := make([]string, len(cols))
	for i, c := range cols {
		names[i] = c.Name
	}
	n, err := toDF(sc.node, names, alias.Pos)
	if err != nil {
		return nil, err
	}
	return withQualifier(&SubqueryAlias{Input: n, Alias: qual}, qual), nil
}
