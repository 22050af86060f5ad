package vector_test

import (
	"errors"
	"fmt"
	"math"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// FuzzExprEvalWide is FuzzExprEval with a wider grammar, kept apart so that
// the corpus of FuzzExprEval keeps decoding to the same expressions: more
// columns (a NULL-typed column, a dictionary with int16 indices, a list of
// bigint, a wide decimal), more rows of extreme values, literals of every
// type at their limits (struct, list and typed NULL literals too), nested
// CASE, IN and COALESCE of any arity, casts between every pair of types
// (also to types Cast refuses, and casts of casts), struct fields, column
// indices, timestamp + interval, and every function through LookupFunction
// with 0 to 5 arguments and in mixed case, as the SQL planner calls it.

var fuzzWideSchema = arrow.NewSchema(append(append([]arrow.Field(nil), fuzzSchema.Fields()...),
	arrow.Field{Name: "n", Type: arrow.Null, Nullable: true},
	arrow.Field{Name: "d16", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: vector.String}, Nullable: true},
	arrow.Field{Name: "li", Type: vector.ListOf(vector.Int64), Nullable: true},
	arrow.Field{Name: "dec38", Type: vector.Decimal(38, 10), Nullable: true},
), nil)

var fuzzWideRows = func() []vt.Row {
	extra := []vt.Row{
		{nil, "2026-01-01", []any{int64(1), nil}, "9999999999999999999999999999.9999999999"},
		{nil, "", []any{}, "-0.0000000001"},
		{nil, nil, nil, nil},
		{nil, "ß\xff", []any{int64(math.MinInt64)}, "0"},
	}
	rows := make([]vt.Row, 0, len(fuzzRows)+2)
	for i, r := range fuzzRows {
		rows = append(rows, append(append(vt.Row(nil), r...), extra[i]...))
	}
	return append(rows,
		vt.Row{true, int32(math.MaxInt32), int64(-1), 1e308, "ßü \xff", []byte{0, 0xff}, arrow.Timestamp(math.MaxInt64), arrow.Date32(math.MaxInt32),
			"99999999.99", []any{arrow.Timestamp(math.MinInt64), arrow.Timestamp(math.MaxInt64)}, []any{"", "1e5"}, " 12 ",
			nil, "1e400", []any{int64(math.MaxInt64), int64(-1)}, "-9999999999999999999999999999.9999999999"},
		vt.Row{false, int32(-1), int64(math.MinInt64 + 1), math.Copysign(0, -1), " 12 ", []byte("2026-01-01"), arrow.Timestamp(math.MinInt64), arrow.Date32(math.MinInt32),
			"-99999999.99", []any{nil, nil}, []any{"NaN", nil, "true"}, "",
			nil, "yyyy-MM-dd", []any{nil}, "0.5"},
	)
}()

var fuzzWideLiterals = func() []vector.Expr {
	lits := append([]vector.Expr(nil), fuzzLiterals...)
	for _, v := range []any{
		int64(math.MinInt64), int32(math.MinInt32), int32(math.MaxInt32), math.Inf(1), math.Inf(-1), math.Copysign(0, -1), 1e300, 5e-324,
		[]byte{}, []byte{0xff, 0}, arrow.Timestamp(math.MaxInt64), arrow.Timestamp(math.MinInt64), arrow.Timestamp(-62135596800000000),
		arrow.Date32(math.MaxInt32), arrow.Date32(math.MinInt32), false,
		" 12 ", "1e5", "NaN", "-Infinity", "true", "2026-01-01", "2026-01-01 10:00:00.123456", "2026-13-45", "ß", "\xff\xfe", "(", "[a-",
		".*", `\`, `a%b_c\%`, "9223372036854775808", "-9223372036854775809", "1e400", "yyyy-MM-dd HH:mm:ss.SSSSSS", "'", "MONTH", "week",
		"quarter", "year", "day", "minute", "dd/MM/yyyy", "EEE", "%", "_%", ",", "", "12.5",
	} {
		lits = append(lits, vector.Lit(v))
	}
	lits = append(lits,
		vector.TypedLit(vector.Decimal(38, 0), "99999999999999999999999999999999999999"),
		vector.TypedLit(vector.Decimal(38, 38), "0.1"),
		vector.TypedLit(vector.Decimal(1, 0), "9"),
		vector.TypedLit(vector.Decimal(38, 10), "-1234567890123456789.0123456789"),
		vector.TypedLit(vector.Decimal(10, 2), "0"),
		vector.TypedLit(vector.String, nil), vector.TypedLit(vector.Int64, nil), vector.TypedLit(vector.Int32, nil),
		vector.TypedLit(vector.Boolean, nil), vector.TypedLit(vector.Timestamp, nil), vector.TypedLit(vector.Date, nil),
		vector.TypedLit(vector.Decimal(5, 1), nil), vector.TypedLit(vector.Binary, nil), vector.TypedLit(vector.Float64, nil),
	)
	fuzzNestedStart = len(lits)
	lits = append(lits, fuzzNestedLiterals...)
	return append(lits,
		vector.IntervalLit(0), vector.IntervalLit(-1), vector.IntervalLit(math.MaxInt64), vector.IntervalLit(math.MinInt64),
		vector.IntervalLit(86_400_000_000),
	)
}()

// fuzzNestedStart is the index of fuzzNestedLiterals[0] in fuzzWideLiterals.
var fuzzNestedStart int

// fuzzNestedLiterals are struct and list literals (NULL ones too) for the
// columns w, arr and li.
var fuzzNestedLiterals = []vector.Expr{
	vector.TypedLit(vector.WindowType, nil), vector.TypedLit(vector.ListOf(vector.String), nil),
	vector.TypedLit(vector.WindowType, []any{arrow.Timestamp(0), arrow.Timestamp(10)}),
	vector.TypedLit(vector.WindowType, []any{nil, arrow.Timestamp(5)}),
	vector.TypedLit(vector.ListOf(vector.String), []any{"a", nil}),
	vector.TypedLit(vector.ListOf(vector.String), []any{}),
	vector.TypedLit(vector.ListOf(vector.Int64), []any{int64(1)}),
}

var fuzzWideCasts = append(append([]arrow.DataType(nil), fuzzCasts...),
	vector.Decimal(38, 0), vector.Decimal(38, 38), vector.Decimal(1, 0), vector.Decimal(38, 10),
	&arrow.TimestampType{Unit: arrow.Millisecond}, vector.ListOf(vector.String), vector.WindowType, vector.Interval, arrow.Null,
	arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Float32, vector.TimestampNTZ, nil,
)

var fuzzIntervals = []int64{0, 1, -1, 1_000_000, -86_400_000_000, math.MaxInt64, math.MinInt64}

// fuzzFunctionNames are the names LookupFunction knows, sorted (map order
// would make inputs irreproducible), plus one it does not know.
var fuzzFunctionNames = func() []string {
	names := vector.FunctionNames()
	sort.Strings(names)
	return append(names, "no_such_function")
}()

// wideBuilder decodes fuzz bytes into an expression of the wide grammar.
// With litCols set, every literal becomes a reference to a column that
// holds its value in every row (see checkLiteralsAsColumns).
type wideBuilder struct {
	exprBuilder
	problems []string // contract violations met while building
	litCols  bool
	used     []int       // the indices into fuzzWideLiterals of the literals used
	faults   *faultState // when set, every node can be made to fail
	// plainDicts decodes the dictionary columns (see checkPlainDictionaries).
	plainDicts bool
}

// lit returns literal i of fuzzWideLiterals, or its column.
func (b *wideBuilder) lit(i int) vector.Expr {
	b.used = append(b.used, i)
	if b.litCols {
		return vector.Col(fmt.Sprintf("lit%d", i))
	}
	return fuzzWideLiterals[i]
}

func (b *wideBuilder) n(k int) int { return int(b.byte()) % k }

func (b *wideBuilder) exprs(k int) []vector.Expr {
	out := make([]vector.Expr, k)
	for i := range out {
		out[i] = b.expr()
	}
	return out
}

func (b *wideBuilder) expr() vector.Expr {
	e := b.node()
	if b.faults != nil {
		return &faultExpr{Expr: e, st: b.faults}
	}
	return e
}

func (b *wideBuilder) node() vector.Expr {
	b.depth++
	defer func() { b.depth-- }()
	k := b.byte()
	if b.depth > 8 {
		k %= 2
	}
	switch k % 20 {
	case 0:
		f := fuzzWideSchema.Field(b.n(fuzzWideSchema.NumFields()))
		if b.plainDicts && f.Type.ID() == arrow.DICTIONARY {
			return vector.Cast(vector.Col(f.Name), vector.String)
		}
		return vector.Col(f.Name)
	case 1:
		return b.lit(b.n(len(fuzzWideLiterals)))
	case 2:
		ops := []func(l, r vector.Expr) vector.Expr{vector.Add, vector.Sub, vector.Mul, vector.Div, vector.Mod}
		return ops[b.n(len(ops))](b.expr(), b.expr())
	case 3:
		ops := []func(l, r vector.Expr) vector.Expr{vector.Eq, vector.NotEq, vector.Lt, vector.Le, vector.Gt, vector.Ge, vector.EqualNullSafe}
		return ops[b.n(len(ops))](b.expr(), b.expr())
	case 4:
		if b.byte()%2 == 0 {
			return vector.And(b.expr(), b.expr())
		}
		return vector.Or(b.expr(), b.expr())
	case 5:
		switch b.n(4) {
		case 0:
			return vector.Not(b.expr())
		case 1:
			return vector.IsNull(b.expr())
		case 2:
			return vector.Negate(b.expr())
		}
		return vector.IsNotNull(b.expr())
	case 6:
		x, list := b.expr(), b.exprs(b.n(5))
		if b.byte()%4 == 0 {
			return vector.NotIn(x, list...)
		}
		return vector.In(x, list...)
	case 7:
		return vector.Between(b.expr(), b.expr(), b.expr())
	case 8:
		whens := make([]vector.When, 1+b.n(3))
		for i := range whens {
			whens[i] = vector.When{Cond: b.expr(), Then: b.expr()}
		}
		var els vector.Expr
		if b.byte()%3 != 0 {
			els = b.expr()
		}
		return vector.Case(whens, els)
	case 9:
		return vector.Coalesce(b.exprs(b.n(5))...)
	case 10:
		return vector.Cast(b.expr(), fuzzWideCasts[b.n(len(fuzzWideCasts))])
	case 11:
		return vector.Like(b.expr(), b.expr())
	case 12:
		return b.call()
	case 13:
		return b.constructor()
	case 14:
		return vector.TimestampAddInterval(b.expr(), fuzzIntervals[b.n(len(fuzzIntervals))])
	case 15:
		return vector.If(b.expr(), b.expr(), b.expr())
	case 16:
		// Nested values: struct and list columns against literals of their
		// type, in comparisons, IN, CASE and COALESCE.
		nested := []vector.Expr{vector.Col("w"), vector.Col("arr"), vector.Col("li"), vector.Col("w", "end")}
		pick := func() vector.Expr {
			k := b.n(len(nested) + len(fuzzNestedLiterals))
			if k < len(nested) {
				return nested[k]
			}
			return b.lit(fuzzNestedStart + k - len(nested))
		}
		switch b.n(5) {
		case 0:
			return vector.Eq(pick(), pick())
		case 1:
			return vector.In(pick(), pick(), pick())
		case 2:
			return vector.If(b.expr(), pick(), pick())
		case 3:
			return vector.Coalesce(pick(), pick())
		}
		return vector.EqualNullSafe(pick(), pick())
	case 17:
		return vector.Cast(vector.Cast(b.expr(), fuzzWideCasts[b.n(len(fuzzWideCasts))]), fuzzWideCasts[b.n(len(fuzzWideCasts))])
	case 18:
		paths := [][]string{{"w", "start"}, {"w", "end"}, {"w", "nope"}, {"l", "x"}, {"W", "START"}, {"nope"}}
		p := paths[b.n(len(paths))]
		return vector.Col(p[0], p[1:]...)
	}
	return &vector.ColumnAt{Index: b.n(fuzzWideSchema.NumFields() + 2)}
}

// call looks a function up by name with 0 to 5 arguments, as the SQL
// planner does; a failed lookup must say why with the documented errors.
func (b *wideBuilder) call() vector.Expr {
	name := fuzzFunctionNames[b.n(len(fuzzFunctionNames))]
	if b.byte()%2 == 0 {
		name = strings.ToUpper(name)
	}
	args := b.exprs(b.n(6))
	e, err := vector.LookupFunction(name, args)
	if err != nil {
		if !errors.Is(err, vector.ErrArgumentCount) && !errors.Is(err, vector.ErrUnknownFunction) {
			b.problems = append(b.problems, "LookupFunction("+name+"): unexpected error "+err.Error())
		}
		return vector.Lit(nil)
	}
	return e
}

// constructor calls the function constructors directly, with their optional
// arguments left out.
func (b *wideBuilder) constructor() vector.Expr {
	opt := func() vector.Expr {
		if b.byte()%2 == 0 {
			return nil
		}
		return b.expr()
	}
	switch b.n(11) {
	case 0:
		return vector.Substring(b.expr(), b.expr(), opt())
	case 1:
		return vector.Split(b.expr(), b.expr(), opt())
	case 2:
		return vector.UnixTimestamp(b.expr(), opt())
	case 3:
		return vector.ToTimestamp(b.expr(), opt())
	case 4:
		return vector.ToDate(b.expr(), opt())
	case 5:
		return vector.Hash(b.exprs(1 + b.n(3))...)
	case 6:
		return vector.Concat(b.exprs(b.n(4))...)
	case 7:
		return vector.DateTrunc(b.expr(), b.expr())
	case 8:
		fs := []func(vector.Expr) vector.Expr{vector.Lower, vector.Upper, vector.Length, vector.TimestampSeconds, vector.TimestampMillis, vector.TimestampMicros,
			vector.Hour, vector.Minute, vector.Second}
		return fs[b.n(len(fs))](b.expr())
	case 9:
		if b.byte()%2 == 0 {
			return vector.FromUnixTime(b.expr(), opt())
		}
	}
	return vector.NotIn(b.expr(), b.exprs(b.n(3))...)
}

func FuzzExprEvalWide(f *testing.F) {
	f.Add([]byte{16, 1, 2, 0})
	f.Add([]byte{8, 2, 0, 0, 1, 70, 0, 9, 3, 1, 90, 0, 12})
	f.Add([]byte{17, 0, 4, 13, 9})
	f.Add([]byte{12, 5, 1, 3, 0, 4, 1, 60, 0, 1})
	f.Add([]byte{6, 0, 9, 4, 16, 2, 0, 10, 0, 0, 1, 95})
	f.Add([]byte{14, 10, 0, 4, 3})
	f.Fuzz(func(t *testing.T, data []byte) {
		mem := poisonmem.New()
		defer mem.AssertSize(t, 0)
		checkExprFuzzWide(mem, data, t.Errorf)
	})
}

func checkExprFuzzWide(mem memory.Allocator, data []byte, errorf func(format string, args ...any)) {
	b := &wideBuilder{exprBuilder: exprBuilder{data: data}}
	e := b.expr()
	for _, p := range b.problems {
		errorf("%s", p)
	}
	checkExprFuzzOf(mem, fuzzWideSchema, fuzzWideRows, e, errorf)
	checkLiteralsAsColumns(mem, data, errorf)
	checkPlainDictionaries(mem, data, errorf)
	checkFaults(mem, data, errorf)
}
