package plan

// PushDownPredicates moves filter conditions (split into conjuncts) as
// close to the data as the streaming-safety rules of Optimize allow, and
// pushes the single-side conjuncts of join conditions into the join's
// inputs where the join type permits.
func PushDownPredicates(n Node) Node {
	switch x := n.(type) {
	case *Filter:
		n = pushFilter(x.Input, splitConjuncts(x.Cond))
	case *Join:
		n = pushJoinCondition(x)
	}
	return mapChildren(n, PushDownPredicates)
}

// withFilter puts the conjuncts preds (if any) on top of n.
func withFilter(n Node, preds []Expr) Node {
	if len(preds) == 0 {
		return n
	}
	return &Filter{Input: n, Cond: conjoin(preds)}
}

// statefulStreaming reports whether n keeps state across epochs.
func statefulStreaming(n Node) bool { return isStateful(n) }

// pushFilter returns a plan equivalent to Filter(in, AND preds) with the
// conjuncts pushed down where that is safe.
func pushFilter(in Node, preds []Expr) Node {
	if len(preds) == 0 {
		return in
	}
	// A predicate reading current_timestamp() stays above a stateful
	// streaming operator.
	var stay, move []Expr
	for _, p := range preds {
		if statefulStreaming(in) && containsCurrentTimestamp(p) {
			stay = append(stay, p)
		} else {
			move = append(move, p)
		}
	}
	if len(move) == 0 {
		return withFilter(in, stay)
	}
	switch x := in.(type) {
	case *Filter:
		return withFilter(pushFilter(x.Input, append(splitConjuncts(x.Cond), move...)), stay)
	case *SubqueryAlias:
		c := *x
		c.Input = pushFilter(x.Input, move)
		return withFilter(&c, stay)
	case *Sort:
		c := *x
		c.Input = pushFilter(x.Input, move)
		return withFilter(&c, stay)
	case *Project:
		pushed := make([]Expr, 0, len(move))
		for _, p := range move {
			if literalIntoCall(p, x.Exprs) {
				stay = append(stay, p)
				continue
			}
			pushed = append(pushed, substitute(p, x.Exprs))
		}
		if len(pushed) == 0 {
			return withFilter(in, stay)
		}
		c := *x
		c.Input = pushFilter(x.Input, pushed)
		return withFilter(&c, stay)
	case *Union:
		c := *x
		c.Inputs = make([]Node, len(x.Inputs))
		for i, u := range x.Inputs {
			c.Inputs[i] = pushFilter(u, move)
		}
		return withFilter(&c, stay)
	case *EventTimeWatermark:
		// As Spark's PushPredicateThroughNonJoin: a deterministic conjunct
		// that does not read the event-time column moves below the
		// watermark node, so the rows it rejects never reach the node and
		// do not advance the watermark (Spark's StreamingOuterJoinSuite
		// "left outer join with non-key condition violated" depends on it).
		// A conjunct on the event time stays above: the node must see
		// every row whose time it measures.
		// In a batch query the node does nothing, and every conjunct
		// moves below it as before.
		var down []Expr
		for _, p := range move {
			if x.IsStreaming() && (usesColumn(p, x.Column) || hasNondeterministic(p)) {
				stay = append(stay, p)
			} else {
				down = append(down, p)
			}
		}
		if len(down) == 0 {
			return withFilter(in, stay)
		}
		c := *x
		c.Input = pushFilter(x.Input, down)
		return withFilter(&c, stay)
	case *WindowAssign, *SessionWindow, *Explode:
		last := in.Schema().NumFields() - 1
		var down []Expr
		for _, p := range move {
			if usesColumn(p, last) {
				stay = append(stay, p)
			} else {
				down = append(down, p)
			}
		}
		if len(down) == 0 {
			return withFilter(in, stay)
		}
		return withFilter(withChildren(in, []Node{pushFilter(in.Children()[0], down)}), stay)
	case *Aggregate:
		nk := len(x.GroupBy)
		var down []Expr
		for _, p := range move {
			cols := Columns(p)
			ok := len(cols) > 0 && nk > 0
			for _, c := range cols {
				ok = ok && c < nk
			}
			if ok {
				down = append(down, substitute(p, x.GroupBy))
			} else {
				stay = append(stay, p)
			}
		}
		if len(down) == 0 {
			return withFilter(in, stay)
		}
		c := *x
		c.Input = pushFilter(x.Input, down)
		return withFilter(&c, stay)
	case *Deduplicate:
		var down []Expr
		for _, p := range move {
			if len(x.Keys) == 0 || subsetOf(Columns(p), x.Keys) {
				down = append(down, p)
			} else {
				stay = append(stay, p)
			}
		}
		if len(down) == 0 {
			return withFilter(in, stay)
		}
		c := *x
		c.Input = pushFilter(x.Input, down)
		return withFilter(&c, stay)
	case *Join:
		return withFilter(pushIntoJoin(x, move), stay)
	case *Scan:
		if x.Streaming {
			return withFilter(in, preds)
		}
		c := *x
		c.Filters = append([]Expr(nil), x.Filters...)
		for _, p := range move {
			if x.Columns != nil {
				p, _ = remapColumns(p, x.Columns)
			}
			c.Filters = append(c.Filters, p)
		}
		return withFilter(c.withSchema(), stay)
	}
	return withFilter(in, preds)
}

func usesColumn(e Expr, col int) bool {
	for _, c := range Columns(e) {
		if c == col {
			return true
		}
	}
	return false
}

func subsetOf(cols, set []int) bool {
	for _, c := range cols {
		found := false
		for _, s := range set {
			found = found || s == c
		}
		if !found {
			return false
		}
	}
	return true
}

// pushIntoJoin pushes WHERE conjuncts over a join's output: single-side
// conjuncts go to that side when the join type keeps the side's rows
// as they are (left for inner, left outer, semi and anti joins; right for
// inner and right outer joins), and conjuncts over both sides of an inner
// join become part of its condition.
func pushIntoJoin(j *Join, preds []Expr) Node {
	nl := j.Left.Schema().NumFields()
	var left, right, cond, stay []Expr
	for _, p := range preds {
		s := side(p, nl)
		switch {
		case s == 1 && j.Type != RightOuterJoin && j.Type != FullOuterJoin:
			left = append(left, p)
		case s == 2 && (j.Type == InnerJoin || j.Type == RightOuterJoin):
			right = append(right, shiftColumns(p, -nl))
		case s == 3 && j.Type == InnerJoin:
			cond = append(cond, p)
		default:
			stay = append(stay, p)
		}
	}
	c := *j
	c.Left = pushFilter(j.Left, left)
	c.Right = pushFilter(j.Right, right)
	if len(cond) > 0 {
		c.Cond = conjoin(append(splitConjuncts(j.Cond), cond...))
	}
	return withFilter(&c, stay)
}

// pushJoinCondition pushes single-side conjuncts of a join's own condition
// into its inputs: a conjunct over the side whose unmatched rows the join
// drops (both for inner, the right for left outer and anti, the left for
// right outer, both for semi) filters that side first.
func pushJoinCondition(j *Join) Node {
	if j.Cond == nil {
		return j
	}
	nl := j.Left.Schema().NumFields()
	stateful := j.Left.IsStreaming() && j.Right.IsStreaming()
	var left, right, keep []Expr
	for _, p := range splitConjuncts(j.Cond) {
		s := side(p, nl)
		if stateful && containsCurrentTimestamp(p) {
			keep = append(keep, p)
			continue
		}
		switch {
		case s == 1 && (j.Type == InnerJoin || j.Type == LeftSemiJoin || j.Type == RightOuterJoin):
			left = append(left, p)
		case s == 2 && j.Type != RightOuterJoin && j.Type != FullOuterJoin:
			right = append(right, shiftColumns(p, -nl))
		default:
			keep = append(keep, p)
		}
	}
	if len(left) == 0 && len(right) == 0 {
		return j
	}
	c := *j
	c.Left = pushFilter(j.Left, left)
	c.Right = pushFilter(j.Right, right)
	c.Cond = conjoin(keep)
	return &c
}
