package sql

import "strings"

// parseGroupBy parses the list after GROUP BY: expressions, CUBE(...),
// ROLLUP(...) and GROUPING SETS (...), and a trailing WITH ROLLUP or
// WITH CUBE. With any of the grouping-set forms, GroupingSets holds the
// cross product of the items' sets (a plain expression is in every set),
// and GroupBy the distinct expressions in order of first appearance.
func (p *parser) parseGroupBy(s *Select) {
	if p.isKw("ALL") && p.peekAt(1).kind != tLParen && p.peekAt(1).kind != tDot {
		p.next()
		s.GroupByAll = true
		return
	}
	var items [][][]Expr // per item: its sets
	sets := false
	for {
		t := p.peek()
		switch {
		case wordIs(t, "CUBE", "ROLLUP") && p.peekAt(1).kind == tLParen:
			p.next()
			at := p.peek().pos
			elems := p.groupingElements()
			for _, e := range elems {
				if len(e) == 0 {
					p.failAt(at, "Empty set in %s grouping sets is not supported.", strings.ToUpper(t.text))
				}
			}
			if strings.EqualFold(t.text, "CUBE") {
				items = append(items, cubeSets(elems))
			} else {
				items = append(items, rollupSets(elems))
			}
			sets = true
		case wordIs(t, "GROUPING") && wordIs(p.peekAt(1), "SETS"):
			p.next()
			p.next()
			items = append(items, p.groupingSetsElements())
			sets = true
		default:
			e := p.parseExprWhat("an expression in GROUP BY")
			items = append(items, [][]Expr{{e}})
		}
		if !p.accept(tComma) {
			break
		}
	}
	if !sets && wordIs(p.peek(), "GROUPING") && wordIs(p.peekAt(1), "SETS") {
		p.hiveGroupingSets(s, items)
		return
	}
	if p.isKw("WITH") && wordIs(p.peekAt(1), "ROLLUP", "CUBE") && !sets {
		p.next()
		kw := strings.ToUpper(p.next().text)
		var elems [][]Expr
		for _, it := range items {
			elems = append(elems, it[0])
		}
		if kw == "CUBE" {
			items = [][][]Expr{cubeSets(elems)}
		} else {
			items = [][][]Expr{rollupSets(elems)}
		}
		sets = true
	}
	product := [][]Expr{{}}
	for _, it := range items {
		var next [][]Expr
		for _, pre := range product {
			for _, set := range it {
				next = append(next, append(append([]Expr(nil), pre...), set...))
			}
		}
		product = next
	}
	seen := map[string]Expr{}
	for _, set := range product {
		for i, e := range set {
			k := foldCaseOutsideStrings(Format(e))
			if sets {
				// Sets that differ only in how an expression is written
				// group by the same expression, as in Spark.
				k = groupingKey(e)
			}
			if first, ok := seen[k]; ok {
				set[i] = first
				continue
			}
			seen[k] = e
			s.GroupBy = append(s.GroupBy, e)
		}
	}
	if sets {
		s.GroupingSets = product
		if s.GroupBy == nil {
			s.GroupBy = []Expr{}
		}
	}
}

// hiveGroupingSets parses the Hive form GROUP BY a, b GROUPING SETS
// ((a), (b), ()): the list before GROUPING SETS (items, plain expressions)
// is the grouping columns, in grouping_id's bit order, and the sets
// replace it (they are not crossed with it). GroupBy holds the list then
// every set expression that is not written as a list item (an ordinal, or
// a different spelling); the analyzer checks that each of those resolves
// to a column of the list (GroupByListLen).
func (p *parser) hiveGroupingSets(s *Select, items [][][]Expr) {
	p.next()
	p.next()
	sets := p.groupingSetsElements()
	seen := map[string]Expr{}
	for _, it := range items {
		e := it[0][0]
		k := groupingKey(e)
		if _, ok := seen[k]; !ok {
			seen[k] = e
		}
		s.GroupBy = append(s.GroupBy, e)
	}
	s.GroupByListLen = len(s.GroupBy)
	for _, set := range sets {
		for i, e := range set {
			k := groupingKey(e)
			if first, ok := seen[k]; ok {
				set[i] = first
				continue
			}
			seen[k] = e
			s.GroupBy = append(s.GroupBy, e)
		}
	}
	s.GroupingSets = sets
}

// groupingSetsElements parses the list of GROUPING SETS: each element is
// a grouping set (an expression or a parenthesized list of them) or, as
// in Spark, a nested ROLLUP(...), CUBE(...) or GROUPING SETS(...), whose
// sets are spliced in, in order (duplicates are kept: each set is
// aggregated once per appearance).
func (p *parser) groupingSetsElements() [][]Expr {
	open := p.next()
	if open.kind != tLParen {
		p.unexpected("'(' to start a list of grouping sets")
	}
	if p.peek().kind == tRParen {
		p.next()
		return [][]Expr{{}}
	}
	var out [][]Expr
	for {
		t := p.peek()
		switch {
		case wordIs(t, "CUBE", "ROLLUP") && p.peekAt(1).kind == tLParen:
			p.next()
			at := p.peek().pos
			elems := p.groupingElements()
			for _, e := range elems {
				if len(e) == 0 {
					p.failAt(at, "Empty set in %s grouping sets is not supported.", strings.ToUpper(t.text))
				}
			}
			if strings.EqualFold(t.text, "CUBE") {
				out = append(out, cubeSets(elems)...)
			} else {
				out = append(out, rollupSets(elems)...)
			}
		case wordIs(t, "GROUPING") && wordIs(p.peekAt(1), "SETS") && p.peekAt(2).kind == tLParen:
			p.next()
			p.next()
			out = append(out, p.groupingSetsElements()...)
		default:
			out = append(out, p.groupingElement())
		}
		if !p.accept(tComma) {
			break
		}
	}
	p.closeParen(open)
	return out
}

// groupingElement parses one grouping set: an expression or a
// parenthesized, possibly empty, list of them.
func (p *parser) groupingElement() []Expr {
	if p.peek().kind == tLParen && !p.isKwAt(1, "SELECT") && !p.isKwAt(1, "WITH") {
		in := p.next()
		var list []Expr
		if p.peek().kind != tRParen {
			for {
				list = append(list, p.parseExprWhat("an expression in a grouping set"))
				if !p.accept(tComma) {
					break
				}
			}
		}
		p.closeParen(in)
		return list
	}
	return []Expr{p.parseExprWhat("an expression in a grouping set")}
}

// groupingElements parses ( element, ... ) where an element is an
// expression or a parenthesized list of them (possibly empty): a grouping
// set of GROUPING SETS, or a column group of CUBE and ROLLUP.
func (p *parser) groupingElements() [][]Expr {
	open := p.next()
	if open.kind != tLParen {
		p.unexpected("'(' to start a list of grouping sets")
	}
	var out [][]Expr
	if p.peek().kind == tRParen {
		p.next()
		return [][]Expr{{}}
	}
	for {
		out = append(out, p.groupingElement())
		if !p.accept(tComma) {
			break
		}
	}
	p.closeParen(open)
	return out
}

// cubeSets is every subset of the column groups, largest first.
func cubeSets(elems [][]Expr) [][]Expr {
	n := len(elems)
	out := make([][]Expr, 0, 1<<n)
	for mask := 0; mask < 1<<n; mask++ {
		var set []Expr
		for i := 0; i < n; i++ {
			if mask&(1<<(n-1-i)) == 0 {
				set = append(set, elems[i]...)
			}
		}
		out = append(out, set)
	}
	return out
}

// rollupSets is the prefixes of the column groups, longest first.
func rollupSets(elems [][]Expr) [][]Expr {
	out := make([][]Expr, 0, len(elems)+1)
	for i := len(elems); i >= 0; i-- {
		var set []Expr
		for _, e := range elems[:i] {
			set = append(set, e...)
		}
		out = append(out, set)
	}
	return out
}

// wordIs reports whether t is a word spelled as one of words (any case),
// keyword or not.
func wordIs(t *token, words ...string) bool {
	if t.kind != tWord {
		return false
	}
	for _, w := range words {
		if strings.EqualFold(t.text, w) {
			return true
		}
	}
	return false
}
