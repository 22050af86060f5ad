package vector

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// setModelKey is an element as the model's map key, with Spark's equality
// for the set functions: -0.0 equals 0.0, NaN equals NaN, NULL is one value.
func setModelKey(arr arrow.Array, i int) string {
	if arr.IsNull(i) {
		return "null"
	}
	switch a := arr.(type) {
	case *array.Float64:
		v := a.Value(i)
		if math.IsNaN(v) {
			return "NaN"
		}
		if v == 0 {
			v = 0
		}
		return fmt.Sprint(v)
	case *array.Float32:
		v := a.Value(i)
		if v != v {
			return "NaN"
		}
		if v == 0 {
			v = 0
		}
		return fmt.Sprint(v)
	case *array.String:
		return "s:" + a.Value(i)
	case *array.Int64:
		return fmt.Sprint(a.Value(i))
	}
	panic(fmt.Sprintf("no model key for %T", arr))
}

// randSetColumn is n random elements of dt drawn from few distinct values
// (so rows repeat them), with NULLs, NaN and both zeros for floats.
func randSetColumn(r *rand.Rand, mem memory.Allocator, dt arrow.DataType, n, distinct int) arrow.Array {
	b := array.NewBuilder(mem, dt)
	defer b.Release()
	for range n {
		if r.IntN(12) == 0 {
			b.AppendNull()
			continue
		}
		v := r.IntN(distinct)
		switch bb := b.(type) {
		case *array.Float64Builder:
			switch v % 7 {
			case 0:
				bb.Append(math.NaN())
			case 1:
				bb.Append(math.Copysign(0, -1))
			case 2:
				bb.Append(0)
			default:
				bb.Append(float64(v) / 4)
			}
		case *array.Float32Builder:
			switch v % 7 {
			case 0:
				bb.Append(float32(math.NaN()))
			case 1:
				bb.Append(float32(math.Copysign(0, -1)))
			default:
				bb.Append(float32(v) / 4)
			}
		case *array.StringBuilder:
			bb.Append(fmt.Sprintf("v%d", v*7919%distinct))
		case *array.Int64Builder:
			bb.Append(int64(uint64(v) * 0x9e3779b97f4a7c15))
		}
	}
	return b.NewArray()
}

// TestElemSetMatchesModel: the open-addressing element set gives a map's
// answers (add reports new elements, has finds them, NULL is one value)
// for fixed-width, byte-key and rendered (FLOAT) encodings, over rows of
// random lengths, some larger than the room prepare made (the rehash
// path), and a first huge row followed by small ones (emptying touches
// only what was filled).
func TestElemSetMatchesModel(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	r := rand.New(rand.NewPCG(3, 9))
	ctx := context.Background()
	for _, dt := range []arrow.DataType{Int64, Float64, Float32, String} {
		t.Run(TypeName(dt), func(t *testing.T) {
			col := randSetColumn(r, mem, dt, 60_000, 500)
			defer col.Release()
			ek, err := newElemKeys(mem, dt)
			if err != nil {
				t.Fatal(err)
			}
			defer ek.release()
			if err := ek.encode(col); err != nil {
				t.Fatal(err)
			}
			set := newElemSet(ek, mem, "test")
			defer set.release()
			pos := 0
			for row := 0; pos < col.Len(); row++ {
				n := r.IntN(40)
				if row == 0 {
					n = 20_000
				}
				n = min(n, col.Len()-pos)
				room := n
				if r.IntN(4) == 0 {
					room = n / 3 // an undercount: the rehash path
				}
				if err := set.prepare(ctx, room); err != nil {
					t.Fatal(err)
				}
				model := map[string]bool{}
				for i := pos; i < pos+n; i++ {
					k := setModelKey(col, i)
					if got, want := set.add(i), !model[k]; got != want {
						t.Fatalf("row %d: add(%s) = %v, want %v", row, k, got, want)
					}
					model[k] = true
				}
				// has over the rest of the column's first elements.
				for j := 0; j < 200; j++ {
					if col.IsNull(j) {
						continue
					}
					if got, want := set.has(ek, j), model[setModelKey(col, j)]; got != want {
						t.Fatalf("row %d: has(%s) = %v, want %v", row, setModelKey(col, j), got, want)
					}
				}
				pos += n
			}
		})
	}
}

// TestArraySetFunctionsReserveTheirTable: array_distinct of one row of 1M
// elements reserves its set's table on the query's account before taking
// it: under a small limit it is refused naming the function, and the
// reservation is returned after both outcomes.
func TestArraySetFunctionsReserveTheirTable(t *testing.T) {
	for _, limit := range []int64{256 << 10, 1 << 40} {
		mem := &limitedAlloc{CheckedAllocator: memory.NewCheckedAllocator(memory.NewGoAllocator()), limit: limit}
		schema := arrow.NewSchema([]arrow.Field{{Name: "a", Type: ListOf(Int64), Nullable: true}}, nil)
		rows := []listRow{{elems: make([]*int64, 1_000_000)}}
		for i := range rows[0].elems {
			v := int64(i % 700_000)
			rows[0].elems[i] = &v
		}
		col := buildListCol(mem, rows)
		f, err := LookupFunction("array_distinct", []Expr{Col("a")})
		if err != nil {
			t.Fatal(err)
		}
		ev, err := f.Bind(schema, mem)
		if err != nil {
			t.Fatal(err)
		}
		rec := array.NewRecord(schema, []arrow.Array{col}, 1)
		got, err := ev.Eval(context.Background(), rec)
		if limit < 1<<30 {
			if err == nil || !errors.Is(err, errTestLimit) {
				t.Fatalf("limit %d: err %v, want the limit's refusal", limit, err)
			}
			if !strings.Contains(err.Error(), "array_distinct") {
				t.Errorf("limit %d: %v does not name array_distinct", limit, err)
			}
		} else {
			if err != nil {
				t.Fatal(err)
			}
			if n := got.(*array.List).ListValues().Len(); n != 700_000 {
				t.Errorf("%d distinct elements, want 700000", n)
			}
			if mem.peak < 2*700_000*4 {
				t.Errorf("peak reservation %d bytes, less than the set's table", mem.peak)
			}
			got.Release()
		}
		rec.Release()
		col.Release()
		if mem.held != 0 {
			t.Errorf("limit %d: %d bytes still reserved", limit, mem.held)
		}
		mem.AssertSize(t, 0)
	}
}
