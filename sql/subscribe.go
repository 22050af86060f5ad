package sql

import (
	"strconv"
	"strings"
)

// Subscribe is SUBSCRIBE [TO] name [SINCE EPOCH n]: follow a sink table,
// receiving the rows of each epoch as it commits (from the epoch after
// the latest committed one, or from the retained epochs after n). It is
// served by the Flight SQL server as an unbounded result.
type Subscribe struct {
	Pos
	Name []Ident
	// Since is the epoch after which rows are delivered; nil starts at
	// the next epoch to commit.
	Since *int64
}

func (*Subscribe) stmtNode() {}

// parseSubscribe parses SUBSCRIBE [TO] name [SINCE EPOCH n]. SUBSCRIBE
// is a statement keyword only in first position, so tables and columns
// may still be called subscribe.
func (p *parser) parseSubscribe() Statement {
	s := &Subscribe{Pos: p.next().pos}
	if isWord(p.peek(), "TO") && isName(p.peekAt(1)) {
		p.next()
	}
	s.Name = p.qualifiedName("a table name after SUBSCRIBE")
	if isWord(p.peek(), "SINCE") {
		p.next()
		if !isWord(p.peek(), "EPOCH") {
			p.unexpected("EPOCH after SINCE")
		}
		p.next()
		t := p.peek()
		neg := false
		if t.kind == tMinus {
			p.next()
			neg = true
			t = p.peek()
		}
		if t.kind != tNumber {
			p.unexpected("an epoch number after SINCE EPOCH")
		}
		n, err := strconv.ParseInt(t.text, 10, 64)
		if err != nil {
			p.failAt(t.pos, "SINCE EPOCH %s: not an epoch number (a whole number from -1 up)", t.text)
		}
		if neg {
			n = -n
		}
		if n < -1 {
			p.failAt(t.pos, "SINCE EPOCH %d: the epoch must be -1 (every retained epoch) or more", n)
		}
		p.next()
		s.Since = &n
	}
	return s
}

// isWord reports whether t is the bare word w (upper case). SUBSCRIBE,
// SINCE, EPOCH and TO are matched by text rather than entered in the
// keyword table, so that they stay ordinary names everywhere else.
func isWord(t *token, w string) bool {
	return t.kind == tWord && strings.EqualFold(t.text, w)
}

// subscribe writes s back as SQL.
func (f *formatter) subscribe(s *Subscribe) {
	// TO is always written so that a table called to or since reads
	// back as itself.
	f.str("SUBSCRIBE TO ")
	f.names(s.Name)
	if s.Since != nil {
		f.str(" SINCE EPOCH " + strconv.FormatInt(*s.Since, 10))
	}
}
