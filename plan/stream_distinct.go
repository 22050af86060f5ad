package plan

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
)

// DistinctMark is the streaming half of a distinct aggregate
// (count(DISTINCT x), sum(DISTINCT x), avg(DISTINCT x)), an extension
// beyond Spark, which refuses distinct aggregates on streams. For each of
// its Sets it remembers, across epochs, the (Keys, Set.Cols) values it has
// seen and lets a row's Set.Null column through only for the first row of
// every such tuple: later rows get NULL there. The aggregation above then
// runs the plain (non-distinct) function over the marked column, which
// ignores the NULLs, so every group's value counts each distinct value
// once. Its output schema is its input's.
//
// TimeCol (-1: none) is the column of the input that carries the
// aggregation's watermarked time key (a timestamp or a window struct,
// whose end counts): in Append and Update mode the remembered tuples of a
// group are evicted with the group when the watermark passes it. Only the
// streaming engine runs it (RewriteStreamingDistinct adds it).
type DistinctMark struct {
	Input   Node
	Keys    []int
	Sets    []DistinctSet
	TimeCol int
}

// DistinctSet is one distinct argument list of a DistinctMark: the input
// columns whose tuples are kept once (a row with a NULL among them is not
// remembered: the aggregate functions skip it anyway) and the column
// nulled for repeated tuples.
type DistinctSet struct {
	Cols []int
	Null int
}

// Schema implements Node.
func (n *DistinctMark) Schema() *arrow.Schema { return n.Input.Schema() }

// Children implements Node.
func (n *DistinctMark) Children() []Node { return []Node{n.Input} }

// IsStreaming implements Node.
func (n *DistinctMark) IsStreaming() bool { return n.Input.IsStreaming() }

func (n *DistinctMark) String() string {
	s := n.Input.Schema()
	name := func(cols []int) string {
		parts := make([]string, len(cols))
		for i, c := range cols {
			parts[i] = vector.QuoteIdent(s.Field(c).Name)
		}
		return strings.Join(parts, ", ")
	}
	sets := make([]string, len(n.Sets))
	for i, set := range n.Sets {
		sets[i] = "(" + name(set.Cols) + ")"
	}
	return "StreamingDistinctMark keys=[" + name(n.Keys) + "] distinct=[" + strings.Join(sets, ", ") + "] [stateful]"
}

// streamDistinct says how a streaming aggregation handles f(DISTINCT …):
// mark (count, sum, avg: the DistinctMark below nulls repeated values),
// same (min, max, first, last, approx_count_distinct: distinct does not
// change the result, so the flag is dropped), or neither (refused).
func streamDistinct(f AggregateExpr) (mark, same bool) {
	switch f.Func {
	case vector.AggCount, vector.AggSum, vector.AggAvg:
		return len(f.Args) > 0, false
	case vector.AggMin, vector.AggMax, vector.AggFirst, vector.AggLast, vector.AggApproxCountDistinct:
		return false, true
	}
	return false, false
}

// RewriteStreamingDistinct returns n with every streaming Aggregate that
// has distinct aggregates split into a DistinctMark over its input (which
// gains columns for the distinct arguments and computed grouping keys)
// and the same aggregation with the distinct aggregates made plain over
// the marked columns. The rewritten Aggregate has the original's schema.
// Plans without streaming distinct aggregates are returned unchanged.
// CheckStreaming has already refused the distinct aggregates it cannot
// run.
func RewriteStreamingDistinct(n Node) (Node, error) {
	var err error
	var rewrite func(Node) Node
	rewrite = func(n Node) Node {
		if err != nil {
			return n
		}
		if d, ok := n.(*DistinctMark); ok {
			c := *d
			c.Input = rewrite(d.Input)
			n = &c
		} else if t, ok := n.(*StreamingTopN); ok {
			c := *t
			c.Input = rewrite(t.Input)
			n = &c
		} else if o, ok := n.(*StreamingOver); ok {
			c := *o
			c.Input = rewrite(o.Input)
			n = &c
		} else {
			n = mapChildren(n, rewrite)
		}
		a, ok := n.(*Aggregate)
		if !ok || !a.Input.IsStreaming() || !hasDistinct(a) {
			return n
		}
		var out Node
		out, err = splitDistinct(a)
		if err != nil {
			return n
		}
		return out
	}
	out := rewrite(n)
	return out, err
}

func hasDistinct(a *Aggregate) bool {
	for _, f := range a.Aggs {
		if f.Distinct {
			return true
		}
	}
	return false
}

func splitDistinct(a *Aggregate) (Node, error) {
	in := a.Input.Schema()
	exprs := make([]NamedExpr, in.NumFields(), in.NumFields()+len(a.GroupBy)+len(a.Aggs))
	for i, f := range in.Fields() {
		exprs[i] = NamedExpr{Name: f.Name, Expr: &ColumnRef{Index: i, Name: f.Name, Type: f.Type, Null: f.Nullable}}
	}
	// project appends e as a column (a bare column is used in place) and
	// returns its ordinal.
	project := func(e Expr, name string) int {
		if c, ok := e.(*ColumnRef); ok {
			return c.Index
		}
		exprs = append(exprs, NamedExpr{Name: name, Expr: e})
		return len(exprs) - 1
	}
	mark := &DistinctMark{TimeCol: -1}
	for i, g := range a.GroupBy {
		col := project(g.Expr, "__distinct_key"+strconv.Itoa(i))
		mark.Keys = append(mark.Keys, col)
		if _, timed := WatermarkDelay(a.Schema().Field(i)); timed && mark.TimeCol < 0 {
			mark.TimeCol = col
		}
	}
	if mark.TimeCol >= 0 {
		switch dt := vector.Unwrap(exprType(exprs, in, mark.TimeCol)).(type) {
		case *arrow.TimestampType:
		case *arrow.StructType:
			if !arrow.TypeEqual(dt, vector.WindowType) {
				return nil, fmt.Errorf("streaming distinct aggregate: the watermarked key %s is a %s, not a timestamp or window: %w", a.GroupBy[0].Name, vector.TypeName(dt), ErrUnsupported)
			}
		default:
			return nil, fmt.Errorf("streaming distinct aggregate: the watermarked key is a %s, not a timestamp or window: %w", vector.TypeName(dt), ErrUnsupported)
		}
	}
	aggs := make([]AggregateExpr, len(a.Aggs))
	sets := map[string]int{} // argument list → its set's nulled column
	for i, f := range a.Aggs {
		aggs[i] = f
		if !f.Distinct {
			continue
		}
		doMark, same := streamDistinct(f)
		aggs[i].Distinct = false
		if same {
			continue
		}
		if !doMark {
			return nil, fmt.Errorf("%s(DISTINCT ...) in a streaming aggregation: %w", f.Func, ErrUnsupported)
		}
		key := argsKey(f.Args)
		null, seen := sets[key]
		if !seen || key == "" {
			// The nulled column is a copy of the first argument, so
			// other aggregates of the same column see every value.
			cols := make([]int, len(f.Args))
			for j, arg := range f.Args {
				if j == 0 {
					exprs = append(exprs, NamedExpr{Name: "__distinct" + strconv.Itoa(i), Expr: arg})
					cols[j] = len(exprs) - 1
					continue
				}
				cols[j] = project(arg, "__distinct"+strconv.Itoa(i)+"_"+strconv.Itoa(j))
			}
			null = cols[0]
			sets[key] = null
			mark.Sets = append(mark.Sets, DistinctSet{Cols: cols, Null: null})
		}
		args := append([]Expr(nil), f.Args...)
		args[0] = &ColumnRef{Index: null, Name: exprs[null].Name, Type: f.Args[0].DataType(), Null: true}
		aggs[i].Args = args
	}
	if len(mark.Sets) == 0 {
		return NewAggregate(a.Input, a.GroupBy, aggs)
	}
	p, err := NewProject(a.Input, exprs)
	if err != nil {
		return nil, fmt.Errorf("streaming distinct aggregate: %w", err)
	}
	mark.Input = p
	out, err := NewAggregate(mark, a.GroupBy, aggs)
	if err != nil {
		return nil, fmt.Errorf("streaming distinct aggregate: %w", err)
	}
	if !out.Schema().Equal(a.Schema()) {
		return nil, fmt.Errorf("streaming distinct aggregate: the rewritten aggregation changes the schema %s to %s", a.Schema(), out.Schema())
	}
	return out, nil
}

// exprType is the type of projected column i.
func exprType(exprs []NamedExpr, in *arrow.Schema, i int) arrow.DataType {
	if i < in.NumFields() {
		return in.Field(i).Type
	}
	return exprs[i].Expr.DataType()
}

// argsKey identifies an argument list made of bare columns ("" for any
// other, which gets a set of its own).
func argsKey(args []Expr) string {
	var b strings.Builder
	for _, e := range args {
		c, ok := e.(*ColumnRef)
		if !ok {
			return ""
		}
		b.WriteString("#" + strconv.Itoa(c.Index))
	}
	return b.String()
}
