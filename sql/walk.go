package sql

// Inspect traverses the tree rooted at n depth-first, in source order,
// calling f for each node: statements, queries, FROM items, expressions,
// types, the helper nodes (*SelectItem, *OrderItem, *CTE, *Watermark,
// *When, *ColumnDef, *Property, *StructField) and the leaves (Ident and
// IntervalPart values). If f returns false, Inspect does not visit the
// node's children. Absent (nil) children are skipped.
func Inspect(n Node, f func(Node) bool) {
	if n == nil || !f(n) {
		return
	}
	switch n := n.(type) {
	case *CreateTable:
		idents(n.Name, f)
		for _, c := range n.Columns {
			Inspect(c, f)
		}
		idents(n.Using, f)
		for _, p := range n.Options {
			Inspect(p, f)
		}
		if n.Query != nil {
			inspectQuery(n.Query, f)
		}
	case *ColumnDef:
		Inspect(n.Name, f)
		inspectType(n.Type, f)
	case *CreateStreamingTable:
		idents(n.Name, f)
		for _, p := range n.Properties {
			Inspect(p, f)
		}
		inspectQuery(n.Query, f)
	case *Explain:
		Inspect(n.Stmt, f)
	case *DropTable:
		idents(n.Name, f)
	case *Describe:
		idents(n.Name, f)
	case *DescribeQuery:
		inspectQuery(n.Query, f)
	case *ShowColumns:
		idents(n.Table, f)
	case *DescribeHistory:
		idents(n.Name, f)
	case *Subscribe:
		idents(n.Name, f)
	case *Truncate:
		idents(n.Name, f)
	case *Query:
		for _, c := range n.With {
			Inspect(c, f)
		}
		Inspect(n.Body, f)
		for _, o := range n.OrderBy {
			Inspect(o, f)
		}
		for _, e := range n.DistributeBy {
			Inspect(e, f)
		}
		if !n.Cluster { // CLUSTER BY's sort keys are its DistributeBy
			for _, o := range n.SortBy {
				Inspect(o, f)
			}
		}
		Inspect(n.Limit, f)
		Inspect(n.Offset, f)
	case *CTE:
		Inspect(n.Name, f)
		idents(n.Columns, f)
		inspectQuery(n.Query, f)
	case *Select:
		for _, it := range n.Items {
			Inspect(it, f)
		}
		for _, it := range n.From {
			Inspect(it, f)
		}
		Inspect(n.Where, f)
		exprs(n.GroupBy, f)
		Inspect(n.Having, f)
		for _, w := range n.Windows {
			Inspect(w.Name, f)
			inspectWindowSpec(w.Spec, f)
		}
		Inspect(n.Qualify, f)
	case *SelectItem:
		Inspect(n.Expr, f)
		alias(n.Alias, f)
	case *Union:
		Inspect(n.Left, f)
		Inspect(n.Right, f)
	case *Values:
		for _, r := range n.Rows {
			exprs(r, f)
		}
	case *Insert:
		idents(n.Name, f)
		idents(n.Columns, f)
		inspectQuery(n.Query, f)
	case *CreateView:
		idents(n.Name, f)
		idents(n.Columns, f)
		inspectQuery(n.Query, f)
	case *OrderItem:
		Inspect(n.Expr, f)
	case *TableRef:
		idents(n.Name, f)
		if n.Version != nil {
			Inspect(n.Version, f)
		}
		inspectWatermark(n.Watermark, f)
		alias(n.Alias, f)
		idents(n.Columns, f)
	case *SubqueryRef:
		inspectQuery(n.Query, f)
		inspectWatermark(n.Watermark, f)
		alias(n.Alias, f)
		idents(n.Columns, f)
	case *Unpivot:
		Inspect(n.Input, f)
		Inspect(n.Value, f)
		Inspect(n.Name, f)
		for _, it := range n.Columns {
			Inspect(it, f)
		}
	case *Pivot:
		Inspect(n.Input, f)
		for _, it := range n.Aggs {
			Inspect(it, f)
		}
		Inspect(n.Column, f)
		for _, it := range n.Values {
			Inspect(it, f)
		}
	case *LateralView:
		Inspect(n.Input, f)
		Inspect(n.Func, f)
		Inspect(n.Table, f)
		idents(n.Columns, f)
	case *TableFunc:
		Inspect(n.Name, f)
		exprs(n.Args, f)
		inspectWatermark(n.Watermark, f)
		alias(n.Alias, f)
		idents(n.Columns, f)
	case *Join:
		Inspect(n.Left, f)
		Inspect(n.Right, f)
		Inspect(n.On, f)
		idents(n.Using, f)
	case *Watermark:
		Inspect(n.Expr, f)
		alias(n.Name, f)
		if n.Delay != nil {
			Inspect(n.Delay, f)
		}
	case *ColumnRef:
		idents(n.Parts, f)
	case *Star:
		idents(n.Qualifier, f)
	case *IntervalLit:
		for _, p := range n.Parts {
			Inspect(p, f)
		}
	case *UnaryExpr:
		Inspect(n.X, f)
	case *BinaryExpr:
		// A left-deep chain (1+1+…+1) is walked down its left spine in a
		// loop, not one recursion per term; the order is the same.
		spine := []*BinaryExpr{n}
		for {
			top := spine[len(spine)-1]
			l, ok := top.L.(*BinaryExpr)
			if !ok {
				Inspect(top.L, f)
				break
			}
			if !f(l) {
				break
			}
			spine = append(spine, l)
		}
		for i := len(spine) - 1; i >= 0; i-- {
			Inspect(spine[i].R, f)
		}
	case *IsNull:
		Inspect(n.X, f)
	case *Between:
		Inspect(n.X, f)
		Inspect(n.Low, f)
		Inspect(n.High, f)
	case *In:
		Inspect(n.X, f)
		exprs(n.List, f)
		inspectQuery(n.Query, f)
	case *Like:
		Inspect(n.X, f)
		Inspect(n.Pattern, f)
		if n.Escape != nil {
			Inspect(n.Escape, f)
		}
	case *Case:
		Inspect(n.Operand, f)
		for _, w := range n.Whens {
			Inspect(w, f)
		}
		Inspect(n.Else, f)
	case *When:
		Inspect(n.Cond, f)
		Inspect(n.Result, f)
	case *Cast:
		Inspect(n.X, f)
		inspectType(n.Type, f)
	case *FuncCall:
		Inspect(n.Name, f)
		exprs(n.Args, f)
		Inspect(n.Filter, f)
		inspectWindowSpec(n.Over, f)
	case *FieldAccess:
		Inspect(n.X, f)
		Inspect(n.Field, f)
	case *Subscript:
		Inspect(n.X, f)
		Inspect(n.Index, f)
	case *Lambda:
		for i := range n.Params {
			Inspect(n.Params[i], f)
		}
		Inspect(n.Body, f)
	case *ArgAlias:
		Inspect(n.X, f)
		Inspect(n.Name, f)
	case *Subquery:
		inspectQuery(n.Query, f)
	case *TypeName:
		inspectType(n.Key, f)
		inspectType(n.Elem, f)
		for _, fl := range n.Fields {
			Inspect(fl, f)
		}
	case *StructField:
		Inspect(n.Name, f)
		inspectType(n.Type, f)
	}
}

// The helpers below skip nil pointers, which would otherwise reach f as
// non-nil interfaces holding nil.

func idents(ids []Ident, f func(Node) bool) {
	for _, id := range ids {
		Inspect(id, f)
	}
}

func exprs(es []Expr, f func(Node) bool) {
	for _, e := range es {
		Inspect(e, f)
	}
}

func alias(a *Ident, f func(Node) bool) {
	if a != nil {
		Inspect(*a, f)
	}
}

func inspectQuery(q *Query, f func(Node) bool) {
	if q != nil {
		Inspect(q, f)
	}
}

func inspectType(t *TypeName, f func(Node) bool) {
	if t != nil {
		Inspect(t, f)
	}
}

func inspectWatermark(w *Watermark, f func(Node) bool) {
	if w != nil {
		Inspect(w, f)
	}
}
