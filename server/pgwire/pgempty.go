package pgwire

import "strings"

// Catalog queries of psql and SQLAlchemy read relations that have no
// rows here (pg_attrdef, pg_index, pg_constraint, pg_policy, ...) with
// PostgreSQL syntax the dialect lacks (array subscripts, unnest, ANY of
// arrays) or correlations the planner refuses. A query that inner-joins
// such a relation has no rows whatever the rest says, and a scalar
// subquery over one is NULL: emptySelect recognizes them, so that
// translate replaces such a subquery by NULL and newPortal answers such
// a query with no rows when the planner cannot take it.

// aggregateNames are aggregates, whose value over no rows is a row.
var aggregateNames = map[string]bool{"count": true, "sum": true, "avg": true, "min": true, "max": true,
	"bool_and": true, "bool_or": true, "every": true, "array_agg": true, "string_agg": true, "json_agg": true,
	"json_object_agg": true}

// emptyCatalogRelation reports whether name (lower case, without schema)
// is a pg_catalog relation that never has rows.
func emptyCatalogRelation(name string) bool {
	for _, r := range catalogRelations {
		if r.schema == pgCatalogSchema && r.name == name {
			return r.rows == nil
		}
	}
	return false
}

// emptySelect reports whether the SELECT of toks (without parentheses)
// has no rows: no aggregate in its select list, no outer join that
// could keep rows, and an inner-joined relation that is empty.
func emptySelect(toks []token) bool {
	sel := next(toks, 0)
	if sel >= len(toks) || !isWord(toks[sel], "select") {
		return false
	}
	depth := 0
	from, fromEnd := -1, len(toks)
	for k := sel; k < len(toks); k++ {
		switch {
		case isPunct(toks[k], "("):
			depth++
		case isPunct(toks[k], ")"):
			depth--
		case depth == 0 && toks[k].kind == tkIdent:
			w := strings.ToLower(toks[k].text)
			switch {
			case aggregateNames[w] && from < 0:
				if n := next(toks, k+1); n < len(toks) && isPunct(toks[n], "(") {
					return false
				}
			case w == "from" && from < 0:
				from = k
			case from >= 0 && fromEnd == len(toks) && (w == "where" || w == "group" || w == "order" || w == "limit" ||
				w == "having" || w == "union" || w == "intersect" || w == "except" || w == "offset"):
				fromEnd = k
			case w == "right" || w == "full" || w == "union" || w == "intersect" || w == "except":
				return false
			}
		}
	}
	if from < 0 {
		return false
	}
	// Walk the FROM items: the first, those after "," and after a JOIN
	// not preceded by LEFT are inner.
	inner := true
	for k := next(toks, from+1); k < fromEnd; k = next(toks, k+1) {
		t := toks[k]
		switch {
		case isPunct(t, ","):
			inner = true
			continue
		case isWord(t, "left"):
			inner = false
			continue
		case isWord(t, "join"):
			continue
		case isWord(t, "inner") || isWord(t, "cross") || isWord(t, "outer") || isWord(t, "lateral"):
			continue
		case isWord(t, "on"):
			// Skip the join condition up to the next JOIN or ",".
			d := 0
			for k+1 < fromEnd {
				n := k + 1
				if isPunct(toks[n], "(") {
					d++
				} else if isPunct(toks[n], ")") {
					d--
				} else if d == 0 && (isPunct(toks[n], ",") || isWord(toks[n], "join") || isWord(toks[n], "left") ||
					isWord(toks[n], "inner") || isWord(toks[n], "cross")) {
					break
				}
				k = n
			}
			continue
		}
		// A FROM item: a relation or a parenthesized subquery, then an
		// alias.
		empty := false
		if isPunct(t, "(") {
			end := closing(toks, k)
			if end >= fromEnd {
				return false
			}
			empty = emptySelect(toks[k+1 : end])
			k = end
		} else if t.kind == tkIdent {
			name := strings.ToLower(t.text)
			if n := next(toks, k+1); n < fromEnd && isPunct(toks[n], ".") {
				if !strings.EqualFold(name, pgCatalogSchema) {
					return false
				}
				k = next(toks, n+1)
				if k >= fromEnd {
					return false
				}
				name = strings.ToLower(toks[k].text)
			}
			if n := next(toks, k+1); n < fromEnd && isPunct(toks[n], "(") {
				k = closing(toks, n) // a table function
			} else {
				empty = emptyCatalogRelation(name)
			}
		} else {
			return false
		}
		if empty && inner {
			return true
		}
		// The alias, if any.
		if n := next(toks, k+1); n < fromEnd && isWord(toks[n], "as") {
			k = n
		}
		if n := next(toks, k+1); n < fromEnd && (toks[n].kind == tkIdent || toks[n].kind == tkQIdent) && !isJoinWord(toks[n]) {
			k = n
		}
	}
	return false
}

func isJoinWord(t token) bool {
	for _, w := range []string{"join", "left", "right", "full", "inner", "cross", "on", "natural", "outer"} {
		if isWord(t, w) {
			return true
		}
	}
	return false
}

// emptySubquery recognizes at toks[i] a scalar subquery "(SELECT ...)"
// that has no rows, and returns the index of its ")". A subquery in a
// FROM clause, or after EXISTS, IN, ANY, ALL, SOME or ARRAY, is not a
// scalar.
func emptySubquery(toks []token, i int) (int, bool) {
	if !isPunct(toks[i], "(") {
		return i, false
	}
	if sel := next(toks, i+1); sel >= len(toks) || !isWord(toks[sel], "select") {
		return i, false
	}
	if p := prev(toks, i); p >= 0 {
		switch {
		case toks[p].kind == tkIdent:
			switch strings.ToLower(toks[p].text) {
			case "exists", "in", "any", "all", "some", "array", "from", "join", "lateral":
				return i, false
			}
		case isPunct(toks[p], ","):
			if inFromList(toks, p) {
				return i, false
			}
		}
	}
	end := closing(toks, i)
	if end >= len(toks) || !emptySelect(toks[i+1:end]) {
		return i, false
	}
	return end, true
}

// inFromList reports whether the "," at toks[i] separates FROM items:
// going back at its depth, FROM comes before SELECT.
func inFromList(toks []token, i int) bool {
	depth := 0
	for k := i - 1; k >= 0; k-- {
		switch {
		case isPunct(toks[k], ")"):
			depth++
		case isPunct(toks[k], "("):
			if depth == 0 {
				return false
			}
			depth--
		case depth == 0 && isWord(toks[k], "from"):
			return true
		case depth == 0 && isWord(toks[k], "select"):
			return false
		}
	}
	return false
}

// readsEmptyCatalog reports whether text is a query without rows by
// emptySelect, or a UNION of such queries.
func readsEmptyCatalog(text string) bool {
	toks := lexPG(strings.TrimRight(strings.TrimSpace(text), ";"))
	var parts [][]token
	depth, start := 0, 0
	for k := 0; k < len(toks); k++ {
		switch {
		case isPunct(toks[k], "("):
			depth++
		case isPunct(toks[k], ")"):
			depth--
		case depth == 0 && (isWord(toks[k], "intersect") || isWord(toks[k], "except")):
			return false
		case depth == 0 && isWord(toks[k], "union"):
			parts = append(parts, toks[start:k])
			if n := next(toks, k+1); n < len(toks) && (isWord(toks[n], "all") || isWord(toks[n], "distinct")) {
				k = n
			}
			start = k + 1
		}
	}
	parts = append(parts, toks[start:])
	for _, part := range parts {
		if !emptySelect(part) {
			return false
		}
	}
	return true
}
