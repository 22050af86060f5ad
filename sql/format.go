package sql

import (
	"fmt"
	"strings"
	"unicode/utf8"
)

// Format renders a node as canonical SQL text on one line: keywords in
// upper case, names as written (backquoted where needed), every alias with
// AS, and only the parentheses that precedence requires. For any tree the
// parser produced, parsing Format's output yields an equal tree (ignoring
// positions). A hand-built tree may leave optional parts nil, but the
// parts the grammar requires (list elements, a Cast's type) must be set.
func Format(n Node) string {
	var f formatter
	f.node(n)
	return f.b.String()
}

// FormatScript renders statements as a script: each statement followed by
// ";" on its own line.
func FormatScript(stmts []Statement) string {
	var f formatter
	for _, s := range stmts {
		f.node(s)
		f.b.WriteString(";\n")
	}
	return f.b.String()
}

type formatter struct {
	b strings.Builder
}

func (f *formatter) str(s string) { f.b.WriteString(s) }

func (f *formatter) node(n Node) {
	switch n := n.(type) {
	case Statement:
		f.stmt(n)
	case Expr:
		f.expr(n, 0)
	case QueryBody:
		f.body(n, false)
	case FromItem:
		f.fromItem(n)
	case *TypeName:
		f.typeName(n)
	case *SelectItem:
		f.selectItem(n)
	case *OrderItem:
		f.orderItem(n)
	case *CTE:
		f.cte(n)
	case *Watermark:
		f.watermark(n)
	case *ColumnDef:
		f.columnDef(n)
	case *Property:
		f.property(n, false)
	case *When:
		f.when(n)
	case *StructField:
		f.structField(n)
	case Ident:
		f.ident(n)
	case IntervalPart:
		f.intervalPart(n)
	case nil:
	default:
		fmt.Fprintf(&f.b, "<unknown node %T>", n)
	}
}

func (f *formatter) stmt(s Statement) {
	switch s := s.(type) {
	case *CreateTable:
		f.str("CREATE ")
		if s.OrReplace {
			f.str("OR REPLACE ")
		}
		f.str("TABLE ")
		if s.IfNotExists {
			f.str("IF NOT EXISTS ")
		}
		f.names(s.Name)
		if s.Columns != nil {
			f.str(" (")
			for i, c := range s.Columns {
				f.sep(i)
				f.columnDef(c)
			}
			f.str(")")
		}
		if s.Using != nil {
			f.str(" USING ")
			f.names(s.Using)
		}
		if s.Options != nil {
			f.properties(" OPTIONS", s.Options, false)
		}
		if s.Query != nil {
			f.str(" AS ")
			f.query(s.Query)
		}
	case *CreateStreamingTable:
		f.str("CREATE ")
		if s.OrRefresh {
			f.str("OR REFRESH ")
		}
		if s.OrReplace {
			f.str("OR REPLACE ")
		}
		f.str("STREAMING TABLE ")
		f.names(s.Name)
		if s.Properties != nil {
			f.properties(" TBLPROPERTIES", s.Properties, true)
		}
		f.str(" AS ")
		f.query(s.Query)
	case *Query:
		f.query(s)
	case *Explain:
		f.str("EXPLAIN ")
		if s.Extended {
			f.str("EXTENDED ")
		}
		f.node(s.Stmt)
	case *Insert:
		if s.Overwrite {
			f.str("INSERT OVERWRITE TABLE ")
		} else {
			f.str("INSERT INTO ")
		}
		f.names(s.Name)
		if s.Columns != nil {
			f.str(" (")
			f.identList(s.Columns)
			f.str(")")
		}
		f.str(" ")
		f.query(s.Query)
	case *Set:
		f.str("SET " + s.Key)
		if s.HasValue {
			f.str(" = " + quoteString(s.Value))
		}
	case *CreateView:
		f.str("CREATE ")
		if s.OrReplace {
			f.str("OR REPLACE ")
		}
		if s.Global {
			f.str("GLOBAL ")
		}
		f.str("TEMPORARY VIEW ")
		if s.IfNotExists {
			f.str("IF NOT EXISTS ")
		}
		f.names(s.Name)
		if s.Columns != nil {
			f.str("(")
			f.identList(s.Columns)
			f.str(")")
		}
		f.str(" AS ")
		f.query(s.Query)
	case *DropTable:
		if s.View {
			f.str("DROP VIEW ")
			if s.IfExists {
				f.str("IF EXISTS ")
			}
			f.names(s.Name)
			return
		}
		f.str("DROP TABLE ")
		if s.IfExists {
			f.str("IF EXISTS ")
		}
		f.names(s.Name)
	case *ShowTables:
		f.str("SHOW TABLES")
	case *DescribeQuery:
		f.str("DESCRIBE QUERY ")
		f.query(s.Query)
	case *ShowColumns:
		f.str("SHOW COLUMNS IN ")
		f.names(s.Table)
		if s.Database != nil {
			f.str(" IN ")
			f.names([]Ident{*s.Database})
		}
	case *CreateDatabase:
		f.str("CREATE DATABASE ")
		if s.IfNotExists {
			f.str("IF NOT EXISTS ")
		}
		f.names([]Ident{s.Name})
		if s.Comment != "" {
			f.str(" COMMENT " + quoteString(s.Comment))
		}
	case *DropDatabase:
		f.str("DROP DATABASE ")
		if s.IfExists {
			f.str("IF EXISTS ")
		}
		f.names([]Ident{s.Name})
		if s.Cascade {
			f.str(" CASCADE")
		}
	case *Use:
		f.str("USE ")
		f.names([]Ident{s.Name})
	case *ShowFunctions:
		f.str("SHOW " + s.Scope + " FUNCTIONS")
		if s.HasLike {
			f.str(" LIKE " + quoteString(s.Pattern))
		}
	case *Describe:
		// TABLE is always written so that a table named history is not
		// read back as DESCRIBE HISTORY.
		f.str("DESCRIBE TABLE ")
		if s.Option != "" {
			f.str(s.Option + " ")
		}
		f.names(s.Name)
		if s.Column != nil {
			f.str(" ")
			f.names(s.Column)
		}
	case *DescribeFunction:
		f.str("DESCRIBE FUNCTION ")
		if s.Extended {
			f.str("EXTENDED ")
		}
		f.str(quoteString(s.Name))
	case *DescribeHistory:
		f.str("DESCRIBE HISTORY ")
		f.names(s.Name)
	case *Subscribe:
		f.subscribe(s)
	case *Truncate:
		f.truncate(s)
	}
}

func (f *formatter) sep(i int) {
	if i > 0 {
		f.str(", ")
	}
}

func (f *formatter) columnDef(c *ColumnDef) {
	f.ident(c.Name)
	f.str(" ")
	f.typeName(c.Type)
	if c.NotNull {
		f.str(" NOT NULL")
	}
}

// properties renders OPTIONS (k 'v', ...) or TBLPROPERTIES ('k' = 'v', ...).
func (f *formatter) properties(clause string, props []*Property, tbl bool) {
	f.str(clause)
	f.str(" (")
	for i, p := range props {
		f.sep(i)
		f.property(p, tbl)
	}
	f.str(")")
}

func (f *formatter) property(p *Property, tbl bool) {
	if !tbl && isPlainPath(p.Key) {
		f.str(p.Key)
		f.str(" ")
	} else {
		f.str(quoteString(p.Key))
		f.str(" = ")
	}
	f.str(quoteString(p.Value))
}

// isPlainPath reports whether s is a dotted path of plain identifiers, so
// that it reads back as the same option key without quotes.
func isPlainPath(s string) bool {
	for _, part := range strings.Split(s, ".") {
		if !isPlainIdent(part) {
			return false
		}
	}
	return true
}

func (f *formatter) query(q *Query) {
	if q == nil {
		return
	}
	if q.With != nil {
		f.str("WITH ")
		for i, c := range q.With {
			f.sep(i)
			f.cte(c)
		}
		f.str(" ")
	}
	f.body(q.Body, false)
	if q.OrderBy != nil {
		f.str(" ORDER BY ")
		for i, o := range q.OrderBy {
			f.sep(i)
			f.orderItem(o)
		}
	}
	switch {
	case q.Cluster:
		f.str(" CLUSTER BY ")
		for i, e := range q.DistributeBy {
			f.sep(i)
			f.expr(e, 0)
		}
	default:
		if q.DistributeBy != nil {
			f.str(" DISTRIBUTE BY ")
			for i, e := range q.DistributeBy {
				f.sep(i)
				f.expr(e, 0)
			}
		}
		if q.SortBy != nil {
			f.str(" SORT BY ")
			for i, o := range q.SortBy {
				f.sep(i)
				f.orderItem(o)
			}
		}
	}
	if q.Limit != nil {
		f.str(" LIMIT ")
		f.expr(q.Limit, 0)
	}
	if q.Offset != nil {
		f.str(" OFFSET ")
		f.expr(q.Offset, 0)
	}
}

func (f *formatter) cte(c *CTE) {
	f.ident(c.Name)
	if c.Columns != nil {
		f.str(" (")
		f.identList(c.Columns)
		f.str(")")
	}
	f.str(" AS (")
	f.query(c.Query)
	f.str(")")
}

// body renders a query body. A nested *Query always needs parentheses; a
// Union needs them as the right operand of another Union.
func (f *formatter) body(b QueryBody, rightOperand bool) {
	switch b := b.(type) {
	case *Select:
		f.selectBlock(b)
	case *Union:
		if rightOperand {
			f.str("(")
		}
		// INTERSECT binds tighter: a UNION or EXCEPT operand of it keeps
		// its parentheses.
		if l, ok := b.Left.(*Union); ok && b.Op == SetIntersect && l.Op != SetIntersect {
			f.str("(")
			f.body(b.Left, false)
			f.str(")")
		} else {
			f.body(b.Left, false)
		}
		f.str(" " + b.Op.String() + " ")
		if b.All {
			f.str("ALL ")
		}
		f.body(b.Right, true)
		if rightOperand {
			f.str(")")
		}
	case *Query:
		f.str("(")
		f.query(b)
		f.str(")")
	case *Values:
		f.str("VALUES ")
		for i, r := range b.Rows {
			f.sep(i)
			f.str("(")
			f.exprList(r)
			f.str(")")
		}
	}
}

func (f *formatter) selectBlock(s *Select) {
	f.str("SELECT ")
	if s.Distinct {
		f.str("DISTINCT ")
	}
	for i, it := range s.Items {
		f.sep(i)
		f.selectItem(it)
	}
	if s.From != nil {
		f.str(" FROM ")
		for i, it := range s.From {
			f.sep(i)
			f.fromItem(it)
		}
	}
	if s.Where != nil {
		f.str(" WHERE ")
		f.expr(s.Where, 0)
	}
	if s.GroupByAll {
		f.str(" GROUP BY ALL")
	} else if s.GroupingSets != nil {
		if s.GroupByListLen > 0 {
			// The Hive form: the grouping columns, then their sets.
			f.str(" GROUP BY ")
			f.exprList(s.GroupBy[:s.GroupByListLen])
			f.str(" GROUPING SETS (")
		} else {
			f.str(" GROUP BY GROUPING SETS (")
		}
		for i, set := range s.GroupingSets {
			f.sep(i)
			f.str("(")
			f.exprList(set)
			f.str(")")
		}
		f.str(")")
	} else if s.GroupBy != nil {
		f.str(" GROUP BY ")
		f.exprList(s.GroupBy)
	}
	if s.Having != nil {
		f.str(" HAVING ")
		f.expr(s.Having, 0)
	}
	f.windowClauses(s)
}

func (f *formatter) selectItem(it *SelectItem) {
	f.expr(it.Expr, 0)
	f.alias(it.Alias)
}

func (f *formatter) alias(a *Ident) {
	if a != nil {
		f.str(" AS ")
		f.ident(*a)
	}
}

func (f *formatter) orderItem(o *OrderItem) {
	f.expr(o.Expr, 0)
	if o.Desc {
		f.str(" DESC")
	}
	switch o.Nulls {
	case NullsFirst:
		f.str(" NULLS FIRST")
	case NullsLast:
		f.str(" NULLS LAST")
	}
}

func (f *formatter) fromItem(it FromItem) {
	switch it := it.(type) {
	case *Unpivot:
		f.fromItem(it.Input)
		if it.IncludeNulls {
			f.str(" UNPIVOT INCLUDE NULLS (")
		} else {
			f.str(" UNPIVOT (")
		}
		f.ident(it.Value)
		f.str(" FOR ")
		f.ident(it.Name)
		f.str(" IN (")
		for i, c := range it.Columns {
			f.sep(i)
			f.selectItem(c)
		}
		f.str("))")
	case *Pivot:
		f.fromItem(it.Input)
		f.str(" PIVOT (")
		for i, a := range it.Aggs {
			f.sep(i)
			f.selectItem(a)
		}
		f.str(" FOR ")
		if c, ok := it.Column.(*FuncCall); ok && c.Name.Name == "struct" {
			// Several pivot columns: the tuple (a, b) the parser reads.
			f.str("(")
			for i, a := range c.Args {
				f.sep(i)
				f.expr(a, 0)
			}
			f.str(")")
		} else {
			f.expr(it.Column, 0)
		}
		f.str(" IN (")
		for i, v := range it.Values {
			f.sep(i)
			f.selectItem(v)
		}
		f.str("))")
	case *TableRef:
		if it.Stream {
			f.str("STREAM ")
		}
		f.names(it.Name)
		if it.Version != nil {
			f.str(" VERSION AS OF ")
			f.literal(it.Version)
		}
		f.watermark(it.Watermark)
		f.alias(it.Alias)
		if it.Columns != nil {
			f.str("(")
			f.identList(it.Columns)
			f.str(")")
		}
	case *SubqueryRef:
		if it.Lateral {
			f.str("LATERAL ")
		}
		f.str("(")
		f.query(it.Query)
		f.str(")")
		f.watermark(it.Watermark)
		f.alias(it.Alias)
		if it.Columns != nil {
			f.str("(")
			f.identList(it.Columns)
			f.str(")")
		}
	case *LateralView:
		f.fromItem(it.Input)
		f.str(" LATERAL VIEW ")
		if it.Outer {
			f.str("OUTER ")
		}
		f.expr(it.Func, 0)
		f.str(" ")
		f.ident(it.Table)
		if it.Columns != nil {
			f.str(" AS ")
			for i, c := range it.Columns {
				f.sep(i)
				f.ident(c)
			}
		}
	case *TableFunc:
		f.ident(it.Name)
		f.str("(")
		f.exprList(it.Args)
		f.str(")")
		f.watermark(it.Watermark)
		f.alias(it.Alias)
		if it.Columns != nil {
			f.str("(")
			f.identList(it.Columns)
			f.str(")")
		}
	case *Join:
		f.fromItem(it.Left)
		f.str(" ")
		if it.Natural {
			f.str("NATURAL ")
		}
		f.str(it.Kind.String())
		f.str(" ")
		if _, nested := it.Right.(*Join); nested {
			// A join on the right was parenthesized (joins nest left).
			f.str("(")
			f.fromItem(it.Right)
			f.str(")")
		} else {
			f.fromItem(it.Right)
		}
		if it.On != nil {
			f.str(" ON ")
			f.expr(it.On, 0)
		} else if it.Using != nil {
			f.str(" USING (")
			f.identList(it.Using)
			f.str(")")
		}
	}
}

func (f *formatter) watermark(w *Watermark) {
	if w == nil {
		return
	}
	f.str(" WATERMARK ")
	f.expr(w.Expr, 0)
	f.alias(w.Name)
	f.str(" DELAY OF ")
	f.interval(w.Delay)
}

// names renders a dotted name; only the first part can be mistaken for a
// keyword, so later parts are quoted only when they are not plain words.
func (f *formatter) names(parts []Ident) {
	for i, id := range parts {
		if i == 0 {
			f.ident(id)
		} else {
			f.str(".")
			f.identAfterDot(id)
		}
	}
}

func (f *formatter) identList(ids []Ident) {
	for i, id := range ids {
		f.sep(i)
		f.ident(id)
	}
}

// ident renders a name, backquoting it if it is not a plain word or is a
// keyword that could be misread in some position.
func (f *formatter) ident(id Ident) {
	if needsQuote(id.Name) {
		f.str(quoteIdent(id.Name))
	} else {
		f.str(id.Name)
	}
}

func (f *formatter) identAfterDot(id Ident) {
	if isPlainIdent(id.Name) {
		f.str(id.Name)
	} else {
		f.str(quoteIdent(id.Name))
	}
}

func needsQuote(name string) bool {
	if !isPlainIdent(name) {
		return true
	}
	kw := lookupKeyword(name)
	return kw != "" && (isReserved(kw) || quoteWhenFormatting[kw])
}

func quoteIdent(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}

// quoteString renders s as a single-quoted literal that the lexer decodes
// back to s. Control characters use \u escapes, which cannot run into
// following digits the way octal escapes can; bytes that are not valid
// UTF-8 are written as they are, which the lexer also keeps as they are.
func quoteString(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('\'')
	for i := 0; i < len(s); {
		r, size := utf8.DecodeRuneInString(s[i:])
		switch {
		case r == '\\':
			b.WriteString(`\\`)
		case r == '\'':
			b.WriteString(`\'`)
		case r == '\n':
			b.WriteString(`\n`)
		case r == '\r':
			b.WriteString(`\r`)
		case r == '\t':
			b.WriteString(`\t`)
		case r < ' ' || r == 0x7f:
			fmt.Fprintf(&b, `\u%04X`, r)
		default:
			b.WriteString(s[i : i+size])
		}
		i += size
	}
	b.WriteByte('\'')
	return b.String()
}
