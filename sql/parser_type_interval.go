package sql

import "strings"

// intervalTypeFields parses the fields of a year-month interval type after
// INTERVAL: YEAR, MONTH or YEAR TO MONTH; the type's name is
// "INTERVAL YEAR", "INTERVAL MONTH" or "INTERVAL YEAR TO MONTH". Day-time
// interval types and the legacy calendar INTERVAL are not supported.
func (p *parser) intervalTypeFields(kw *token) string {
	word := func() string {
		t := p.peek()
		if t.kind != tWord {
			return ""
		}
		return strings.ToUpper(t.text)
	}
	start := word()
	if start != "YEAR" && start != "MONTH" {
		p.failAt(kw.pos, "unsupported type INTERVAL%s: the interval types supported are INTERVAL YEAR, INTERVAL MONTH and INTERVAL YEAR TO MONTH", map[bool]string{true: "", false: " " + start}[start == ""])
	}
	p.next()
	if word() == "TO" {
		to := p.peek()
		p.next()
		end := word()
		if start != "YEAR" || end != "MONTH" {
			p.failAt(to.pos, "unsupported type INTERVAL %s TO %s: the interval types supported are INTERVAL YEAR, INTERVAL MONTH and INTERVAL YEAR TO MONTH", start, end)
		}
		p.next()
		return "INTERVAL YEAR TO MONTH"
	}
	return "INTERVAL " + start
}
