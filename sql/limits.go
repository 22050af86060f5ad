package sql

import (
	"errors"
	"fmt"
)

// Defaults of Limits, applied by Parse.
const (
	// DefaultMaxStatementBytes bounds the text of one statement (1 MiB).
	DefaultMaxStatementBytes = 1 << 20
	// DefaultMaxExprNodes bounds the expression nodes of one statement:
	// operators, function calls, literals and column references, counted
	// over the whole statement. 100K nodes is SELECT 1+1+…+1 with 50K terms.
	DefaultMaxExprNodes = 100_000
)

// ErrTooLarge is wrapped by every *LimitError.
var ErrTooLarge = errors.New("statement too large")

// Limits bound what one statement may hold, so that a short hostile text
// cannot make the planner spend unbounded memory or time. A zero field
// means its default; a negative one means no limit. Nesting is always
// bounded by MaxDepth.
type Limits struct {
	// MaxStatementBytes bounds the statement's length in bytes.
	MaxStatementBytes int
	// MaxExprNodes bounds the number of expression nodes.
	MaxExprNodes int
}

func (l Limits) withDefaults() Limits {
	if l.MaxStatementBytes == 0 {
		l.MaxStatementBytes = DefaultMaxStatementBytes
	}
	if l.MaxExprNodes == 0 {
		l.MaxExprNodes = DefaultMaxExprNodes
	}
	return l
}

// LimitError reports a statement beyond one of its Limits.
type LimitError struct {
	// Limit names the Limits field ("MaxStatementBytes").
	Limit string
	// Max is the limit, Got what the statement has (at least Max+1: the
	// count stops past the limit).
	Max, Got int
	// Line and Col locate the first node past the limit (0 when the limit
	// is the statement's length).
	Line, Col int
}

func (e *LimitError) Error() string {
	switch e.Limit {
	case "MaxStatementBytes":
		return fmt.Sprintf("statement of %d bytes is longer than the limit of %d bytes (%s)", e.Got, e.Max, e.Limit)
	case "MaxExprNodes":
		return fmt.Sprintf("statement has more than %d expression nodes (the limit, %s; the node at %d:%d is one too many)", e.Max, e.Limit, e.Line, e.Col)
	}
	return fmt.Sprintf("statement exceeds %s = %d", e.Limit, e.Max)
}

// Is makes errors.Is(err, ErrTooLarge) true.
func (e *LimitError) Is(target error) bool { return target == ErrTooLarge }

// ParseWith parses a single statement as Parse does, under limits l.
func ParseWith(src string, l Limits) (Statement, error) {
	l = l.withDefaults()
	if l.MaxStatementBytes > 0 && len(src) > l.MaxStatementBytes {
		return nil, &LimitError{Limit: "MaxStatementBytes", Max: l.MaxStatementBytes, Got: len(src)}
	}
	st, err := parseStatement(src)
	if err != nil {
		return nil, err
	}
	if err := checkExprNodes(st, l.MaxExprNodes); err != nil {
		return nil, err
	}
	return st, nil
}

// checkExprNodes counts the expression nodes of st and fails past max.
func checkExprNodes(st Statement, max int) error {
	if max < 0 {
		return nil
	}
	n := 0
	var over Expr
	Inspect(st, func(x Node) bool {
		if over != nil {
			return false
		}
		if e, ok := x.(Expr); ok {
			if n++; n > max {
				over = e
				return false
			}
		}
		return true
	})
	if over == nil {
		return nil
	}
	p := over.Position()
	return &LimitError{Limit: "MaxExprNodes", Max: max, Got: n, Line: p.Line, Col: p.Col}
}
