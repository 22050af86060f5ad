package sql

import (
	"strconv"
	"strings"
)

// Precedence levels for formatting, loosest first (see parser_expr.go).
const (
	precOr = iota + 1
	precAnd
	precNot
	precPred
	precCmp
	precBitOr
	precBitXor
	precBitAnd
	precShift
	precAdd
	precMul
	precUnary
	precPostfix
)

func binaryPrec(op BinaryOp) int {
	switch op {
	case OpOr:
		return precOr
	case OpAnd:
		return precAnd
	case OpEq, OpNullSafeEq, OpNe, OpLt, OpLe, OpGt, OpGe:
		return precCmp
	case OpBitOr:
		return precBitOr
	case OpBitXor:
		return precBitXor
	case OpBitAnd:
		return precBitAnd
	case OpShiftLeft, OpShiftRight, OpShiftRightUnsigned:
		return precShift
	case OpAdd, OpSub, OpConcat:
		return precAdd
	}
	return precMul
}

func exprPrec(e Expr) int {
	switch e := e.(type) {
	case *BinaryExpr:
		return binaryPrec(e.Op)
	case *UnaryExpr:
		if e.Op == OpNot {
			return precNot
		}
		return precUnary
	case *IsNull, *Between, *In, *Like:
		return precPred
	}
	return precPostfix
}

func (f *formatter) exprList(es []Expr) {
	for i, e := range es {
		f.sep(i)
		f.expr(e, 0)
	}
}

// expr renders e, in parentheses if it binds more loosely than min.
func (f *formatter) expr(e Expr, min int) {
	if exprPrec(e) < min {
		f.str("(")
		f.expr(e, 0)
		f.str(")")
		return
	}
	switch e := e.(type) {
	case *ColumnRef:
		f.names(e.Parts)
	case *Star:
		if e.Qualifier != nil {
			f.names(e.Qualifier)
			f.str(".")
		}
		f.str("*")
	case *Literal:
		f.literal(e)
	case *Placeholder:
		f.str("$" + strconv.Itoa(e.Index))
	case *IntervalLit:
		f.interval(e)
	case *UnaryExpr:
		f.unary(e)
	case *BinaryExpr:
		p := binaryPrec(e.Op)
		f.expr(e.L, p)
		f.str(" ")
		f.str(e.Op.String())
		f.str(" ")
		f.expr(e.R, p+1)
	case *IsNull:
		f.expr(e.X, precPred)
		f.str(" IS")
		if e.Not {
			f.str(" NOT")
		}
		if e.Unknown {
			f.str(" UNKNOWN")
		} else {
			f.str(" NULL")
		}
	case *Between:
		f.expr(e.X, precPred)
		f.not(e.Not)
		f.str(" BETWEEN ")
		f.expr(e.Low, precCmp)
		f.str(" AND ")
		f.expr(e.High, precCmp)
	case *In:
		f.expr(e.X, precPred)
		f.not(e.Not)
		f.str(" IN (")
		if e.Query != nil {
			f.query(e.Query)
		} else {
			f.exprList(e.List)
		}
		f.str(")")
	case *Like:
		f.expr(e.X, precPred)
		f.not(e.Not)
		f.str(" ")
		f.str(e.Op.String())
		f.str(" ")
		f.expr(e.Pattern, precCmp)
		if e.Escape != nil {
			f.str(" ESCAPE ")
			f.literal(e.Escape)
		}
	case *Case:
		f.str("CASE")
		if e.Operand != nil {
			f.str(" ")
			f.expr(e.Operand, 0)
		}
		for _, w := range e.Whens {
			f.str(" ")
			f.when(w)
		}
		if e.Else != nil {
			f.str(" ELSE ")
			f.expr(e.Else, 0)
		}
		f.str(" END")
	case *Cast:
		if e.Try {
			f.str("TRY_CAST(")
		} else {
			f.str("CAST(")
		}
		f.expr(e.X, 0)
		f.str(" AS ")
		f.typeName(e.Type)
		f.str(")")
	case *FuncCall:
		if e.Within != nil && len(e.Args) > 0 {
			f.withinGroupCall(e)
			break
		}
		f.funcName(e.Name)
		if e.Bare {
			break
		}
		f.str("(")
		if e.Distinct {
			f.str("DISTINCT ")
		}
		f.exprList(e.Args)
		f.str(")")
		if e.Filter != nil {
			f.str(" FILTER (WHERE ")
			f.expr(e.Filter, 0)
			f.str(")")
		}
		f.callSuffix(e)
	case *FieldAccess:
		// A name path base must keep its parentheses, or (a).b would read
		// back as the column reference a.b; literals are parenthesized so
		// that 1.b does not lex as the number "1.".
		switch e.X.(type) {
		case *ColumnRef, *Literal, *IntervalLit:
			f.str("(")
			f.expr(e.X, 0)
			f.str(")")
		default:
			f.expr(e.X, precPostfix)
		}
		f.str(".")
		f.identAfterDot(e.Field)
	case *Lambda:
		if len(e.Params) == 1 {
			f.ident(e.Params[0])
		} else {
			f.str("(")
			for i, id := range e.Params {
				if i > 0 {
					f.str(", ")
				}
				f.ident(id)
			}
			f.str(")")
		}
		f.str(" -> ")
		f.expr(e.Body, 0)
	case *ArgAlias:
		f.expr(e.X, 0)
		f.str(" AS ")
		f.ident(e.Name)
	case *Subscript:
		if _, ok := e.X.(*IntervalLit); ok {
			f.str("(")
			f.expr(e.X, 0)
			f.str(")")
		} else {
			f.expr(e.X, precPostfix)
		}
		f.str("[")
		f.expr(e.Index, 0)
		f.str("]")
	case *Subquery:
		if e.Exists {
			f.str("EXISTS ")
		}
		f.str("(")
		f.query(e.Query)
		f.str(")")
	}
}

func (f *formatter) not(not bool) {
	if not {
		f.str(" NOT")
	}
}

// unary renders a prefix operator. The operand of '-' is parenthesized
// when its text would start with a digit, '.' or '-': "-1" would read back
// as a negative literal, and "--" starts a comment.
func (f *formatter) unary(e *UnaryExpr) {
	if e.Op == OpNot {
		f.str("NOT ")
		f.expr(e.X, precNot)
		return
	}
	f.str(e.Op.String())
	var sub formatter
	sub.expr(e.X, precUnary)
	s := sub.b.String()
	if e.Op == OpNeg && s != "" && (s[0] >= '0' && s[0] <= '9' || s[0] == '.' || s[0] == '-') {
		s = "(" + s + ")"
	}
	f.str(s)
}

// funcName renders a function name. Reserved words that the parser also
// accepts as function names before '(' need no quotes.
func (f *formatter) funcName(id Ident) {
	switch lookupKeyword(id.Name) {
	case "CURRENT_TIMESTAMP", "CURRENT_DATE", "LEFT", "RIGHT":
		f.str(id.Name)
		return
	case "TRY_CAST", "CAST":
		f.str(quoteIdent(id.Name))
		return
	}
	f.ident(id)
}

func (f *formatter) when(w *When) {
	f.str("WHEN ")
	f.expr(w.Cond, 0)
	f.str(" THEN ")
	f.expr(w.Result, 0)
}

func (f *formatter) literal(l *Literal) {
	if l == nil {
		return
	}
	switch l.Kind {
	case LitNull:
		f.str("NULL")
	case LitBool:
		f.str(strings.ToUpper(l.Value))
	case LitInt:
		f.str(l.Value)
	case LitBigInt:
		f.str(l.Value + "L")
	case LitSmallInt:
		f.str(l.Value + "S")
	case LitTinyInt:
		f.str(l.Value + "Y")
	case LitDecimal:
		// A plain "1.5" reads back as a decimal; anything else needs BD.
		if strings.Contains(l.Value, ".") && !strings.ContainsAny(l.Value, "eE") {
			f.str(l.Value)
		} else {
			f.str(l.Value + "BD")
		}
	case LitFloat:
		f.str(l.Value + "F")
	case LitDouble:
		f.str(l.Value + "D")
	case LitString:
		f.str(quoteString(l.Value))
	case LitBinary:
		f.str("X'" + l.Value + "'")
	case LitDate:
		f.str("DATE " + quoteString(l.Value))
	case LitTimestamp, LitTimestampLTZ:
		f.str("TIMESTAMP " + quoteString(l.Value))
	case LitTimestampNTZ:
		f.str("TIMESTAMP_NTZ " + quoteString(l.Value))
	}
}

func (f *formatter) interval(l *IntervalLit) {
	if l == nil {
		return
	}
	f.str("INTERVAL ")
	if l.Parts == nil {
		f.str(quoteString(l.Text))
		return
	}
	for i, p := range l.Parts {
		if i > 0 {
			f.str(" ")
		}
		f.intervalPart(p)
	}
}

func (f *formatter) intervalPart(p IntervalPart) {
	if p.Neg {
		f.str("-")
	}
	if p.Quoted {
		f.str(quoteString(p.Value))
	} else {
		f.str(p.Value)
	}
	f.str(" ")
	f.str(p.Unit)
	if p.Value != "1" && !strings.Contains(p.Unit, " ") {
		f.str("S")
	}
}

func (f *formatter) typeName(t *TypeName) {
	if t == nil {
		return
	}
	f.str(t.Name)
	switch {
	case t.Params != nil:
		f.str("(")
		for i, n := range t.Params {
			f.sep(i)
			f.str(strconv.Itoa(n))
		}
		f.str(")")
	case t.Name == "ARRAY":
		f.str("<")
		f.typeName(t.Elem)
		f.str(">")
	case t.Name == "MAP":
		f.str("<")
		f.typeName(t.Key)
		f.str(", ")
		f.typeName(t.Elem)
		f.str(">")
	case t.Name == "STRUCT":
		f.str("<")
		for i, fl := range t.Fields {
			f.sep(i)
			f.structField(fl)
		}
		f.str(">")
	}
}

func (f *formatter) structField(fl *StructField) {
	f.ident(fl.Name)
	f.str(": ")
	f.typeName(fl.Type)
}
