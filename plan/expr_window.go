package plan

import (
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
)

// winPlaceholder stands for a window function call (f OVER (...)) while
// the analyzer resolves a select block; applyWindows replaces it by a
// reference to a Window node's column. Its children are the function's
// expressions, then the partition keys, then the order keys.
type winPlaceholder struct {
	fn    WindowExpr
	part  []Expr
	order []SortKey
}

func (*winPlaceholder) exprNode()                  {}
func (p *winPlaceholder) DataType() arrow.DataType { return p.fn.Type }
func (p *winPlaceholder) Nullable() bool           { return true }
func (p *winPlaceholder) String() string           { return render(p, false) }

// Children implements Expr.
func (p *winPlaceholder) Children() []Expr {
	out := p.fn.exprs()
	out = append(out, p.part...)
	for _, k := range p.order {
		out = append(out, k.Expr)
	}
	return out
}

// withChildren rebuilds the placeholder from kids (as Children orders
// them).
func (p *winPlaceholder) withChildren(kids []Expr) *winPlaceholder {
	nf := len(p.fn.exprs())
	c := &winPlaceholder{fn: p.fn.withExprs(kids[:nf])}
	c.part = append([]Expr(nil), kids[nf:nf+len(p.part)]...)
	c.order = make([]SortKey, len(p.order))
	for i, k := range p.order {
		c.order[i] = SortKey{Expr: kids[nf+len(p.part)+i], Desc: k.Desc, Nulls: k.Nulls}
	}
	return c
}

// specKey identifies the placeholder's partitioning and ordering: calls
// with equal keys share one Window node.
func (p *winPlaceholder) specKey() string {
	var b strings.Builder
	for _, e := range p.part {
		b.WriteString(exprKey(e))
		b.WriteByte(',')
	}
	b.WriteByte('|')
	for _, k := range p.order {
		b.WriteString(exprKey(k.Expr))
		b.WriteString(renderSortKey(SortKey{Expr: &Literal{Type: arrow.Null}, Desc: k.Desc, Nulls: k.Nulls}))
		b.WriteByte(',')
	}
	return b.String()
}

// print renders the call as Spark names it: f(args) OVER (PARTITION BY
// ... ORDER BY ... frame).
func (p *winPlaceholder) print(pr *exprPrinter) {
	f := &p.fn
	if f.Func == vector.WinAggregate {
		if pr.ordinals {
			pr.b.WriteString(aggKey(f.Agg))
		} else {
			pr.b.WriteString(renderAgg(f.Agg, pr.pretty))
		}
	} else {
		pr.b.WriteString(f.Func.String())
		pr.b.WriteByte('(')
		switch f.Func {
		case vector.WinNtile:
			pr.b.WriteString(itoa64(f.N))
		case vector.WinLag, vector.WinLead, vector.WinNthValue:
			pr.expr(f.Args[0])
			pr.b.WriteString(", ")
			pr.b.WriteString(itoa64(f.N))
			if len(f.Args) > 1 {
				pr.b.WriteString(", ")
				pr.expr(f.Args[1])
			} else if f.Func != vector.WinNthValue {
				pr.b.WriteString(", NULL")
			}
		}
		pr.b.WriteByte(')')
		if f.IgnoreNulls {
			pr.b.WriteString(" IGNORE NULLS")
		}
	}
	pr.b.WriteString(" OVER (")
	if len(p.part) > 0 {
		pr.b.WriteString("PARTITION BY ")
		pr.list(p.part)
		pr.b.WriteByte(' ')
	}
	if len(p.order) > 0 {
		pr.b.WriteString("ORDER BY ")
		for i, k := range p.order {
			if i > 0 {
				pr.b.WriteString(", ")
			}
			pr.expr(k.Expr)
			pr.b.WriteString(strings.TrimPrefix(renderSortKey(SortKey{Expr: &Literal{Type: arrow.Null}, Desc: k.Desc, Nulls: k.Nulls}), "NULL"))
		}
		pr.b.WriteByte(' ')
	}
	pr.b.WriteString(sparkFrame(f.Frame))
	pr.b.WriteByte(')')
}

func itoa64(n int64) string { return strconv.FormatInt(n, 10) }

// sparkFrame renders a frame as Spark's column names show it.
func sparkFrame(f vector.WindowFrame) string {
	u := "ROWS"
	if f.Range {
		u = "RANGE"
	}
	bound := func(b vector.FrameBound) string {
		switch b.Kind {
		case vector.FrameUnboundedPreceding:
			return "UNBOUNDED PRECEDING"
		case vector.FrameUnboundedFollowing:
			return "UNBOUNDED FOLLOWING"
		case vector.FrameCurrentRow:
			return "CURRENT ROW"
		}
		var v string
		if b.Months != 0 {
			v = vector.FormatYearMonth(int32(b.Months), vector.YMYearToMonth)
		} else if f.Range && b.FloatOffset != float64(b.Offset) {
			v = vector.FormatValue(b.FloatOffset, arrow.PrimitiveTypes.Float64)
		} else {
			v = itoa64(b.Offset)
		}
		if b.Kind == vector.FramePreceding {
			return v + " PRECEDING"
		}
		return v + " FOLLOWING"
	}
	return u + " BETWEEN " + bound(f.Start) + " AND " + bound(f.End)
}
