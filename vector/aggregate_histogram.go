package vector

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// histogram_numeric(x, nb), as Spark's HistogramNumeric over its
// NumericHistogram (Ben-Haim and Tom-Tov's streaming histogram): each
// value, as a double, joins a bin of equal centre or becomes a new bin;
// past nb bins the two closest adjacent bins merge into their weighted
// mean, ties between equally close pairs broken by a java.util.Random
// seeded 31183, one per histogram, as Spark's are. The result is an array
// of {x, y} structs, x converted back to the input type (Spark's default
// spark.sql.legacy.histogramNumericPropagateInputType), NULL for a group
// without values. The partial state is the bins as (x, y) doubles and a
// typed empty column that carries the input type.

type histBin struct{ x, y float64 }

type numericHistogram struct {
	bins []histBin
	rng  javaRandom
}

func newNumericHistogram() *numericHistogram {
	return &numericHistogram{rng: newJavaRandom(31183)}
}

// add is NumericHistogram.add.
func (h *numericHistogram) add(v float64, nb int) {
	bin, l, r := 0, 0, len(h.bins)
	for l < r {
		bin = (l + r) / 2
		if h.bins[bin].x > v {
			r = bin
		} else if h.bins[bin].x < v {
			bin++
			l = bin
		} else {
			break
		}
	}
	if bin < len(h.bins) && h.bins[bin].x == v {
		h.bins[bin].y++
		return
	}
	h.bins = append(h.bins, histBin{})
	copy(h.bins[bin+1:], h.bins[bin:])
	h.bins[bin] = histBin{v, 1}
	if len(h.bins) > nb {
		h.trim(nb)
	}
}

// merge is NumericHistogram.merge: an empty histogram copies the other's
// bins; otherwise both sets of bins are sorted together and trimmed.
func (h *numericHistogram) merge(o []histBin, nb int) {
	if len(o) == 0 {
		return
	}
	if len(h.bins) == 0 {
		h.bins = append(h.bins[:0], o...)
		return
	}
	h.bins = append(h.bins, o...)
	// Collections.sort is stable; Coord compares by x alone.
	sortStableBins(h.bins)
	h.trim(nb)
}

func sortStableBins(b []histBin) {
	for i := 1; i < len(b); i++ {
		for j := i; j > 0 && b[j].x < b[j-1].x; j-- {
			b[j], b[j-1] = b[j-1], b[j]
		}
	}
}

// trim is NumericHistogram.trim.
func (h *numericHistogram) trim(nb int) {
	for len(h.bins) > nb {
		smallest := h.bins[1].x - h.bins[0].x
		loc, count := 0, 1
		for i := 1; i < len(h.bins)-1; i++ {
			diff := h.bins[i+1].x - h.bins[i].x
			if diff < smallest {
				smallest, loc, count = diff, i, 1
			} else if diff == smallest {
				count++
				if h.rng.nextDouble() <= 1.0/float64(count) {
					loc = i
				}
			}
		}
		a, b := &h.bins[loc], h.bins[loc+1]
		d := a.y + b.y
		a.x *= a.y / d
		a.x += b.x / d * b.y
		a.y = d
		h.bins = append(h.bins[:loc+1], h.bins[loc+2:]...)
	}
}

// javaRandom is java.util.Random's linear congruential generator.
type javaRandom struct{ seed uint64 }

const javaRandMask = 1<<48 - 1

func newJavaRandom(seed int64) javaRandom {
	return javaRandom{seed: (uint64(seed) ^ 0x5DEECE66D) & javaRandMask}
}

func (r *javaRandom) next(bits uint) int64 {
	r.seed = (r.seed*0x5DEECE66D + 0xB) & javaRandMask
	return int64(int32(r.seed >> (48 - bits)))
}

func (r *javaRandom) nextDouble() float64 {
	return float64(r.next(26)<<27+r.next(27)) * (1.0 / (1 << 53))
}

type histogramAcc struct {
	elem   arrow.DataType
	nb     int
	merge  bool
	hists  []*numericHistogram
	window bool
}

// histogramTypeOK reports whether histogram_numeric takes values of t.
func histogramTypeOK(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.FLOAT32, arrow.FLOAT64,
		arrow.DATE32, arrow.INTERVAL_MONTHS, arrow.DURATION, arrow.NULL:
		return true
	case arrow.TIMESTAMP:
		return t.(*arrow.TimestampType).Unit == arrow.Microsecond
	}
	return false
}

func bindHistogram(elem arrow.DataType, nb any, merge bool) (*histogramAcc, error) {
	if !histogramTypeOK(elem) {
		return nil, fmt.Errorf("histogram_numeric of %s is not supported (integral and floating-point numbers, dates, timestamps and intervals are): %w", TypeName(elem), ErrType)
	}
	n, ok := nb.(int32)
	if !ok {
		return nil, fmt.Errorf("histogram_numeric needs the number of bins as a constant integer, not %v: %w", nb, ErrType)
	}
	if n < 2 {
		return nil, fmt.Errorf("histogram_numeric needs nBins to be at least 2, but you supplied %d: %w", n, ErrType)
	}
	if elem.ID() == arrow.NULL {
		elem = Float64
	}
	return &histogramAcc{elem: elem, nb: int(n), merge: merge}, nil
}

func (h *histogramAcc) setWindow() { h.window = true }

func (h *histogramAcc) resize(n int) {
	for len(h.hists) < n {
		h.hists = append(h.hists, nil)
	}
}

func (h *histogramAcc) heapBytes() int64 {
	b := sliceBytes(h.hists)
	for _, x := range h.hists {
		if x != nil {
			b += sliceBytes(x.bins) + 32
		}
	}
	return b
}

func (h *histogramAcc) resultType() arrow.DataType {
	return ListOf(arrow.StructOf(arrow.Field{Name: "x", Type: h.elem, Nullable: true}, arrow.Field{Name: "y", Type: Float64, Nullable: true}))
}

func binsType() arrow.DataType {
	return ListOf(arrow.StructOf(arrow.Field{Name: "x", Type: Float64, Nullable: true}, arrow.Field{Name: "y", Type: Float64, Nullable: true}))
}

func (h *histogramAcc) stateTypes() []arrow.DataType { return []arrow.DataType{binsType(), h.elem} }

func (h *histogramAcc) hist(g int32) *numericHistogram {
	if h.hists[g] == nil {
		h.hists[g] = newNumericHistogram()
	}
	return h.hists[g]
}

func (h *histogramAcc) update(gids []int32, args []arrow.Array) error {
	if !h.merge {
		col := args[0]
		if col.DataType().ID() == arrow.NULL {
			return nil
		}
		vals, err := histDoubles(col)
		if err != nil {
			return err
		}
		bm, off := validity(col)
		for i, g := range gids {
			if bm == nil || bitSet(bm, off+i) {
				h.hist(g).add(vals[i], h.nb)
			}
		}
		return nil
	}
	l, ok := args[0].(*array.List)
	if !ok {
		return fmt.Errorf("vector: histogram_numeric state of %s: %w", TypeName(args[0].DataType()), ErrType)
	}
	st := l.ListValues().(*array.Struct)
	xs := st.Field(0).(*array.Float64).Float64Values()
	ys := st.Field(1).(*array.Float64).Float64Values()
	offs := l.Offsets()
	var bins []histBin
	for i, g := range gids {
		if l.IsNull(i) || offs[i] == offs[i+1] {
			continue
		}
		bins = bins[:0]
		for r := offs[i]; r < offs[i+1]; r++ {
			bins = append(bins, histBin{xs[r], ys[r]})
		}
		h.hist(g).merge(bins, h.nb)
	}
	return nil
}

// histDoubles converts a column's values to doubles (Number.doubleValue).
func histDoubles(col arrow.Array) ([]float64, error) {
	n := col.Len()
	out := make([]float64, n)
	switch a := col.(type) {
	case *array.Float32:
		for i, x := range a.Float32Values() {
			out[i] = float64(x)
		}
		return out, nil
	case *array.Float64:
		copy(out, a.Float64Values())
		return out, nil
	}
	fw, ok := col.DataType().(arrow.FixedWidthDataType)
	if !ok {
		return nil, fmt.Errorf("vector: histogram_numeric of %s: %w", TypeName(col.DataType()), ErrType)
	}
	buf, off := col.Data().Buffers()[1].Bytes(), col.Data().Offset()
	switch fw.BitWidth() {
	case 8:
		for i, x := range castSlice[int8](buf)[off : off+n] {
			out[i] = float64(x)
		}
	case 16:
		for i, x := range castSlice[int16](buf)[off : off+n] {
			out[i] = float64(x)
		}
	case 32:
		for i, x := range castSlice[int32](buf)[off : off+n] {
			out[i] = float64(x)
		}
	case 64:
		for i, x := range castSlice[int64](buf)[off : off+n] {
			out[i] = float64(x)
		}
	default:
		return nil, fmt.Errorf("vector: histogram_numeric of %s: %w", TypeName(col.DataType()), ErrType)
	}
	return out, nil
}

// build makes the list column of groups [lo, hi): x of type xt (doubles
// converted as Scala's toInt/toLong/... do), y doubles.
func (h *histogramAcc) build(mem memory.Allocator, lo, hi int, xt arrow.DataType) arrow.Array {
	lt := ListOf(arrow.StructOf(arrow.Field{Name: "x", Type: xt, Nullable: true}, arrow.Field{Name: "y", Type: Float64, Nullable: true}))
	b := array.NewListBuilderWithField(mem, lt.(*arrow.ListType).ElemField())
	defer b.Release()
	sb := b.ValueBuilder().(*array.StructBuilder)
	xb, yb := sb.FieldBuilder(0), sb.FieldBuilder(1).(*array.Float64Builder)
	for g := lo; g < hi; g++ {
		var bins []histBin
		if g < len(h.hists) && h.hists[g] != nil {
			bins = h.hists[g].bins
		}
		if len(bins) == 0 {
			b.AppendNull()
			continue
		}
		b.Append(true)
		for _, bin := range bins {
			sb.Append(true)
			appendHistX(xb, bin.x)
			yb.Append(bin.y)
		}
	}
	return b.NewArray()
}

// appendHistX appends x converted to the builder's type, as
// percentile_approx converts its results (Java's casts); a NULL-typed
// input's bins have NULL x.
func appendHistX(b array.Builder, x float64) {
	if _, ok := b.(*array.NullBuilder); ok {
		b.AppendNull()
		return
	}
	appendFromDouble(b, x)
}

func (h *histogramAcc) final(mem memory.Allocator, lo, hi int, _ []int64) (arrow.Array, error) {
	return h.build(mem, lo, hi, h.elem), nil
}

func (h *histogramAcc) state(mem memory.Allocator, lo, hi int, _ []int64) ([]arrow.Array, error) {
	return []arrow.Array{h.build(mem, lo, hi, Float64), array.MakeArrayOfNull(mem, h.elem, hi-lo)}, nil
}
