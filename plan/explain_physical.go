package plan

import (
	"fmt"
	"strings"

	"github.com/arrowstream/arrowstream/vector"
)

// PhysicalPlan renders the operator tree that Execute (batch) or the
// streaming engine (streaming parts, marked "stateful") builds for a plan,
// in the indented form of Explain.
func PhysicalPlan(n Node) string {
	var b strings.Builder
	physicalTree(&b, n, "", "")
	return b.String()
}

func physicalTree(b *strings.Builder, n Node, first, rest string) {
	if a, ok := n.(*SubqueryAlias); ok {
		physicalTree(b, a.Input, first, rest)
		return
	}
	line, kids := physicalLine(n)
	b.WriteString(first)
	b.WriteString(line)
	b.WriteByte('\n')
	for i, k := range kids {
		if i == len(kids)-1 {
			physicalTree(b, k, rest+"+- ", rest+"   ")
		} else {
			physicalTree(b, k, rest+":- ", rest+":  ")
		}
	}
}

// physicalLine describes the operator of n and returns the nodes below it
// (a top-N consumes its Sort).
func physicalLine(n Node) (string, []Node) {
	streaming := n.IsStreaming()
	switch x := n.(type) {
	case *Scan:
		if x.Streaming {
			return "StreamingSource " + vector.QuoteIdent(x.Name) + " " + fieldNames(x.Schema()), nil
		}
		s := "TableScan " + strings.TrimPrefix(x.String(), "Scan ")
		return s, nil
	case *Values:
		return fmt.Sprintf("LocalScan %s, %d rows", fieldNames(x.Schema()), len(x.Rows)), nil
	case *Range:
		return x.String(), nil
	case *Project:
		return x.String(), x.Children()
	case *Filter:
		return x.String(), x.Children()
	case *Aggregate:
		keys := namedList(x.GroupBy)
		aggs := make([]string, len(x.Aggs))
		for i := range x.Aggs {
			aggs[i] = x.Aggs[i].String() + " AS " + vector.QuoteIdent(x.Aggs[i].Name)
		}
		desc := fmt.Sprintf("(keys=%s, functions=[%s])", keys, strings.Join(aggs, ", "))
		if x.Input.IsStreaming() {
			if sessionKey(x) >= 0 {
				return "SessionWindowAggregate" + desc + " [stateful]", x.Children()
			}
			return "StreamingAggregate" + desc + " [stateful]", x.Children()
		}
		return "HashAggregate" + desc, x.Children()
	case *Join:
		lk, rk, nullSafe, residual := EquiJoinKeys(x)
		var keys []string
		for i := range lk {
			op := "="
			if nullSafe[i] {
				op = "<=>"
			}
			keys = append(keys, fmt.Sprintf("%s %s %s", lk[i], op, rk[i]))
		}
		desc := fmt.Sprintf("%s, keys=[%s]", x.Type, strings.Join(keys, ", "))
		if residual != nil {
			desc += ", residual=" + renderDisambiguated(residual, joinedSchema(x.Left.Schema(), x.Right.Schema()))
		}
		if x.Left.IsStreaming() && x.Right.IsStreaming() {
			return "StreamingSymmetricHashJoin " + desc + " [stateful]", x.Children()
		}
		return "HashJoin " + desc + ", build=right", x.Children()
	case *Union:
		return "Union", x.Children()
	case *Limit:
		if s, ok := x.Input.(*Sort); ok && x.Offset == 0 && !streaming {
			return fmt.Sprintf("TopN %d %s", x.N, strings.TrimPrefix(s.String(), "Sort ")), s.Children()
		}
		if streaming {
			return "StreamingLimit " + strings.TrimPrefix(x.String(), "Limit ") + " [stateful]", x.Children()
		}
		return x.String(), x.Children()
	case *Sort:
		return x.String(), x.Children()
	case *Deduplicate:
		name := "HashDeduplicate " + strings.TrimPrefix(strings.TrimPrefix(x.String(), "DeduplicateWithinWatermark "), "Deduplicate ")
		if streaming {
			name = "Streaming" + x.String() + " [stateful]"
		}
		return name, x.Children()
	case *EventTimeWatermark:
		if streaming {
			return x.String() + " [observes event time]", x.Children()
		}
		return x.String() + " [no-op in batch]", x.Children()
	case *WindowAssign, *SessionWindow, *Explode:
		return n.String(), n.Children()
	case *FlatMapGroupsWithState:
		return x.String() + " [stateful]", x.Children()
	}
	return n.String(), n.Children()
}

// ExplainText renders an EXPLAIN statement: the optimized logical plan and
// the physical plan, and with EXTENDED also the parsed statement and the
// analyzed plan, each under a "== ... ==" heading as Spark prints them.
func ExplainText(e *ExplainStatement) (string, error) {
	var b strings.Builder
	switch s := e.Stmt.(type) {
	case *QueryStatement:
		return explainQuery(&b, e, s.Plan, "")
	case *StreamingTableStatement:
		return explainQuery(&b, e, s.Query, "CREATE STREAMING TABLE "+vector.QuoteIdent(s.Name)+"\n")
	case *ExplainStatement:
		return "", fmt.Errorf("EXPLAIN of EXPLAIN: %w", ErrUnsupported)
	}
	if e.Extended {
		b.WriteString("== Parsed Logical Plan ==\n" + e.Source + "\n\n")
	}
	b.WriteString("== Physical Plan ==\nExecuteCommand " + e.Source + "\n")
	return b.String(), nil
}

func explainQuery(b *strings.Builder, e *ExplainStatement, n Node, header string) (string, error) {
	opt, err := Optimize(n)
	if err != nil {
		return "", err
	}
	if e.Extended {
		b.WriteString("== Parsed Logical Plan ==\n" + e.Source + "\n\n")
		b.WriteString("== Analyzed Logical Plan ==\n" + header + Explain(n) + "\n")
	}
	b.WriteString("== Optimized Logical Plan ==\n" + header + Explain(opt) + "\n")
	b.WriteString("== Physical Plan ==\n" + PhysicalPlan(opt))
	return b.String(), nil
}
