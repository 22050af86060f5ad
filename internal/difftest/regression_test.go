package difftest

import (
	"context"
	"sort"
	"strconv"
	"strings"
	"testing"
)

// dictTable is a table whose dictionary-encoded string column spans two
// batches, each with its own dictionary and with nulls: the shape of the
// cases (seeds 1143, 100702, 100792 of the first runs) in which a sort and
// a cross join read the first dictionary value on rows that held others.
func dictTable() *Table {
	t := &Table{Name: "t0", Columns: []Column{{Name: "a0", Kind: KDictString}, {Name: "a1", Kind: KInt64}}}
	vals := []Value{"é", nil, "x%y", "b", nil, "1", "long", nil, "true", "-1", "b", nil}
	for i, v := range vals {
		t.Rows = append(t.Rows, []Value{v, int64(i)})
	}
	t.Batches = []int{4, 8}
	return t
}

func TestRegressionDictionaryBatches(t *testing.T) {
	t0 := dictTable()
	t1 := &Table{Name: "t1", Columns: []Column{{Name: "b0", Kind: KInt32}}, Rows: [][]Value{{int64(1)}, {int64(2)}}, Batches: []int{2}}
	e, err := NewEngine([]*Table{t0, t1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	var want []string
	for _, r := range t0.Rows {
		if r[0] == nil {
			want = append(want, "NULL")
		} else {
			want = append(want, `"`+r[0].(string)+`"`)
		}
	}
	sort.Slice(want, func(i, j int) bool { // NULLS FIRST, then by value
		if (want[i] == "NULL") != (want[j] == "NULL") {
			return want[i] == "NULL"
		}
		return want[i] < want[j]
	})
	for _, opt := range []bool{false, true} {
		res := e.Run(context.Background(), "SELECT a0 FROM t0 ORDER BY a0 NULLS FIRST", opt)
		if res.Err != nil || strings.Join(res.Rows, ",") != strings.Join(want, ",") {
			t.Errorf("sort (optimized %v): got %v (err %v), want %v", opt, res.Rows, res.Err, want)
		}
		// Each value's group in a cross join with two rows counts twice
		// its rows.
		for _, q := range []string{"SELECT a0, count(*) FROM t0 CROSS JOIN t1 GROUP BY a0", "SELECT a0, count(*) FROM t1 CROSS JOIN t0 GROUP BY a0"} {
			res = e.Run(context.Background(), q, opt)
			counts := map[string]int{}
			for _, w := range want {
				counts[w] += 2
			}
			var wantAgg []string
			for k, n := range counts {
				wantAgg = append(wantAgg, k+" | "+strconv.Itoa(n))
			}
			if res.Err != nil || !sameRows(res.Rows, wantAgg, false) {
				t.Errorf("%s (optimized %v): got %v (err %v), want %v", q, opt, res.Rows, res.Err, wantAgg)
			}
		}
	}
}

// Found by the generator: a join ON an INT column and a TINYINT or
// SMALLINT column (Arrow int8/int16, from files) failed with "join key
// types differ".
func TestRegressionJoinNarrowIntegerKeys(t *testing.T) {
	t0 := &Table{Name: "t0", Columns: []Column{{Name: "a0", Kind: KInt8}, {Name: "a1", Kind: KInt16}},
		Rows: [][]Value{{int64(1), int64(1)}, {int64(-128), int64(300)}, {nil, int64(2)}, {int64(2), nil}}, Batches: []int{4}}
	t1 := &Table{Name: "t1", Columns: []Column{{Name: "b0", Kind: KInt32}, {Name: "b1", Kind: KInt64}},
		Rows: [][]Value{{int64(1), int64(300)}, {int64(-128), int64(2)}, {int64(2), nil}, {nil, int64(1)}}, Batches: []int{4}}
	e, err := NewEngine([]*Table{t0, t1})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	for _, c := range []struct {
		q    string
		want []string
	}{
		{"SELECT a0, b0 FROM t0 JOIN t1 ON a0 = b0", []string{"1 | 1", "-128 | -128", "2 | 2"}},
		{"SELECT a1, b1 FROM t0 JOIN t1 ON a1 = b1", []string{"1 | 1", "300 | 300", "2 | 2"}},
		{"SELECT t0.a0, u.a1 FROM t0 JOIN t0 AS u ON t0.a0 = u.a1", []string{"1 | 1", "2 | 2"}},
		{"SELECT a0, b0 FROM t0 LEFT JOIN t1 ON a0 <=> b0", []string{"1 | 1", "-128 | -128", "2 | 2", "NULL | NULL"}},
	} {
		for _, opt := range []bool{false, true} {
			res := e.Run(context.Background(), c.q, opt)
			if res.Err != nil || !sameRows(res.Rows, c.want, false) {
				t.Errorf("%s (optimized %v): got %v (err %v), want %v", c.q, opt, res.Rows, res.Err, c.want)
			}
		}
	}
}

// TestRegressionWindowMinMaxNarrowTypes: min and max as window functions
// over TINYINT, SMALLINT and FLOAT columns (seeds 7170, 7201, 7404 of the
// first runs with window functions) built a record whose column was the
// accumulators' widened type (INT, DOUBLE) under a schema of the
// argument's type, and panicked.
func TestRegressionWindowMinMaxNarrowTypes(t *testing.T) {
	t0 := &Table{Name: "t0", Columns: []Column{{Name: "a0", Kind: KInt8}, {Name: "a1", Kind: KInt16}, {Name: "a2", Kind: KFloat32}, {Name: "a3", Kind: KInt64}},
		Rows: [][]Value{{int64(-1), int64(7), float64(2.5), int64(1)}, {int64(3), nil, float64(-1), int64(1)}, {nil, int64(-2), nil, int64(2)}}, Batches: []int{3}}
	e, err := NewEngine([]*Table{t0})
	if err != nil {
		t.Fatal(err)
	}
	defer e.Close()
	q := `SELECT a3, max(a0) OVER (PARTITION BY a3 ORDER BY a0 NULLS FIRST) AS x, min(a1) OVER (PARTITION BY a3) AS y,
		max(a2) OVER (ORDER BY a3 NULLS FIRST, a0 NULLS FIRST ROWS BETWEEN 1 PRECEDING AND CURRENT ROW) AS z FROM t0 ORDER BY a3, x NULLS FIRST`
	want := "1 | -1 | 7 | 2.5;1 | 3 | 7 | 2.5;2 | NULL | -2 | -1"
	for _, opt := range []bool{false, true} {
		res := e.Run(context.Background(), q, opt)
		if got := strings.Join(res.Rows, ";"); res.Err != nil || res.Panic != "" || got != want {
			t.Errorf("optimized %v: got %q (err %v, panic %.200s), want %q", opt, got, res.Err, res.Panic, want)
		}
	}
}
