package vector_test

import (
	"context"
	"math/rand"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// TestWindowOpLargePartitions checks the window operator over partitions
// larger than its 64K-row chunks (its passes carry running sums, deques,
// dense ranks and range scans from chunk to chunk): two partitions of
// ~100K rows, the first boundary and peer groups of 3 rows falling inside
// chunks, against brute-force results over the operator's own output
// order (which rows of a peer group come first is the sort's choice).
func TestWindowOpLargePartitions(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	const n = 3<<16 + 1234
	const split = 100_003
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "p", Type: vector.Int64}, {Name: "o", Type: vector.Int64}, {Name: "v", Type: vector.Int64, Nullable: true},
	}, nil)
	perm := rand.New(rand.NewSource(5)).Perm(n)
	pb, ob, vb := array.NewInt64Builder(mem), array.NewInt64Builder(mem), array.NewInt64Builder(mem)
	type pov struct{ p, o, v int64 }
	var in []pov
	for _, i := range perm {
		p := int64(0)
		if i >= split {
			p = 1
		}
		pb.Append(p)
		ob.Append(int64(i / 3))
		if i%11 == 0 {
			vb.AppendNull()
			in = append(in, pov{p, int64(i / 3), -1 << 40})
		} else {
			vb.Append(int64(i%7-3) * int64(i%5+1))
			in = append(in, pov{p, int64(i / 3), int64(i%7-3) * int64(i%5+1)})
		}
	}
	cols := []arrow.Array{pb.NewArray(), ob.NewArray(), vb.NewArray()}
	pb.Release()
	ob.Release()
	vb.Release()
	rec := array.NewRecord(schema, cols, n)
	for _, c := range cols {
		c.Release()
	}
	// Batches of 50K rows.
	var recs []arrow.Record
	for lo := int64(0); lo < n; lo += 50_000 {
		recs = append(recs, rec.NewSlice(lo, min(lo+50_000, n)))
	}
	rec.Release()
	scan, err := vector.NewScan(schema, recs...)
	if err != nil {
		t.Fatal(err)
	}
	for _, r := range recs {
		r.Release()
	}

	growing := vector.WindowFrame{Range: true, Start: vector.FrameBound{Kind: vector.FrameUnboundedPreceding}, End: vector.FrameBound{Kind: vector.FrameCurrentRow}}
	rows := vector.WindowFrame{Start: vector.FrameBound{Kind: vector.FrameUnboundedPreceding}, End: vector.FrameBound{Kind: vector.FrameCurrentRow}}
	moving := vector.WindowFrame{Start: vector.FrameBound{Kind: vector.FramePreceding, Offset: 10}, End: vector.FrameBound{Kind: vector.FrameCurrentRow}}
	ranged := vector.WindowFrame{Range: true, Start: vector.FrameBound{Kind: vector.FramePreceding, Offset: 2}, End: vector.FrameBound{Kind: vector.FrameFollowing, Offset: 1}}
	whole := vector.WindowFrame{Start: vector.FrameBound{Kind: vector.FrameUnboundedPreceding}, End: vector.FrameBound{Kind: vector.FrameUnboundedFollowing}}
	v := vector.Col("v")
	agg := func(f vector.AggFunc, fr vector.WindowFrame, name string) vector.WindowCall {
		return vector.WindowCall{Func: vector.WinAggregate, Agg: vector.AggregateCall{Func: f, Args: []vector.Expr{v}}, Frame: fr, Name: name}
	}
	op, err := vector.NewWindowOp(mem, scan, vector.WindowOpSpec{
		PartitionBy: []vector.Expr{vector.Col("p")},
		OrderBy:     []vector.SortKey{{Expr: vector.Col("o")}},
		Calls: []vector.WindowCall{
			{Func: vector.WinRowNumber, Frame: rows, Name: "row_number"},
			{Func: vector.WinRank, Frame: growing, Name: "rank"},
			{Func: vector.WinDenseRank, Frame: growing, Name: "dense_rank"},
			{Func: vector.WinNtile, N: 7, Frame: rows, Name: "ntile"},
			{Func: vector.WinLag, N: 1, Args: []vector.Expr{v}, Frame: rows, Name: "lag"},
			{Func: vector.WinNthValue, N: 2, Args: []vector.Expr{v}, Frame: moving, Name: "nth_value"},
			agg(vector.AggSum, rows, "running_sum"),
			agg(vector.AggSum, growing, "range_running_sum"),
			agg(vector.AggCount, moving, "moving_count"),
			agg(vector.AggMax, moving, "moving_max"),
			agg(vector.AggMin, rows, "running_min"),
			agg(vector.AggSum, ranged, "range_sum"),
			agg(vector.AggSum, whole, "partition_sum"),
			// The passes chunked in issue 17's last round: lag and lead
			// IGNORE NULLS, a whole-partition extreme's gather, lag with a
			// default, last IGNORE NULLS.
			{Func: vector.WinLag, N: 1, IgnoreNulls: true, Args: []vector.Expr{v}, Frame: rows, Name: "lag_ignore_nulls"},
			{Func: vector.WinLead, N: 2, IgnoreNulls: true, Args: []vector.Expr{v}, Frame: rows, Name: "lead_ignore_nulls"},
			agg(vector.AggMax, whole, "partition_max"),
			{Func: vector.WinLag, N: 3, Args: []vector.Expr{v, vector.TypedLit(vector.Int64, int64(99))}, Frame: rows, Name: "lag_default"},
			{Func: vector.WinAggregate, Agg: vector.AggregateCall{Func: vector.AggLast, Args: []vector.Expr{v}, IgnoreNulls: true}, Frame: rows, Name: "running_last"},
		},
	})
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	out, err := vector.Drain(context.Background(), op)
	if err != nil {
		t.Fatal(err)
	}
	// got[c] is column c of the output as int64s, nullV for null.
	const nullV = -1 << 40
	got := make([][]int64, 21)
	for _, r := range out {
		for c := range got {
			col := r.Column(c)
			for i := 0; i < col.Len(); i++ {
				x := int64(nullV)
				if col.IsValid(i) {
					switch a := col.(type) {
					case *array.Int64:
						x = a.Value(i)
					case *array.Int32:
						x = int64(a.Value(i))
					}
				}
				got[c] = append(got[c], x)
			}
		}
		r.Release()
	}
	p, o, vv := got[0], got[1], got[2]
	if len(p) != n {
		t.Fatalf("%d rows out, want %d", len(p), n)
	}
	// The output is the input reordered by (p, o).
	var outRows []pov
	for i := range p {
		outRows = append(outRows, pov{p[i], o[i], vv[i]})
	}
	cmp := func(a, b pov) int {
		if a.p != b.p {
			return int(a.p - b.p)
		}
		if a.o != b.o {
			return int(a.o - b.o)
		}
		return int(a.v - b.v)
	}
	if !slices.IsSortedFunc(outRows, func(a, b pov) int { return cmp(pov{a.p, a.o, 0}, pov{b.p, b.o, 0}) }) {
		t.Fatal("output not in (p, o) order")
	}
	slices.SortFunc(in, cmp)
	slices.SortFunc(outRows, cmp)
	if !slices.Equal(in, outRows) {
		t.Fatal("output rows are not the input's")
	}
	// Prefix sums and counts of the non-null values.
	pre, cntPre := make([]int64, n+1), make([]int64, n+1)
	for j, x := range vv {
		pre[j+1], cntPre[j+1] = pre[j], cntPre[j]
		if x != nullV {
			pre[j+1] += x
			cntPre[j+1]++
		}
	}
	sumOf := func(lo, hi int) int64 {
		if cntPre[hi] == cntPre[lo] {
			return nullV
		}
		return pre[hi] - pre[lo]
	}
	extreme := func(lo, hi int, max bool) int64 {
		r := int64(nullV)
		for j := lo; j < hi; j++ {
			if vv[j] != nullV && (r == nullV || max && vv[j] > r || !max && vv[j] < r) {
				r = vv[j]
			}
		}
		return r
	}
	names := []string{"row_number", "rank", "dense_rank", "ntile", "lag", "nth_value", "running_sum", "range_running_sum", "moving_count", "moving_max", "running_min", "range_sum", "partition_sum",
		"lag_ignore_nulls", "lead_ignore_nulls", "partition_max", "lag_default", "running_last"}
	for s := 0; s < n; {
		e := s + 1
		for e < n && p[e] == p[s] {
			e++
		}
		dense := int64(0)
		runSum, runMin := sumOf(s, s), int64(nullV)
		var nonNull []int // the partition's rows with a value
		for j := s; j < e; j++ {
			if vv[j] != nullV {
				nonNull = append(nonNull, j)
			}
		}
		partMax := extreme(s, e, true)
		lastSeen := int64(nullV)
		for i := s; i < e; i++ {
			ps, pe := i, i+1 // peer group
			for ps > s && o[ps-1] == o[i] {
				ps--
			}
			for pe < e && o[pe] == o[i] {
				pe++
			}
			if ps == i {
				dense++
			}
			if vv[i] != nullV {
				if runSum == nullV {
					runSum = 0
				}
				runSum += vv[i]
				if runMin == nullV || vv[i] < runMin {
					runMin = vv[i]
				}
			}
			rows, k := int64(e-s), int64(7)
			q, r := rows/k, rows%k
			x := int64(i - s)
			ntile := r + (x-r*(q+1))/q + 1
			if x < r*(q+1) {
				ntile = x/(q+1) + 1
			}
			lag := int64(nullV)
			if i > s {
				lag = vv[i-1]
			}
			mlo := max(s, i-10)
			nth := int64(nullV)
			if mlo+1 <= i {
				nth = vv[mlo+1]
			}
			cnt := cntPre[i+1] - cntPre[mlo]
			rlo, rhi := i, i+1
			for rlo > s && o[rlo-1] >= o[i]-2 {
				rlo--
			}
			for rhi < e && o[rhi] <= o[i]+1 {
				rhi++
			}
			if vv[i] != nullV {
				lastSeen = vv[i]
			}
			// before: the partition's non-null rows before row i.
			before, _ := slices.BinarySearch(nonNull, i)
			lagIN, leadIN := int64(nullV), int64(nullV)
			if before >= 1 {
				lagIN = vv[nonNull[before-1]]
			}
			after := before // the first non-null row after i
			if after < len(nonNull) && nonNull[after] == i {
				after++
			}
			if after+1 < len(nonNull) {
				leadIN = vv[nonNull[after+1]]
			}
			lagDefault := int64(99)
			if i-3 >= s {
				lagDefault = vv[i-3]
			}
			want := []int64{int64(i - s + 1), int64(ps - s + 1), dense, ntile, lag, nth, runSum, sumOf(s, pe), cnt,
				extreme(mlo, i+1, true), runMin, sumOf(rlo, rhi), 0,
				lagIN, leadIN, partMax, lagDefault, lastSeen}
			if i == s {
				want[12] = sumOf(s, e)
			} else {
				want[12] = got[15][s]
			}
			for c, w := range want {
				if g := got[3+c][i]; g != w {
					t.Fatalf("row %d (partition [%d, %d)): %s = %d, want %d", i, s, e, names[c], g, w)
				}
			}
		}
		s = e
	}
}
