package plan

import "errors"

// resolveQualify resolves the QUALIFY condition (which may name select
// aliases); it needs a window function in the select list or in itself.
func resolveQualify(r *resolver, s selectSpec, items []outItem) (Expr, error) {
	if s.qualify == nil {
		return nil, nil
	}
	qr := *r
	qr.clause = "QUALIFY"
	q, err := qr.expr(s.qualify)
	var unresolved *Error
	if err != nil && errors.As(err, &unresolved) && errors.Is(err, ErrUnresolved) {
		q, err = resolveWithAliases(&qr, s.qualify, items)
	}
	if err != nil {
		return nil, err
	}
	if q, err = requireBoolean(s.qualify.Position(), "QUALIFY", q); err != nil {
		return nil, err
	}
	found := hasWindow(q)
	for _, it := range items {
		found = found || it.expr != nil && hasWindow(it.expr)
	}
	if !found {
		return nil, errorAt(s.qualify.Position(), ErrAggregate, "QUALIFY needs a window function in the select list or in the QUALIFY condition.")
	}
	return q, nil
}

func hasWindow(e Expr) bool {
	found := false
	Walk(e, func(x Expr) bool {
		if _, ok := x.(*winPlaceholder); ok {
			found = true
		}
		return !found
	})
	return found
}

// applyWindows adds Window nodes above cur for the window functions of the
// select items, the ORDER BY keys and the QUALIFY condition (one node per
// distinct partitioning and ordering, as Spark's ExtractWindowExpressions),
// replaces each call by a reference to its column, and filters by QUALIFY.
func applyWindows(cur *scope, s selectSpec, items []outItem, order []orderKey, qualify Expr) (*scope, error) {
	var calls []*winPlaceholder
	seen := map[string]bool{}
	collect := func(e Expr) {
		Walk(e, func(x Expr) bool {
			if p, ok := x.(*winPlaceholder); ok {
				if k := exprKey(p); !seen[k] {
					seen[k] = true
					calls = append(calls, p)
				}
				return false
			}
			return true
		})
	}
	for _, it := range items {
		collect(it.expr)
	}
	for _, o := range order {
		if o.expr != nil {
			collect(o.expr)
		}
	}
	if qualify != nil {
		collect(qualify)
	}
	if len(calls) == 0 {
		return cur, nil
	}
	// Group the calls by window, in first-use order.
	var specs []string
	bySpec := map[string][]*winPlaceholder{}
	for _, p := range calls {
		k := p.specKey()
		if _, ok := bySpec[k]; !ok {
			specs = append(specs, k)
		}
		bySpec[k] = append(bySpec[k], p)
	}
	node := cur.node
	column := map[string]int{}
	used := map[string]bool{}
	for _, f := range node.Schema().Fields() {
		used[f.Name] = true
	}
	for _, k := range specs {
		group := bySpec[k]
		funcs := make([]WindowExpr, len(group))
		for i, p := range group {
			funcs[i] = p.fn
			funcs[i].Name = uniqueName(p.fn.Name, used)
		}
		in, part, keys, funcs, err := windowSubqueries(node, group[0].part, group[0].order, funcs)
		if err != nil {
			return nil, err
		}
		base := in.Schema().NumFields()
		for i, p := range group {
			column[exprKey(p)] = base + i
		}
		w, err := NewWindow(in, part, keys, funcs)
		if err != nil {
			return nil, errorAt(s.pos, ErrType, "%v", err)
		}
		node = w
	}
	sch := node.Schema()
	replace := func(e Expr) (Expr, error) {
		return Transform(e, func(x Expr) (Expr, error) {
			if p, ok := x.(*winPlaceholder); ok {
				return ColumnOf(sch, column[exprKey(p)]), nil
			}
			return x, nil
		})
	}
	var err error
	for i := range items {
		if items[i].expr, err = replace(items[i].expr); err != nil {
			return nil, err
		}
	}
	for i := range order {
		if order[i].expr != nil {
			if order[i].expr, err = replace(order[i].expr); err != nil {
				return nil, err
			}
		}
	}
	cols := append(append([]scopeCol(nil), cur.cols...), make([]scopeCol, sch.NumFields()-len(cur.cols))...)
	if qualify != nil {
		q, err := replace(qualify)
		if err != nil {
			return nil, err
		}
		f, err := NewFilter(node, q)
		if err != nil {
			return nil, errorAt(s.qualify.Position(), ErrType, "%v", err)
		}
		node = f
	}
	return &scope{node: node, cols: cols}, nil
}
