package plan_test

import (
	"fmt"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// sparkDecimalResult is Spark's DecimalPrecision result type of
// decimal(p1,s1) op decimal(p2,s2) with precision loss allowed, written
// from Spark's documented formulas (a model independent of vector's).
func sparkDecimalResult(op string, p1, s1, p2, s2 int) (int, int) {
	var p, s int
	switch op {
	case "+", "-":
		s = max(s1, s2)
		p = max(p1-s1, p2-s2) + s + 1
	case "*":
		s = s1 + s2
		p = p1 + p2 + 1
	case "/":
		s = max(6, s1+p2+1)
		p = p1 - s1 + s2 + s
	case "%":
		s = max(s1, s2)
		p = min(p1-s1, p2-s2) + s
	}
	if p > 38 {
		intDigits := p - s
		s = max(38-intDigits, min(s, 6))
		p = 38
	}
	return p, s
}

// TestDecimalPrecisionIntegralOperands checks the result type of every
// arithmetic operator over every integral type next to decimals, in both
// orders: an integral operand that is not a literal of the query (a cast,
// even to its own type, or a column) counts with its type's digits
// (tinyint 3, smallint 5, int 10, bigint 20); a literal with its value's.
func TestDecimalPrecisionIntegralOperands(t *testing.T) {
	cat := testCatalog(t)
	integrals := []struct {
		name   string
		digits int
	}{{"tinyint", 3}, {"smallint", 5}, {"int", 10}, {"bigint", 20}}
	decimals := [][2]int{{3, 0}, {5, 2}, {10, 0}, {20, 4}, {38, 10}}
	for _, ansi := range []bool{true, false} {
		opts := plan.DefaultOptions()
		opts.ANSI = ansi
		for _, it := range integrals {
			for _, d := range decimals {
				dec := fmt.Sprintf("CAST(1 AS DECIMAL(%d,%d))", d[0], d[1])
				for _, op := range []string{"+", "-", "*", "/", "%"} {
					// operand text, and its digits as a decimal
					operands := []struct {
						text   string
						digits int
					}{
						{fmt.Sprintf("CAST(1 AS %s)", it.name), it.digits},
						{fmt.Sprintf("CAST(c AS %s)", it.name), it.digits},
						{"12", 2},   // an INT literal: its value's digits
						{"-123", 3}, // a negative one
					}
					for _, o := range operands {
						for _, swap := range []bool{false, true} {
							l, r := o.text, dec
							p1, s1, p2, s2 := o.digits, 0, d[0], d[1]
							if swap {
								l, r = r, l
								p1, s1, p2, s2 = p2, s2, p1, s1
							}
							text := fmt.Sprintf("SELECT %s %s %s FROM VALUES (1) AS v(c)", l, op, r)
							n, err := plan.AnalyzeSQLWith(text, cat, opts)
							if err != nil {
								t.Fatalf("%s: %v", text, err)
							}
							got := n.Schema().Field(0).Type
							p, s := sparkDecimalResult(op, p1, s1, p2, s2)
							if want := vector.Decimal(int32(p), int32(s)); !arrow.TypeEqual(vector.Unwrap(got), want) {
								t.Errorf("ansi=%v %s: %s, want %s", ansi, text, got, want)
							}
						}
					}
				}
			}
		}
	}
}

// TestStringArithmeticTypes checks the type a string operand of
// arithmetic gives: with ANSI off (Spark 3's PromoteStrings) the string
// is a double whatever the other operand; with ANSI on it is a bigint
// next to an integral number and a double next to others.
func TestStringArithmeticTypes(t *testing.T) {
	cat := testCatalog(t)
	others := []struct {
		text       string
		ansi, lgcy arrow.DataType
	}{
		{"CAST(1 AS TINYINT)", vector.Int64, vector.Float64},
		{"CAST(1 AS SMALLINT)", vector.Int64, vector.Float64},
		{"CAST(1 AS INT)", vector.Int64, vector.Float64},
		{"CAST(1 AS BIGINT)", vector.Int64, vector.Float64},
		{"CAST(1 AS FLOAT)", vector.Float64, vector.Float64},
		{"CAST(1 AS DOUBLE)", vector.Float64, vector.Float64},
		{"CAST(1 AS DECIMAL(10,0))", vector.Float64, vector.Float64},
		{"'2'", vector.Float64, vector.Float64},
		{"NULL", nil, vector.Float64},
	}
	for _, o := range others {
		for _, op := range []string{"+", "-", "*", "%"} {
			for _, swap := range []bool{false, true} {
				l, r := "'1'", o.text
				if swap {
					l, r = r, l
				}
				text := fmt.Sprintf("SELECT %s %s %s", l, op, r)
				for _, ansi := range []bool{true, false} {
					want := o.lgcy
					if ansi {
						want = o.ansi
					}
					if want == nil {
						continue
					}
					opts := plan.DefaultOptions()
					opts.ANSI = ansi
					n, err := plan.AnalyzeSQLWith(text, cat, opts)
					if err != nil {
						t.Fatalf("ansi=%v %s: %v", ansi, text, err)
					}
					if got := vector.Unwrap(n.Schema().Field(0).Type); !arrow.TypeEqual(got, want) {
						t.Errorf("ansi=%v %s: %s, want %s", ansi, text, got, want)
					}
				}
			}
		}
	}
}
