package vector_test

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// emptyTypes are the column types an empty bufferless batch is checked with.
var emptyTypes = []arrow.DataType{
	vector.Boolean, vector.Int32, vector.Int64, vector.Float64, vector.String,
	vector.Binary, vector.Timestamp, vector.Date, vector.Decimal(10, 2),
	&arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: vector.String},
	vector.WindowType, vector.ListOf(vector.Int64),
}

// TestEmptyRecordHasNoBuffers checks the test kit: the empty record really
// has nil buffers, so that the operator runs with Shape.EmptyBatches test
// what they claim to.
func TestEmptyRecordHasNoBuffers(t *testing.T) {
	fields := make([]arrow.Field, len(emptyTypes))
	for i, dt := range emptyTypes {
		fields[i] = arrow.Field{Name: vector.TypeName(dt), Type: dt, Nullable: true}
	}
	rec := vt.EmptyRecord(arrow.NewSchema(fields, nil))
	defer rec.Release()
	var check func(d arrow.ArrayData)
	check = func(d arrow.ArrayData) {
		if d.Len() != 0 {
			t.Errorf("%s: length %d", d.DataType(), d.Len())
		}
		for i, b := range d.Buffers() {
			if b != nil {
				t.Errorf("%s: buffer %d is not nil", d.DataType(), i)
			}
		}
		for _, c := range d.Children() {
			check(c)
		}
		if d.DataType().ID() == arrow.DICTIONARY {
			check(d.Dictionary())
		}
	}
	for _, c := range rec.Columns() {
		check(c.Data())
	}
	if rows := vt.RowsOf(rec); len(rows) != 0 {
		t.Errorf("rows: %v", rows)
	}
}

// TestKeyEncoderEmptyBufferless encodes zero-row key columns without
// buffers, alone and together, fixed and variable width.
func TestKeyEncoderEmptyBufferless(t *testing.T) {
	mem := vt.NewAllocator(t)
	sets := [][]arrow.DataType{}
	for _, dt := range emptyTypes {
		if dt.ID() == arrow.LIST {
			continue // not a key type
		}
		sets = append(sets, []arrow.DataType{dt})
	}
	sets = append(sets, []arrow.DataType{vector.Int64, vector.String, vector.WindowType, vector.Decimal(10, 2)})
	for _, types := range sets {
		enc, err := vector.NewKeyEncoder(mem, types)
		if err != nil {
			t.Fatalf("%v: %v", types, err)
		}
		cols := make([]arrow.Array, len(types))
		for i, dt := range types {
			cols[i] = vt.EmptyArray(dt)
		}
		// Twice: the second call reuses the encoder's buffers.
		for range 2 {
			if err := enc.Encode(cols); err != nil {
				t.Fatalf("%v: %v", types, err)
			}
			if enc.Len() != 0 || len(enc.Hashes()) != 0 || enc.AnyNull() {
				t.Fatalf("%v: len %d, hashes %d, anyNull %v", types, enc.Len(), len(enc.Hashes()), enc.AnyNull())
			}
		}
		for _, c := range cols {
			c.Release()
		}
	}
}

// TestTakeEmptyBufferless gathers from zero-row arrays without buffers:
// nothing, and nulls only (negative indices).
func TestTakeEmptyBufferless(t *testing.T) {
	mem := vt.NewAllocator(t)
	for _, dt := range emptyTypes {
		arr := vt.EmptyArray(dt)
		for _, idx := range [][]int32{nil, {-1, -1}} {
			out, err := vector.Take(mem, arr, idx)
			if err != nil {
				t.Fatalf("%s %v: %v", dt, idx, err)
			}
			if out.Len() != len(idx) || out.NullN() != len(idx) {
				t.Errorf("%s %v: len %d nulls %d", dt, idx, out.Len(), out.NullN())
			}
			out.Release()
		}
		arr.Release()
	}
}

// TestOperatorsOnlyEmptyBatches feeds every operator inputs made of empty
// bufferless batches only (every column type), which must all be no-ops.
func TestOperatorsOnlyEmptyBatches(t *testing.T) {
	fields := make([]arrow.Field, len(emptyTypes))
	for i, dt := range emptyTypes {
		fields[i] = arrow.Field{Name: "c" + string(rune('a'+i)), Type: dt, Nullable: true}
	}
	s := arrow.NewSchema(fields, nil)
	// Column names by type, as fields above name them.
	const b, i64, str, ts, dec, dict, win, list = "ca", "cc", "ce", "cg", "ci", "cj", "ck", "cl"
	c := vector.Col
	one := func(build func(mem memory.Allocator, in vector.Operator) (vector.Operator, error)) func(memory.Allocator, []vector.Operator) (vector.Operator, error) {
		return func(mem memory.Allocator, in []vector.Operator) (vector.Operator, error) { return build(mem, in[0]) }
	}
	join := func(typ vector.JoinType, keys ...string) func(memory.Allocator, []vector.Operator) (vector.Operator, error) {
		return func(mem memory.Allocator, in []vector.Operator) (vector.Operator, error) {
			spec := vector.JoinSpec{Type: typ}
			for _, k := range keys {
				spec.LeftKeys = append(spec.LeftKeys, c(k))
				spec.RightKeys = append(spec.RightKeys, c(k))
			}
			return vector.NewHashJoin(mem, in[0], in[1], spec)
		}
	}
	agg := func(mode vector.AggMode, group ...string) func(memory.Allocator, []vector.Operator) (vector.Operator, error) {
		return one(func(mem memory.Allocator, in vector.Operator) (vector.Operator, error) {
			spec := vector.AggregateSpec{Mode: mode, Aggregates: []vector.AggregateCall{
				{Func: vector.AggCountStar, Name: "n"},
				{Func: vector.AggSum, Args: []vector.Expr{c(dec)}, Name: "s"},
				{Func: vector.AggMin, Args: []vector.Expr{c(str)}, Name: "m"},
			}}
			for _, g := range group {
				spec.GroupBy = append(spec.GroupBy, vector.As(c(g), g))
			}
			return vector.NewHashAggregate(mem, in, spec)
		})
	}
	in1 := []vt.Input{{Schema: s}}
	in2 := []vt.Input{{Schema: s}, {Schema: s}}
	cases := []vt.OperatorCase{
		{Name: "filter", Inputs: in1, Build: one(func(mem memory.Allocator, in vector.Operator) (vector.Operator, error) {
			return vector.NewFilter(mem, in, vector.Gt(c(i64), vector.Lit(0)))
		})},
		{Name: "filter-column", Inputs: in1, Build: one(func(mem memory.Allocator, in vector.Operator) (vector.Operator, error) {
			return vector.NewFilter(mem, in, c(b))
		})},
		{Name: "project", Inputs: in1, Build: one(func(mem memory.Allocator, in vector.Operator) (vector.Operator, error) {
			return vector.NewProject(mem, in, []vector.NamedExpr{vector.As(vector.Add(c(i64), vector.Lit(1)), "x"), vector.As(c(dict), "d"), vector.As(c(win), "w"), vector.As(c(list), "l")})
		})},
		{Name: "sort", Inputs: in1, Build: one(func(mem memory.Allocator, in vector.Operator) (vector.Operator, error) {
			return vector.NewSort(mem, in, []vector.SortKey{vector.Asc(c(dict)), vector.Desc(c(dec)), vector.Asc(c(ts))})
		})},
		{Name: "top-n", Inputs: in1, Build: one(func(mem memory.Allocator, in vector.Operator) (vector.Operator, error) {
			return vector.NewTopN(mem, in, []vector.SortKey{vector.Asc(c(str))}, 2)
		})},
		{Name: "limit", Inputs: in1, Build: one(func(mem memory.Allocator, in vector.Operator) (vector.Operator, error) {
			return vector.NewLimitOffset(mem, in, 3, 1)
		})},
		{Name: "union", Inputs: in2, Build: func(mem memory.Allocator, in []vector.Operator) (vector.Operator, error) {
			return vector.NewUnion(mem, in...)
		}},
		{Name: "explode-outer", Inputs: in1, Build: one(func(mem memory.Allocator, in vector.Operator) (vector.Operator, error) {
			return vector.NewExplodeOuter(mem, in, c(list), "x", []int{0, 4})
		})},
		{Name: "window", Inputs: in1, Build: one(func(mem memory.Allocator, in vector.Operator) (vector.Operator, error) {
			return vector.NewWindowAssign(mem, in, c(ts), 10, 5, 0, "w")
		})},
		{Name: "agg-grouped", Inputs: in1, Build: agg(vector.AggComplete, str, dict, win)},
		{Name: "agg-partial", Inputs: in1, Build: agg(vector.AggPartial, i64)},
		// A global aggregate still has its one row, as over no batches.
		{Name: "agg-global", Inputs: in1, Build: agg(vector.AggComplete), Want: []vt.Row{{0, nil, nil}}},
	}
	for _, typ := range []vector.JoinType{vector.InnerJoin, vector.LeftOuterJoin, vector.RightOuterJoin, vector.FullOuterJoin, vector.LeftSemiJoin, vector.LeftAntiJoin} {
		cases = append(cases,
			vt.OperatorCase{Name: "join-fixed-" + typ.String(), Inputs: in2, Build: join(typ, i64)},
			vt.OperatorCase{Name: "join-bytes-" + typ.String(), Inputs: in2, Build: join(typ, str, dict, win, dec)},
			vt.OperatorCase{Name: "join-cross-" + typ.String(), Inputs: in2, Build: join(typ)})
	}
	for _, tc := range cases {
		// Also the plain shape (no batches at all) as the reference.
		tc.Shapes = []vt.Shape{{BatchSize: 3}, {BatchSize: 3, EmptyBatches: true}}
		vt.RunOperator(t, tc)
	}
}

// TestKeyEncoderNullIndicesOverBufferlessDictionary encodes dictionary keys
// whose indices are all null over an empty dictionary without buffers (as
// an IPC stream may send), alone and with another key.
func TestKeyEncoderNullIndicesOverBufferlessDictionary(t *testing.T) {
	mem := vt.NewAllocator(t)
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: vector.String}
	ib := array.NewInt32Builder(mem)
	ib.AppendNulls(2)
	idx := ib.NewInt32Array()
	ib.Release()
	dict := vt.EmptyArray(vector.String)
	col := array.NewDictionaryArray(dt, idx, dict)
	idx.Release()
	dict.Release()
	defer col.Release()
	other := vt.BuildRecord(mem, arrow.NewSchema([]arrow.Field{{Name: "i", Type: vector.Int64}}, nil), []vt.Row{{1}, {1}})
	defer other.Release()
	for _, cols := range [][]arrow.Array{{col}, {col, other.Column(0)}} {
		types := []arrow.DataType{vector.String, vector.Int64}[:len(cols)]
		enc, err := vector.NewKeyEncoder(mem, types)
		if err != nil {
			t.Fatal(err)
		}
		if err := enc.Encode(cols); err != nil {
			t.Fatal(err)
		}
		if enc.Len() != 2 || !enc.HasNull(0) || !enc.HasNull(1) || enc.Hashes()[0] != enc.Hashes()[1] {
			t.Errorf("%d keys: len %d, nulls %v %v", len(cols), enc.Len(), enc.HasNull(0), enc.HasNull(1))
		}
	}
}

// TestSortNullIndicesOverBufferlessDictionary sorts and aggregates by a
// dictionary column whose indices are all null over an empty dictionary
// without buffers.
func TestSortNullIndicesOverBufferlessDictionary(t *testing.T) {
	mem := vt.NewAllocator(t)
	dt := &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: vector.String}
	ib := array.NewInt32Builder(mem)
	ib.AppendNulls(3)
	idx := ib.NewInt32Array()
	ib.Release()
	dict := vt.EmptyArray(vector.String)
	col := array.NewDictionaryArray(dt, idx, dict)
	idx.Release()
	dict.Release()
	s := arrow.NewSchema([]arrow.Field{{Name: "d", Type: dt, Nullable: true}}, nil)
	rec := array.NewRecord(s, []arrow.Array{col}, 3)
	col.Release()
	defer rec.Release()
	build := map[string]func(in vector.Operator) (vector.Operator, error){
		"sort": func(in vector.Operator) (vector.Operator, error) {
			return vector.NewSort(mem, in, []vector.SortKey{vector.Asc(vector.Col("d"))})
		},
		"aggregate": func(in vector.Operator) (vector.Operator, error) {
			return vector.NewHashAggregate(mem, in, vector.AggregateSpec{
				GroupBy:    []vector.NamedExpr{vector.As(vector.Col("d"), "d")},
				Aggregates: []vector.AggregateCall{{Func: vector.AggCountStar, Name: "n"}},
			})
		},
	}
	want := map[string][]vt.Row{"sort": {{nil}, {nil}, {nil}}, "aggregate": {{nil, 3}}}
	for name, b := range build {
		scan, err := vector.NewScan(s, rec)
		if err != nil {
			t.Fatal(err)
		}
		op, err := b(scan)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		recs, err := vector.Drain(t.Context(), op)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		var got []vt.Row
		for _, r := range recs {
			got = append(got, vt.RowsOf(r)...)
			r.Release()
		}
		op.Close()
		if !vt.RowsEqual(want[name], got) {
			t.Errorf("%s: got %v", name, got)
		}
	}
}
