package vector_test

import (
	"fmt"
	"math"
	"math/rand"
	"sort"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
	"github.com/arrowstream/arrowstream/vector/vectortest"
)

// The window operator against a brute-force model: random tables (a
// partition key, an order key and values, all with nulls), random
// functions and frames; the model sorts the rows stably as the operator
// does and evaluates every row's frame from scratch.

var winSchema = arrow.NewSchema([]arrow.Field{
	{Name: "p", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "o", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "v", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "f", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
}, nil)

type winRow struct {
	p, o, v *int64
	f       *float64
}

func randOpt(r *rand.Rand, lo, hi int64) *int64 {
	if r.Intn(5) == 0 {
		return nil
	}
	v := lo + r.Int63n(hi-lo+1)
	return &v
}

// modelCall is one random window function and how the model computes it.
type modelCall struct {
	call vector.WindowCall
	eval func(rows []winRow, s, e, i int, lo, hi int) any
}

func randBound(r *rand.Rand, ranged bool) vector.FrameBound {
	k := vector.FrameBoundKind(r.Intn(5))
	b := vector.FrameBound{Kind: k}
	if k == vector.FramePreceding || k == vector.FrameFollowing {
		b.Offset = r.Int63n(4)
		b.FloatOffset = float64(b.Offset)
	}
	_ = ranged
	return b
}

func boundPos(b vector.FrameBound) int64 {
	switch b.Kind {
	case vector.FrameUnboundedPreceding:
		return -1 << 40
	case vector.FrameUnboundedFollowing:
		return 1 << 40
	case vector.FramePreceding:
		return -b.Offset
	case vector.FrameFollowing:
		return b.Offset
	}
	return 0
}

func randFrame(r *rand.Rand, ordered bool) vector.WindowFrame {
	for {
		f := vector.WindowFrame{Range: r.Intn(2) == 0, Start: randBound(r, false), End: randBound(r, false)}
		if f.Start.Kind == vector.FrameUnboundedFollowing || f.End.Kind == vector.FrameUnboundedPreceding {
			continue
		}
		if boundPos(f.Start) > boundPos(f.End) {
			continue
		}
		if f.Range && !ordered && (f.Start.Offset != 0 || f.End.Offset != 0 ||
			f.Start.Kind == vector.FramePreceding || f.Start.Kind == vector.FrameFollowing ||
			f.End.Kind == vector.FramePreceding || f.End.Kind == vector.FrameFollowing) {
			continue
		}
		return f
	}
}

func wi64(p *int64) any {
	if p == nil {
		return nil
	}
	return *p
}

// frameValues returns the non-null values of v over rows [lo, hi).
func frameValues(rows []winRow, lo, hi int) []int64 {
	var out []int64
	for j := lo; j < hi; j++ {
		if rows[j].v != nil {
			out = append(out, *rows[j].v)
		}
	}
	return out
}

func randCalls(r *rand.Rand, ordered bool) []modelCall {
	v, f := vector.Col("v"), vector.Col("f")
	var out []modelCall
	n := 1 + r.Intn(4)
	for len(out) < n {
		frame := randFrame(r, ordered)
		agg := func(fn vector.AggFunc, args []vector.Expr, ignore bool, eval func(rows []winRow, lo, hi int) any) {
			out = append(out, modelCall{
				call: vector.WindowCall{Func: vector.WinAggregate, Agg: vector.AggregateCall{Func: fn, Args: args, IgnoreNulls: ignore}, Frame: frame, Name: fmt.Sprint("c", len(out))},
				eval: func(rows []winRow, s, e, i, lo, hi int) any { return eval(rows, lo, hi) },
			})
		}
		win := func(fn vector.WindowFunc, args []vector.Expr, n int64, ignore bool, eval func(rows []winRow, s, e, i, lo, hi int) any) {
			if !ordered {
				return
			}
			fr := vector.WindowFrame{Start: vector.FrameBound{Kind: vector.FrameUnboundedPreceding}, End: vector.FrameBound{Kind: vector.FrameCurrentRow}}
			if fn == vector.WinNthValue {
				fr = frame
			}
			out = append(out, modelCall{
				call: vector.WindowCall{Func: fn, Args: args, N: n, IgnoreNulls: ignore, Frame: fr, Name: fmt.Sprint("c", len(out))},
				eval: eval,
			})
		}
		ignore := r.Intn(2) == 0
		switch r.Intn(14) {
		case 0:
			agg(vector.AggSum, []vector.Expr{v}, false, func(rows []winRow, lo, hi int) any {
				vals := frameValues(rows, lo, hi)
				if len(vals) == 0 {
					return nil
				}
				var s int64
				for _, x := range vals {
					s += x
				}
				return s
			})
		case 1:
			agg(vector.AggCount, []vector.Expr{v}, false, func(rows []winRow, lo, hi int) any { return int64(len(frameValues(rows, lo, hi))) })
		case 2:
			agg(vector.AggCountStar, nil, false, func(rows []winRow, lo, hi int) any { return int64(hi - lo) })
		case 3:
			agg(vector.AggAvg, []vector.Expr{v}, false, func(rows []winRow, lo, hi int) any {
				vals := frameValues(rows, lo, hi)
				if len(vals) == 0 {
					return nil
				}
				var s float64
				for _, x := range vals {
					s += float64(x)
				}
				return s / float64(len(vals))
			})
		case 4, 5:
			max := r.Intn(2) == 0
			fn := vector.AggMin
			if max {
				fn = vector.AggMax
			}
			agg(fn, []vector.Expr{v}, false, func(rows []winRow, lo, hi int) any {
				vals := frameValues(rows, lo, hi)
				if len(vals) == 0 {
					return nil
				}
				best := vals[0]
				for _, x := range vals {
					if max && x > best || !max && x < best {
						best = x
					}
				}
				return best
			})
		case 6:
			agg(vector.AggSum, []vector.Expr{f}, false, func(rows []winRow, lo, hi int) any {
				var s float64
				any := false
				for j := lo; j < hi; j++ {
					if rows[j].f != nil {
						s += *rows[j].f
						any = true
					}
				}
				if !any {
					return nil
				}
				return s
			})
		case 7:
			last := r.Intn(2) == 0
			fn := vector.AggFirst
			if last {
				fn = vector.AggLast
			}
			agg(fn, []vector.Expr{v}, ignore, func(rows []winRow, lo, hi int) any {
				for k := 0; k < hi-lo; k++ {
					j := lo + k
					if last {
						j = hi - 1 - k
					}
					if !ignore || rows[j].v != nil {
						return wi64(rows[j].v)
					}
				}
				return nil
			})
		case 8:
			nth := 1 + r.Int63n(3)
			win(vector.WinNthValue, []vector.Expr{v}, nth, ignore, func(rows []winRow, s, e, i, lo, hi int) any {
				seen := int64(0)
				for j := lo; j < hi; j++ {
					if ignore && rows[j].v == nil {
						continue
					}
					seen++
					if seen == nth {
						return wi64(rows[j].v)
					}
				}
				return nil
			})
		case 9:
			win(vector.WinRowNumber, nil, 0, false, func(rows []winRow, s, e, i, lo, hi int) any { return int64(i - s + 1) })
		case 10:
			dense := r.Intn(2) == 0
			fn := vector.WinRank
			if dense {
				fn = vector.WinDenseRank
			}
			win(fn, nil, 0, false, func(rows []winRow, s, e, i, lo, hi int) any {
				rank, groups := int64(1), int64(1)
				for j := s + 1; j <= i; j++ {
					if !eqKey(rows[j].o, rows[j-1].o) {
						rank = int64(j - s + 1)
						groups++
					}
				}
				if dense {
					return groups
				}
				return rank
			})
		case 11:
			k := 1 + r.Int63n(5)
			win(vector.WinNtile, nil, k, false, func(rows []winRow, s, e, i, lo, hi int) any {
				// Spark's NTile: the first n%k buckets get one row more.
				n := int64(e - s)
				bucket, left := int64(1), int64(0)
				size := n / k
				if n%k > 0 {
					size++
				}
				for j := int64(0); j <= int64(i-s); j++ {
					if left == size {
						bucket++
						left = 0
						size = n / k
						if bucket <= n%k {
							size++
						}
					}
					left++
				}
				return bucket
			})
		case 12, 13:
			lead := r.Intn(2) == 0
			fn := vector.WinLag
			if lead {
				fn = vector.WinLead
			}
			off := r.Int63n(4)
			args := []vector.Expr{v}
			var def any
			if r.Intn(2) == 0 {
				args = append(args, vector.Lit(int64(-7)))
				def = int64(-7)
			}
			win(fn, args, off, ignore, func(rows []winRow, s, e, i, lo, hi int) any {
				step := -1
				if lead {
					step = 1
				}
				if off == 0 {
					return wi64(rows[i].v)
				}
				seen := int64(0)
				for j := i + step; j >= s && j < e; j += step {
					if ignore && rows[j].v == nil {
						continue
					}
					seen++
					if seen == off {
						return wi64(rows[j].v)
					}
				}
				return def
			})
		}
	}
	return out
}

func eqKey(a, b *int64) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	return *a == *b
}

// cmpKey orders keys with nulls first when ascending and last when
// descending (Spark's defaults).
func cmpKey(a, b *int64, desc bool) int {
	switch {
	case a == nil && b == nil:
		return 0
	case a == nil:
		if desc {
			return 1
		}
		return -1
	case b == nil:
		if desc {
			return -1
		}
		return 1
	}
	c := 0
	if *a < *b {
		c = -1
	} else if *a > *b {
		c = 1
	}
	if desc {
		c = -c
	}
	return c
}

// modelFrame is row i's frame in partition [s, e) of the sorted rows.
func modelFrame(rows []winRow, f vector.WindowFrame, s, e, i int, ordered, desc bool) (int, int) {
	peerLo, peerHi := i, i+1
	for peerLo > s && eqKey(rows[peerLo-1].o, rows[i].o) {
		peerLo--
	}
	for peerHi < e && eqKey(rows[peerHi].o, rows[i].o) {
		peerHi++
	}
	if !ordered {
		peerLo, peerHi = s, e
	}
	offsets := f.Range && (f.Start.Kind == vector.FramePreceding || f.Start.Kind == vector.FrameFollowing ||
		f.End.Kind == vector.FramePreceding || f.End.Kind == vector.FrameFollowing)
	if !f.Range || !offsets {
		bound := func(b vector.FrameBound, end bool) int {
			add := 0
			if end {
				add = 1
			}
			switch b.Kind {
			case vector.FrameUnboundedPreceding:
				return s
			case vector.FrameUnboundedFollowing:
				return e
			case vector.FrameCurrentRow:
				if f.Range {
					if end {
						return peerHi
					}
					return peerLo
				}
				return i + add
			case vector.FramePreceding:
				return max(s, i-int(b.Offset)+add)
			}
			return min(e, i+int(b.Offset)+add)
		}
		lo, hi := bound(f.Start, false), bound(f.End, true)
		if hi < lo {
			hi = lo
		}
		return lo, hi
	}
	// RANGE with offsets: membership by value in the sort's order (keys
	// negated for DESC; a null key is below every value when nulls come
	// first, above when last).
	t := func(k *int64) float64 {
		if k == nil {
			if desc {
				return math.Inf(1)
			}
			return math.Inf(-1)
		}
		if desc {
			return -float64(*k)
		}
		return float64(*k)
	}
	x := t(rows[i].o)
	limit := func(b vector.FrameBound, end bool) float64 {
		switch b.Kind {
		case vector.FrameUnboundedPreceding:
			return math.Inf(-1)
		case vector.FrameUnboundedFollowing:
			return math.Inf(1)
		case vector.FramePreceding:
			return x - float64(b.Offset)
		case vector.FrameFollowing:
			return x + float64(b.Offset)
		}
		return x
	}
	low, high := limit(f.Start, false), limit(f.End, true)
	lo, hi := -1, -1
	for j := s; j < e; j++ {
		y := t(rows[j].o)
		unbLow := f.Start.Kind == vector.FrameUnboundedPreceding
		unbHigh := f.End.Kind == vector.FrameUnboundedFollowing
		if (unbLow || y >= low) && (unbHigh || y <= high) {
			if lo < 0 {
				lo = j
			}
			hi = j + 1
		}
	}
	if lo < 0 {
		return i, i
	}
	return lo, hi
}

func TestWindowOpModel(t *testing.T) {
	seed := rand.Int63()
	r := rand.New(rand.NewSource(seed))
	iters := 60
	if testing.Short() {
		iters = 15
	}
	for it := 0; it < iters; it++ {
		n := r.Intn(40)
		if it%5 == 4 {
			n = 256 + r.Intn(100) // the radix sort's size
		}
		// Keys without nulls take the operator's radix sort path.
		keyNulls := r.Intn(2) == 0
		key := func(lo, hi int64) *int64 {
			if keyNulls {
				return randOpt(r, lo, hi)
			}
			v := lo + r.Int63n(hi-lo+1)
			return &v
		}
		rows := make([]winRow, n)
		for i := range rows {
			rows[i] = winRow{p: key(0, 3), o: key(0, 8), v: randOpt(r, -20, 20)}
			if x := randOpt(r, -100, 100); x != nil {
				fv := float64(*x) / 8
				rows[i].f = &fv
			}
		}
		partitioned, ordered := r.Intn(3) > 0, r.Intn(4) > 0
		desc := r.Intn(2) == 0
		calls := randCalls(r, ordered)
		// The model's order: stable by (p ASC NULLS FIRST, o).
		sorted := append([]winRow(nil), rows...)
		sort.SliceStable(sorted, func(a, b int) bool {
			if partitioned {
				if c := cmpKey(sorted[a].p, sorted[b].p, false); c != 0 {
					return c < 0
				}
			}
			if ordered {
				return cmpKey(sorted[a].o, sorted[b].o, desc) < 0
			}
			return false
		})
		var want []vectortest.Row
		for s := 0; s < len(sorted); {
			e := s + 1
			for e < len(sorted) && (!partitioned || eqKey(sorted[e].p, sorted[s].p)) {
				e++
			}
			for i := s; i < e; i++ {
				row := vectortest.Row{wi64(sorted[i].p), wi64(sorted[i].o), wi64(sorted[i].v), fptr(sorted[i].f)}
				for _, c := range calls {
					lo, hi := modelFrame(sorted, c.call.Frame, s, e, i, ordered, desc)
					row = append(row, c.eval(sorted, s, e, i, lo, hi))
				}
				want = append(want, row)
			}
			s = e
		}
		spec := vector.WindowOpSpec{}
		if partitioned {
			spec.PartitionBy = []vector.Expr{vector.Col("p")}
		}
		if ordered {
			spec.OrderBy = []vector.SortKey{{Expr: vector.Col("o"), Descending: desc}}
		}
		var desc0 []string
		for _, c := range calls {
			spec.Calls = append(spec.Calls, c.call)
			desc0 = append(desc0, c.call.String())
		}
		in := make([]vectortest.Row, n)
		for i, rw := range rows {
			in[i] = vectortest.Row{wi64(rw.p), wi64(rw.o), wi64(rw.v), fptr(rw.f)}
		}
		vectortest.RunOperator(t, vectortest.OperatorCase{
			Name:   fmt.Sprintf("seed%d/it%d/part=%v/order=%v/desc=%v/%v", seed, it, partitioned, ordered, desc, desc0),
			Inputs: []vectortest.Input{{Schema: winSchema, Rows: in}},
			Build: func(mem memory.Allocator, ins []vector.Operator) (vector.Operator, error) {
				return vector.NewWindowOp(mem, ins[0], spec)
			},
			Want:    want,
			Ordered: true,
			Shapes:  []vectortest.Shape{{BatchSize: 1024}, {BatchSize: 3, Sliced: true, GarbageUnderNulls: true}},
		})
		if t.Failed() {
			return
		}
	}
}

func fptr(f *float64) any {
	if f == nil {
		return nil
	}
	return *f
}
