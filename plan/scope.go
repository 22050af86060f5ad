package plan

import (
	"strings"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/sql"
)

// scopeCol is what name resolution knows of one input column besides its
// field: the qualifier it can be referenced with (a table name or alias),
// and whether it is hidden (the left and right key columns of a USING
// join, reachable only qualified) or shadowed (an input column named
// window when the select block adds its own window column).
type scopeCol struct {
	qual string
	// db is the database of the table the column was read from (not
	// aliased), for db.table.column; "" otherwise.
	db       string
	hidden   bool
	shadowed bool
}

// scope is the set of columns names resolve against: a node's output with
// per-column qualifiers.
type scope struct {
	node Node
	cols []scopeCol
}

// scopeOf derives the scope of a node built by the builder API:
// qualifiers come from SubqueryAlias and Scan nodes and pass through
// operators that keep their input's columns.
func scopeOf(n Node) *scope {
	return &scope{node: n, cols: qualifiers(n)}
}

func qualifiers(n Node) []scopeCol {
	nf := n.Schema().NumFields()
	out := make([]scopeCol, nf)
	switch x := n.(type) {
	case *Scan:
		q := x.Name
		if i := strings.LastIndexByte(q, '.'); i >= 0 {
			q = q[i+1:]
		}
		for i := range out {
			out[i].qual = q
		}
	case *SubqueryAlias:
		for i := range out {
			out[i].qual = x.Alias
		}
	case *Filter, *Limit, *Sort, *Deduplicate, *EventTimeWatermark, *WindowAssign, *SessionWindow, *Explode:
		in := qualifiers(n.Children()[0])
		copy(out, in)
	case *Join:
		l := qualifiers(x.Left)
		copy(out, l)
		if x.Type != LeftSemiJoin && x.Type != LeftAntiJoin {
			copy(out[len(l):], qualifiers(x.Right))
		}
	case *Project:
		in := qualifiers(x.Input)
		for i, e := range x.Exprs {
			if c, ok := e.Expr.(*ColumnRef); ok && c.Index < len(in) && c.Name == e.Name {
				out[i].qual = in[c.Index].qual
			}
		}
	}
	return out
}

// withQualifier returns a scope of n where every column has qualifier q.
func withQualifier(n Node, q string) *scope {
	s := &scope{node: n, cols: make([]scopeCol, n.Schema().NumFields())}
	for i := range s.cols {
		s.cols[i].qual = q
	}
	return s
}

// lookup resolves a name path (a, t.a, a.field, t.a.field) to a column
// reference followed by struct field accesses, as Spark does: a qualified
// match is tried first, then an unqualified one. Names compare case
// insensitively.
func (s *scope) lookup(parts []sql.Ident, pos sql.Pos) (Expr, error) {
	schema := s.node.Schema()
	match := func(qual string, name string, allowHidden bool) []int {
		var hits []int
		for i := 0; i < schema.NumFields(); i++ {
			f := schema.Field(i)
			c := s.cols[i]
			if qual == "" {
				if c.hidden || c.shadowed {
					continue
				}
			} else if !strings.EqualFold(c.qual, qual) || c.hidden && !allowHidden {
				continue
			}
			if strings.EqualFold(f.Name, name) {
				hits = append(hits, i)
			}
		}
		return hits
	}
	var hits []int
	rest := parts[1:]
	// spark_catalog.db.table.column, then db.table.column.
	if len(parts) >= 4 && strings.EqualFold(parts[0].Name, "spark_catalog") {
		hits = s.matchDB(match(parts[2].Name, parts[3].Name, true), parts[1].Name)
		rest = parts[4:]
	}
	if len(hits) == 0 && len(parts) >= 3 {
		hits = s.matchDB(match(parts[1].Name, parts[2].Name, true), parts[0].Name)
		rest = parts[3:]
	}
	if len(hits) == 0 && len(parts) >= 2 {
		hits = match(parts[0].Name, parts[1].Name, true)
		rest = parts[2:]
	}
	if len(hits) == 0 {
		hits = match("", parts[0].Name, false)
		rest = parts[1:]
	}
	full := joinIdents(parts)
	switch len(hits) {
	case 0:
		return nil, errorAt(pos, ErrUnresolved, "A column or function parameter with name %s cannot be resolved.%s",
			backquote(full), didYouMean(full, s.candidates()))
	case 1:
	default:
		cands := make([]string, len(hits))
		for i, h := range hits {
			cands[i] = backquote(s.qualifiedName(h))
		}
		return nil, errorAt(pos, ErrAmbiguous, "Reference %s is ambiguous, could be: [%s].", backquote(full), strings.Join(cands, ", "))
	}
	var e Expr = ColumnOf(schema, hits[0])
	for _, f := range rest {
		g, err := fieldAccess(e, f)
		if err != nil {
			return nil, err
		}
		e = g
	}
	return e, nil
}

// matchDB keeps the hits whose table is in database db.
func (s *scope) matchDB(hits []int, db string) []int {
	out := hits[:0]
	for _, h := range hits {
		if s.cols[h].db != "" && strings.EqualFold(s.cols[h].db, db) {
			out = append(out, h)
		}
	}
	return out
}

// starQualifies reports whether qual (t, db.t or spark_catalog.db.t)
// names the table of column c.
func starQualifies(c scopeCol, qual []sql.Ident) bool {
	if len(qual) == 3 && strings.EqualFold(qual[0].Name, "spark_catalog") {
		qual = qual[1:]
	}
	switch len(qual) {
	case 1:
		return strings.EqualFold(c.qual, qual[0].Name)
	case 2:
		if c.db != "" && strings.EqualFold(c.db, qual[0].Name) && strings.EqualFold(c.qual, qual[1].Name) {
			return true
		}
	}
	return strings.EqualFold(c.qual, joinIdents(qual))
}

// fieldAccess resolves x.name for a struct x.
func fieldAccess(x Expr, name sql.Ident) (Expr, error) {
	st, ok := x.DataType().(*arrow.StructType)
	if !ok {
		return nil, errorAt(name.Pos, ErrType, "Can't extract value from %s: need struct type but got %s.", x, typeOrNil(x))
	}
	found := -1
	for i, f := range st.Fields() {
		if strings.EqualFold(f.Name, name.Name) {
			if found >= 0 {
				return nil, errorAt(name.Pos, ErrAmbiguous, "Ambiguous reference to fields %s of %s.", backquote(name.Name), x)
			}
			found = i
		}
	}
	if found < 0 {
		names := make([]string, st.NumFields())
		for i, f := range st.Fields() {
			names[i] = backquote(f.Name)
		}
		return nil, errorAt(name.Pos, ErrUnresolved, "No such struct field %s in %s.", backquote(name.Name), strings.Join(names, ", "))
	}
	return &GetField{X: x, Index: found, Name: st.Field(found).Name}, nil
}

// candidates lists the names a reference could have meant.
func (s *scope) candidates() []string {
	schema := s.node.Schema()
	out := make([]string, 0, len(s.cols))
	for i, f := range schema.Fields() {
		if !s.cols[i].hidden && !s.cols[i].shadowed {
			out = append(out, f.Name)
		}
		if s.cols[i].qual != "" {
			out = append(out, s.cols[i].qual+"."+f.Name)
		}
	}
	return out
}

func (s *scope) qualifiedName(i int) string {
	name := s.node.Schema().Field(i).Name
	if q := s.cols[i].qual; q != "" {
		return q + "." + name
	}
	return name
}

// expandStar lists the columns * (qual empty) or qual.* stands for.
func (s *scope) expandStar(qual []sql.Ident, pos sql.Pos) ([]NamedExpr, error) {
	schema := s.node.Schema()
	var out []NamedExpr
	q := joinIdents(qual)
	for i, f := range schema.Fields() {
		c := s.cols[i]
		if q == "" {
			if c.hidden {
				continue
			}
		} else if !starQualifies(c, qual) {
			continue
		}
		out = append(out, NamedExpr{Name: f.Name, Expr: ColumnOf(schema, i)})
	}
	if q != "" && len(out) == 0 {
		var quals []string
		for _, c := range s.cols {
			if c.qual != "" {
				quals = append(quals, c.qual)
			}
		}
		return nil, errorAt(pos, ErrUnresolved, "Cannot resolve %s.* given input columns %s.%s", backquote(q), fieldNames(schema), didYouMean(q, quals))
	}
	return out, nil
}

func joinIdents(ids []sql.Ident) string {
	parts := make([]string, len(ids))
	for i, id := range ids {
		parts[i] = id.Name
	}
	return strings.Join(parts, ".")
}

func backquote(s string) string { return "`" + s + "`" }
