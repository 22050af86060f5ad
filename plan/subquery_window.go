package plan

// windowSubqueries joins the subqueries of a window's partition and order
// keys and of its functions' arguments (sum(x) OVER (PARTITION BY EXISTS
// (SELECT ...))) to the window's input, once per input row, and returns
// the keys and functions over the joined input (copies; the extra
// columns follow the input's and are not in the select's scope).
func windowSubqueries(input Node, part []Expr, order []SortKey, funcs []WindowExpr) (Node, []Expr, []SortKey, []WindowExpr, error) {
	var es []Expr
	es = append(es, part...)
	for _, o := range order {
		es = append(es, o.Expr)
	}
	for _, f := range funcs {
		es = append(es, f.Args...)
		if f.Agg != nil {
			es = append(es, f.Agg.Args...)
		}
	}
	if !anySubquery(es) {
		return input, part, order, funcs, nil
	}
	n, out, err := planSubqueries(input, es)
	if err != nil {
		return nil, nil, nil, nil, err
	}
	next := func() Expr {
		e := out[0]
		out = out[1:]
		return e
	}
	np := make([]Expr, len(part))
	for i := range part {
		np[i] = next()
	}
	no := make([]SortKey, len(order))
	for i, o := range order {
		no[i] = o
		no[i].Expr = next()
	}
	nf := make([]WindowExpr, len(funcs))
	for i, f := range funcs {
		nf[i] = f
		nf[i].Args = make([]Expr, len(f.Args))
		for j := range f.Args {
			nf[i].Args[j] = next()
		}
		if f.Agg != nil {
			a := *f.Agg
			a.Args = make([]Expr, len(f.Agg.Args))
			for j := range a.Args {
				a.Args[j] = next()
			}
			nf[i].Agg = &a
		}
	}
	return n, np, no, nf, nil
}
