package vector_test

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// The word-building kernels work in blocks of 64 and 8 rows with tails;
// these tests compare them with a per-row model over batches long enough
// to have full blocks and ragged tails.

var opNames = []string{"eq", "ne", "lt", "le", "gt", "ge"}

var opCtors = []func(l, r vector.Expr) vector.Expr{vector.Eq, vector.NotEq, vector.Lt, vector.Le, vector.Gt, vector.Ge}

// model applies op to a three-way comparison result.
func model(op int, c int) bool {
	switch op {
	case 0:
		return c == 0
	case 1:
		return c != 0
	case 2:
		return c < 0
	case 3:
		return c <= 0
	case 4:
		return c > 0
	}
	return c >= 0
}

// randomCases builds, for every operator, a column-column case and a
// column-constant case over rows; cmp is the model's three-way comparison.
func randomCases(name string, schema *arrow.Schema, rows []vt.Row, konst any, cmp func(x, y any) int) []vt.ExprCase {
	var cases []vt.ExprCase
	for op, ctor := range opCtors {
		vv := make([]any, len(rows))
		vs := make([]any, len(rows))
		for i, r := range rows {
			if r[0] != nil && r[1] != nil {
				vv[i] = model(op, cmp(r[0], r[1]))
			}
			if r[0] != nil {
				vs[i] = model(op, cmp(r[0], konst))
			}
		}
		cases = append(cases,
			vt.ExprCase{Name: name + "/vv/" + opNames[op], Schema: schema, Rows: rows, Expr: ctor(col("x"), col("y")), Want: vv},
			vt.ExprCase{Name: name + "/vs/" + opNames[op], Schema: schema, Rows: rows, Expr: ctor(col("x"), lit(konst)), Want: vs},
		)
	}
	return cases
}

func TestCompareRandom(t *testing.T) {
	r := rand.New(rand.NewPCG(7, 11))
	const n = 333
	maybeNull := func(v any) any {
		if r.IntN(10) == 0 {
			return nil
		}
		return v
	}
	var ints, floats, strs []vt.Row
	words := []string{"view", "vie", "viewx", "click", "purchase", "purchases", "", "a much longer string value", "v"}
	for range n {
		ints = append(ints, vt.Row{maybeNull(r.Int64N(7) - 3), maybeNull(r.Int64N(7) - 3)})
		fl := func() any {
			switch r.IntN(6) {
			case 0:
				return math.NaN()
			case 1:
				return math.Copysign(0, -1)
			}
			return float64(r.IntN(5) - 2)
		}
		floats = append(floats, vt.Row{maybeNull(fl()), maybeNull(fl())})
		strs = append(strs, vt.Row{maybeNull(words[r.IntN(len(words))]), maybeNull(words[r.IntN(len(words))])})
	}
	cmpInt := func(x, y any) int {
		a, b := vt.Normalize(x).(int64), vt.Normalize(y).(int64)
		switch {
		case a < b:
			return -1
		case a > b:
			return 1
		}
		return 0
	}
	cmpFloat := func(x, y any) int {
		a, b := x.(float64), y.(float64)
		switch {
		case a == b || a != a && b != b:
			return 0
		case a != a:
			return 1
		case b != b, a < b:
			return -1
		}
		return 1
	}
	cmpStr := func(x, y any) int { return bytes.Compare([]byte(x.(string)), []byte(y.(string))) }
	dict16 := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: arrow.BinaryTypes.String}
	var cases []vt.ExprCase
	cases = append(cases, randomCases("int64", exprSchema("x", vector.Int64, "y", vector.Int64), ints, int64(1), cmpInt)...)
	cases = append(cases, randomCases("int32", exprSchema("x", vector.Int32, "y", vector.Int32), ints, int32(-1), cmpInt)...)
	cases = append(cases, randomCases("double", exprSchema("x", vector.Float64, "y", vector.Float64), floats, 0.0, cmpFloat)...)
	cases = append(cases, randomCases("double-nan", exprSchema("x", vector.Float64, "y", vector.Float64), floats, math.NaN(), cmpFloat)...)
	for _, c := range []string{"view", "purchase", "", "a much longer string value", "vie"} {
		cases = append(cases, randomCases("string-"+c, exprSchema("x", vector.String, "y", vector.String), strs, c, cmpStr)...)
		cases = append(cases, randomCases("dict8-"+c, exprSchema("x", dictStringType, "y", vector.String), strs, c, cmpStr)...)
		cases = append(cases, randomCases("dict16-"+c, exprSchema("x", dict16, "y", dictStringType), strs, c, cmpStr)...)
	}
	vt.RunExpr(t, cases...)
}
