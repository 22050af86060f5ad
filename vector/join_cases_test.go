package vector_test

import (
	"context"
	"errors"
	"fmt"
	"math"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

var (
	joinLeft = vt.Input{
		Schema: joinSchema(field("lid", vector.Int64), field("lk", vector.Int64), field("ls", vector.String)),
		Rows: []vt.Row{
			{1, 1, "a"},
			{2, 1, "b"},
			{3, 2, "c"},
			{4, nil, "d"},
			{5, 9, "e"},
			{6, 0, "f"}, // 0 is the word of a null fixed key
			{7, nil, nil},
		},
	}
	joinRight = vt.Input{
		Schema: joinSchema(field("rid", vector.Int64), field("rk", vector.Int64), field("rs", vector.String)),
		Rows: []vt.Row{
			{10, 1, "x"},
			{11, 1, "y"},
			{12, 3, "z"},
			{13, nil, "w"},
			{14, 2, nil},
			{15, nil, "v"},
		},
	}
)

// TestHashJoinBasic checks the reference itself on hand-written answers,
// then the join against it.
func TestHashJoinBasic(t *testing.T) {
	match := keysMatch([]int{1}, []int{1}, nil)
	inner := []vt.Row{
		{1, 1, "a", 10, 1, "x"}, {1, 1, "a", 11, 1, "y"},
		{2, 1, "b", 10, 1, "x"}, {2, 1, "b", 11, 1, "y"},
		{3, 2, "c", 14, 2, nil},
	}
	if got := refJoin(vector.InnerJoin, joinLeft.Rows, joinRight.Rows, 3, 3, match); !vt.RowsEqual(inner, got) {
		t.Fatalf("reference inner join:\n%s", vt.FormatRows(got))
	}
	anti := []vt.Row{{4, nil, "d"}, {5, 9, "e"}, {6, 0, "f"}, {7, nil, nil}}
	if got := refJoin(vector.LeftAntiJoin, joinLeft.Rows, joinRight.Rows, 3, 3, match); !vt.RowsEqual(anti, got) {
		t.Fatalf("reference anti join:\n%s", vt.FormatRows(got))
	}
	right := append(append([]vt.Row{}, inner...),
		vt.Row{nil, nil, nil, 12, 3, "z"}, vt.Row{nil, nil, nil, 13, nil, "w"}, vt.Row{nil, nil, nil, 15, nil, "v"})
	if got := refJoin(vector.RightOuterJoin, joinLeft.Rows, joinRight.Rows, 3, 3, match); !vt.RowsEqual(right, got) {
		t.Fatalf("reference right join:\n%s", vt.FormatRows(got))
	}
	runScenarios(t, joinScenario{
		name: "int64-keys", left: joinLeft, right: joinRight,
		spec:  vector.JoinSpec{LeftKeys: cols("lk"), RightKeys: cols("rk")},
		match: match,
	})
}

func runScenarios(t *testing.T, scs ...joinScenario) {
	t.Helper()
	for _, sc := range scs {
		for _, c := range sc.cases() {
			vt.RunOperator(t, c)
		}
	}
}

func TestHashJoinNullSafe(t *testing.T) {
	runScenarios(t, joinScenario{
		name: "null-safe-fixed", left: joinLeft, right: joinRight,
		spec:  vector.JoinSpec{LeftKeys: cols("lk"), RightKeys: cols("rk"), NullSafe: []bool{true}},
		match: keysMatch([]int{1}, []int{1}, []bool{true}),
	}, joinScenario{
		name: "null-safe-string", left: joinLeft, right: joinRight,
		spec:  vector.JoinSpec{LeftKeys: cols("ls"), RightKeys: cols("rs"), NullSafe: []bool{true}},
		match: keysMatch([]int{2}, []int{2}, []bool{true}),
	}, joinScenario{
		// A null in the null-safe key matches; a null in the other key
		// does not.
		name: "null-safe-mixed", left: joinLeft, right: joinRight,
		spec:  vector.JoinSpec{LeftKeys: cols("lk", "ls"), RightKeys: cols("rk", "rs"), NullSafe: []bool{true, false}},
		match: keysMatch([]int{1, 2}, []int{1, 2}, []bool{true, false}),
	}, joinScenario{
		name: "null-safe-false", left: joinLeft, right: joinRight,
		spec:  vector.JoinSpec{LeftKeys: cols("lk"), RightKeys: cols("rk"), NullSafe: []bool{false}},
		match: keysMatch([]int{1}, []int{1}, nil),
	})
}

func TestHashJoinEmpty(t *testing.T) {
	empty := func(in vt.Input) vt.Input { return vt.Input{Schema: in.Schema} }
	spec := vector.JoinSpec{LeftKeys: cols("lk"), RightKeys: cols("rk")}
	match := keysMatch([]int{1}, []int{1}, nil)
	runScenarios(t,
		joinScenario{name: "empty-left", left: empty(joinLeft), right: joinRight, spec: spec, match: match},
		joinScenario{name: "empty-right", left: joinLeft, right: empty(joinRight), spec: spec, match: match},
		joinScenario{name: "empty-both", left: empty(joinLeft), right: empty(joinRight), spec: spec, match: match},
		joinScenario{name: "no-match", left: joinLeft, right: vt.Input{Schema: joinRight.Schema, Rows: []vt.Row{{1, 100, "q"}}}, spec: spec, match: match},
	)
}

func TestHashJoinCompositeKeys(t *testing.T) {
	left := vt.Input{
		Schema: joinSchema(field("a", vector.Int64), field("s", vector.String), field("d", vector.Date)),
		Rows: []vt.Row{
			{1, "x", arrow.Date32(1)}, {1, "y", arrow.Date32(1)}, {2, "x", arrow.Date32(2)},
			{1, "x", arrow.Date32(1)}, {nil, "x", arrow.Date32(1)}, {1, nil, arrow.Date32(1)},
			{1, "", arrow.Date32(1)},
		},
	}
	right := vt.Input{
		Schema: joinSchema(field("b", vector.Int64), field("t", vector.String), field("e", vector.Date), field("v", vector.Int64)),
		Rows: []vt.Row{
			{1, "x", arrow.Date32(1), 100}, {1, "x", arrow.Date32(1), 101}, {2, "x", arrow.Date32(3), 102},
			{nil, "x", arrow.Date32(1), 103}, {1, nil, arrow.Date32(1), 104}, {1, "", arrow.Date32(1), 105},
		},
	}
	runScenarios(t, joinScenario{
		name: "int-string-date", left: left, right: right,
		spec:  vector.JoinSpec{LeftKeys: cols("a", "s", "d"), RightKeys: cols("b", "t", "e")},
		match: keysMatch([]int{0, 1, 2}, []int{0, 1, 2}, nil),
	}, joinScenario{
		name: "int-string-null-safe", left: left, right: right,
		spec:  vector.JoinSpec{LeftKeys: cols("a", "s"), RightKeys: cols("b", "t"), NullSafe: []bool{true, true}},
		match: keysMatch([]int{0, 1}, []int{0, 1}, []bool{true, true}),
	})
}

func TestHashJoinDecimalKeys(t *testing.T) {
	dec := vector.Decimal(10, 2)
	left := vt.Input{Schema: joinSchema(field("l", dec), field("ln", vector.Int64)),
		Rows: []vt.Row{{"1.50", 1}, {"-2.00", 2}, {nil, 3}, {"1.50", 4}, {"99999999.99", 5}}}
	right := vt.Input{Schema: joinSchema(field("r", dec), field("rn", vector.Int64)),
		Rows: []vt.Row{{"1.50", 1}, {"99999999.99", 5}, {nil, 3}, {"0.00", 4}, {"1.50", 4}}}
	runScenarios(t, joinScenario{
		name: "decimal", left: left, right: right,
		spec:  vector.JoinSpec{LeftKeys: cols("l"), RightKeys: cols("r")},
		match: keysMatch([]int{0}, []int{0}, nil),
	}, joinScenario{
		name: "decimal-bigint-null-safe", left: left, right: right,
		spec:  vector.JoinSpec{LeftKeys: cols("l", "ln"), RightKeys: cols("r", "rn"), NullSafe: []bool{true, false}},
		match: keysMatch([]int{0, 1}, []int{0, 1}, []bool{true, false}),
	})
}

func TestHashJoinStringKeys(t *testing.T) {
	dict := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: vector.String}
	dict8 := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int16, ValueType: vector.String}
	rows := func(vals ...any) []vt.Row {
		out := make([]vt.Row, len(vals))
		for i, v := range vals {
			out[i] = vt.Row{v, int64(i)}
		}
		return out
	}
	lrows := rows("click", "view", nil, "purchase", "view", "", "a-rather-long-key-value-over-eight-bytes")
	rrows := rows("view", "view", "click", nil, "", "zzz", "a-rather-long-key-value-over-eight-bytes")
	in := func(dt arrow.DataType, name string, rs []vt.Row) vt.Input {
		return vt.Input{Schema: joinSchema(field(name, dt), field(name+"_n", vector.Int64)), Rows: rs}
	}
	match := keysMatch([]int{0}, []int{0}, nil)
	for _, c := range []struct {
		name   string
		lt, rt arrow.DataType
	}{
		{"string-string", vector.String, vector.String},
		{"dict-string", dict, vector.String},
		{"string-dict", vector.String, dict8},
		{"dict-dict", dict, dict8},
		{"binary-binary", vector.Binary, vector.Binary},
	} {
		runScenarios(t, joinScenario{
			name: c.name, left: in(c.lt, "l", lrows), right: in(c.rt, "r", rrows),
			spec: vector.JoinSpec{LeftKeys: cols("l"), RightKeys: cols("r")}, match: match,
		})
	}
}

func TestHashJoinStructKeys(t *testing.T) {
	left := vt.Input{
		Schema: joinSchema(field("window", vector.WindowType), field("n", vector.Int64)),
		Rows: []vt.Row{
			{[]any{0, 10}, 1}, {[]any{10, 20}, 2}, {nil, 3}, {[]any{0, nil}, 4}, {[]any{0, 10}, 5},
		},
	}
	right := vt.Input{
		Schema: joinSchema(field("window", vector.WindowType), field("total", vector.Int64)),
		Rows: []vt.Row{
			{[]any{0, 10}, 100}, {[]any{20, 30}, 200}, {nil, 300}, {[]any{0, nil}, 400},
		},
	}
	runScenarios(t, joinScenario{
		name: "window", left: left, right: right,
		spec:  vector.JoinSpec{LeftKeys: cols("window"), RightKeys: cols("window")},
		match: keysMatch([]int{0}, []int{0}, nil),
	}, joinScenario{
		name: "window-and-bigint", left: left, right: right,
		spec:  vector.JoinSpec{LeftKeys: []vector.Expr{vector.Col("window"), vector.Col("window", "start")}, RightKeys: []vector.Expr{vector.Col("window"), vector.Col("window", "start")}},
		match: keysMatch([]int{0}, []int{0}, nil),
	})
}

func TestHashJoinWidening(t *testing.T) {
	left := vt.Input{
		Schema: joinSchema(field("a", vector.Int32), field("s", vector.String)),
		Rows:   []vt.Row{{int32(1), "x"}, {int32(-1), "y"}, {nil, "z"}, {int32(2), "x"}, {int32(1), "q"}},
	}
	right := vt.Input{
		Schema: joinSchema(field("b", vector.Int64), field("t", vector.String)),
		Rows:   []vt.Row{{int64(1), "x"}, {int64(-1), "y"}, {int64(1) << 40, "x"}, {int64(2), "x"}, {nil, "z"}},
	}
	runScenarios(t, joinScenario{
		name: "int-bigint", left: left, right: right,
		spec:  vector.JoinSpec{LeftKeys: cols("a"), RightKeys: cols("b")},
		match: keysMatch([]int{0}, []int{0}, nil),
	}, joinScenario{
		name: "bigint-int", left: right, right: left,
		spec:  vector.JoinSpec{LeftKeys: cols("b"), RightKeys: cols("a")},
		match: keysMatch([]int{0}, []int{0}, nil),
	}, joinScenario{
		name: "int-bigint-composite", left: left, right: right,
		spec:  vector.JoinSpec{LeftKeys: cols("s", "a"), RightKeys: cols("t", "b"), NullSafe: []bool{false, true}},
		match: keysMatch([]int{1, 0}, []int{1, 0}, []bool{false, true}),
	})
}

func TestHashJoinResidual(t *testing.T) {
	// lid < rid - 9: with rid 10..15, left rows 1..6 pass for some pairs.
	keys := keysMatch([]int{1}, []int{1}, nil)
	res := func(row vt.Row) any {
		l, r := row[0], row[3]
		if l == nil || r == nil {
			return nil
		}
		return vt.Normalize(l).(int64)+9 > vt.Normalize(r).(int64)
	}
	// Bound by position: both inputs could have had a column of one name.
	cond := gt(&vector.ColumnAt{Index: 0, Name: "lid"}, &vector.ColumnAt{Index: 3, Name: "rid"})
	// lid + 9 > rid is written as a comparison of two columns of the joined
	// row, so make it lid > rid - 9 via a shifted right input.
	shifted := vt.Input{Schema: joinRight.Schema}
	for _, r := range joinRight.Rows {
		shifted.Rows = append(shifted.Rows, vt.Row{vt.Normalize(r[0]).(int64) - 9, r[1], r[2]})
	}
	res = func(row vt.Row) any {
		l, r := row[0], row[3]
		if l == nil || r == nil {
			return nil
		}
		return vt.Normalize(l).(int64) > vt.Normalize(r).(int64)
	}
	runScenarios(t, joinScenario{
		name: "keys-and-residual", left: joinLeft, right: shifted,
		spec:  vector.JoinSpec{LeftKeys: cols("lk"), RightKeys: cols("rk"), Residual: cond},
		match: both(keys, 3, res),
	}, joinScenario{
		name: "residual-by-name", left: joinLeft, right: shifted,
		spec:  vector.JoinSpec{LeftKeys: cols("lk"), RightKeys: cols("rk"), Residual: lt(vector.Col("rid"), vector.Col("lid"))},
		match: both(keys, 3, res),
	}, joinScenario{
		name: "residual-always-true", left: joinLeft, right: joinRight,
		spec: vector.JoinSpec{LeftKeys: cols("lk"), RightKeys: cols("rk"), Residual: lt(vector.Col("lk"), vector.Col("lid"))},
		match: both(keys, 3, func(row vt.Row) any {
			return row[1] != nil && vt.Normalize(row[1]).(int64) < vt.Normalize(row[0]).(int64)
		}),
	}, joinScenario{
		name: "residual-null-safe", left: joinLeft, right: shifted,
		spec:  vector.JoinSpec{LeftKeys: cols("lk"), RightKeys: cols("rk"), NullSafe: []bool{true}, Residual: cond},
		match: both(keysMatch([]int{1}, []int{1}, []bool{true}), 3, res),
	}, joinScenario{
		name: "cross-join-residual", left: joinLeft, right: shifted,
		spec:  vector.JoinSpec{Residual: cond},
		match: both(func(l, r vt.Row) bool { return true }, 3, res),
	}, joinScenario{
		name: "cross-join", left: joinLeft, right: joinRight,
		spec:  vector.JoinSpec{},
		match: func(l, r vt.Row) bool { return true },
	}, joinScenario{
		name: "literal-true", left: joinLeft, right: joinRight,
		spec:  vector.JoinSpec{LeftKeys: cols("lk"), RightKeys: cols("rk"), Residual: vector.Lit(true)},
		match: keys,
	}, joinScenario{
		name: "literal-false", left: joinLeft, right: joinRight,
		spec:  vector.JoinSpec{LeftKeys: cols("lk"), RightKeys: cols("rk"), Residual: vector.Lit(false)},
		match: func(l, r vt.Row) bool { return false },
	}, joinScenario{
		name: "literal-null", left: joinLeft, right: joinRight,
		spec:  vector.JoinSpec{Residual: vector.TypedLit(vector.Boolean, nil)},
		match: func(l, r vt.Row) bool { return false },
	})
}

// TestHashJoinLargeFanout makes one probe batch produce more than one
// 64K-row output record, with a residual that keeps a row's matches on
// both sides of the split and rejects all matches of some rows.
func TestHashJoinLargeFanout(t *testing.T) {
	const nl, nr = 300, 260
	left := vt.Input{Schema: joinSchema(field("lid", vector.Int64), field("lk", vector.Int64))}
	for i := 0; i < nl; i++ {
		left.Rows = append(left.Rows, vt.Row{int64(i), int64(i % 2)})
	}
	right := vt.Input{Schema: joinSchema(field("rid", vector.Int64), field("rk", vector.Int64))}
	for i := 0; i < nr; i++ {
		right.Rows = append(right.Rows, vt.Row{int64(i), int64(i % 3)})
	}
	keys := keysMatch([]int{1}, []int{1}, nil)
	res := func(row vt.Row) any { return row[0].(int64) > row[2].(int64) }
	shapes := []vt.Shape{{BatchSize: 1024}, {BatchSize: 1024, Sliced: true}, {BatchSize: 97}}
	runScenarios(t, joinScenario{
		name: "fanout", left: left, right: right, shapes: shapes,
		spec:  vector.JoinSpec{LeftKeys: cols("lk"), RightKeys: cols("rk")},
		match: keys,
	}, joinScenario{
		name: "fanout-residual", left: left, right: right, shapes: shapes,
		spec:  vector.JoinSpec{LeftKeys: cols("lk"), RightKeys: cols("rk"), Residual: gt(vector.Col("lid"), vector.Col("rid"))},
		match: both(keys, 2, res),
	}, joinScenario{
		name: "cross-fanout-residual", left: left, right: right, shapes: shapes,
		spec:  vector.JoinSpec{Residual: gt(vector.Col("lid"), vector.Col("rid"))},
		match: both(func(l, r vt.Row) bool { return true }, 2, res),
	})
}

func TestHashJoinBatchLimit(t *testing.T) {
	mem := vt.NewAllocator(t)
	schema := joinSchema(field("k", vector.Int64))
	var rows []vt.Row
	for i := 0; i < 400; i++ {
		rows = append(rows, vt.Row{int64(1)})
	}
	scan := func() vector.Operator {
		rec := vt.BuildRecord(mem, schema, rows)
		defer rec.Release()
		s, err := vector.NewScan(schema, rec)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	j, err := vector.NewHashJoin(mem, scan(), scan(), vector.JoinSpec{LeftKeys: cols("k"), RightKeys: cols("k")})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	recs, err := vector.Drain(t.Context(), j)
	if err != nil {
		t.Fatal(err)
	}
	total := 0
	for _, r := range recs {
		if r.NumRows() > 64<<10 {
			t.Errorf("record of %d rows", r.NumRows())
		}
		total += int(r.NumRows())
		r.Release()
	}
	if total != 400*400 || len(recs) != 3 {
		t.Errorf("%d rows in %d records, want %d in 3", total, len(recs), 400*400)
	}
}

func TestHashJoinErrors(t *testing.T) {
	listSchema := joinSchema(field("l", vector.MapOf(vector.Int64, vector.Int64)))
	build := func(spec vector.JoinSpec) func(memory.Allocator, []vector.Operator) (vector.Operator, error) {
		return func(mem memory.Allocator, in []vector.Operator) (vector.Operator, error) {
			return vector.NewHashJoin(mem, in[0], in[1], spec)
		}
	}
	inputs := []vt.Input{joinLeft, joinRight}
	for _, c := range []vt.OperatorCase{
		{Name: "key-count", Inputs: inputs,
			Build:   build(vector.JoinSpec{LeftKeys: cols("lk", "ls"), RightKeys: cols("rk")}),
			WantErr: "hash join has 2 left keys (lk, ls) but 1 right keys (rk)"},
		{Name: "key-types", Inputs: inputs,
			Build:   build(vector.JoinSpec{LeftKeys: cols("lk", "ls"), RightKeys: cols("rk", "rid")}),
			WantErr: "cannot bind ls = rid: join key types differ: ls is string, rid is bigint: type mismatch (available columns: lid, lk, ls, rid, rk, rs)"},
		{Name: "null-safe-count", Inputs: inputs,
			Build:   build(vector.JoinSpec{LeftKeys: cols("lk"), RightKeys: cols("rk"), NullSafe: []bool{true, true}}),
			WantErr: "1 keys but 2 null-safe flags"},
		{Name: "unknown-left-key", Inputs: inputs,
			Build:   build(vector.JoinSpec{LeftKeys: cols("rk"), RightKeys: cols("rk")}),
			WantErr: "cannot bind rk: unknown column rk (available columns: lid, lk, ls)"},
		{Name: "unknown-right-key", Inputs: inputs,
			Build:   build(vector.JoinSpec{LeftKeys: cols("lk"), RightKeys: cols("lk")}),
			WantErr: "cannot bind lk: unknown column lk (available columns: rid, rk, rs)"},
		{Name: "map-key", Inputs: []vt.Input{{Schema: listSchema}, {Schema: listSchema}},
			Build:   build(vector.JoinSpec{LeftKeys: cols("l"), RightKeys: cols("l")}),
			WantErr: "cannot bind l = l: map<bigint,bigint> cannot be a grouping or join key: [GROUP_EXPRESSION_TYPE_IS_NOT_ORDERABLE]"},
		{Name: "residual-not-boolean", Inputs: inputs,
			Build:   build(vector.JoinSpec{LeftKeys: cols("lk"), RightKeys: cols("rk"), Residual: vector.Col("rs")}),
			WantErr: "cannot bind rs: join condition must be boolean, not string"},
		{Name: "residual-unknown", Inputs: inputs,
			Build:   build(vector.JoinSpec{Residual: gt(vector.Col("lid"), vector.Col("nope"))}),
			WantErr: "unknown column nope (available columns: lid, lk, ls, rid, rk, rs)"},
		{Name: "residual-runtime", Inputs: inputs,
			Build:   build(vector.JoinSpec{LeftKeys: cols("lk"), RightKeys: cols("rk"), Residual: &cmpExpr{op: "fail", a: vector.Col("lid"), b: vector.Col("rid")}}),
			WantErr: "arithmetic overflow in (lid fail rid) at row 0"},
		{Name: "left-key-runtime", Inputs: inputs,
			Build:   build(vector.JoinSpec{LeftKeys: []vector.Expr{&cmpExpr{op: "fail", a: vector.Col("lid"), b: vector.Col("lk")}}, RightKeys: []vector.Expr{gt(vector.Col("rid"), vector.Col("rk"))}}),
			WantErr: "arithmetic overflow in (lid fail lk) at row 0"},
		{Name: "right-key-runtime", Inputs: inputs,
			Build:   build(vector.JoinSpec{LeftKeys: []vector.Expr{gt(vector.Col("lid"), vector.Col("lk"))}, RightKeys: []vector.Expr{&cmpExpr{op: "fail", a: vector.Col("rid"), b: vector.Col("rk")}}}),
			WantErr: "arithmetic overflow in (rid fail rk) at row 0"},
		{Name: "left-input-fails", Inputs: inputs,
			Build: func(mem memory.Allocator, in []vector.Operator) (vector.Operator, error) {
				return vector.NewHashJoin(mem, failing(in[0]), in[1], vector.JoinSpec{LeftKeys: cols("lk"), RightKeys: cols("rk")})
			},
			WantErr: "input failed"},
		{Name: "right-input-fails", Inputs: inputs,
			Build: func(mem memory.Allocator, in []vector.Operator) (vector.Operator, error) {
				return vector.NewHashJoin(mem, in[0], failing(in[1]), vector.JoinSpec{LeftKeys: cols("lk"), RightKeys: cols("rk")})
			},
			WantErr: "input failed"},
		{Name: "join-type", Inputs: inputs,
			Build:   build(vector.JoinSpec{Type: vector.JoinType(42)}),
			WantErr: "unknown join type 42"},
	} {
		vt.RunOperator(t, c)
	}
}

// TestHashJoinManyKeys fills the table enough for probe sequences to
// collide, with fixed and byte keys.
func TestHashJoinManyKeys(t *testing.T) {
	// Sparse keys (spread over the int64 range) take the hashed path,
	// dense ones the direct array; timestamps and doubles are fixed keys
	// too.
	sparse := func(k int64) int64 { return int64(uint64(k) * 0x9e3779b97f4a7c15) }
	left := vt.Input{Schema: joinSchema(field("lk", vector.Int64), field("ls", vector.String), field("lsp", vector.Int64),
		field("lt", vector.Timestamp), field("lf", vector.Float64))}
	for i := 0; i < 300; i++ {
		k := int64(i*7919%640) - 320
		left.Rows = append(left.Rows, vt.Row{k, fmt.Sprint("key-", k), sparse(k), arrow.Timestamp(k), float64(k) / 4})
	}
	right := vt.Input{Schema: joinSchema(field("rk", vector.Int64), field("rs", vector.String), field("rsp", vector.Int64),
		field("rt", vector.Timestamp), field("rf", vector.Float64))}
	for i := 0; i < 400; i++ {
		k := int64(i%300) * 3
		if i%37 == 0 {
			right.Rows = append(right.Rows, vt.Row{nil, nil, nil, nil, nil})
			continue
		}
		right.Rows = append(right.Rows, vt.Row{k, fmt.Sprint("key-", k), sparse(k), arrow.Timestamp(k), float64(k) / 4})
	}
	shapes := []vt.Shape{{BatchSize: 1024}, {BatchSize: 7, Sliced: true}, {BatchSize: 64, GarbageUnderNulls: true}}
	runScenarios(t, joinScenario{
		name: "fixed", left: left, right: right, shapes: shapes,
		spec:  vector.JoinSpec{LeftKeys: cols("lk"), RightKeys: cols("rk")},
		match: keysMatch([]int{0}, []int{0}, nil),
	}, joinScenario{
		name: "bytes", left: left, right: right, shapes: shapes,
		spec:  vector.JoinSpec{LeftKeys: cols("ls"), RightKeys: cols("rs")},
		match: keysMatch([]int{1}, []int{1}, nil),
	}, joinScenario{
		name: "sparse", left: left, right: right, shapes: shapes,
		spec:  vector.JoinSpec{LeftKeys: cols("lsp"), RightKeys: cols("rsp")},
		match: keysMatch([]int{2}, []int{2}, nil),
	}, joinScenario{
		name: "timestamp-null-safe", left: left, right: right, shapes: shapes,
		spec:  vector.JoinSpec{LeftKeys: cols("lt"), RightKeys: cols("rt"), NullSafe: []bool{true}},
		match: keysMatch([]int{3}, []int{3}, []bool{true}),
	}, joinScenario{
		name: "double", left: left, right: right, shapes: shapes,
		spec:  vector.JoinSpec{LeftKeys: cols("lf"), RightKeys: cols("rf")},
		match: keysMatch([]int{4}, []int{4}, nil),
	})
}

// TestHashJoinDoubleKeys checks that -0.0 meets 0.0 and NaN meets NaN, as
// Spark normalizes join keys.
func TestHashJoinDoubleKeys(t *testing.T) {
	nan, negZero := math.NaN(), math.Copysign(0, -1)
	left := vt.Input{Schema: joinSchema(field("l", vector.Float64)), Rows: []vt.Row{{0.0}, {negZero}, {nan}, {1.5}, {nil}}}
	right := vt.Input{Schema: joinSchema(field("r", vector.Float64)), Rows: []vt.Row{{negZero}, {-nan}, {2.5}, {nil}}}
	runScenarios(t, joinScenario{
		name: "double", left: left, right: right,
		spec: vector.JoinSpec{LeftKeys: cols("l"), RightKeys: cols("r")},
		match: func(l, r vt.Row) bool {
			lv, rv := l[0], r[0]
			if lv == nil || rv == nil {
				return false
			}
			a, b := lv.(float64), rv.(float64)
			return a == b || math.IsNaN(a) && math.IsNaN(b)
		},
	})
}

// TestHashJoinLargeBuild builds a table beyond the small-table size, with
// keys that are not dense.
func TestHashJoinLargeBuild(t *testing.T) {
	right := vt.Input{Schema: joinSchema(field("rk", vector.Int64), field("rv", vector.Int64))}
	for i := 0; i < 5000; i++ {
		right.Rows = append(right.Rows, vt.Row{int64(i) * 1_000_003, int64(i)})
	}
	left := vt.Input{Schema: joinSchema(field("lk", vector.Int64))}
	for i := 0; i < 200; i++ {
		left.Rows = append(left.Rows, vt.Row{int64(i*67) * 1_000_003})
	}
	left.Rows = append(left.Rows, vt.Row{int64(5)}, vt.Row{nil})
	runScenarios(t, joinScenario{
		name: "large-build", left: left, right: right, shapes: []vt.Shape{{BatchSize: 1024}, {BatchSize: 4096, Sliced: true}},
		types: []vector.JoinType{vector.InnerJoin, vector.LeftOuterJoin, vector.LeftAntiJoin},
		spec:  vector.JoinSpec{LeftKeys: cols("lk"), RightKeys: cols("rk")},
		match: keysMatch([]int{0}, []int{0}, nil),
	})
}

func TestHashJoinCancel(t *testing.T) {
	mem := vt.NewAllocator(t)
	scan := func(in vt.Input) vector.Operator {
		rec := vt.BuildRecord(mem, in.Schema, in.Rows)
		defer rec.Release()
		s, err := vector.NewScan(in.Schema, rec)
		if err != nil {
			t.Fatal(err)
		}
		return s
	}
	j, err := vector.NewHashJoin(mem, scan(joinLeft), scan(joinRight), vector.JoinSpec{LeftKeys: cols("lk"), RightKeys: cols("rk")})
	if err != nil {
		t.Fatal(err)
	}
	defer j.Close()
	ctx, cancel := context.WithCancel(t.Context())
	cancel()
	if _, err := j.Next(ctx); !errors.Is(err, context.Canceled) {
		t.Errorf("Next with a cancelled context: %v", err)
	}
	if got := vector.JoinType(9).String(); got != "JoinType(9)" {
		t.Errorf("String = %q", got)
	}
}

// failingOp fails on its second Next, after returning one record.
type failingOp struct {
	vector.Operator
	schema *arrow.Schema
}

func failing(op vector.Operator) *failingOp { return &failingOp{Operator: op, schema: op.Schema()} }

func (f *failingOp) Next(ctx context.Context) (arrow.Record, error) {
	if f.Operator == nil {
		return nil, errors.New("input failed")
	}
	rec, err := f.Operator.Next(ctx)
	f.Operator.Close()
	f.Operator = nil
	return rec, err
}

func (f *failingOp) Schema() *arrow.Schema { return f.schema }

func (f *failingOp) Close() error {
	if f.Operator != nil {
		return f.Operator.Close()
	}
	return nil
}

// TestHashJoinKeyEncoderSliced is the regression test for the key
// encoder's byte path on sliced columns without nulls (it read their
// values from the start of the buffer): a sliced batch must encode as the
// same rows unsliced.
func TestHashJoinKeyEncoderSliced(t *testing.T) {
	mem := vt.NewAllocator(t)
	schema := joinSchema(field("a", vector.Int64), field("d", vector.Date), field("b", vector.Boolean))
	rows := []vt.Row{{1, arrow.Date32(10), true}, {2, arrow.Date32(20), false}, {3, arrow.Date32(30), true}}
	plain := vt.BuildRecords(mem, schema, rows, vt.Shape{})[0]
	defer plain.Release()
	sliced := vt.BuildRecords(mem, schema, rows, vt.Shape{Sliced: true})[0]
	defer sliced.Release()
	keys := func(rec arrow.Record) []string {
		enc, err := vector.NewKeyEncoder(mem, []arrow.DataType{vector.Int64, vector.Date, vector.Boolean})
		if err != nil {
			t.Fatal(err)
		}
		if err := enc.Encode(rec.Columns()); err != nil {
			t.Fatal(err)
		}
		var out []string
		for i := 0; i < enc.Len(); i++ {
			out = append(out, string(enc.Key(i)))
		}
		return out
	}
	want, got := keys(plain), keys(sliced)
	for i := range want {
		if want[i] != got[i] {
			t.Errorf("row %d: sliced key %x, want %x", i, got[i], want[i])
		}
	}
}
