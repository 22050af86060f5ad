package plan

import (
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// groupingCtx is the grouping of a select with GROUPING SETS, CUBE or
// ROLLUP: its keys, and each set as the ordinals of the keys it groups by.
// The aggregate's output is the keys (NULL where a row's set lacks
// them), the grouping id, then the aggregates.
type groupingCtx struct {
	keys     []NamedExpr
	keyIndex map[string]int
	sets     [][]int
}

// gid is Spark's grouping id of a set: one bit per key, the first key
// the most significant, set when the key is not in the set.
func (g *groupingCtx) gid(set []int) int64 {
	n := len(g.keys)
	in := make([]bool, n)
	for _, i := range set {
		in[i] = true
	}
	var id int64
	for i := 0; i < n; i++ {
		if !in[i] {
			id |= 1 << (n - 1 - i)
		}
	}
	return id
}

// groupingSetsAggregate computes the aggregates once per grouping set, as
// Spark's Expand and Aggregate would: a union of one aggregate per set,
// grouped by the set's keys and its grouping id (so that, like Spark, a
// set with no keys gives no row on empty input).
func groupingSetsAggregate(input Node, g *groupingCtx, aggs []AggregateExpr) (Node, error) {
	inputs := make([]Node, 0, len(g.sets))
	for _, set := range g.sets {
		id := g.gid(set)
		keys := make([]NamedExpr, 0, len(set)+1)
		pos := map[int]int{}
		for _, i := range set {
			if _, dup := pos[i]; dup {
				continue
			}
			pos[i] = len(keys)
			keys = append(keys, g.keys[i])
		}
		keys = append(keys, NamedExpr{Name: "spark_grouping_id", Expr: &Literal{Value: id, Type: vector.Int64}})
		a, err := NewAggregate(input, keys, aggs)
		if err != nil {
			return nil, err
		}
		s := a.Schema()
		exprs := make([]NamedExpr, 0, len(g.keys)+1+len(aggs))
		for i, k := range g.keys {
			if p, ok := pos[i]; ok {
				exprs = append(exprs, NamedExpr{Name: k.Name, Expr: ColumnOf(s, p)})
			} else {
				exprs = append(exprs, NamedExpr{Name: k.Name, Expr: &Literal{Type: k.Expr.DataType()}})
			}
		}
		exprs = append(exprs, NamedExpr{Name: "spark_grouping_id", Expr: ColumnOf(s, len(keys)-1)})
		for j := range aggs {
			exprs = append(exprs, NamedExpr{Name: s.Field(len(keys) + j).Name, Expr: ColumnOf(s, len(keys)+j)})
		}
		p, err := NewProject(a, exprs)
		if err != nil {
			return nil, err
		}
		inputs = append(inputs, p)
	}
	if len(inputs) == 1 {
		return inputs[0], nil
	}
	return NewUnion(inputs...)
}

// groupingRef is grouping(key) or grouping_id() in a select with grouping
// sets; rewriteAggregated turns it into an expression of the grouping id
// column.
type groupingRef struct {
	ctx  *groupingCtx
	fn   string
	key  int // grouping(): the key's ordinal
	text string
}

func (*groupingRef) exprNode() {}
func (r *groupingRef) DataType() arrow.DataType {
	if r.fn == "grouping" {
		return vector.Int8
	}
	return vector.Int64
}
func (*groupingRef) Nullable() bool   { return false }
func (*groupingRef) Children() []Expr { return nil }
func (r *groupingRef) String() string { return r.text }

// value is the function over the grouping id column.
func (r *groupingRef) value() Expr {
	gid := &ColumnRef{Index: len(r.ctx.keys), Name: "spark_grouping_id", Type: vector.Int64}
	if r.fn == "grouping_id" {
		return gid
	}
	var absent []Expr
	seen := map[int64]bool{}
	for _, set := range r.ctx.sets {
		in := false
		for _, i := range set {
			in = in || i == r.key
		}
		if id := r.ctx.gid(set); !in && !seen[id] {
			seen[id] = true
			absent = append(absent, &Literal{Value: id, Type: vector.Int64})
		}
	}
	zero, one := &Literal{Value: int8(0), Type: vector.Int8}, &Literal{Value: int8(1), Type: vector.Int8}
	if len(absent) == 0 {
		return zero
	}
	return &Case{Type: vector.Int8, Whens: []When{{Cond: mustCall("in", append([]Expr{gid}, absent...)...), Then: one}}, Else: zero}
}

// groupingCall resolves grouping(col) and grouping_id([cols]).
func (r *resolver) groupingCall(f *sql.FuncCall, name string) (Expr, error) {
	if r.grouping == nil {
		return nil, errorAt(f.Pos, ErrAggregate, "[UNSUPPORTED_GROUPING_EXPRESSION] grouping()/grouping_id() can only be used with GroupingSets/Cube/Rollup.")
	}
	sub := *r
	sub.aggs = nil
	args, err := sub.exprs(f.Args)
	if err != nil {
		return nil, err
	}
	texts := make([]string, len(args))
	idx := make([]int, len(args))
	for i, a := range args {
		k, ok := r.grouping.keyIndex[exprKey(a)]
		if !ok {
			return nil, errorAt(f.Pos, ErrAggregate, "[GROUPING_COLUMN_MISMATCH] Column of grouping (%s) can't be found in grouping columns.", AutoName(a))
		}
		idx[i], texts[i] = k, AutoName(a)
	}
	text := name + "(" + strings.Join(texts, ", ") + ")"
	if name == "grouping" {
		if len(args) != 1 {
			return nil, errorAt(f.Pos, ErrType, "grouping() takes 1 argument, got %d.", len(args))
		}
		return &groupingRef{ctx: r.grouping, fn: name, key: idx[0], text: text}, nil
	}
	if len(args) > 0 {
		match := len(args) == len(r.grouping.keys)
		for i := 0; match && i < len(idx); i++ {
			match = idx[i] == i
		}
		if !match {
			return nil, errorAt(f.Pos, ErrAggregate, "[GROUPING_ID_COLUMN_MISMATCH] Columns of grouping_id (%s) does not match grouping columns.", strings.Join(texts, ","))
		}
	}
	return &groupingRef{ctx: r.grouping, fn: name, text: text}, nil
}

// hiveGroupingID resolves Hive's virtual column grouping__id (when no
// column of that name is in scope): grouping_id() of every grouping
// column, a BIGINT, as Spark; outside GROUPING SETS/CUBE/ROLLUP it is
// Spark's error.
func (r *resolver) hiveGroupingID(c *sql.ColumnRef) (Expr, error) {
	if r.grouping == nil {
		return nil, errorAt(c.Pos, ErrAggregate, "[UNSUPPORTED_GROUPING_EXPRESSION] grouping__id/grouping()/grouping_id() can only be used with GroupingSets/Cube/Rollup.")
	}
	return &groupingRef{ctx: r.grouping, fn: "grouping_id", text: "grouping__id"}, nil
}

// groupByAll is the grouping of GROUP BY ALL: every select item without an
// aggregate (none: a global aggregate), as Spark.
func groupByAll(s *sql.Select) ([]sql.Expr, error) {
	var out []sql.Expr
	for i, it := range s.Items {
		if st, ok := it.Expr.(*sql.Star); ok {
			return nil, errorAt(st.Pos, ErrUnsupported, "GROUP BY ALL with * in the select list is not supported; name the columns.")
		}
		if containsAggregate(selectSpec{items: []*sql.SelectItem{it}}) {
			continue
		}
		if l, ok := it.Expr.(*sql.Literal); ok && l.Kind == sql.LitInt {
			// An integer literal in GROUP BY is an ordinal: name the
			// item itself by its position.
			out = append(out, &sql.Literal{Pos: l.Pos, Kind: sql.LitInt, Value: strconv.Itoa(i + 1)})
			continue
		}
		out = append(out, it.Expr)
	}
	return out, nil
}
