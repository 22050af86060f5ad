package vector

import (
	"fmt"
	"math"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// The statistical aggregates: the variance family (central moments), the
// covariance family and the linear-regression aggregates. They follow
// Spark's CentralMomentAgg, Covariance, PearsonCorrelation, RegrSlope and
// RegrIntercept operation for operation (the same update and merge
// formulas, evaluated in the same order, without fused multiply-adds), so
// that the doubles they return are Spark's to the last bit for the same
// order of input rows. Arguments are converted to double; rows where an
// argument is NULL are skipped. A group with no row left is NULL; the
// divisions by zero that Spark guards (one row of a sample statistic, no
// spread for skewness, kurtosis and corr) are NULL, as Spark's default
// spark.sql.legacy.statisticalAggregate=false makes them.
//
// The partial state is a fixed set of non-null double columns per
// function (see statParts), merged with Spark's merge formulas, so the
// functions work in partial aggregation, in streaming state and as window
// functions.

// statFamily is how a statistical aggregate accumulates.
type statFamily int

const (
	// famMoment: n, avg, m2[, m3[, m4]] of one value.
	famMoment statFamily = iota
	// famCov: n, xavg, yavg, ck of a pair.
	famCov
	// famCorr: famCov plus xmk, ymk.
	famCorr
	// famRegr: famCov of (x, y) plus n, avg, m2 of x alone (Spark's
	// regr_slope and regr_intercept).
	famRegr
)

// statFunc describes one statistical aggregate.
type statFunc struct {
	fam   statFamily
	order int // famMoment: the highest central moment kept (2, 3 or 4)
	nargs int
	// pick: for a famMoment of two arguments (regr_sxx, regr_syy), the
	// argument whose moments are kept; rows need both non-null.
	pick int
}

// statFuncs are the statistical aggregates.
var statFuncs = map[AggFunc]statFunc{
	AggStddevSamp:    {fam: famMoment, order: 2, nargs: 1},
	AggStddev:        {fam: famMoment, order: 2, nargs: 1},
	AggStd:           {fam: famMoment, order: 2, nargs: 1},
	AggStddevPop:     {fam: famMoment, order: 2, nargs: 1},
	AggVarSamp:       {fam: famMoment, order: 2, nargs: 1},
	AggVariance:      {fam: famMoment, order: 2, nargs: 1},
	AggVarPop:        {fam: famMoment, order: 2, nargs: 1},
	AggSkewness:      {fam: famMoment, order: 3, nargs: 1},
	AggKurtosis:      {fam: famMoment, order: 4, nargs: 1},
	AggCovarPop:      {fam: famCov, nargs: 2},
	AggCovarSamp:     {fam: famCov, nargs: 2},
	AggCorr:          {fam: famCorr, nargs: 2},
	AggRegrSXX:       {fam: famMoment, order: 2, nargs: 2, pick: 1},
	AggRegrSYY:       {fam: famMoment, order: 2, nargs: 2, pick: 0},
	AggRegrSXY:       {fam: famCov, nargs: 2},
	AggRegrR2:        {fam: famCorr, nargs: 2},
	AggRegrSlope:     {fam: famRegr, nargs: 2},
	AggRegrIntercept: {fam: famRegr, nargs: 2},
}

// statParts are the state columns of a statistical aggregate.
func (s statFunc) parts() []string {
	switch s.fam {
	case famCov:
		return []string{"n", "xavg", "yavg", "ck"}
	case famCorr:
		return []string{"n", "xavg", "yavg", "ck", "xmk", "ymk"}
	case famRegr:
		return []string{"n", "xavg", "yavg", "ck", "vn", "vavg", "vm2"}
	}
	return []string{"n", "avg", "m2", "m3", "m4"}[:s.order+1]
}

// statAcc accumulates a statistical aggregate: one flat []float64 per
// state part, indexed by group.
type statAcc struct {
	fn     AggFunc
	sf     statFunc
	merge  bool
	window bool        // a window function: evaluated without Spark's final merge
	st     [][]float64 // by part, then group

	// split (complete aggregation) defers the rows to final, which folds
	// the first and the second half of the input into two partial
	// buffers and merges them (see splitFold).
	split bool
	held  heldRows
}

// heldRows are the input rows a split aggregation keeps until final:
// the group, the double arguments and whether some argument is NULL.
type heldRows struct {
	gids []int32
	vals [][]float64
	null []bool
	// xnull: whether the last argument alone is NULL (regr_slope and
	// regr_intercept keep the variance of x over the rows where x is set).
	xnull []bool
	done  bool
}

func newStatAcc(fn AggFunc, merge bool) *statAcc {
	sf := statFuncs[fn]
	return &statAcc{fn: fn, sf: sf, merge: merge, st: make([][]float64, len(sf.parts()))}
}

func (s *statAcc) resize(n int) { s.grow(nil, n) }

func (s *statAcc) grow(g *grower, n int) {
	for i := range s.st {
		s.st[i] = growZeroWith(g, s.st[i], n)
	}
}

func (s *statAcc) heapBytes() int64 {
	var b int64
	for _, p := range s.st {
		b += sliceBytes(p)
	}
	b += sliceBytes(s.held.gids) + sliceBytes(s.held.null) + sliceBytes(s.held.xnull)
	for _, v := range s.held.vals {
		b += sliceBytes(v)
	}
	return b
}

// float64Values returns the values of a double column.
func float64Values(a arrow.Array) ([]float64, error) {
	f, ok := a.(*array.Float64)
	if !ok {
		return nil, fmt.Errorf("vector: statistical aggregate over %s, not double: %w", TypeName(a.DataType()), ErrType)
	}
	return f.Float64Values(), nil
}

func (s *statAcc) update(gids []int32, args []arrow.Array) error {
	if s.merge {
		return s.mergeState(gids, args)
	}
	vals := make([][]float64, len(args))
	for i, a := range args {
		v, err := float64Values(a)
		if err != nil {
			return err
		}
		vals[i] = v
	}
	if s.split {
		if len(s.held.gids)+len(gids) <= maxSplitRows {
			return s.hold(gids, args, vals)
		}
		s.endSplit()
	}
	// skip[i]: some argument of row i is NULL.
	var skip []bool
	for _, a := range args {
		bm, off := validity(a)
		if bm == nil {
			continue
		}
		if skip == nil {
			skip = make([]bool, len(gids))
		}
		for i := range gids {
			if !bitSet(bm, off+i) {
				skip[i] = true
			}
		}
	}
	var xskip []bool
	if s.sf.fam == famRegr {
		if bm, off := validity(args[1]); bm != nil {
			xskip = make([]bool, len(gids))
			for i := range gids {
				xskip[i] = !bitSet(bm, off+i)
			}
		}
	}
	s.fold(gids, vals, skip, xskip)
	return nil
}

// fold updates the groups with rows of double arguments vals; skip marks
// the rows with a NULL argument, xskip those where x is NULL.
func (s *statAcc) fold(gids []int32, vals [][]float64, skip, xskip []bool) {
	switch s.sf.fam {
	case famMoment:
		x := vals[0]
		if s.sf.nargs == 2 {
			x = vals[s.sf.pick]
		}
		s.updateMoments(gids, x, skip, 0)
	case famCov, famCorr:
		s.updateCov(gids, vals[0], vals[1], skip)
	case famRegr:
		x, y := vals[1], vals[0] // regr_slope(y, x): covariance of (x, y)
		s.updateCov(gids, x, y, skip)
		// The variance of x counts the rows where x alone is non-null.
		s.updateMoments(gids, x, xskip, 4)
	}
}

// updateMoments folds values x into the moments kept from part p on (n,
// avg, m2[, m3[, m4]]), as CentralMomentAgg's update: the products are
// converted explicitly so that no multiply-add is fused.
func (s *statAcc) updateMoments(gids []int32, x []float64, skip []bool, p int) {
	ns, avgs, m2s := s.st[p], s.st[p+1], s.st[p+2]
	switch s.sf.order {
	case 3, 4:
		m3s := s.st[p+3]
		var m4s []float64
		if s.sf.order == 4 {
			m4s = s.st[p+4]
		}
		for i, g := range gids {
			if skip != nil && skip[i] {
				continue
			}
			n := ns[g] + 1.0
			delta := x[i] - avgs[g]
			deltaN := delta / n
			m2 := m2s[g] + float64(delta*(delta-deltaN))
			delta2 := float64(delta * delta)
			deltaN2 := float64(deltaN * deltaN)
			m3 := m3s[g] - float64(float64(3.0*deltaN)*m2) + float64(delta*(delta2-deltaN2))
			if m4s != nil {
				m4s[g] = m4s[g] - float64(float64(4.0*deltaN)*m3) - float64(float64(6.0*deltaN2)*m2) +
					float64(delta*(float64(delta*delta2)-float64(deltaN*deltaN2)))
			}
			ns[g], avgs[g], m2s[g], m3s[g] = n, avgs[g]+deltaN, m2, m3
		}
	default:
		for i, g := range gids {
			if skip != nil && skip[i] {
				continue
			}
			n := ns[g] + 1.0
			delta := x[i] - avgs[g]
			deltaN := delta / n
			ns[g], avgs[g], m2s[g] = n, avgs[g]+deltaN, m2s[g]+float64(delta*(delta-deltaN))
		}
	}
}

// updateCov folds pairs (x, y) into n, xavg, yavg, ck (and xmk, ymk for
// corr), as Covariance's and PearsonCorrelation's updates.
func (s *statAcc) updateCov(gids []int32, x, y []float64, skip []bool) {
	ns, xavgs, yavgs, cks := s.st[0], s.st[1], s.st[2], s.st[3]
	corr := s.sf.fam == famCorr
	var xmks, ymks []float64
	if corr {
		xmks, ymks = s.st[4], s.st[5]
	}
	for i, g := range gids {
		if skip != nil && skip[i] {
			continue
		}
		n := ns[g] + 1.0
		dx := x[i] - xavgs[g]
		dy := y[i] - yavgs[g]
		dxN := dx / n
		dyN := dy / n
		xavg := xavgs[g] + dxN
		yavg := yavgs[g] + dyN
		cks[g] += float64(dx * (y[i] - yavg))
		if corr {
			xmks[g] += float64(dx * (x[i] - xavg))
			ymks[g] += float64(dy * (y[i] - yavg))
		}
		ns[g], xavgs[g], yavgs[g] = n, xavg, yavg
	}
}

// mergeState folds partial state columns into the groups.
func (s *statAcc) mergeState(gids []int32, args []arrow.Array) error {
	cols := make([][]float64, len(args))
	for i, a := range args {
		v, err := float64Values(a)
		if err != nil {
			return err
		}
		if a.NullN() > 0 {
			return fmt.Errorf("vector: partial state of %s has NULLs: %w", s.fn, ErrType)
		}
		cols[i] = v
	}
	s.mergeCols(gids, cols)
	return nil
}

// mergeCols merges partial state (cols[part][row]) into the groups gids.
func (s *statAcc) mergeCols(gids []int32, cols [][]float64) {
	switch s.sf.fam {
	case famMoment:
		s.mergeMoments(gids, cols, 0)
	case famCov, famCorr:
		s.mergeCov(gids, cols)
	case famRegr:
		s.mergeCov(gids, cols[:4])
		s.mergeMoments(gids, cols, 4)
	}
}

// mergeMoments merges moments from part p on, as CentralMomentAgg's merge.
func (s *statAcc) mergeMoments(gids []int32, cols [][]float64, p int) {
	order := s.sf.order
	if s.sf.fam == famRegr {
		order = 2
	}
	for i, g := range gids {
		n1, n2 := s.st[p][g], cols[p][i]
		avg1, avg2 := s.st[p+1][g], cols[p+1][i]
		m2l, m2r := s.st[p+2][g], cols[p+2][i]
		n := n1 + n2
		delta := avg2 - avg1
		deltaN := 0.0
		if n != 0 {
			deltaN = delta / n
		}
		s.st[p][g] = n
		s.st[p+1][g] = avg1 + float64(deltaN*n2)
		s.st[p+2][g] = m2l + m2r + float64(float64(float64(delta*deltaN)*n1)*n2)
		if order >= 3 {
			m3l, m3r := s.st[p+3][g], cols[p+3][i]
			s.st[p+3][g] = m3l + m3r +
				float64(float64(float64(float64(float64(deltaN*deltaN)*delta)*n1)*n2)*(n1-n2)) +
				float64(float64(3.0*deltaN)*(float64(n1*m2r)-float64(n2*m2l)))
			if order >= 4 {
				m4l, m4r := s.st[p+4][g], cols[p+4][i]
				s.st[p+4][g] = m4l + m4r +
					float64(float64(float64(float64(float64(float64(deltaN*deltaN)*deltaN)*delta)*n1)*n2)*
						(float64(n1*n1)-float64(n1*n2)+float64(n2*n2))) +
					float64(float64(float64(6.0*deltaN)*deltaN)*(float64(float64(n1*n1)*m2r)+float64(float64(n2*n2)*m2l))) +
					float64(float64(4.0*deltaN)*(float64(n1*m3r)-float64(n2*m3l)))
			}
		}
	}
}

// mergeCov merges covariance state, as Covariance's and
// PearsonCorrelation's merges.
func (s *statAcc) mergeCov(gids []int32, cols [][]float64) {
	corr := s.sf.fam == famCorr
	for i, g := range gids {
		n1, n2 := s.st[0][g], cols[0][i]
		n := n1 + n2
		dx := cols[1][i] - s.st[1][g]
		dy := cols[2][i] - s.st[2][g]
		dxN, dyN := 0.0, 0.0
		if n != 0 {
			dxN, dyN = dx/n, dy/n
		}
		s.st[0][g] = n
		s.st[1][g] += float64(dxN * n2)
		s.st[2][g] += float64(dyN * n2)
		s.st[3][g] = s.st[3][g] + cols[3][i] + float64(float64(float64(dx*dyN)*n1)*n2)
		if corr {
			s.st[4][g] = s.st[4][g] + cols[4][i] + float64(float64(float64(dx*dxN)*n1)*n2)
			s.st[5][g] = s.st[5][g] + cols[5][i] + float64(float64(float64(dy*dyN)*n1)*n2)
		}
	}
}

// eval is the function's value for group g, or false for NULL.
func (s *statAcc) eval(g int) (float64, bool) {
	st := s.st
	n := st[0][g]
	if n == 0 {
		return 0, false
	}
	switch s.fn {
	case AggVarPop:
		return st[2][g] / n, true
	case AggVarSamp, AggVariance:
		if n == 1 {
			return 0, false
		}
		return st[2][g] / (n - 1.0), true
	case AggStddevPop:
		return math.Sqrt(st[2][g] / n), true
	case AggStddevSamp, AggStddev, AggStd:
		if n == 1 {
			return 0, false
		}
		return math.Sqrt(st[2][g] / (n - 1.0)), true
	case AggSkewness:
		m2 := st[2][g]
		if m2 == 0 {
			return 0, false
		}
		return float64(math.Sqrt(n)*st[3][g]) / math.Sqrt(float64(m2*m2)*m2), true
	case AggKurtosis:
		m2 := st[2][g]
		if m2 == 0 {
			return 0, false
		}
		return float64(n*st[4][g])/float64(m2*m2) - 3.0, true
	case AggRegrSXX, AggRegrSYY:
		return st[2][g], true
	case AggCovarPop:
		return st[3][g] / n, true
	case AggCovarSamp:
		if n == 1 {
			return 0, false
		}
		return st[3][g] / (n - 1.0), true
	case AggRegrSXY:
		return st[3][g], true
	case AggCorr:
		if n == 1 {
			return 0, false
		}
		return divOrNull(st[3][g], math.Sqrt(float64(st[4][g]*st[5][g])))
	case AggRegrR2:
		xmk, ymk := st[4][g], st[5][g]
		if xmk == 0 {
			return 0, false
		}
		if ymk == 0 {
			return 1.0, true
		}
		c, ok := divOrNull(st[3][g], math.Sqrt(float64(xmk*ymk)))
		return float64(c * c), ok
	case AggRegrSlope:
		return divOrNull(st[3][g], st[6][g])
	case AggRegrIntercept:
		slope, ok := divOrNull(st[3][g], st[6][g])
		if !ok {
			return 0, false
		}
		return st[2][g] - float64(slope*st[1][g]), true
	}
	return 0, false
}

// divOrNull is Spark's double division in these aggregates: NULL when the
// divisor is zero.
func divOrNull(a, b float64) (float64, bool) {
	if b == 0 {
		return 0, false
	}
	return a / b, true
}

func (s *statAcc) final(mem memory.Allocator, lo, hi int, _ []int64) (arrow.Array, error) {
	s.splitFold()
	out := make([]float64, hi-lo)
	valid := make([]bool, hi-lo)
	for g := lo; g < hi; g++ {
		out[g-lo], valid[g-lo] = s.eval(g)
	}
	return newFixedArray(mem, Float64, out, valid), nil
}

func (s *statAcc) state(mem memory.Allocator, lo, hi int, _ []int64) ([]arrow.Array, error) {
	s.splitFold()
	out := make([]arrow.Array, len(s.st))
	for i, p := range s.st {
		out[i] = newFixedArray(mem, Float64, p[lo:hi], nil)
	}
	return out, nil
}

func (s *statAcc) stateAt(mem memory.Allocator, gids []int32, _ []int64) ([]arrow.Array, error) {
	out := make([]arrow.Array, len(s.st))
	for i, p := range s.st {
		out[i] = newFixedArray(mem, Float64, gatherOf(p, gids), nil)
	}
	return out, nil
}

func (s *statAcc) reset(gids []int32) {
	for _, p := range s.st {
		for _, g := range gids {
			p[g] = 0
		}
	}
}

// maxSplitRows bounds the input rows a split aggregation holds (16 bytes
// and more per row, outside the accounted allocator): past it the rows
// held so far are folded in one pass and the rest of the input follows
// them, the answer Spark gives over one input slice. Spark's own answers
// depend on its partitioning in the last bits; the halves are kept only
// where holding the input costs little.
const maxSplitRows = 1 << 16

// endSplit folds the rows held so far, in order, and turns the split off:
// the following batches fold as they come.
func (s *statAcc) endSplit() {
	h := &s.held
	if len(h.gids) > 0 {
		s.fold(h.gids, h.vals, h.null, h.xnull)
	}
	h.gids, h.vals, h.null, h.xnull = nil, nil, nil, nil
	s.split = false
}

// hold keeps a batch of input rows for splitFold.
func (s *statAcc) hold(gids []int32, args []arrow.Array, vals [][]float64) error {
	h := &s.held
	if h.done {
		return fmt.Errorf("vector: %s: input after the result: %w", s.fn, ErrType)
	}
	if h.vals == nil {
		h.vals = make([][]float64, len(vals))
	}
	h.gids = append(h.gids, gids...)
	for i, v := range vals {
		h.vals[i] = append(h.vals[i], v[:len(gids)]...)
	}
	base := len(h.null)
	h.null = growZero(h.null, base+len(gids))
	h.xnull = growZero(h.xnull, base+len(gids))
	for k, a := range args {
		bm, off := validity(a)
		if bm == nil {
			continue
		}
		for i := range gids {
			if !bitSet(bm, off+i) {
				h.null[base+i] = true
				if k == len(args)-1 {
					h.xnull[base+i] = true
				}
			}
		}
	}
	return nil
}

// splitFold computes a complete aggregation's result as Spark's partial
// and final aggregation do over its input in two slices (a local
// relation's rows are split in two halves by position under Spark's
// default parallelism, and the golden answers are those): the rows of
// each half are folded into a partial buffer per group, then the final
// buffer of each group merges the buffers of the halves in which the
// group has rows (a global aggregation's in both). Besides being Spark's
// answer to the last bit, merging halves is more accurate than one
// Welford pass over all rows.
func (s *statAcc) splitFold() {
	h := &s.held
	if !s.split || h.done {
		return
	}
	h.done = true
	if h.vals == nil {
		h.vals = make([][]float64, s.sf.nargs) // no input rows
	}
	ngroups := len(s.st[0])
	half := len(h.gids) / 2
	var halves [2]*statAcc
	for k := range halves {
		lo, hi := 0, half
		if k == 1 {
			lo, hi = half, len(h.gids)
		}
		p := newStatAcc(s.fn, false)
		p.resize(ngroups)
		vals := make([][]float64, len(h.vals))
		for i, v := range h.vals {
			vals[i] = v[lo:hi]
		}
		p.fold(h.gids[lo:hi], vals, h.null[lo:hi], h.xnull[lo:hi])
		halves[k] = p
	}
	// The groups present in each half (a group merges only the partial
	// buffers that exist for it; a global aggregation has one in both).
	global := ngroups == 1
	for k, p := range halves {
		lo, hi := 0, half
		if k == 1 {
			lo, hi = half, len(h.gids)
		}
		seen := make([]bool, ngroups)
		for _, g := range h.gids[lo:hi] {
			seen[g] = true
		}
		var gids []int32
		var idx []int32
		for g := 0; g < ngroups; g++ {
			if seen[g] || global {
				gids = append(gids, int32(g))
				idx = append(idx, int32(g))
			}
		}
		cols := make([][]float64, len(p.st))
		for i, part := range p.st {
			cols[i] = gatherOf(part, idx)
		}
		if k == 0 {
			for _, part := range s.st {
				clear(part)
			}
		}
		s.mergeCols(gids, cols)
	}
	h.gids, h.vals, h.null, h.xnull = nil, nil, nil, nil
}
