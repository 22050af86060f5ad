package plan

import (
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
)

// SubplanKey renders the plan n as a canonical text: two plans with the
// same key compute the same rows, in the same order, from the same inputs
// (the streaming engine runs such a stateful subplan once per epoch and
// gives its output to every reader, docs/architecture.md). scan names a
// streaming scan's input: the same text for scans of the same source,
// false when the scan cannot be shared.
//
// The key is conservative: ok is false for a plan that holds a node or
// expression it does not know, a batch scan (a static table may change
// between two reads), literal rows, a user function of groups
// (flatMapGroupsWithState: its function may count its calls), or a
// nondeterministic call (rand(), uuid(), a user function not declared
// deterministic). Column references are rendered by ordinal and every
// expression with its type, so that names alone (an ambiguous column of
// a join) never make two plans equal; a SubqueryAlias is left out (it
// renames nothing that the rows depend on).
func SubplanKey(n Node, scan func(*Scan) (string, bool)) (string, bool) {
	k := subplanKeyer{scan: scan}
	if !k.node(n) {
		return "", false
	}
	return k.b.String(), true
}

type subplanKeyer struct {
	b    strings.Builder
	scan func(*Scan) (string, bool)
}

func (k *subplanKeyer) printf(format string, args ...any) { fmt.Fprintf(&k.b, format, args...) }

func (k *subplanKeyer) node(n Node) bool {
	if a, ok := n.(*SubqueryAlias); ok {
		return k.node(a.Input)
	}
	k.printf("(%T ", n)
	if !k.fields(n) {
		return false
	}
	k.schema(n.Schema())
	for _, c := range n.Children() {
		if !k.node(c) {
			return false
		}
	}
	k.b.WriteByte(')')
	return true
}

// fields renders what n computes beyond its children and schema.
func (k *subplanKeyer) fields(n Node) bool {
	switch x := n.(type) {
	case *Scan:
		if !x.Streaming || k.scan == nil {
			return false
		}
		id, ok := k.scan(x)
		if !ok {
			return false
		}
		k.printf("src=%q read=%d v=%d from=%d to=%d cols=%v", id, x.Read, x.Version, x.From, x.To, x.Columns)
		return k.exprs(x.Filters)
	case *Project:
		return k.named(x.Exprs)
	case *Filter:
		return k.expr(x.Cond)
	case *Aggregate:
		if !k.named(x.GroupBy) {
			return false
		}
		for _, a := range x.Aggs {
			k.printf(" agg(%d distinct=%v ignoreNulls=%v %q %s", a.Func, a.Distinct, a.IgnoreNulls, a.Name, typeKey(a.Type))
			if !k.exprs(a.Args) {
				return false
			}
			k.b.WriteByte(')')
		}
		return true
	case *Join:
		k.printf("type=%d", x.Type)
		if x.Cond == nil {
			return true
		}
		return k.expr(x.Cond)
	case *Union:
		return true
	case *Limit:
		k.printf("n=%d offset=%d", x.N, x.Offset)
		return true
	case *Sort:
		for _, s := range x.Keys {
			k.printf(" key(desc=%v nulls=%d", s.Desc, s.Nulls)
			if !k.expr(s.Expr) {
				return false
			}
			k.b.WriteByte(')')
		}
		return true
	case *Deduplicate:
		k.printf("keys=%v within=%v", x.Keys, x.WithinWatermark)
		return true
	case *DistinctMark:
		k.printf("keys=%v sets=%v time=%d", x.Keys, x.Sets, x.TimeCol)
		return true
	case *EventTimeWatermark:
		k.printf("col=%d delay=%d", x.Column, x.DelayMs)
		return true
	case *WindowAssign:
		k.printf("width=%d slide=%d start=%d name=%q", x.Width, x.Slide, x.Start, x.Name)
		return k.expr(x.Time)
	case *SessionWindow:
		k.printf("gap=%d name=%q", x.Gap, x.Name)
		if x.GapExpr != nil && !k.expr(x.GapExpr) {
			return false
		}
		return k.expr(x.Time)
	case *Explode:
		k.printf("name=%q outer=%v", x.Name, x.Outer)
		return k.expr(x.Expr)
	}
	return false
}

func (k *subplanKeyer) schema(s *arrow.Schema) {
	k.b.WriteString(" [")
	for _, f := range s.Fields() {
		k.printf("%q %s null=%v", f.Name, typeKey(f.Type), f.Nullable)
		keys, vals := f.Metadata.Keys(), f.Metadata.Values()
		for i := range keys {
			k.printf(" %q=%q", keys[i], vals[i])
		}
		k.b.WriteByte(';')
	}
	k.b.WriteByte(']')
}

func (k *subplanKeyer) named(es []NamedExpr) bool {
	for _, e := range es {
		k.printf(" %q=", e.Name)
		if !k.expr(e.Expr) {
			return false
		}
	}
	return true
}

func (k *subplanKeyer) exprs(es []Expr) bool {
	for _, e := range es {
		if !k.expr(e) {
			return false
		}
	}
	return true
}

// expr renders e with its type at every level.
func (k *subplanKeyer) expr(e Expr) bool {
	k.printf("{%s null=%v ", typeKey(e.DataType()), e.Nullable())
	switch x := e.(type) {
	case *ColumnRef:
		k.printf("#%d dt=%d", x.Index, x.dt)
	case *Literal:
		// %#v renders the canonical Go value with its type; a value
		// holding a pointer renders its address, which only makes two
		// literals look different (never shared, never wrong).
		k.printf("lit %#v wall=%v ym=%d day=%v dt=%d cast=%v", x.Value, x.wallClock, x.ymFields, x.dayField, x.dtFields, x.castValue)
	case *Call:
		if nondeterministic[x.Func] {
			return false
		}
		if x.UDF != nil {
			if !x.UDF.Deterministic {
				return false
			}
			k.printf("udf=%p ", x.UDF)
		}
		k.printf("call %q mode=%d loc=%s", x.Func, x.Mode, locName(x.Loc))
		if !k.exprs(x.Args) {
			return false
		}
	case *Cast:
		legacy := ""
		if x.legacyTo != nil {
			legacy = typeKey(x.legacyTo)
		}
		k.printf("cast mode=%d loc=%s legacy=%s ym=%d", x.Mode, locName(x.Loc), legacy, x.ymFields)
		if !k.expr(x.X) {
			return false
		}
	case *GetField:
		k.printf("field %d", x.Index)
		if !k.expr(x.X) {
			return false
		}
	case *Case:
		k.b.WriteString("case")
		for _, w := range x.Whens {
			if !k.expr(w.Cond) || !k.expr(w.Then) {
				return false
			}
		}
		if x.Else != nil && !k.expr(x.Else) {
			return false
		}
	case *CurrentTimestamp:
		// The epoch's batch timestamp: the same for every reader.
		k.b.WriteString("current_timestamp")
	default:
		return false
	}
	k.b.WriteByte('}')
	return true
}

// typeKey renders an Arrow type: its fingerprint (parameters, nested
// fields) and its name (an extension type's fingerprint is its storage's).
func typeKey(t arrow.DataType) string {
	if t == nil {
		return "nil"
	}
	return strconv.Quote(t.Fingerprint() + "|" + t.String())
}

// locName names a session time zone (nil is UTC).
func locName(l *time.Location) string {
	if l == nil {
		return "UTC"
	}
	return l.String()
}
