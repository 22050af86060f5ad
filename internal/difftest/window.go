package difftest

import (
	"strconv"
	"strings"
)

// Win is a window-function select item: Func(Arg) OVER (PARTITION BY
// Part ORDER BY Order Frame). Order names every column in scope, so the
// order is total up to rows equal in every column, which are
// interchangeable: row_number, ROWS frames, lag and lead then give one
// answer whatever order the plan feeds the window in.
type Win struct {
	Func  string // row_number, rank, dense_rank, percent_rank, cume_dist, ntile, lag, lead, count(*), count, sum, min, max, avg
	Arg   *Expr  // nil for ranking functions and count(*)
	N     int    // ntile's buckets; lag's and lead's offset
	Part  []*Expr
	Order []*Expr
	Desc  []bool
	Frame string // "" (the default frame) or an explicit ROWS/RANGE frame
}

func (w *Win) render(d Dialect) string {
	var b strings.Builder
	switch w.Func {
	case "count(*)":
		b.WriteString("count(*)")
	case "row_number", "rank", "dense_rank", "percent_rank", "cume_dist":
		b.WriteString(w.Func + "()")
	case "ntile":
		b.WriteString("ntile(" + itoa(w.N) + ")")
	case "lag", "lead":
		b.WriteString(w.Func + "(" + w.Arg.Render(d) + ", " + itoa(w.N) + ")")
	default:
		b.WriteString(w.Func + "(" + w.Arg.Render(d) + ")")
	}
	b.WriteString(" OVER (")
	if len(w.Part) > 0 {
		b.WriteString("PARTITION BY ")
		for i, p := range w.Part {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(p.Render(d))
		}
		b.WriteString(" ")
	}
	b.WriteString("ORDER BY ")
	for i, o := range w.Order {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(o.Render(d))
		if w.Desc[i] {
			b.WriteString(" DESC NULLS LAST")
		} else {
			b.WriteString(" NULLS FIRST")
		}
	}
	if w.Frame != "" {
		b.WriteString(" " + w.Frame)
	}
	b.WriteString(")")
	return b.String()
}

func itoa(n int) string { return strconv.Itoa(n) }

// class is the type family of the window item's value.
func (w *Win) class() class {
	switch w.Func {
	case "row_number", "rank", "dense_rank", "ntile", "count(*)", "count", "sum":
		return cInt
	case "percent_rank", "cume_dist":
		return cFloat
	case "avg":
		if w.Arg.cls == cDec {
			return cDec
		}
		return cFloat
	}
	return w.Arg.cls
}

// hasWindow reports whether q has a window-function item (a filter added
// to its WHERE would change the windows' input, so TLP over WHERE does not
// apply).
func (q *Query) hasWindow() bool {
	for _, it := range q.Items {
		if it.Win != nil {
			return true
		}
	}
	return false
}

// The frames of aggregate window functions (the default is RANGE
// BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW).
var winFrames = []string{"", "ROWS BETWEEN UNBOUNDED PRECEDING AND CURRENT ROW",
	"ROWS BETWEEN 1 PRECEDING AND 1 FOLLOWING", "ROWS BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING",
	"ROWS BETWEEN 2 PRECEDING AND 1 PRECEDING", "RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING",
	"RANGE BETWEEN CURRENT ROW AND UNBOUNDED FOLLOWING"}

// window draws a window item over the columns of sc. With Options.DuckDB
// it keeps to functions whose answer does not depend on how ties in the
// order are broken (ranks, and aggregates over peer-inclusive RANGE
// frames), and orders by no floating-point column, so that the two
// engines' answers are comparable even though they order -0.0 and 0.0
// differently.
func (g *gen) window(sc scope) *Win {
	r := g.r
	x := exprGen{g, sc}
	w := &Win{}
	var cols []Column
	for _, c := range sc.cols {
		if g.o.DuckDB && c.class() == cFloat {
			continue
		}
		cols = append(cols, c)
	}
	for _, i := range r.Perm(len(cols)) {
		w.Order = append(w.Order, leaf(cols[i].Name, "", cols[i].class()))
		w.Desc = append(w.Desc, r.IntN(3) == 0)
	}
	if len(w.Order) == 0 {
		w.Order, w.Desc = []*Expr{x.literal(cInt)}, []bool{false}
	}
	for n := r.IntN(3); n > 0 && len(cols) > 0; n-- {
		c := cols[r.IntN(len(cols))]
		w.Part = append(w.Part, leaf(c.Name, "", c.class()))
	}
	funcs := []string{"row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile", "lag", "lead", "count(*)", "count", "sum", "min", "max", "avg"}
	if g.o.DuckDB {
		funcs = []string{"rank", "dense_rank", "count(*)", "count", "sum"}
	}
	w.Func = funcs[r.IntN(len(funcs))]
	switch w.Func {
	case "ntile":
		w.N = 1 + r.IntN(4)
	case "lag", "lead":
		w.N = 1 + r.IntN(2)
		w.Arg = x.any(1)
	case "count", "min", "max":
		w.Arg = x.any(1)
	case "sum":
		w.Arg = x.expr(cInt, 1)
	case "avg":
		w.Arg = x.expr([]class{cInt, cDec}[r.IntN(2)], 1)
	}
	switch w.Func {
	case "count(*)", "count", "sum", "min", "max", "avg":
		if g.o.DuckDB {
			w.Frame = []string{"", "RANGE BETWEEN UNBOUNDED PRECEDING AND UNBOUNDED FOLLOWING"}[r.IntN(2)]
		} else {
			w.Frame = winFrames[r.IntN(len(winFrames))]
		}
	}
	return w
}
