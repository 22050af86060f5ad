package difftest

import (
	"fmt"
	"strings"
)

// Expr is a generated expression: a template per dialect whose %s verbs
// take the rendered arguments, or a leaf (column or literal).
type Expr struct {
	spark, duck string // templates; duck "" means the same as spark
	Args        []*Expr
	cls         class
	leaf        bool
}

// Render renders e in dialect d.
func (e *Expr) Render(d Dialect) string {
	tmpl := e.spark
	if d == DuckDB && e.duck != "" {
		tmpl = e.duck
	}
	if e.leaf {
		return tmpl
	}
	args := make([]any, len(e.Args))
	for i, a := range e.Args {
		args[i] = a.Render(d)
	}
	return fmt.Sprintf(tmpl, args...)
}

func (e *Expr) String() string { return e.Render(Spark) }

func leaf(spark, duck string, c class) *Expr {
	return &Expr{spark: spark, duck: duck, cls: c, leaf: true}
}

func call(tmpl string, c class, args ...*Expr) *Expr {
	return &Expr{spark: tmpl, cls: c, Args: args}
}

func call2(spark, duck string, c class, args ...*Expr) *Expr {
	return &Expr{spark: spark, duck: duck, cls: c, Args: args}
}

// size is the number of nodes of e.
func (e *Expr) size() int {
	n := 1
	for _, a := range e.Args {
		n += a.size()
	}
	return n
}

// scope is what expressions may refer to: columns with their classes.
type scope struct {
	cols []Column
}

func (s scope) ofClass(c class) []Column {
	var out []Column
	for _, col := range s.cols {
		if col.class() == c {
			out = append(out, col)
		}
	}
	return out
}

// exprGen draws expressions over a scope.
type exprGen struct {
	g     *gen
	scope scope
}

// any draws an expression of any class.
func (x exprGen) any(depth int) *Expr {
	c := []class{cBool, cInt, cInt, cFloat, cDec, cStr, cStr, cDate, cTs}[x.g.r.IntN(9)]
	return x.expr(c, depth)
}

// expr draws an expression of class c.
func (x exprGen) expr(c class, depth int) *Expr {
	r := x.g.r
	if depth <= 0 || r.IntN(3) == 0 {
		return x.leafOf(c)
	}
	switch c {
	case cBool:
		return x.boolExpr(depth)
	case cInt:
		return x.intExpr(depth)
	case cFloat:
		return x.floatExpr(depth)
	case cDec:
		return x.decExpr(depth)
	case cStr:
		return x.strExpr(depth)
	case cDate:
		switch r.IntN(4) {
		case 0:
			return x.caseOf(c, depth)
		case 1:
			return call("coalesce(%s, %s)", c, x.expr(c, depth-1), x.expr(c, depth-1))
		case 2:
			return call("CAST(%s AS DATE)", c, x.expr(cTs, depth-1))
		}
		return x.leafOf(c)
	case cTs:
		switch r.IntN(3) {
		case 0:
			return x.caseOf(c, depth)
		case 1:
			return call("coalesce(%s, %s)", c, x.expr(c, depth-1), x.expr(c, depth-1))
		}
		return x.leafOf(c)
	}
	return x.leafOf(c)
}

// leafOf is a column of class c when there is one (usually), else a
// literal.
func (x exprGen) leafOf(c class) *Expr {
	r := x.g.r
	cols := x.scope.ofClass(c)
	if len(cols) > 0 && r.IntN(4) != 0 {
		col := cols[r.IntN(len(cols))]
		return leaf(col.Name, "", c)
	}
	return x.literal(c)
}

// literal draws a literal of class c (sometimes a typed NULL).
func (x exprGen) literal(c class) *Expr {
	r := x.g.r
	o := x.g.o
	if r.IntN(10) == 0 {
		kind := map[class]Column{cBool: {Kind: KBool}, cInt: {Kind: KInt32}, cFloat: {Kind: KFloat64},
			cDec: {Kind: KDecimal, Prec: 10, Scale: 2}, cStr: {Kind: KString}, cDate: {Kind: KDate}, cTs: {Kind: KTimestamp}}[c]
		return leaf("CAST(NULL AS "+kind.sqlType(Spark)+")", "CAST(NULL AS "+kind.sqlType(DuckDB)+")", c)
	}
	var col Column
	switch c {
	case cBool:
		col = Column{Kind: KBool}
	case cInt:
		col = Column{Kind: []Kind{KInt32, KInt32, KInt64, KInt8}[r.IntN(4)]}
		v := genValue(r, col, o).(int64)
		if v > -1000 && v < 1000 {
			return leaf(fmt.Sprint(v), "", c) // a plain int literal
		}
		return leaf(literal(v, col, Spark), literal(v, col, DuckDB), c)
	case cFloat:
		col = Column{Kind: KFloat64}
	case cDec:
		col = Column{Kind: KDecimal, Prec: 10, Scale: 2}
		if r.IntN(2) == 0 {
			// a decimal literal as written: 1.25 is DECIMAL(3,2) in both dialects
			return leaf(fmt.Sprintf("%d.%02d", r.IntN(20)-10, r.IntN(100)), "", c)
		}
	case cStr:
		col = Column{Kind: KString}
	case cDate:
		col = Column{Kind: KDate}
	case cTs:
		col = Column{Kind: KTimestamp}
	}
	v := genValue(r, col, o)
	return leaf(literal(v, col, Spark), literal(v, col, DuckDB), c)
}

func (x exprGen) caseOf(c class, depth int) *Expr {
	if x.g.r.IntN(2) == 0 {
		return call("CASE WHEN %s THEN %s ELSE %s END", c, x.expr(cBool, depth-1), x.expr(c, depth-1), x.expr(c, depth-1))
	}
	return call("CASE WHEN %s THEN %s END", c, x.expr(cBool, depth-1), x.expr(c, depth-1))
}

func (x exprGen) numClass() class {
	return []class{cInt, cInt, cFloat, cDec}[x.g.r.IntN(4)]
}

func (x exprGen) boolExpr(depth int) *Expr {
	r := x.g.r
	d := depth - 1
	switch r.IntN(14) {
	case 0, 1:
		c := []class{cInt, cFloat, cDec, cStr, cDate, cTs, cBool}[r.IntN(7)]
		if c.numeric() {
			c2 := x.numClass()
			return x.compare(x.expr(c, d), x.expr(c2, d))
		}
		return x.compare(x.expr(c, d), x.expr(c, d))
	case 2:
		return call("(%s AND %s)", cBool, x.expr(cBool, d), x.expr(cBool, d))
	case 3:
		return call("(%s OR %s)", cBool, x.expr(cBool, d), x.expr(cBool, d))
	case 4:
		return call("(NOT %s)", cBool, x.expr(cBool, d))
	case 5:
		return call("(%s IS NULL)", cBool, x.any(d))
	case 6:
		return call("(%s IS NOT NULL)", cBool, x.any(d))
	case 7:
		c := []class{cInt, cStr, cDec, cDate}[r.IntN(4)]
		n := 1 + r.IntN(3)
		args := []*Expr{x.expr(c, d)}
		ph := make([]string, n)
		for i := range ph {
			args = append(args, x.literal(c))
			ph[i] = "%s"
		}
		not := ""
		if r.IntN(3) == 0 {
			not = "NOT "
		}
		return call("(%s "+not+"IN ("+strings.Join(ph, ", ")+"))", cBool, args...)
	case 8:
		c := []class{cInt, cStr, cFloat, cDate, cTs}[r.IntN(5)]
		not := ""
		if r.IntN(3) == 0 {
			not = "NOT "
		}
		return call("(%s "+not+"BETWEEN %s AND %s)", cBool, x.expr(c, d), x.expr(c, d), x.expr(c, d))
	case 9:
		pat := []string{"%", "a%", "%a", "_", "a_c", "%b%", "", "A%", "%l%o%", "long-%", "x\\%y"}[r.IntN(11)]
		if x.g.o.DuckDB && strings.Contains(pat, "\\") {
			pat = "x%y"
		}
		not := ""
		if r.IntN(3) == 0 {
			not = "NOT "
		}
		return call("(%s "+not+"LIKE %s)", cBool, x.expr(cStr, d), leaf("'"+pat+"'", "", cStr))
	case 10:
		return x.caseOf(cBool, depth)
	case 11:
		return call("coalesce(%s, %s)", cBool, x.expr(cBool, d), x.expr(cBool, d))
	case 12:
		if x.g.o.DuckDB {
			return call("(%s IS NULL)", cBool, x.any(d))
		}
		return call("isnull(%s)", cBool, x.any(d))
	}
	return x.leafOf(cBool)
}

func (x exprGen) intExpr(depth int) *Expr {
	r := x.g.r
	d := depth - 1
	switch r.IntN(13) {
	case 0:
		return call("(%s + %s)", cInt, x.expr(cInt, d), x.expr(cInt, d))
	case 1:
		return call("(%s - %s)", cInt, x.expr(cInt, d), x.expr(cInt, d))
	case 2:
		return call("(%s * %s)", cInt, x.expr(cInt, d), x.expr(cInt, d))
	case 3:
		return call("(- %s)", cInt, x.expr(cInt, d))
	case 4:
		return call("abs(%s)", cInt, x.expr(cInt, d))
	case 5:
		m := leaf(fmt.Sprint(1+r.IntN(7)), "", cInt)
		return call("(%s %% %s)", cInt, x.expr(cInt, d), m)
	case 6:
		return call2("length(%s)", "CAST(length(%s) AS INTEGER)", cInt, x.expr(cStr, d))
	case 7:
		return x.caseOf(cInt, depth)
	case 8:
		return call("coalesce(%s, %s)", cInt, x.expr(cInt, d), x.expr(cInt, d))
	case 9:
		if x.g.o.DuckDB {
			return call("CAST(%s AS BIGINT)", cInt, x.expr(cInt, d))
		}
		src := []class{cInt, cFloat, cDec, cStr, cBool}[r.IntN(5)]
		to := []string{"BIGINT", "INT", "SMALLINT", "TINYINT"}[r.IntN(4)]
		return call("CAST(%s AS "+to+")", cInt, x.expr(src, d))
	case 10:
		if x.g.o.DuckDB {
			return x.leafOf(cInt)
		}
		return call("hash(%s)", cInt, x.any(d))
	case 11:
		if x.g.o.DuckDB {
			return x.leafOf(cInt)
		}
		f := []string{"hour", "minute", "second"}[r.IntN(3)]
		return call(f+"(%s)", cInt, x.expr(cTs, d))
	}
	return x.leafOf(cInt)
}

func (x exprGen) floatExpr(depth int) *Expr {
	r := x.g.r
	d := depth - 1
	switch r.IntN(10) {
	case 0:
		return call("(%s + %s)", cFloat, x.expr(cFloat, d), x.expr(x.numClass(), d))
	case 1:
		return call("(%s - %s)", cFloat, x.expr(x.numClass(), d), x.expr(cFloat, d))
	case 2:
		return call("(%s * %s)", cFloat, x.expr(cFloat, d), x.expr(cFloat, d))
	case 3:
		if x.g.o.DuckDB {
			return call("(- %s)", cFloat, x.expr(cFloat, d))
		}
		return call("(%s / %s)", cFloat, x.expr(cFloat, d), x.expr(cFloat, d))
	case 4:
		return call("abs(%s)", cFloat, x.expr(cFloat, d))
	case 5:
		return call("CAST(%s AS DOUBLE)", cFloat, x.expr([]class{cInt, cDec, cFloat}[r.IntN(3)], d))
	case 6:
		return x.caseOf(cFloat, depth)
	case 7:
		return call("coalesce(%s, %s)", cFloat, x.expr(cFloat, d), x.expr(cFloat, d))
	case 8:
		if x.g.o.DuckDB {
			// floor/ceil/round of a double are bigint in Spark
			// (saturating at ±2^63), double in DuckDB
			return call("abs(%s)", cFloat, x.expr(cFloat, d))
		}
		return call([]string{"floor(%s)", "ceil(%s)", "round(%s)"}[r.IntN(3)], cInt, x.expr(cFloat, d))
	}
	return x.leafOf(cFloat)
}

func (x exprGen) decExpr(depth int) *Expr {
	r := x.g.r
	d := depth - 1
	switch r.IntN(8) {
	case 0:
		return call("(%s + %s)", cDec, x.expr(cDec, d), x.expr([]class{cDec, cInt}[r.IntN(2)], d))
	case 1:
		return call("(%s - %s)", cDec, x.expr(cDec, d), x.expr(cDec, d))
	case 2:
		if x.g.o.DuckDB {
			// Spark cuts a product's scale to 6 when its precision
			// passes 38; DuckDB keeps it
			return call("(%s - %s)", cDec, x.expr(cDec, d), x.expr(cDec, d))
		}
		return call("(%s * %s)", cDec, x.expr(cDec, d), x.expr(cDec, d))
	case 3:
		return call("abs(%s)", cDec, x.expr(cDec, d))
	case 4:
		to := []string{"DECIMAL(10,2)", "DECIMAL(20,5)", "DECIMAL(38,0)"}[r.IntN(3)]
		src := cInt
		if !x.g.o.DuckDB {
			src = []class{cInt, cDec, cStr}[r.IntN(3)]
		} else if to == "DECIMAL(38,0)" {
			// next to a fractional decimal, Spark's common type keeps
			// the scale (DECIMAL(38,2)), DuckDB the integer digits
			to = "DECIMAL(18,0)"
		}
		return call("CAST(%s AS "+to+")", cDec, x.expr(src, d))
	case 5:
		return x.caseOf(cDec, depth)
	case 6:
		return call("coalesce(%s, %s)", cDec, x.expr(cDec, d), x.expr(cDec, d))
	}
	return x.leafOf(cDec)
}

func (x exprGen) strExpr(depth int) *Expr {
	r := x.g.r
	d := depth - 1
	switch r.IntN(10) {
	case 0:
		return call("upper(%s)", cStr, x.expr(cStr, d))
	case 1:
		return call("lower(%s)", cStr, x.expr(cStr, d))
	case 2:
		pos := 1 + r.IntN(4)
		if !x.g.o.DuckDB && r.IntN(3) == 0 {
			pos = r.IntN(7) - 3
		}
		return call(fmt.Sprintf("substr(%%s, %d, %d)", pos, r.IntN(5)), cStr, x.expr(cStr, d))
	case 3:
		return call("(%s || %s)", cStr, x.expr(cStr, d), x.expr(cStr, d))
	case 4:
		if x.g.o.DuckDB {
			return call("(%s || %s)", cStr, x.expr(cStr, d), x.expr(cStr, d))
		}
		return call("concat(%s, %s)", cStr, x.expr(cStr, d), x.expr(cStr, d))
	case 5:
		src := []class{cInt, cDate, cBool}[r.IntN(3)]
		if !x.g.o.DuckDB {
			src = []class{cInt, cDate, cBool, cFloat, cDec, cTs}[r.IntN(6)]
		}
		return call2("CAST(%s AS STRING)", "CAST(%s AS VARCHAR)", cStr, x.expr(src, d))
	case 6:
		return x.caseOf(cStr, depth)
	case 7:
		return call("coalesce(%s, %s)", cStr, x.expr(cStr, d), x.expr(cStr, d))
	case 8:
		if x.g.o.DuckDB {
			return x.leafOf(cStr)
		}
		f := []string{"from_unixtime(%s)", "from_unixtime(%s, 'yyyy/MM/dd hh:mm a EEE')"}[r.IntN(2)]
		return call(f, cStr, x.expr(cInt, d))
	}
	return x.leafOf(cStr)
}

// compare draws a comparison of a and b.
func (x exprGen) compare(a, b *Expr) *Expr {
	op := []string{"=", "<>", "<", "<=", ">", ">=", "<=>"}[x.g.r.IntN(7)]
	if op == "<=>" {
		return call2("(%s <=> %s)", "(%s IS NOT DISTINCT FROM %s)", cBool, a, b)
	}
	return call("(%s "+op+" %s)", cBool, a, b)
}
