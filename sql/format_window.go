package sql

// callSuffix renders IGNORE|RESPECT NULLS and OVER after a call.
func (f *formatter) callSuffix(e *FuncCall) {
	switch e.Nulls {
	case IgnoreNulls:
		f.str(" IGNORE NULLS")
	case RespectNulls:
		f.str(" RESPECT NULLS")
	}
	if e.Over != nil {
		f.str(" OVER ")
		f.windowSpec(e.Over)
	}
}

func (f *formatter) windowSpec(w *WindowSpec) {
	if w.Bare && w.Name != nil {
		f.ident(*w.Name)
		return
	}
	f.str("(")
	sep := ""
	if w.Name != nil {
		f.ident(*w.Name)
		sep = " "
	}
	if len(w.PartitionBy) > 0 {
		f.str(sep + "PARTITION BY ")
		f.exprList(w.PartitionBy)
		sep = " "
	}
	if len(w.OrderBy) > 0 {
		f.str(sep + "ORDER BY ")
		for i, o := range w.OrderBy {
			f.sep(i)
			f.orderItem(o)
		}
		sep = " "
	}
	if w.Frame != nil {
		f.str(sep)
		f.frame(w.Frame)
	}
	f.str(")")
}

func (f *formatter) frame(fr *WindowFrame) {
	f.str(fr.Unit.String())
	f.str(" ")
	if fr.HasBetween {
		f.str("BETWEEN ")
		f.frameBound(fr.Start)
		f.str(" AND ")
		f.frameBound(fr.End)
		return
	}
	f.frameBound(fr.Start)
}

func (f *formatter) frameBound(b *FrameBound) {
	switch b.Kind {
	case UnboundedPreceding:
		f.str("UNBOUNDED PRECEDING")
	case UnboundedFollowing:
		f.str("UNBOUNDED FOLLOWING")
	case CurrentRow:
		f.str("CURRENT ROW")
	case OffsetPreceding, OffsetFollowing:
		f.expr(b.Offset, precPostfix)
		if b.Kind == OffsetPreceding {
			f.str(" PRECEDING")
		} else {
			f.str(" FOLLOWING")
		}
	}
}

// windowClauses renders the WINDOW and QUALIFY clauses of a SELECT block.
func (f *formatter) windowClauses(s *Select) {
	if len(s.Windows) > 0 {
		f.str(" WINDOW ")
		for i, w := range s.Windows {
			f.sep(i)
			f.ident(w.Name)
			f.str(" AS ")
			f.windowSpec(w.Spec)
		}
	}
	if s.Qualify != nil {
		f.str(" QUALIFY ")
		f.expr(s.Qualify, 0)
	}
}

// inspectWindowSpec visits the parts of a window specification.
func inspectWindowSpec(w *WindowSpec, f func(Node) bool) {
	if w == nil {
		return
	}
	alias(w.Name, f)
	exprs(w.PartitionBy, f)
	for _, o := range w.OrderBy {
		Inspect(o, f)
	}
	if w.Frame != nil {
		for _, b := range []*FrameBound{w.Frame.Start, w.Frame.End} {
			if b != nil && b.Offset != nil {
				Inspect(b.Offset, f)
			}
		}
	}
}
