package plan

import (
	"fmt"
	"math"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
)

// Explain renders a plan as an indented tree, one node per line, as
// Spark's EXPLAIN does:
//
//	Project [value, count(1)]
//	+- Aggregate [value], [count(*) AS count(1)]
//	   +- StreamingScan input [value]
func Explain(n Node) string {
	var b strings.Builder
	explainTree(&b, n, "", "")
	return b.String()
}

func explainTree(b *strings.Builder, n Node, first, rest string) {
	b.WriteString(first)
	if n == nil {
		b.WriteString("<nil>\n")
		return
	}
	b.WriteString(n.String())
	b.WriteByte('\n')
	kids := n.Children()
	for i, k := range kids {
		if i == len(kids)-1 {
			explainTree(b, k, rest+"+- ", rest+"   ")
		} else {
			explainTree(b, k, rest+":- ", rest+":  ")
		}
	}
}

func fieldNames(s *arrow.Schema) string {
	if s == nil {
		return "[]"
	}
	names := make([]string, s.NumFields())
	for i, f := range s.Fields() {
		names[i] = vector.QuoteIdent(f.Name)
	}
	return "[" + strings.Join(names, ", ") + "]"
}

func exprList(es []Expr) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = exprOrNil(e)
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func namedList(es []NamedExpr) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.String()
	}
	return "[" + strings.Join(parts, ", ") + "]"
}

func (n *Scan) String() string {
	var b strings.Builder
	if n.Streaming {
		b.WriteString("StreamingScan ")
	} else {
		b.WriteString("Scan ")
	}
	switch n.Read {
	case ReadVersion:
		fmt.Fprintf(&b, "%s VERSION AS OF %d ", vector.QuoteIdent(n.Name), n.Version)
	case ReadChanges:
		if n.To >= 0 {
			fmt.Fprintf(&b, "table_changes(%s, %d, %d) ", vector.QuoteIdent(n.Name), n.From, n.To)
		} else {
			fmt.Fprintf(&b, "table_changes(%s, %d) ", vector.QuoteIdent(n.Name), n.From)
		}
	default:
		b.WriteString(vector.QuoteIdent(n.Name) + " ")
	}
	b.WriteString(fieldNames(n.Schema()))
	if len(n.Filters) > 0 {
		b.WriteString(" PushedFilters: " + exprList(n.Filters))
	}
	return b.String()
}

func (n *Values) String() string {
	return fmt.Sprintf("Values %s, %d rows", fieldNames(n.schema), len(n.Rows))
}

func (n *SubqueryAlias) String() string { return "SubqueryAlias " + vector.QuoteIdent(n.Alias) }

func (n *Project) String() string { return "Project " + namedList(n.Exprs) }

func (n *Filter) String() string { return "Filter " + exprOrNil(n.Cond) }

func (n *Aggregate) String() string {
	aggs := make([]string, len(n.Aggs))
	for i := range n.Aggs {
		a := &n.Aggs[i]
		aggs[i] = a.String() + " AS " + vector.QuoteIdent(a.Name)
	}
	return "Aggregate " + namedList(n.GroupBy) + ", [" + strings.Join(aggs, ", ") + "]"
}

func (n *Join) String() string {
	s := "Join " + n.Type.String()
	if len(n.Using) > 0 {
		q := make([]string, len(n.Using))
		for i, u := range n.Using {
			q[i] = vector.QuoteIdent(u)
		}
		s += ", USING (" + strings.Join(q, ", ") + ")"
	}
	if n.Cond != nil {
		s += ", " + renderDisambiguated(n.Cond, joinedSchema(n.Left.Schema(), n.Right.Schema()))
	}
	return s
}

func (n *Union) String() string { return "Union" }

func (n *Limit) String() string {
	if n.N == math.MaxInt64 { // OFFSET without LIMIT
		return fmt.Sprintf("Offset %d", n.Offset)
	}
	if n.Offset > 0 {
		return fmt.Sprintf("Limit %d OFFSET %d", n.N, n.Offset)
	}
	return fmt.Sprintf("Limit %d", n.N)
}

func (n *Sort) String() string {
	parts := make([]string, len(n.Keys))
	for i, k := range n.Keys {
		parts[i] = k.String()
	}
	return "Sort [" + strings.Join(parts, ", ") + "]"
}

func (n *Deduplicate) String() string {
	name := "Deduplicate"
	if n.WithinWatermark {
		name = "DeduplicateWithinWatermark"
	}
	s := n.Input.Schema()
	keys := n.Keys
	if len(keys) == 0 {
		keys = make([]int, s.NumFields())
		for i := range keys {
			keys[i] = i
		}
	}
	parts := make([]string, 0, len(keys))
	for _, k := range keys {
		if k >= 0 && k < s.NumFields() {
			parts = append(parts, vector.QuoteIdent(s.Field(k).Name))
		}
	}
	return name + " [" + strings.Join(parts, ", ") + "]"
}

func (n *EventTimeWatermark) String() string {
	name := fmt.Sprintf("#%d", n.Column)
	if s := n.Input.Schema(); n.Column >= 0 && n.Column < s.NumFields() {
		name = vector.QuoteIdent(s.Field(n.Column).Name)
	}
	return fmt.Sprintf("EventTimeWatermark %s, %s", name, vector.FormatInterval(n.DelayMs*1000))
}

func (n *WindowAssign) String() string {
	return fmt.Sprintf("WindowAssign window(%s, %s, %s, %s) AS %s", exprOrNil(n.Time),
		vector.FormatInterval(n.Width), vector.FormatInterval(n.Slide), vector.FormatInterval(n.Start), vector.QuoteIdent(n.Name))
}

func (n *SessionWindow) String() string {
	if n.GapExpr != nil {
		return fmt.Sprintf("SessionWindow session_window(%s, %s) AS %s", exprOrNil(n.Time), n.GapExpr, vector.QuoteIdent(n.Name))
	}
	return fmt.Sprintf("SessionWindow session_window(%s, %s) AS %s", exprOrNil(n.Time), vector.FormatInterval(n.Gap), vector.QuoteIdent(n.Name))
}

func (n *Explode) String() string {
	fn := "explode"
	if n.Outer {
		fn = "explode_outer"
	}
	return fmt.Sprintf("Explode %s(%s) AS %s", fn, exprOrNil(n.Expr), vector.QuoteIdent(n.Name))
}

func (n *FlatMapGroupsWithState) String() string {
	name := "FlatMapGroupsWithState"
	if n.MapGroups {
		name = "MapGroupsWithState"
	}
	fn := n.FuncName
	if fn == "" {
		fn = "<func>"
	}
	return fmt.Sprintf("%s %s, %s, %s, %s, %s", name, fn, namedList(n.Keys), n.Mode, n.Timeout, fieldNames(n.OutputSchema))
}
