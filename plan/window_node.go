package plan

import (
	"fmt"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
)

// Window computes window functions (Spark's Window): the rows are grouped
// by PartitionBy, ordered within each partition by OrderBy, and each of
// Funcs appends a column computed over its frame. The output is the
// input's columns followed by one column per function.
type Window struct {
	Input       Node
	PartitionBy []Expr
	OrderBy     []SortKey
	Funcs       []WindowExpr
	schema      *arrow.Schema
}

// WindowExpr is one window function of a Window node. Args are over the
// Window's input.
type WindowExpr struct {
	Func vector.WindowFunc
	// Agg is the aggregate of vector.WinAggregate.
	Agg *AggregateExpr
	// Args are lag's and lead's value and default, nth_value's value.
	Args []Expr
	// N is the offset of lag and lead, the bucket count of ntile and the
	// position of nth_value.
	N           int64
	IgnoreNulls bool
	Frame       vector.WindowFrame
	// Name is the output column's name; Type its type.
	Name string
	Type arrow.DataType
}

// NewWindow returns a Window node.
func NewWindow(input Node, partitionBy []Expr, orderBy []SortKey, funcs []WindowExpr) (*Window, error) {
	if len(funcs) == 0 {
		return nil, fmt.Errorf("plan: a window needs at least one function")
	}
	n := &Window{Input: input, PartitionBy: partitionBy, OrderBy: orderBy, Funcs: funcs}
	n.schema = windowSchema(input.Schema(), funcs)
	return n, nil
}

func windowSchema(in *arrow.Schema, funcs []WindowExpr) *arrow.Schema {
	fields := append([]arrow.Field(nil), in.Fields()...)
	for _, f := range funcs {
		nullable := true
		switch f.Func {
		case vector.WinRowNumber, vector.WinRank, vector.WinDenseRank, vector.WinPercentRank, vector.WinCumeDist:
			nullable = false
		case vector.WinAggregate:
			nullable = f.Agg.Func != vector.AggCount && f.Agg.Func != vector.AggCountStar
		}
		fields = append(fields, arrow.Field{Name: f.Name, Type: f.Type, Nullable: nullable})
	}
	md := in.Metadata()
	return arrow.NewSchema(fields, &md)
}

// Schema implements Node.
func (n *Window) Schema() *arrow.Schema {
	if n.schema == nil {
		n.schema = windowSchema(n.Input.Schema(), n.Funcs)
	}
	return n.schema
}

// Children implements Node.
func (n *Window) Children() []Node { return []Node{n.Input} }

// IsStreaming implements Node.
func (n *Window) IsStreaming() bool { return n.Input.IsStreaming() }

// String implements Node: Window [funcs], [partition], [order].
func (n *Window) String() string {
	fs := make([]string, len(n.Funcs))
	for i, f := range n.Funcs {
		fs[i] = f.render(false) + " " + f.Frame.String() + " AS " + vector.QuoteIdent(f.Name)
	}
	ps := make([]string, len(n.PartitionBy))
	for i, p := range n.PartitionBy {
		ps[i] = p.String()
	}
	os := make([]string, len(n.OrderBy))
	for i, o := range n.OrderBy {
		os[i] = o.String()
	}
	return "Window [" + strings.Join(fs, ", ") + "], [" + strings.Join(ps, ", ") + "], [" + strings.Join(os, ", ") + "]"
}

// render is the function call in SQL (without OVER).
func (f *WindowExpr) render(pretty bool) string {
	if f.Func == vector.WinAggregate {
		return renderAgg(f.Agg, pretty)
	}
	args := make([]string, 0, len(f.Args)+1)
	switch f.Func {
	case vector.WinNtile:
		args = append(args, fmt.Sprint(f.N))
	case vector.WinLag, vector.WinLead:
		args = append(args, render(f.Args[0], pretty), fmt.Sprint(f.N))
		if len(f.Args) > 1 {
			args = append(args, render(f.Args[1], pretty))
		} else {
			args = append(args, "NULL")
		}
	case vector.WinNthValue:
		args = append(args, render(f.Args[0], pretty), fmt.Sprint(f.N))
	}
	s := f.Func.String() + "(" + strings.Join(args, ", ") + ")"
	if f.IgnoreNulls {
		s += " IGNORE NULLS"
	}
	return s
}

// exprs returns the function's expressions in a fixed order: the
// aggregate's arguments, then Args.
func (f *WindowExpr) exprs() []Expr {
	var out []Expr
	if f.Agg != nil {
		out = append(out, f.Agg.Args...)
	}
	return append(out, f.Args...)
}

// withExprs returns a copy of f with its expressions replaced (as exprs
// orders them).
func (f WindowExpr) withExprs(es []Expr) WindowExpr {
	if f.Agg != nil {
		a := *f.Agg
		a.Args = append([]Expr(nil), es[:len(a.Args)]...)
		es = es[len(a.Args):]
		f.Agg = &a
	}
	f.Args = append([]Expr(nil), es...)
	return f
}

// mapWindowExprs rewrites every expression of a Window node with one.
func mapWindowExprs(x *Window, one func(Expr) Expr) *Window {
	c := *x
	c.PartitionBy = make([]Expr, len(x.PartitionBy))
	for i, p := range x.PartitionBy {
		c.PartitionBy[i] = one(p)
	}
	c.OrderBy = make([]SortKey, len(x.OrderBy))
	for i, k := range x.OrderBy {
		c.OrderBy[i] = SortKey{Expr: one(k.Expr), Desc: k.Desc, Nulls: k.Nulls}
	}
	c.Funcs = make([]WindowExpr, len(x.Funcs))
	for i, f := range x.Funcs {
		es := f.exprs()
		for j := range es {
			es[j] = one(es[j])
		}
		c.Funcs[i] = f.withExprs(es)
	}
	c.schema = nil
	return &c
}

// windowSpecFor converts a Window node to vector's operator spec.
func windowSpecFor(n *Window, env *Env) (vector.WindowOpSpec, error) {
	var spec vector.WindowOpSpec
	for _, p := range n.PartitionBy {
		v, err := ToVectorExpr(p, env)
		if err != nil {
			return spec, err
		}
		spec.PartitionBy = append(spec.PartitionBy, v)
	}
	keys, err := sortKeys(n.OrderBy, env)
	if err != nil {
		return spec, err
	}
	spec.OrderBy = keys
	for _, f := range n.Funcs {
		c := vector.WindowCall{Func: f.Func, N: f.N, IgnoreNulls: f.IgnoreNulls, Frame: f.Frame, Name: f.Name}
		for _, a := range f.Args {
			v, err := ToVectorExpr(a, env)
			if err != nil {
				return spec, err
			}
			c.Args = append(c.Args, v)
		}
		if f.Agg != nil {
			args := make([]vector.Expr, len(f.Agg.Args))
			for j, x := range f.Agg.Args {
				if args[j], err = ToVectorExpr(x, env); err != nil {
					return spec, err
				}
			}
			c.Agg = vector.AggregateCall{Func: f.Agg.Func, Args: args, Distinct: f.Agg.Distinct, IgnoreNulls: f.Agg.IgnoreNulls, Name: f.Name}
		}
		spec.Calls = append(spec.Calls, c)
	}
	return spec, nil
}
