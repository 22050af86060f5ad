package vector_test

import (
	"context"
	"errors"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
)

// countsRecord is a record of one BIGINT column n (nil: NULL) and an INT
// column v.
func countsRecord(mem memory.Allocator, ns []*int64) arrow.Record {
	nb := array.NewInt64Builder(mem)
	defer nb.Release()
	vb := array.NewInt32Builder(mem)
	defer vb.Release()
	for i, n := range ns {
		if n == nil {
			nb.AppendNull()
		} else {
			nb.Append(*n)
		}
		vb.Append(int32(i))
	}
	na, va := nb.NewArray(), vb.NewArray()
	defer na.Release()
	defer va.Release()
	s := arrow.NewSchema([]arrow.Field{{Name: "n", Type: arrow.PrimitiveTypes.Int64, Nullable: true}, {Name: "v", Type: arrow.PrimitiveTypes.Int32}}, nil)
	return array.NewRecord(s, []arrow.Array{na, va}, int64(len(ns)))
}

func i64(v int64) *int64 { return &v }

func TestScalarSubqueryCheck(t *testing.T) {
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	e := vector.ScalarSubqueryCheck(vector.Col("n"), vector.Col("v"))
	for _, c := range []struct {
		ns      []*int64
		tooMany bool
	}{
		{[]*int64{i64(0), i64(1), nil}, false},
		{[]*int64{i64(1), i64(2)}, true},
		{nil, false},
	} {
		rec := countsRecord(mem, c.ns)
		ev, err := e.Bind(rec.Schema(), mem)
		if err != nil {
			t.Fatal(err)
		}
		out, err := ev.Eval(context.Background(), rec)
		rec.Release()
		if c.tooMany {
			if !errors.Is(err, vector.ErrScalarSubqueryTooManyRows) {
				t.Errorf("%v: error %v, want SCALAR_SUBQUERY_TOO_MANY_ROWS", c.ns, err)
			}
			continue
		}
		if err != nil {
			t.Fatalf("%v: %v", c.ns, err)
		}
		if out.Len() != len(c.ns) || out.DataType().ID() != arrow.INT32 {
			t.Errorf("%v: got %v", c.ns, out)
		}
		out.Release()
	}
	empty := countsRecord(mem, nil)
	defer empty.Release()
	if _, err := vector.ScalarSubqueryCheck(vector.Col("v"), vector.Col("v")).Bind(empty.Schema(), mem); err == nil {
		t.Error("an INT count bound")
	}
}

func TestReplicateCount(t *testing.T) {
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	rec := countsRecord(mem, []*int64{i64(3), i64(0), nil, i64(-2), i64(1)})
	defer rec.Release()
	ev, err := vector.ReplicateCount(vector.Col("n")).Bind(rec.Schema(), mem)
	if err != nil {
		t.Fatal(err)
	}
	out, err := ev.Eval(context.Background(), rec)
	if err != nil {
		t.Fatal(err)
	}
	defer out.Release()
	l := out.(*array.List)
	want := [][]int64{{1, 2, 3}, {}, {}, {}, {1}}
	vals := l.ListValues().(*array.Int64)
	for i, w := range want {
		if l.IsNull(i) {
			t.Fatalf("row %d is NULL", i)
		}
		start, end := l.ValueOffsets(i)
		var got []int64
		for k := start; k < end; k++ {
			got = append(got, vals.Value(int(k)))
		}
		if len(got) != len(w) {
			t.Fatalf("row %d: %v, want %v", i, got, w)
		}
		for k := range w {
			if got[k] != w[k] {
				t.Fatalf("row %d: %v, want %v", i, got, w)
			}
		}
	}
}
