package plan

import (
	"fmt"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
)

// exprPrinter renders expressions. pretty selects Spark's automatic
// column names (toPrettySQL): string literals unquoted, count(*) as
// count(1).
type exprPrinter struct {
	b      strings.Builder
	pretty bool
	// ordinals renders columns by ordinal and literals with their type,
	// for structural comparison (exprKey).
	ordinals bool
	// ambiguous names columns to render with their ordinal (name#i),
	// for join conditions over inputs with equal column names.
	ambiguous map[string]bool
}

func (c *ColumnRef) String() string        { return render(c, false) }
func (l *Literal) String() string          { return render(l, false) }
func (c *Call) String() string             { return render(c, false) }
func (c *Cast) String() string             { return render(c, false) }
func (g *GetField) String() string         { return render(g, false) }
func (c *Case) String() string             { return render(c, false) }
func (*CurrentTimestamp) String() string   { return "current_timestamp()" }
func (n NamedExpr) String() string         { return renderNamed(n) }
func (a *AggregateExpr) String() string    { return renderAgg(a, false) }
func (k SortKey) String() string           { return renderSortKey(k) }
func (j JoinType) String() string          { return joinTypeNames[j] }
func (m OutputMode) String() string        { return outputModeNames[m] }
func (t GroupStateTimeout) String() string { return timeoutNames[t] }

func render(e Expr, pretty bool) string {
	p := &exprPrinter{pretty: pretty}
	p.expr(e)
	return p.b.String()
}

// AutoName is the column name Spark gives an unaliased select item:
// the bare column name for a column, the field name for a struct field,
// otherwise the expression's pretty SQL text, such as count(1) or
// CAST(window.start AS BIGINT).
func AutoName(e Expr) string {
	switch x := e.(type) {
	case *ColumnRef:
		return x.Name
	case *GetField:
		return x.Name
	}
	return render(e, true)
}

func renderNamed(n NamedExpr) string {
	if n.Expr == nil {
		return "<nil> AS " + vector.QuoteIdent(n.Name)
	}
	s := n.Expr.String()
	if c, ok := n.Expr.(*ColumnRef); ok && c.Name == n.Name {
		return s
	}
	return s + " AS " + vector.QuoteIdent(n.Name)
}

func renderAgg(a *AggregateExpr, pretty bool) string {
	if a.Func == vector.AggCountStar {
		if pretty {
			return "count(1)"
		}
		return "count(*)"
	}
	p := &exprPrinter{pretty: pretty}
	p.b.WriteString(a.Func.String())
	p.b.WriteByte('(')
	if a.Distinct {
		p.b.WriteString("DISTINCT ")
	}
	for i, x := range a.Args {
		if i > 0 {
			p.b.WriteString(", ")
		}
		p.expr(x)
	}
	p.b.WriteByte(')')
	if a.IgnoreNulls {
		p.b.WriteString(" IGNORE NULLS")
	}
	return p.b.String()
}

func renderSortKey(k SortKey) string {
	s := "<nil>"
	if k.Expr != nil {
		s = k.Expr.String()
	}
	if k.Desc {
		s += " DESC"
	} else {
		s += " ASC"
	}
	first := !k.Desc
	switch k.Nulls {
	case vector.NullsFirst:
		first = true
	case vector.NullsLast:
		first = false
	}
	if first {
		return s + " NULLS FIRST"
	}
	return s + " NULLS LAST"
}

// sqlType renders a type as CAST shows it: BIGINT, DECIMAL(10,2).
func sqlType(dt arrow.DataType) string {
	if dt != nil && dt.ID() == arrow.DURATION {
		return "INTERVAL"
	}
	return strings.ToUpper(vector.TypeName(dt))
}

var infixOps = map[string]string{
	"+": "+", "-": "-", "*": "*", "/": "/", "%": "%",
	"=": "=", "<>": "<>", "<": "<", "<=": "<=", ">": ">", ">=": ">=", "<=>": "<=>",
	"and": "AND", "or": "OR",
	// The planner's forms of a - b for dates and timestamps print as
	// Spark names them.
	"date_subtract": "-", "timestamp_subtract": "-",
}

func (p *exprPrinter) list(args []Expr) {
	for i, a := range args {
		if i > 0 {
			p.b.WriteString(", ")
		}
		p.expr(a)
	}
}

func (p *exprPrinter) expr(e Expr) {
	switch x := e.(type) {
	case nil:
		p.b.WriteString("<nil>")
	case *ColumnRef:
		if p.ordinals {
			fmt.Fprintf(&p.b, "#%d", x.Index)
			return
		}
		p.b.WriteString(vector.QuoteIdent(x.Name))
		if p.ambiguous[x.Name] {
			fmt.Fprintf(&p.b, "#%d", x.Index)
		}
	case *Literal:
		if p.ordinals {
			p.b.WriteString(vector.TypeName(x.Type) + ":")
		}
		p.literal(x)
	case *Cast:
		if p.pretty && x.unnamed {
			p.expr(x.X)
			return
		}
		p.b.WriteString("CAST(")
		p.expr(x.X)
		p.b.WriteString(" AS ")
		if isYMInterval(x) {
			p.b.WriteString(ymTypeName(x.ymFields))
		} else {
			p.b.WriteString(sqlType(x.To))
		}
		p.b.WriteByte(')')
	case *GetField:
		p.expr(x.X)
		p.b.WriteByte('.')
		p.b.WriteString(vector.QuoteIdent(x.Name))
	case *Case:
		p.b.WriteString("CASE")
		for _, w := range x.Whens {
			p.b.WriteString(" WHEN ")
			p.expr(w.Cond)
			p.b.WriteString(" THEN ")
			p.expr(w.Then)
		}
		if x.Else != nil {
			p.b.WriteString(" ELSE ")
			p.expr(x.Else)
		}
		p.b.WriteString(" END")
	case *CurrentTimestamp:
		p.b.WriteString("current_timestamp()")
	case *winPlaceholder:
		x.print(p)
	case *HigherOrder:
		x.print(p)
	case *LambdaVar:
		p.b.WriteString(vector.QuoteIdent(x.Name))
	case *aggPlaceholder:
		if p.ordinals {
			fmt.Fprintf(&p.b, "agg#%d", x.index)
			return
		}
		p.b.WriteString(renderAgg(x.agg, p.pretty))
	case *Call:
		p.call(x)
	case *groupingRef:
		p.b.WriteString(x.text)
	case *outerRef:
		if p.ordinals {
			fmt.Fprintf(&p.b, "outer#%d", x.index)
			return
		}
		p.b.WriteString(x.String())
	case *subqueryExpr:
		if p.ordinals {
			p.b.WriteString(subqueryKey(x))
			return
		}
		p.b.WriteString(x.String())
	default:
		fmt.Fprintf(&p.b, "<%T>", e)
	}
}

// infixChain prints an infix call and the infix calls down its left
// spine ((1 + 1) + 1 …) in a loop, not one recursion per term.
func (p *exprPrinter) infixChain(x *Call) {
	spine := []*Call{x}
	for {
		l, ok := spine[len(spine)-1].Args[0].(*Call)
		if !ok || len(l.Args) != 2 {
			break
		}
		if _, infix := infixOps[l.Func]; !infix {
			break
		}
		spine = append(spine, l)
	}
	for range spine {
		p.b.WriteByte('(')
	}
	p.expr(spine[len(spine)-1].Args[0])
	for i := len(spine) - 1; i >= 0; i-- {
		p.b.WriteString(" " + infixOps[spine[i].Func] + " ")
		p.expr(spine[i].Args[1])
		p.b.WriteByte(')')
	}
}

func (p *exprPrinter) call(x *Call) {
	if _, ok := infixOps[x.Func]; ok && len(x.Args) == 2 {
		p.infixChain(x)
		return
	}
	switch x.Func {
	case "arrays_zip_named": // arrays_zip(a, b), without the names
		p.b.WriteString(strings.TrimSuffix(x.Func, "_named") + "(")
		for i := 1; i < len(x.Args); i += 2 {
			if i > 1 {
				p.b.WriteString(", ")
			}
			p.expr(x.Args[i])
		}
		p.b.WriteByte(')')
		return
	case ymToStringFunc, dtToStringFunc: // CAST(interval AS STRING)
		if len(x.Args) == 2 {
			p.b.WriteString("CAST(")
			p.expr(x.Args[0])
			p.b.WriteString(" AS STRING)")
			return
		}
	case "subscript": // x[i]
		if len(x.Args) == 2 {
			p.expr(x.Args[0])
			p.b.WriteByte('[')
			p.expr(x.Args[1])
			p.b.WriteByte(']')
			return
		}
	case "negative":
		if len(x.Args) == 1 {
			p.b.WriteString("(- ")
			p.expr(x.Args[0])
			p.b.WriteByte(')')
			return
		}
	case "not":
		if len(x.Args) == 1 {
			p.b.WriteString("(NOT ")
			p.expr(x.Args[0])
			p.b.WriteByte(')')
			return
		}
	case "isnull", "isnotnull":
		if len(x.Args) == 1 {
			p.b.WriteByte('(')
			p.expr(x.Args[0])
			if x.Func == "isnull" {
				p.b.WriteString(" IS NULL)")
			} else {
				p.b.WriteString(" IS NOT NULL)")
			}
			return
		}
	case "in":
		if len(x.Args) >= 1 {
			p.b.WriteByte('(')
			p.expr(x.Args[0])
			p.b.WriteString(" IN (")
			p.list(x.Args[1:])
			p.b.WriteString("))")
			return
		}
	case "between":
		if len(x.Args) == 3 {
			p.b.WriteByte('(')
			p.expr(x.Args[0])
			p.b.WriteString(" BETWEEN ")
			p.expr(x.Args[1])
			p.b.WriteString(" AND ")
			p.expr(x.Args[2])
			p.b.WriteByte(')')
			return
		}
	case "like":
		if len(x.Args) == 2 {
			p.expr(x.Args[0])
			p.b.WriteString(" LIKE ")
			p.expr(x.Args[1])
			return
		}
	}
	p.b.WriteString(x.Func)
	p.b.WriteByte('(')
	p.list(x.Args)
	p.b.WriteByte(')')
}

func (p *exprPrinter) literal(l *Literal) {
	if l.Value == nil {
		if l.Type == nil || l.Type.ID() == arrow.NULL || p.pretty {
			p.b.WriteString("NULL")
			return
		}
		p.b.WriteString("CAST(NULL AS " + sqlType(l.Type) + ")")
		return
	}
	switch v := l.Value.(type) {
	case string:
		if p.pretty {
			p.b.WriteString(v)
			return
		}
		p.b.WriteString("'" + strings.ReplaceAll(v, "'", "\\'") + "'")
		return
	case arrow.Duration:
		if l.dtFields != 0 {
			start, end := l.dtFields.fields()
			p.b.WriteString(vector.FormatDayTime(int64(v), start, end))
			return
		}
		p.b.WriteString("INTERVAL '" + vector.FormatInterval(int64(v)) + "'")
		return
	case arrow.MonthInterval:
		p.b.WriteString(vector.FormatYearMonth(int32(v), l.ymFields))
		return
	case arrow.MonthDayNanoInterval:
		p.b.WriteString("INTERVAL '" + vector.FormatCalendarInterval(v.Months, v.Days, v.Nanoseconds/1000) + "'")
		return
	case int64:
		if p.pretty {
			fmt.Fprint(&p.b, v)
			return
		}
		fmt.Fprintf(&p.b, "%dL", v)
		return
	case bool:
		if v {
			p.b.WriteString("true")
		} else {
			p.b.WriteString("false")
		}
		return
	}
	p.b.WriteString(vector.FormatValue(l.Value, l.Type))
}

// renderDisambiguated renders e with name#ordinal for the columns whose
// names occur more than once in s.
func renderDisambiguated(e Expr, s *arrow.Schema) string {
	seen := map[string]int{}
	for _, f := range s.Fields() {
		seen[f.Name]++
	}
	amb := map[string]bool{}
	for n, c := range seen {
		if c > 1 {
			amb[n] = true
		}
	}
	p := &exprPrinter{ambiguous: amb}
	p.expr(e)
	return p.b.String()
}
