package plan

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
)

// PruneColumns removes columns no ancestor needs: unused projection
// items and aggregates, and unread columns of batch scans; joins and
// unions get projections on their inputs. The root keeps its schema.
func PruneColumns(n Node) (Node, error) {
	return pruner{}.columns(n)
}

// pruner is PruneColumns with its options.
type pruner struct {
	// keepStreamJoinInputs leaves a stream-stream join's inputs with the
	// columns that only filters below the join read, so that its state
	// keeps the layout checkpoints written before pruning reached join
	// inputs recorded (OptimizeOptions.KeepStreamJoinInputColumns).
	keepStreamJoinInputs bool
}

func (pr pruner) columns(n Node) (Node, error) {
	need := make([]bool, n.Schema().NumFields())
	for i := range need {
		need[i] = true
	}
	out, m, err := pr.prune(n, need)
	if err != nil {
		return nil, err
	}
	if isIdentityMap(m, len(need)) {
		return out, nil
	}
	// The root gained columns: select the original ones back.
	s := out.Schema()
	exprs := make([]NamedExpr, len(m))
	for i, j := range m {
		exprs[i] = NamedExpr{Name: n.Schema().Field(i).Name, Expr: ColumnOf(s, j)}
	}
	return NewProject(out, exprs)
}

func isIdentityMap(m []int, n int) bool {
	if len(m) != n {
		return false
	}
	for i, j := range m {
		if i != j {
			return false
		}
	}
	return true
}

// identity is the map of a node whose columns did not move.
func identity(n int) []int {
	m := make([]int, n)
	for i := range m {
		m[i] = i
	}
	return m
}

func all(n int) []bool {
	b := make([]bool, n)
	for i := range b {
		b[i] = true
	}
	return b
}

func markColumns(need []bool, es ...Expr) {
	for _, e := range es {
		if e == nil {
			continue
		}
		for _, c := range Columns(e) {
			if c >= 0 && c < len(need) {
				need[c] = true
			}
		}
	}
}

// prune returns n rewritten to produce at least the needed columns, and
// the map from n's column ordinals to the new node's (-1: dropped).
func (pr pruner) prune(n Node, need []bool) (Node, []int, error) {
	switch x := n.(type) {
	case *Scan:
		return pruneScan(x, need)
	case *Project:
		return pr.pruneProject(x, need)
	case *Filter:
		in := append(make([]bool, 0, len(need)), need...)
		markColumns(in, x.Cond)
		child, m, err := pr.prune(x.Input, in)
		if err != nil {
			return nil, nil, err
		}
		c, err := remapColumns(x.Cond, m)
		if err != nil {
			return nil, nil, err
		}
		return &Filter{Input: child, Cond: c}, m, nil
	case *Sort:
		in := append(make([]bool, 0, len(need)), need...)
		keys := make([]Expr, len(x.Keys))
		for i, k := range x.Keys {
			keys[i] = k.Expr
		}
		markColumns(in, keys...)
		child, m, err := pr.prune(x.Input, in)
		if err != nil {
			return nil, nil, err
		}
		out := &Sort{Input: child, Keys: make([]SortKey, len(x.Keys)), Local: x.Local}
		for i, k := range x.Keys {
			e, err := remapColumns(k.Expr, m)
			if err != nil {
				return nil, nil, err
			}
			out.Keys[i] = SortKey{Expr: e, Desc: k.Desc, Nulls: k.Nulls}
		}
		return out, m, nil
	case *Limit:
		child, m, err := pr.prune(x.Input, need)
		if err != nil {
			return nil, nil, err
		}
		c := *x
		c.Input = child
		return &c, m, nil
	case *SubqueryAlias:
		child, m, err := pr.prune(x.Input, need)
		if err != nil {
			return nil, nil, err
		}
		return &SubqueryAlias{Input: child, Alias: x.Alias}, m, nil
	case *EventTimeWatermark:
		in := append(make([]bool, 0, len(need)), need...)
		in[x.Column] = true
		child, m, err := pr.prune(x.Input, in)
		if err != nil {
			return nil, nil, err
		}
		w, err := NewEventTimeWatermark(child, m[x.Column], x.DelayMs)
		if err != nil {
			return nil, nil, err
		}
		return w, m, nil
	case *Deduplicate:
		in := append(make([]bool, 0, len(need)), need...)
		if len(x.Keys) == 0 {
			in = all(len(need))
		}
		for _, k := range x.Keys {
			in[k] = true
		}
		if x.IsStreaming() {
			// A streaming dedup drops late rows by the input's event-time
			// column even when it is not a key: keep it.
			keepEventTime(in, x.Input.Schema())
		}
		child, m, err := pr.prune(x.Input, in)
		if err != nil {
			return nil, nil, err
		}
		c := *x
		c.Input = child
		if len(x.Keys) == 0 && child.Schema().NumFields() != len(need) {
			// Dedup on every column must not gain columns.
			return nil, nil, fmt.Errorf("plan: pruning changed the columns of %s", x)
		}
		c.Keys = make([]int, len(x.Keys))
		for i, k := range x.Keys {
			c.Keys[i] = m[k]
		}
		return &c, m, nil
	case *WindowAssign, *SessionWindow, *Explode:
		return pr.pruneAppend(n, need)
	case *Aggregate:
		return pr.pruneAggregate(x, need)
	case *Join:
		return pr.pruneJoin(x, need)
	case *Union:
		return pr.pruneUnion(x, need)
	case *Window:
		// Every input column is an output column: all stay, but what is
		// below is pruned (an aggregation's or a join's inputs).
		child, m, err := pr.prune(x.Input, all(x.Input.Schema().NumFields()))
		if err != nil {
			return nil, nil, err
		}
		for i, v := range m {
			if v != i {
				return n, identity(len(need)), nil
			}
		}
		c := *x
		c.Input = child
		return &c, identity(len(need)), nil
	}
	// Values, FlatMapGroupsWithState, and anything unknown: keep as is,
	// with the whole input of a FlatMapGroupsWithState (its function sees
	// entire rows).
	return n, identity(len(need)), nil
}

func pruneScan(s *Scan, need []bool) (Node, []int, error) {
	if s.Streaming {
		return pruneStreamingScan(s, need)
	}
	// Scan columns are table ordinals; keep at least one so that row
	// counts survive (count(*)).
	cur := s.Columns
	if cur == nil {
		cur = identity(len(need))
	}
	var cols []int
	m := make([]int, len(need))
	for i := range need {
		m[i] = -1
		if need[i] {
			m[i] = len(cols)
			cols = append(cols, cur[i])
		}
	}
	if len(cols) == 0 && len(need) > 0 {
		cols = []int{cur[0]}
		m[0] = 0
	}
	if len(cols) == len(cur) {
		return s, identity(len(need)), nil
	}
	c := *s
	c.Columns = cols
	return c.withSchema(), m, nil
}

// pruneStreamingScan selects the needed columns of a streaming source
// with a projection of column references (a source delivers whole
// records; selecting columns copies nothing), so that the operators above
// it do not carry, filter and gather columns nobody reads.
func pruneStreamingScan(s *Scan, need []bool) (Node, []int, error) {
	schema := s.Schema()
	var exprs []NamedExpr
	m := make([]int, len(need))
	for i := range need {
		m[i] = -1
		if need[i] {
			m[i] = len(exprs)
			exprs = append(exprs, NamedExpr{Name: schema.Field(i).Name, Expr: ColumnOf(schema, i)})
		}
	}
	if len(exprs) == 0 && len(need) > 0 {
		exprs = append(exprs, NamedExpr{Name: schema.Field(0).Name, Expr: ColumnOf(schema, 0)})
		m[0] = 0
	}
	if len(exprs) == len(need) {
		return s, identity(len(need)), nil
	}
	p, err := NewProject(s, exprs)
	if err != nil {
		return nil, nil, err
	}
	return p, m, nil
}

func (pr pruner) pruneProject(p *Project, need []bool) (Node, []int, error) {
	var kept []NamedExpr
	m := make([]int, len(need))
	for i, e := range p.Exprs {
		m[i] = -1
		if need[i] {
			m[i] = len(kept)
			kept = append(kept, e)
		}
	}
	if len(kept) == 0 && len(p.Exprs) > 0 {
		kept = append(kept, p.Exprs[0])
		m[0] = 0
	}
	in := make([]bool, p.Input.Schema().NumFields())
	for _, e := range kept {
		markColumns(in, e.Expr)
	}
	var child Node
	var cm []int
	var err error
	if sc, ok := p.Input.(*Scan); ok && sc.Streaming {
		// This projection selects the source's columns already.
		child, cm = sc, identity(len(in))
	} else if child, cm, err = pr.prune(p.Input, in); err != nil {
		return nil, nil, err
	}
	exprs := make([]NamedExpr, len(kept))
	for i, e := range kept {
		x, err := remapColumns(e.Expr, cm)
		if err != nil {
			return nil, nil, err
		}
		exprs[i] = NamedExpr{Name: e.Name, Expr: x}
	}
	np, err := NewProject(child, exprs)
	if err != nil {
		return nil, nil, err
	}
	return np, m, nil
}

// pruneAppend prunes the input of a node that appends one column to its
// input's (windows, explode).
func (pr pruner) pruneAppend(n Node, need []bool) (Node, []int, error) {
	nIn := len(need) - 1
	in := append(make([]bool, 0, nIn), need[:nIn]...)
	var e Expr
	switch x := n.(type) {
	case *WindowAssign:
		e = x.Time
	case *SessionWindow:
		e = x.Time
	case *Explode:
		e = x.Expr
	}
	markColumns(in, e)
	var gap Expr
	if sw, ok := n.(*SessionWindow); ok && sw.GapExpr != nil {
		gap = sw.GapExpr
		markColumns(in, gap)
	}
	child, cm, err := pr.prune(n.Children()[0], in)
	if err != nil {
		return nil, nil, err
	}
	ne, err := remapColumns(e, cm)
	if err != nil {
		return nil, nil, err
	}
	if gap != nil {
		if gap, err = remapColumns(gap, cm); err != nil {
			return nil, nil, err
		}
	}
	var out Node
	switch x := n.(type) {
	case *WindowAssign:
		out, err = NewWindowAssign(child, ne, x.Width, x.Slide, x.Start, x.Name)
	case *SessionWindow:
		if gap != nil {
			out, err = NewSessionWindowExpr(child, ne, gap, x.Name)
		} else {
			out, err = NewSessionWindow(child, ne, x.Gap, x.Name)
		}
	case *Explode:
		out, err = NewExplode(child, ne, x.Name, x.Outer)
	}
	if err != nil {
		return nil, nil, err
	}
	m := append(append([]int(nil), cm...), out.Schema().NumFields()-1)
	return out, m, nil
}

func (pr pruner) pruneAggregate(a *Aggregate, need []bool) (Node, []int, error) {
	nk := len(a.GroupBy)
	m := make([]int, len(need))
	for i := 0; i < nk; i++ {
		m[i] = i
	}
	var aggs []AggregateExpr
	for i, g := range a.Aggs {
		m[nk+i] = -1
		if need[nk+i] {
			m[nk+i] = nk + len(aggs)
			aggs = append(aggs, g)
		}
	}
	if len(aggs) == 0 && nk == 0 && len(a.Aggs) > 0 {
		aggs = append(aggs, a.Aggs[0])
		m[0] = 0
	}
	in := make([]bool, a.Input.Schema().NumFields())
	for _, k := range a.GroupBy {
		markColumns(in, k.Expr)
	}
	for _, g := range aggs {
		markColumns(in, g.Args...)
	}
	child, cm, err := pr.prune(a.Input, in)
	if err != nil {
		return nil, nil, err
	}
	keys := make([]NamedExpr, nk)
	for i, k := range a.GroupBy {
		e, err := remapColumns(k.Expr, cm)
		if err != nil {
			return nil, nil, err
		}
		keys[i] = NamedExpr{Name: k.Name, Expr: e}
	}
	for i := range aggs {
		g := aggs[i]
		g.Args = make([]Expr, len(aggs[i].Args))
		for j, x := range aggs[i].Args {
			if g.Args[j], err = remapColumns(x, cm); err != nil {
				return nil, nil, err
			}
		}
		aggs[i] = g
	}
	out, err := NewAggregate(child, keys, aggs)
	if err != nil {
		return nil, nil, err
	}
	return out, m, nil
}

func (pr pruner) pruneJoin(j *Join, need []bool) (Node, []int, error) {
	nl, nr := j.Left.Schema().NumFields(), j.Right.Schema().NumFields()
	both := make([]bool, nl+nr)
	copy(both, need)
	markColumns(both, j.Cond)
	if j.Left.IsStreaming() && j.Right.IsStreaming() {
		// A stream-stream join drops late rows and evicts state by each
		// side's event-time column: keep them.
		keepEventTime(both[:nl], j.Left.Schema())
		keepEventTime(both[nl:], j.Right.Schema())
	}
	left, lm, err := pr.prune(j.Left, both[:nl])
	if err != nil {
		return nil, nil, err
	}
	right, rm, err := pr.prune(j.Right, both[nl:])
	if err != nil {
		return nil, nil, err
	}
	if !(pr.keepStreamJoinInputs && j.Left.IsStreaming() && j.Right.IsStreaming()) {
		// Each input keeps only what the join and its ancestors read,
		// as Spark's ColumnPruning: a column only a filter below reads
		// (q3's category) is not carried into the hash table or, for a
		// stream-stream join, into its state.
		if left, lm, err = narrowTo(left, lm, both[:nl]); err != nil {
			return nil, nil, err
		}
		if right, rm, err = narrowTo(right, rm, both[nl:]); err != nil {
			return nil, nil, err
		}
	}
	nl2 := left.Schema().NumFields()
	jm := make([]int, nl+nr)
	for i, v := range lm {
		jm[i] = v
	}
	for i, v := range rm {
		jm[nl+i] = -1
		if v >= 0 {
			jm[nl+i] = nl2 + v
		}
	}
	var cond Expr
	if j.Cond != nil {
		if cond, err = remapColumns(j.Cond, jm); err != nil {
			return nil, nil, err
		}
	}
	out, err := NewJoin(left, right, j.Type, cond)
	if err != nil {
		return nil, nil, err
	}
	out.Using = j.Using
	return out, jm[:len(need)], nil
}

func (pr pruner) pruneUnion(u *Union, need []bool) (Node, []int, error) {
	var cols []int
	for i, b := range need {
		if b {
			cols = append(cols, i)
		}
	}
	if len(cols) == 0 && len(need) > 0 {
		cols = []int{0}
	}
	inputs := make([]Node, len(u.Inputs))
	for k, in := range u.Inputs {
		inNeed := make([]bool, len(need))
		for _, c := range cols {
			inNeed[c] = true
		}
		child, cm, err := pr.prune(in, inNeed)
		if err != nil {
			return nil, nil, err
		}
		s := child.Schema()
		exprs := make([]NamedExpr, len(cols))
		for i, c := range cols {
			exprs[i] = NamedExpr{Name: in.Schema().Field(c).Name, Expr: ColumnOf(s, cm[c])}
		}
		if isIdentity(child, exprs) {
			inputs[k] = child
			continue
		}
		p, err := NewProject(child, exprs)
		if err != nil {
			return nil, nil, err
		}
		inputs[k] = p
	}
	out, err := NewUnion(inputs...)
	if err != nil {
		return nil, nil, err
	}
	m := make([]int, len(need))
	for i := range m {
		m[i] = -1
	}
	for i, c := range cols {
		m[c] = i
	}
	return out, m, nil
}

// keepEventTime marks the columns of s that carry a watermark.
func keepEventTime(need []bool, s *arrow.Schema) {
	for _, c := range EventTimeColumns(s) {
		if c < len(need) {
			need[c] = true
		}
	}
}

// narrowTo selects from child (its columns mapped from the original
// input's by m) only the columns need marks, when it has others.
func narrowTo(child Node, m []int, need []bool) (Node, []int, error) {
	s := child.Schema()
	var exprs []NamedExpr
	nm := make([]int, len(m))
	for i, j := range m {
		nm[i] = -1
		if j >= 0 && need[i] {
			nm[i] = len(exprs)
			exprs = append(exprs, NamedExpr{Name: s.Field(j).Name, Expr: ColumnOf(s, j)})
		}
	}
	if len(exprs) == s.NumFields() || len(exprs) == 0 {
		return child, m, nil
	}
	p, err := NewProject(child, exprs)
	if err != nil {
		return nil, nil, err
	}
	return p, nm, nil
}
