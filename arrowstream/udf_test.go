package arrowstream

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// plusLen is a user function len(s) + n over whole columns, NULL when
// either is NULL; calls counts its Eval calls and rows the rows they saw.
func plusLen(name string, deterministic bool, calls, rows *atomic.Int64) *plan.ScalarFunction {
	return &plan.ScalarFunction{
		Name: name, Args: []arrow.DataType{vector.String, vector.Int64}, Result: vector.Int64, Deterministic: deterministic,
		Eval: func(_ context.Context, mem memory.Allocator, args []arrow.Array) (arrow.Array, error) {
			calls.Add(1)
			rows.Add(int64(args[0].Len()))
			s, n := args[0].(*array.String), args[1].(*array.Int64)
			b := array.NewInt64Builder(mem)
			defer b.Release()
			b.Reserve(s.Len())
			for i := 0; i < s.Len(); i++ {
				if s.IsNull(i) || n.IsNull(i) {
					b.AppendNull()
					continue
				}
				b.UnsafeAppend(int64(len(s.Value(i))) + n.Value(i))
			}
			return b.NewArray(), nil
		},
	}
}

// TestRegisterFunctionRefusals: a registration without a usable name,
// with a built-in's name (any case, aggregates, window functions, cast
// functions and Spark built-ins the engine lacks included), without types
// or without an implementation is refused with an error naming it.
func TestRegisterFunctionRefusals(t *testing.T) {
	s, _ := newTestSession(t)
	var c, r atomic.Int64
	ok := plusLen("plus_len", true, &c, &r)
	if err := s.RegisterFunction(ok); err != nil {
		t.Fatalf("a valid registration: %v", err)
	}
	for _, name := range []string{"abs", "UPPER", "count", "sum", "row_number", "int", "explode", "coalesce", "aes_encrypt"} {
		f := *ok
		f.Name = name
		err := s.RegisterFunction(&f)
		if err == nil || !strings.Contains(err.Error(), "ROUTINE_ALREADY_EXISTS") || !strings.Contains(err.Error(), "`"+name+"`") {
			t.Errorf("registering %s: %v, want ROUTINE_ALREADY_EXISTS naming it", name, err)
		}
	}
	bad := map[string]func(f *plan.ScalarFunction){
		"name":       func(f *plan.ScalarFunction) { f.Name = "a-b" },
		"empty name": func(f *plan.ScalarFunction) { f.Name = "" },
		"result":     func(f *plan.ScalarFunction) { f.Result = nil },
		"argument":   func(f *plan.ScalarFunction) { f.Args = []arrow.DataType{vector.String, nil} },
		"eval":       func(f *plan.ScalarFunction) { f.Eval = nil },
	}
	for what, mutate := range bad {
		f := *ok
		f.Name = "other"
		mutate(&f)
		if err := s.RegisterFunction(&f); err == nil {
			t.Errorf("a function without a valid %s was registered", what)
		}
	}
	if err := s.RegisterFunction(nil); err == nil {
		t.Error("a nil function was registered")
	}
	// The refused names stay the built-ins.
	wantRows(t, s, "SELECT abs(-2), upper('x')", "2|X")
}

// TestUserFunctionCalls: a user function is called once per batch over
// whole columns, with its arguments cast to its types; it is not folded
// as a constant (it runs when the query runs and is no constant for
// LIMIT); misuse is refused with Spark's error classes; it can be
// replaced and dropped. Everything runs on a checked allocator.
func TestUserFunctionCalls(t *testing.T) {
	s, _ := newTestSession(t)
	var calls, rows atomic.Int64
	if err := s.RegisterFunction(plusLen("plus_len", true, &calls, &rows)); err != nil {
		t.Fatal(err)
	}
	schema := arrow.NewSchema([]arrow.Field{{Name: "x", Type: vector.String, Nullable: true}, {Name: "n", Type: vector.Int32, Nullable: true}}, nil)
	b := array.NewRecordBuilder(s.Allocator(), schema)
	b.Field(0).(*array.StringBuilder).AppendValues([]string{"ab", "c", "", "dddd"}, []bool{true, true, false, true})
	b.Field(1).(*array.Int32Builder).AppendValues([]int32{1, 10, 1, 0}, []bool{true, true, true, false})
	rec := b.NewRecord()
	b.Release()
	err := s.RegisterTable("t", schema, rec)
	rec.Release()
	if err != nil {
		t.Fatal(err)
	}
	defer s.DropTable("t")
	wantRows(t, s, "SELECT x, PLUS_LEN(x, n) FROM t", "ab|3", "c|11", "NULL|NULL", "dddd|NULL")
	if calls.Load() != 1 || rows.Load() != 4 {
		t.Errorf("%d calls over %d rows, want 1 call over the 4 rows", calls.Load(), rows.Load())
	}
	// The INT column n was cast to the declared BIGINT. The function over
	// constants to the declared BIGINT; the function over
	// is computed when the query runs, not while it is planned.
	calls.Store(0)
	res, err := s.SQL(context.Background(), "SELECT plus_len('abc', 1)")
	if err != nil {
		t.Fatal(err)
	}
	res.Close()
	if calls.Load() != 0 {
		t.Errorf("planning SELECT plus_len('abc', 1) called the function %d times: it was folded", calls.Load())
	}
	wantRows(t, s, "SELECT plus_len('abc', 1)", "4")
	if calls.Load() != 1 {
		t.Errorf("running it called the function %d times, want 1", calls.Load())
	}
	wantRows(t, s, "SELECT k FROM VALUES (1), (2) AS t(k) WHERE plus_len('ab', k) > 3", "2")
	wantRows(t, s, "SELECT plus_len(x, 0), count(*) FROM VALUES ('a'), ('b'), ('cc') AS t(x) GROUP BY plus_len(x, 0)", "1|2", "2|1")
	wantRows(t, s, "SELECT a.x FROM VALUES ('a'), ('bb') AS a(x) JOIN VALUES (2) AS b(n) ON plus_len(a.x, 0) = b.n", "bb")
	sqlErr(t, s, "SELECT 1 LIMIT plus_len('a', 0)", "limit expression must be an integer constant")
	sqlErr(t, s, "SELECT plus_len('a')", "[WRONG_NUM_ARGS.WITHOUT_SUGGESTION] The `plus_len` requires 2 parameters but the actual number is 1")
	sqlErr(t, s, "SELECT plus_len('a', 1, 2)", "WRONG_NUM_ARGS")
	sqlErr(t, s, "SELECT plus_len(array(1), 1)", "UNEXPECTED_INPUT_TYPE")
	sqlErr(t, s, "SELECT plus_len('a', 1.5D)", "UNEXPECTED_INPUT_TYPE")
	sqlErr(t, s, "SELECT plus_len(DISTINCT 'a', 1)", "DISTINCT")
	sqlErr(t, s, "SELECT plus_len('a', 1) OVER ()", "window")

	// A function that is not deterministic is not evaluated twice by a
	// rewrite (nullif refuses it, as it refuses rand()).
	var c2, r2 atomic.Int64
	if err := s.RegisterFunction(plusLen("nd_len", false, &c2, &r2)); err != nil {
		t.Fatal(err)
	}
	sqlErr(t, s, "SELECT nullif(nd_len('a', 1), 2)", "nondeterministic")
	wantRows(t, s, "SELECT nullif(plus_len('a', 1), 2)", "NULL")

	// Registering the name again replaces the function; dropping it
	// makes the name unknown again.
	f := plusLen("plus_len", true, &calls, &rows)
	inner := f.Eval
	f.Eval = func(ctx context.Context, mem memory.Allocator, args []arrow.Array) (arrow.Array, error) {
		out, err := inner(ctx, mem, args)
		if err != nil {
			return nil, err
		}
		defer out.Release()
		b := array.NewInt64Builder(mem)
		defer b.Release()
		for i := 0; i < out.Len(); i++ {
			b.Append(-out.(*array.Int64).Value(i))
		}
		return b.NewArray(), nil
	}
	if err := s.RegisterFunction(f); err != nil {
		t.Fatal(err)
	}
	wantRows(t, s, "SELECT plus_len('ab', 1)", "-3")
	if !s.DropFunction("Plus_Len") || s.DropFunction("plus_len") {
		t.Error("DropFunction: want true, then false")
	}
	sqlErr(t, s, "SELECT plus_len('ab', 1)", "Undefined function")
}

// TestUserFunctionFaults: a function that fails, panics or returns the
// wrong column fails its query with an error naming it; nothing leaks.
func TestUserFunctionFaults(t *testing.T) {
	s, _ := newTestSession(t)
	mk := func(name string, eval func(mem memory.Allocator, arg arrow.Array) (arrow.Array, error)) {
		t.Helper()
		err := s.RegisterFunction(&plan.ScalarFunction{
			Name: name, Args: []arrow.DataType{vector.Int64}, Result: vector.Int64, Deterministic: true,
			Eval: func(_ context.Context, mem memory.Allocator, args []arrow.Array) (arrow.Array, error) {
				return eval(mem, args[0])
			},
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	boom := errors.New("boom")
	mk("fails", func(memory.Allocator, arrow.Array) (arrow.Array, error) { return nil, boom })
	mk("panics", func(memory.Allocator, arrow.Array) (arrow.Array, error) { panic("kaput") })
	mk("short", func(mem memory.Allocator, _ arrow.Array) (arrow.Array, error) {
		b := array.NewInt64Builder(mem)
		defer b.Release()
		b.Append(1)
		return b.NewArray(), nil
	})
	mk("wrongtype", func(mem memory.Allocator, a arrow.Array) (arrow.Array, error) {
		b := array.NewStringBuilder(mem)
		defer b.Release()
		for i := 0; i < a.Len(); i++ {
			b.Append("x")
		}
		return b.NewArray(), nil
	})
	const rows = " FROM (SELECT id AS k FROM range(3))"
	sqlErr(t, s, "SELECT fails(k)"+rows, "user function fails: boom")
	sqlErr(t, s, "SELECT panics(k)"+rows, "user function panics: panic: kaput")
	sqlErr(t, s, "SELECT short(k)"+rows, "user function short returned 1 values of bigint, want 3 values of bigint")
	sqlErr(t, s, "SELECT wrongtype(k)"+rows, "want 3 values of bigint")
}
