package vector_test

import (
	"cmp"
	"context"
	"fmt"
	"math"
	"math/rand"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

var sortSchema = arrow.NewSchema([]arrow.Field{
	{Name: "i", Type: vector.Int64, Nullable: true},
	{Name: "k", Type: vector.Int64, Nullable: true},
	{Name: "f", Type: vector.Float64, Nullable: true},
	{Name: "s", Type: vector.String, Nullable: true},
	{Name: "b", Type: vector.Boolean, Nullable: true},
	{Name: "t", Type: vector.Timestamp, Nullable: true},
}, nil)

// sortRows makes n rows with many duplicate keys, nulls in every key,
// NaN, infinities and signed zeros, and strings sharing long prefixes; i is
// the input position so that stability is visible.
func sortRows(n int, seed int64) []vt.Row {
	r := rand.New(rand.NewSource(seed))
	floats := []float64{math.NaN(), math.Inf(1), math.Inf(-1), 0, math.Copysign(0, -1), 1.5, -1.5, 1e300, -1e-300}
	strs := []string{"", "a", "a\x00", "ab", "abcdefgh", "abcdefghi", "abcdefgh\x00", "abcdefgz", "zz", "é"}
	rows := make([]vt.Row, n)
	for i := range rows {
		row := vt.Row{int64(i), int64(r.Intn(7) - 3), floats[r.Intn(len(floats))], strs[r.Intn(len(strs))], r.Intn(2) == 0,
			int64(r.Intn(2000)-1000) * int64(r.Intn(2)*1e9+1)}
		for c := 1; c < len(row); c++ {
			if r.Intn(8) == 0 {
				row[c] = nil
			}
		}
		rows[i] = row
	}
	return rows
}

// refCompare is an independent comparison of two Go values for the
// reference sort: nulls aside, NaN is the largest double and equal to
// itself.
func refCompare(a, b any) int {
	switch x := a.(type) {
	case int64:
		return cmp.Compare(x, b.(int64))
	case float64:
		y := b.(float64)
		xn, yn := math.IsNaN(x), math.IsNaN(y)
		if xn || yn {
			return cmp.Compare(opsB2i(xn), opsB2i(yn))
		}
		return cmp.Compare(x, y)
	case string:
		return strings.Compare(x, b.(string))
	case bool:
		return cmp.Compare(opsB2i(x), opsB2i(b.(bool)))
	}
	panic(fmt.Sprintf("refCompare %T", a))
}

func opsB2i(b bool) int {
	if b {
		return 1
	}
	return 0
}

type refKey struct {
	col        int
	desc       bool
	nullsFirst bool
}

func refSort(rows []vt.Row, keys ...refKey) []vt.Row {
	out := append([]vt.Row(nil), rows...)
	sort.SliceStable(out, func(i, j int) bool {
		for _, k := range keys {
			a, b := out[i][k.col], out[j][k.col]
			var c int
			switch {
			case a == nil && b == nil:
			case a == nil:
				c = 1
				if k.nullsFirst {
					c = -1
				}
			case b == nil:
				c = -1
				if k.nullsFirst {
					c = 1
				}
			default:
				c = refCompare(a, b)
				if k.desc {
					c = -c
				}
			}
			if c != 0 {
				return c < 0
			}
		}
		return false
	})
	return out
}

func sortBy(keys ...vector.SortKey) func(memory.Allocator, []vector.Operator) (vector.Operator, error) {
	return func(mem memory.Allocator, in []vector.Operator) (vector.Operator, error) {
		return vector.NewSort(mem, in[0], keys)
	}
}

func topN(n int64, keys ...vector.SortKey) func(memory.Allocator, []vector.Operator) (vector.Operator, error) {
	return func(mem memory.Allocator, in []vector.Operator) (vector.Operator, error) {
		return vector.NewTopN(mem, in[0], keys, n)
	}
}

func TestSort(t *testing.T) {
	small := sortRows(40, 1)
	big := sortRows(700, 2) // above the radix threshold
	col := func(name string) vector.Expr { return vector.Col(name) }
	nullsLast := func(k vector.SortKey) vector.SortKey { k.Nulls = vector.NullsLast; return k }
	nullsFirst := func(k vector.SortKey) vector.SortKey { k.Nulls = vector.NullsFirst; return k }
	type tc struct {
		name string
		keys []vector.SortKey
		ref  []refKey
	}
	for _, c := range []tc{
		{"int-asc", []vector.SortKey{vector.Asc(col("k"))}, []refKey{{1, false, true}}},
		{"int-desc", []vector.SortKey{vector.Desc(col("k"))}, []refKey{{1, true, false}}},
		{"int-asc-nulls-last", []vector.SortKey{nullsLast(vector.Asc(col("k")))}, []refKey{{1, false, false}}},
		{"int-desc-nulls-first", []vector.SortKey{nullsFirst(vector.Desc(col("k")))}, []refKey{{1, true, true}}},
		{"float-asc", []vector.SortKey{vector.Asc(col("f"))}, []refKey{{2, false, true}}},
		{"float-desc", []vector.SortKey{vector.Desc(col("f"))}, []refKey{{2, true, false}}},
		{"string-asc", []vector.SortKey{vector.Asc(col("s"))}, []refKey{{3, false, true}}},
		{"string-desc-nulls-first", []vector.SortKey{nullsFirst(vector.Desc(col("s")))}, []refKey{{3, true, true}}},
		{"bool", []vector.SortKey{vector.Asc(col("b"))}, []refKey{{4, false, true}}},
		{"timestamp-desc", []vector.SortKey{vector.Desc(col("t"))}, []refKey{{5, true, false}}},
		{"int-then-string", []vector.SortKey{vector.Asc(col("k")), vector.Desc(col("s"))}, []refKey{{1, false, true}, {3, true, false}}},
		{"string-then-float", []vector.SortKey{vector.Asc(col("s")), nullsFirst(vector.Desc(col("f")))}, []refKey{{3, false, true}, {2, true, true}}},
		{"bool-int-float", []vector.SortKey{nullsLast(vector.Desc(col("b"))), vector.Desc(col("k")), vector.Asc(col("f"))},
			[]refKey{{4, true, false}, {1, true, false}, {2, false, true}}},
		{"null-literal-first", []vector.SortKey{vector.Asc(vector.Lit(nil)), vector.Asc(col("k"))}, []refKey{{1, false, true}}},
	} {
		for _, in := range []struct {
			name string
			rows []vt.Row
		}{{"small", small}, {"big", big}} {
			vt.RunOperator(t, vt.OperatorCase{Name: c.name + "/" + in.name,
				Inputs: []vt.Input{{Schema: sortSchema, Rows: in.rows}}, Build: sortBy(c.keys...),
				Want: refSort(in.rows, c.ref...), Ordered: true, WantSchema: sortSchema,
				Shapes: shapesFor(len(in.rows))})
		}
	}
	ref := refSort(small, refKey{1, true, false}, refKey{3, false, true})
	cases := []vt.OperatorCase{
		{Name: "empty-input", Inputs: []vt.Input{{Schema: sortSchema}}, Build: sortBy(vector.Asc(col("k")))},
		{Name: "top-3", Inputs: []vt.Input{{Schema: sortSchema, Rows: small}}, Build: topN(3, vector.Desc(col("k")), vector.Asc(col("s"))),
			Want: ref[:3], Ordered: true},
		{Name: "top-0", Inputs: []vt.Input{{Schema: sortSchema, Rows: small}}, Build: topN(0, vector.Desc(col("k")))},
		{Name: "top-more-than-input", Inputs: []vt.Input{{Schema: sortSchema, Rows: small}}, Build: topN(100, vector.Desc(col("k")), vector.Asc(col("s"))),
			Want: ref, Ordered: true},
		{Name: "no-keys", Inputs: []vt.Input{{Schema: sortSchema, Rows: small}}, Build: sortBy(), WantErr: "sort needs at least one key"},
		{Name: "unknown-key", Inputs: []vt.Input{{Schema: sortSchema, Rows: small}}, Build: sortBy(vector.Asc(col("zz"))),
			WantErr: "cannot bind zz: unknown column zz (available columns: i, k, f, s, b, t)"},
		{Name: "negative-top", Inputs: []vt.Input{{Schema: sortSchema, Rows: small}}, Build: topN(-1, vector.Asc(col("k"))),
			WantErr: "top-N limit must not be negative"},
		{Name: "struct-and-list-payload", Inputs: []vt.Input{{Schema: windowSchema, Rows: windowRows}}, Build: sortBy(vector.Desc(col("id"))),
			Want: []vt.Row{windowRows[3], windowRows[2], windowRows[0], windowRows[1]}, Ordered: true},
		{Name: "list-payload", Inputs: []vt.Input{{Schema: listSchema, Rows: listRows}}, Build: sortBy(vector.Asc(col("tag"))),
			Want: []vt.Row{listRows[3], listRows[0], listRows[1], listRows[2], listRows[4]}, Ordered: true},
		// Structs sort field by field (sort_nested.go), a null struct first
		// ascending.
		{Name: "struct-key", Inputs: []vt.Input{{Schema: windowSchema, Rows: windowRows}}, Build: sortBy(vector.Asc(col("window"))),
			Want: []vt.Row{windowRows[1], windowRows[0], windowRows[2], windowRows[3]}, Ordered: true},
		{Name: "struct-key-desc", Inputs: []vt.Input{{Schema: windowSchema, Rows: windowRows}}, Build: sortBy(vector.Desc(col("window"))),
			Want: []vt.Row{windowRows[3], windowRows[2], windowRows[0], windowRows[1]}, Ordered: true},
	}
	for _, c := range cases {
		vt.RunOperator(t, c)
	}
}

// shapesFor keeps batch size 1 for small inputs only, where a record per
// row is cheap.
func shapesFor(n int) []vt.Shape {
	if n <= 100 {
		return nil
	}
	var out []vt.Shape
	for _, s := range vt.Shapes {
		if s.BatchSize != 1 {
			out = append(out, s)
		}
	}
	return out
}

func TestSortDictionaryAndDecimal(t *testing.T) {
	s := arrow.NewSchema([]arrow.Field{
		{Name: "d", Type: &arrow.DictionaryType{IndexType: arrow.PrimitiveTypes.Int32, ValueType: vector.String}, Nullable: true},
		{Name: "m", Type: vector.Decimal(10, 2), Nullable: true},
	}, nil)
	rows := []vt.Row{{"pear", "1.50"}, {nil, "-2.00"}, {"apple", nil}, {"pear", "0.25"}, {"fig", "1.50"}}
	vt.RunOperator(t, vt.OperatorCase{Name: "dict-asc-decimal-desc", Inputs: []vt.Input{{Schema: s, Rows: rows}},
		Build: sortBy(vector.Asc(vector.Col("d")), vector.Desc(vector.Col("m"))), Ordered: true,
		Want: []vt.Row{{nil, "-2.00"}, {"apple", nil}, {"fig", "1.50"}, {"pear", "1.50"}, {"pear", "0.25"}}})
	vt.RunOperator(t, vt.OperatorCase{Name: "decimal-asc", Inputs: []vt.Input{{Schema: s, Rows: rows}},
		Build: sortBy(vector.Asc(vector.Col("m"))), Ordered: true,
		Want: []vt.Row{{"apple", nil}, {nil, "-2.00"}, {"pear", "0.25"}, {"pear", "1.50"}, {"fig", "1.50"}}})
}

// TestTopNCompaction runs a top-N over enough rows to compact several
// times and compares it with the full sort.
func TestTopNCompaction(t *testing.T) {
	mem := vt.NewAllocator(t)
	rows := sortRows(300_000, 5)
	recs := vt.BuildRecords(mem, sortSchema, rows, vt.Shape{BatchSize: 10_000})
	run := func(op vector.Operator, err error) []vt.Row {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		defer op.Close()
		out, err := vector.Drain(context.Background(), op)
		if err != nil {
			t.Fatal(err)
		}
		got := vt.RowsOf(out...)
		for _, o := range out {
			if o.NumRows() > 1<<16 {
				t.Errorf("record of %d rows", o.NumRows())
			}
			o.Release()
		}
		return got
	}
	keys := []vector.SortKey{vector.Desc(vector.Col("k")), vector.Asc(vector.Col("f"))}
	full := run(vector.NewSort(mem, opsScan(t, recs...), keys))
	for _, n := range []int64{1, 1000, 70_000} {
		top := run(vector.NewTopN(mem, opsScan(t, recs...), keys, n))
		if !vt.RowsEqual(full[:n], top) {
			t.Errorf("top %d differs from the sort's first rows", n)
		}
	}
	if want := refSort(rows, refKey{1, true, false}, refKey{2, false, true}); !vt.RowsEqual(want, full) {
		t.Error("sort of 300K rows differs from the reference")
	}
	for _, r := range recs {
		r.Release()
	}
}

// TestSortLongStrings sorts many strings sharing long prefixes, so that the
// string sort goes several 8-byte chunks deep with radix passes at every
// level, and compares with the reference for both directions.
func TestSortLongStrings(t *testing.T) {
	r := rand.New(rand.NewSource(9))
	s := arrow.NewSchema([]arrow.Field{
		{Name: "s", Type: vector.String, Nullable: true},
		{Name: "k", Type: vector.Int64, Nullable: true},
	}, nil)
	prefixes := []string{"", "https://example.com/", "https://example.com/a/b/c/", "x"}
	rows := make([]vt.Row, 3000)
	for i := range rows {
		b := []byte(prefixes[r.Intn(len(prefixes))])
		for n := r.Intn(12); n > 0; n-- {
			b = append(b, "ab\x00"[r.Intn(3)])
		}
		rows[i] = vt.Row{string(b), int64(r.Intn(3))}
		if r.Intn(50) == 0 {
			rows[i][0] = nil
		}
	}
	for _, desc := range []bool{false, true} {
		k := vector.Asc(vector.Col("s"))
		if desc {
			k = vector.Desc(vector.Col("s"))
		}
		vt.RunOperator(t, vt.OperatorCase{Name: fmt.Sprintf("desc=%v", desc), Inputs: []vt.Input{{Schema: s, Rows: rows}},
			Build: sortBy(k, vector.Desc(vector.Col("k"))), Ordered: true,
			Want:   refSort(rows, refKey{0, desc, !desc}, refKey{1, true, false}),
			Shapes: shapesFor(len(rows))})
	}
}
