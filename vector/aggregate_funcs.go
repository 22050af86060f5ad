package vector

import (
	"fmt"
	"math/bits"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// accumulator is the state of one aggregate for every group, kept as flat
// arrays indexed by group id (column-shaped, not per-group objects), so that
// an update is one typed loop over the batch.
//
// In the raw modes (AggComplete, AggPartial) update receives the evaluated
// arguments; in the state modes (AggFinal, AggMerge) the aggregate's state
// columns. rows[g] is the number of input rows of group g, which the group
// table counts anyway; accumulators derive "how many non-null values" from
// it and their own null counts instead of counting every row themselves.
type accumulator interface {
	// resize makes room for n groups (n never shrinks); new groups are empty.
	resize(n int)
	// update folds one batch: row i of args belongs to group gids[i].
	update(gids []int32, args []arrow.Array) error
	// final returns the final values of groups [lo, hi).
	final(mem memory.Allocator, lo, hi int, rows []int64) (arrow.Array, error)
	// state returns the partial state columns of groups [lo, hi).
	state(mem memory.Allocator, lo, hi int, rows []int64) ([]arrow.Array, error)
	// heapBytes is the Go-heap memory the accumulator holds.
	heapBytes() int64
}

// boundAgg is an aggregate call bound to an input schema.
type boundAgg struct {
	args   []Evaluator   // raw: the arguments; state modes: the state columns
	acc    accumulator   //
	result arrow.Field   // the final value's column
	state  []arrow.Field // the partial state's columns
}

// aggInfo names an aggregate in runtime errors.
type aggInfo struct {
	label string   // the call in SQL, e.g. sum(v)
	args  []string // the arguments in SQL
}

// overflowError reports an overflow of the aggregate at row i, showing the
// argument value and the running result it was added to.
func (a *aggInfo) overflowError(i int, arg arrow.Array, acc string) error {
	name := "value"
	if len(a.args) > 0 {
		name = a.args[0]
	}
	return &EvalError{Expr: a.label, Row: i, Err: ErrOverflow,
		Values: fmt.Sprintf("%s=%s, %s=%s", name, FormatValue(ValueAt(arg, i), arg.DataType()), a.label, acc)}
}

// growZero extends s to n elements; new elements are zero.
func growZero[T any](s []T, n int) []T {
	if n <= len(s) {
		return s
	}
	if n <= cap(s) {
		t := s[:n]
		clear(t[len(s):])
		return t
	}
	t := make([]T, n, groupGrownCap[T](cap(s), n))
	copy(t, s)
	return t
}

// smallGrowBytes is the size up to which a per-group array (and the words
// grouper's slot table) grows fourfold rather than twofold. Every query
// start grows its state from nothing, and each growth copies what exists
// into memory the process has not touched yet (a page fault per 4 KB,
// 4–5 ms per MB on these VMs): q17's 6 K groups a partition grew each of
// its dozen accumulator arrays through seven doublings and its table
// through eight, copying about their final size again. Growing fourfold
// while small copies a third of that; past the bound the overshoot
// (up to four times the groups' bytes) would cost more than it saves.
const smallGrowBytes = 512 << 10

// groupGrownCap is the capacity an array of Ts of capacity c grows to when it
// must hold need: four times c while that is at most smallGrowBytes,
// twice c after, and need when that is more.
func groupGrownCap[T any](c, need int) int {
	var zero T
	next := 2 * c
	if uintptr(4*c)*unsafe.Sizeof(zero) <= smallGrowBytes {
		next = 4 * c
	}
	return max(need, next)
}

// growFill extends s to n elements; new elements are v.
func growFill[T any](s []T, n int, v T) []T {
	old := len(s)
	s = growZero(s, n)
	for i := old; i < len(s); i++ {
		s[i] = v
	}
	return s
}

// validity returns arr's validity bitmap and offset, or nil when it has no
// nulls.
func validity(arr arrow.Array) ([]byte, int) {
	if arr.NullN() == 0 {
		return nil, 0
	}
	return arr.NullBitmapBytes(), arr.Data().Offset()
}

func bitSet(bm []byte, i int) bool { return bm[i>>3]&(1<<(i&7)) != 0 }

// nullCounter counts, per group, the rows whose argument was null, so that
// the non-null count is rows - nulls. The array is made only when a null
// is seen.
type nullCounter struct {
	n     int
	nulls []int64
}

func (c *nullCounter) resize(n int) { c.grow(nil, n) }

func (c *nullCounter) grow(g *grower, n int) {
	c.n = n
	if c.nulls != nil {
		c.nulls = growZeroWith(g, c.nulls, n)
	}
}

// countNulls counts the null rows of arr (bitmap bm at offset off).
func (c *nullCounter) countNulls(gids []int32, bm []byte, off int) {
	if bm == nil {
		return
	}
	c.nulls = growZero(c.nulls, c.n)
	for i, g := range gids {
		if !bitSet(bm, off+i) {
			c.nulls[g]++
		}
	}
}

// countAll counts every row as null.
func (c *nullCounter) countAll(gids []int32) {
	c.nulls = growZero(c.nulls, c.n)
	for _, g := range gids {
		c.nulls[g]++
	}
}

// valid is the number of non-null values of group g.
func (c *nullCounter) valid(g int, rows []int64) int64 {
	if c.nulls == nil {
		return rows[g]
	}
	return rows[g] - c.nulls[g]
}

// countAcc is count(*) and count(x, ...): in raw mode it only counts null
// rows (rows - nulls is the count); in state modes it adds the counts.
type countAcc struct {
	nullCounter
	// state modes: non-null counts (aggregate_live_counts.go)
	stateCounts
	merge bool
	any   []bool // scratch: rows with a null argument
}

func (c *countAcc) resize(n int) { c.grow(nil, n) }

func (c *countAcc) grow(g *grower, n int) {
	c.nullCounter.grow(g, n)
	if c.merge {
		c.growCounts(g, n)
	}
}

func (c *countAcc) update(gids []int32, args []arrow.Array) error {
	if c.merge {
		addCounts(c.counts, gids, args[0])
		return nil
	}
	nullArgs := 0
	var last arrow.Array
	for _, a := range args {
		if a.NullN() > 0 && a.NullN() == a.Len() {
			// Every row has a null argument (a column of NULL type has
			// no bitmap to read): none is counted.
			c.countAll(gids)
			return nil
		}
		if a.NullN() > 0 {
			nullArgs++
			last = a
		}
	}
	switch {
	case nullArgs == 0:
	case nullArgs == 1:
		bm, off := validity(last)
		c.countNulls(gids, bm, off)
	default:
		c.any = growZero(c.any[:0], len(gids))
		for _, a := range args {
			if bm, off := validity(a); bm != nil {
				for i := range gids {
					if !bitSet(bm, off+i) {
						c.any[i] = true
					}
				}
			}
		}
		c.nulls = growZero(c.nulls, c.n)
		for i, g := range gids {
			if c.any[i] {
				c.nulls[g]++
			}
		}
	}
	return nil
}

// addCounts adds a bigint state column into counts (null entries count 0).
func addCounts(counts []int64, gids []int32, col arrow.Array) {
	vals := col.(*array.Int64).Int64Values()
	bm, off := validity(col)
	for i, g := range gids {
		if bm == nil || bitSet(bm, off+i) {
			counts[g] += vals[i]
		}
	}
}

func (c *countAcc) counted(lo, hi int, rows []int64) []int64 {
	out := make([]int64, hi-lo)
	for g := lo; g < hi; g++ {
		if c.merge {
			out[g-lo] = c.countsOr(rows)[g]
		} else {
			out[g-lo] = c.valid(g, rows)
		}
	}
	return out
}

func (c *countAcc) final(mem memory.Allocator, lo, hi int, rows []int64) (arrow.Array, error) {
	return newFixedArray(mem, Int64, c.counted(lo, hi, rows), nil), nil
}

func (c *countAcc) state(mem memory.Allocator, lo, hi int, rows []int64) ([]arrow.Array, error) {
	a, err := c.final(mem, lo, hi, rows)
	return []arrow.Array{a}, err
}

// sumKind is how a sum accumulates.
type sumKind int

const (
	sumInt     sumKind = iota // bigint, overflow checked
	sumFloat                  // double
	sumDecimal                // decimal128, precision checked
)

// sumAcc is sum(x) and avg(x). Raw mode keeps the sums and null counts;
// state modes keep the sums and the non-null counts of the partial states.
type sumAcc struct {
	aggInfo
	nullCounter
	// state modes: non-null inputs (aggregate_live_counts.go)
	stateCounts
	kind    sumKind
	avg     bool
	merge   bool
	resType arrow.DataType        // sum: the result type; avg: double, or the decimal sum's type
	avgType *arrow.Decimal128Type // avg of a decimal: the result type
	prec    int32                 // decimal sum precision
	ints    []int64
	floats  []float64
	decs    []decimal128.Num
	fin     liveScratch
}

func (s *sumAcc) resize(n int) { s.grow(nil, n) }

func (s *sumAcc) grow(g *grower, n int) {
	s.nullCounter.grow(g, n)
	switch s.kind {
	case sumInt:
		s.ints = growZeroWith(g, s.ints, n)
	case sumFloat:
		s.floats = growZeroWith(g, s.floats, n)
	case sumDecimal:
		s.decs = growZeroWith(g, s.decs, n)
	}
	if s.merge {
		s.growCounts(g, n)
	}
}

func (s *sumAcc) update(gids []int32, args []arrow.Array) error {
	arg := args[0]
	bm, off := validity(arg)
	if s.merge {
		addCounts(s.counts, gids, args[1])
	} else {
		s.countNulls(gids, bm, off)
	}
	return s.addValues(gids, arg, bm, off)
}

// addValues adds the non-null values of arg (validity bm at off) into the
// sums of their groups.
func (s *sumAcc) addValues(gids []int32, arg arrow.Array, bm []byte, off int) error {
	switch s.kind {
	case sumInt:
		var bad int
		switch a := arg.(type) {
		case *array.Int64:
			bad = addInts(s.ints, gids, a.Int64Values(), bm, off)
		case *array.Int32:
			bad = addInts(s.ints, gids, a.Int32Values(), bm, off)
		case *array.Int16:
			bad = addInts(s.ints, gids, a.Int16Values(), bm, off)
		case *array.Int8:
			bad = addInts(s.ints, gids, a.Int8Values(), bm, off)
		default:
			return fmt.Errorf("vector: %s of %s: %w", s.label, TypeName(arg.DataType()), ErrType)
		}
		if bad >= 0 {
			return s.overflowError(bad, arg, fmt.Sprint(s.ints[gids[bad]]))
		}
	case sumFloat:
		switch a := arg.(type) {
		case *array.Float64:
			addFloats(s.floats, gids, a.Float64Values(), bm, off)
		case *array.Float32:
			addFloats(s.floats, gids, a.Float32Values(), bm, off)
		case *array.Int64:
			addFloats(s.floats, gids, a.Int64Values(), bm, off)
		case *array.Int32:
			addFloats(s.floats, gids, a.Int32Values(), bm, off)
		case *array.Int16:
			addFloats(s.floats, gids, a.Int16Values(), bm, off)
		case *array.Int8:
			addFloats(s.floats, gids, a.Int8Values(), bm, off)
		case *array.Decimal128:
			scale := a.DataType().(*arrow.Decimal128Type).Scale
			for i, v := range a.Values() {
				if bm == nil || bitSet(bm, off+i) {
					s.floats[gids[i]] += v.ToFloat64(scale)
				}
			}
		default:
			return fmt.Errorf("vector: %s of %s: %w", s.label, TypeName(arg.DataType()), ErrType)
		}
	case sumDecimal:
		a, ok := arg.(*array.Decimal128)
		if !ok {
			return fmt.Errorf("vector: %s of %s: %w", s.label, TypeName(arg.DataType()), ErrType)
		}
		for i, v := range a.Values() {
			if bm != nil && !bitSet(bm, off+i) {
				continue
			}
			g := gids[i]
			r, ok := addDecimal(s.decs[g], v)
			if !ok || !r.FitsInPrecision(s.prec) {
				return s.overflowError(i, arg, s.decs[g].ToString(s.resType.(*arrow.Decimal128Type).Scale))
			}
			s.decs[g] = r
		}
	}
	return nil
}

// addInts adds vals into sums[gids[i]], skipping nulls; it stops at the
// first overflow and returns its row, or -1. The check is a sign test per
// row, which the branch predictor makes nearly free.
func addInts[T int8 | int16 | int32 | int64](sums []int64, gids []int32, vals []T, bm []byte, off int) int {
	gids = gids[:len(vals)]
	if bm == nil {
		for i, v := range vals {
			g := gids[i]
			x, y := sums[g], int64(v)
			r := x + y
			if (x^r)&(y^r) < 0 {
				return i
			}
			sums[g] = r
		}
		return -1
	}
	for i, v := range vals {
		if !bitSet(bm, off+i) {
			continue
		}
		g := gids[i]
		x, y := sums[g], int64(v)
		r := x + y
		if (x^r)&(y^r) < 0 {
			return i
		}
		sums[g] = r
	}
	return -1
}

// addFloats adds vals into sums[gids[i]] as doubles, skipping nulls.
func addFloats[T int8 | int16 | int32 | int64 | float32 | float64](sums []float64, gids []int32, vals []T, bm []byte, off int) {
	gids = gids[:len(vals)]
	if bm == nil {
		for i, v := range vals {
			sums[gids[i]] += float64(v)
		}
		return
	}
	for i, v := range vals {
		if bitSet(bm, off+i) {
			sums[gids[i]] += float64(v)
		}
	}
}

// addDecimal adds two 128-bit integers, reporting false on overflow.
func addDecimal(a, b decimal128.Num) (decimal128.Num, bool) {
	lo, carry := bits.Add64(a.LowBits(), b.LowBits(), 0)
	ahi, bhi := a.HighBits(), b.HighBits()
	hi := ahi + bhi + int64(carry)
	// Signed overflow: both operands have one sign and the result the other.
	if (ahi >= 0) == (bhi >= 0) && (hi >= 0) != (ahi >= 0) {
		return decimal128.Num{}, false
	}
	return decimal128.New(hi, lo), true
}

// nonEmpty returns, for groups [lo, hi), whether the group had a non-null
// value.
func (s *sumAcc) nonEmpty(lo, hi int, rows []int64) ([]bool, []int64) {
	valid := make([]bool, hi-lo)
	counts := make([]int64, hi-lo)
	for g := lo; g < hi; g++ {
		c := int64(0)
		if s.merge {
			c = s.countsOr(rows)[g]
		} else {
			c = s.valid(g, rows)
		}
		counts[g-lo] = c
		valid[g-lo] = c > 0
	}
	return valid, counts
}

func (s *sumAcc) final(mem memory.Allocator, lo, hi int, rows []int64) (arrow.Array, error) {
	valid, counts := s.nonEmpty(lo, hi, rows)
	if s.avg && s.avgType != nil {
		means := make([]decimal128.Num, hi-lo)
		for i, c := range counts {
			if c == 0 {
				continue
			}
			m, ok := avgDecimal(s.decs[lo+i], c, s.resType.(*arrow.Decimal128Type), s.avgType)
			if !ok {
				return nil, fmt.Errorf("vector: %s: the mean does not fit %s: %w", s.label, TypeName(s.avgType), ErrOverflow)
			}
			means[i] = m
		}
		return newFixedArray(mem, s.avgType, means, valid), nil
	}
	if s.avg {
		means := make([]float64, hi-lo)
		for i, c := range counts {
			if c > 0 {
				means[i] = s.floats[lo+i] / float64(c)
			}
		}
		return newFixedArray(mem, Float64, means, valid), nil
	}
	return s.sums(mem, lo, hi, valid), nil
}

// resultType is the type final returns.
func (s *sumAcc) resultType() arrow.DataType {
	if s.avgType != nil {
		return s.avgType
	}
	return s.resType
}

func (s *sumAcc) sums(mem memory.Allocator, lo, hi int, valid []bool) arrow.Array {
	switch s.kind {
	case sumInt:
		return newFixedArray(mem, s.resType, s.ints[lo:hi], valid)
	case sumDecimal:
		return newFixedArray(mem, s.resType, s.decs[lo:hi], valid)
	}
	return newFixedArray(mem, Float64, s.floats[lo:hi], valid)
}

func (s *sumAcc) state(mem memory.Allocator, lo, hi int, rows []int64) ([]arrow.Array, error) {
	_, counts := s.nonEmpty(lo, hi, rows)
	return []arrow.Array{s.sums(mem, lo, hi, nil), newFixedArray(mem, Int64, counts, nil)}, nil
}

// sumResultType is Spark's result type of sum over t, or false.
func sumResultType(t arrow.DataType) (arrow.DataType, sumKind, bool) {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64:
		return Int64, sumInt, true
	case arrow.FLOAT32, arrow.FLOAT64:
		return Float64, sumFloat, true
	case arrow.DECIMAL128:
		d := t.(*arrow.Decimal128Type)
		return Decimal(min(38, d.Precision+10), d.Scale), sumDecimal, true
	}
	return nil, 0, false
}
