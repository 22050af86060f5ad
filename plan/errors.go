package plan

import (
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/arrowstream/arrowstream/sql"
)

// Sentinel errors; analysis errors wrap one of them.
var (
	// ErrUnresolved is a name (column, table, function, field) that does
	// not resolve.
	ErrUnresolved = errors.New("unresolved name")
	// ErrAmbiguous is a name that matches more than one column.
	ErrAmbiguous = errors.New("ambiguous reference")
	// ErrType is a data type mismatch.
	ErrType = errors.New("data type mismatch")
	// ErrAggregate is a misuse of aggregates or grouping.
	ErrAggregate = errors.New("invalid aggregation")
	// ErrUnsupported is SQL or a plan shape the engine does not support.
	ErrUnsupported = errors.New("not supported")
	// ErrStreaming is a streaming query that breaks one of Spark's rules
	// (UnsupportedOperationChecker); see CheckStreaming.
	ErrStreaming = errors.New("unsupported streaming operation")
)

// Error is an analysis error at a position of the SQL text (Pos is zero
// for expressions given to the builder API without a position).
type Error struct {
	Pos sql.Pos
	Msg string
	Err error // a sentinel above, or an underlying error
}

// Error renders "MSG at LINE:COL" (the position only when known).
func (e *Error) Error() string {
	var b strings.Builder
	b.WriteString(e.Msg)
	if e.Pos.Line > 0 {
		fmt.Fprintf(&b, " (at %d:%d)", e.Pos.Line, e.Pos.Col)
	}
	return b.String()
}

// Unwrap returns the sentinel or underlying error.
func (e *Error) Unwrap() error { return e.Err }

// ReadError is a table that failed to give its rows (an epoch no longer
// retained, an unreadable file). Its message names the table and the
// cause, and BuildOperator passes it on without the operator's internals.
type ReadError struct {
	Table string
	Err   error
}

// Error is the table's error, prefixed with the table's name unless it
// names the table already.
func (e *ReadError) Error() string {
	msg := e.Err.Error()
	if strings.Contains(msg, e.Table) {
		return msg
	}
	return fmt.Sprintf("table %s: %s", backquote(e.Table), msg)
}

// Unwrap returns the table's error.
func (e *ReadError) Unwrap() error { return e.Err }

// errTableUnresolved is an unknown table: both ErrUnresolved and
// ErrTableNotFound, so callers can map it to "not found".
var errTableUnresolved = fmt.Errorf("%w: %w", ErrUnresolved, ErrTableNotFound)

func errorAt(pos sql.Pos, sentinel error, format string, args ...any) *Error {
	return &Error{Pos: pos, Msg: fmt.Sprintf(format, args...), Err: sentinel}
}

// suggest returns up to five of candidates closest to name (case
// insensitive edit distance), for "did you mean" hints. Names further than
// about half their length away are left out unless nothing is closer.
func suggest(name string, candidates []string) []string {
	type cand struct {
		s string
		d int
	}
	seen := map[string]bool{}
	var cs []cand
	ln := strings.ToLower(name)
	for _, c := range candidates {
		if seen[c] {
			continue
		}
		seen[c] = true
		cs = append(cs, cand{c, editDistance(ln, strings.ToLower(c))})
	}
	sort.SliceStable(cs, func(i, j int) bool {
		if cs[i].d != cs[j].d {
			return cs[i].d < cs[j].d
		}
		return cs[i].s < cs[j].s
	})
	var out []string
	for _, c := range cs {
		if len(out) == 5 {
			break
		}
		out = append(out, c.s)
	}
	return out
}

// didYouMean renders the suggestions as Spark does: "Did you mean one of
// the following? [`a`, `b`]".
func didYouMean(name string, candidates []string) string {
	s := suggest(name, candidates)
	if len(s) == 0 {
		return ""
	}
	q := make([]string, len(s))
	for i, c := range s {
		q[i] = "`" + c + "`"
	}
	return " Did you mean one of the following? [" + strings.Join(q, ", ") + "]."
}

// editDistance is the Levenshtein distance of a and b (bytes).
func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		if a == b {
			return 0
		}
		return max(len(a), len(b))
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}
