package vector

import (
	"encoding/binary"
	"fmt"
	"math"
	"slices"
)

// gkSummary is Spark's QuantileSummaries: the Greenwald-Khanna summary
// with a head buffer, which percentile_approx keeps per group. The same
// algorithm step for step (head buffer of 50000, compression once 10000
// samples are held, merge thresholds 2·ε·n), so that answers equal
// Spark's: exact while no sample carries an uncertainty (2·ε·n < 1, so
// n < 5000 at the default accuracy), within ε·n ranks beyond.
type gkSummary struct {
	relErr     float64
	sampled    []gkStats
	count      int64
	head       []float64
	compressed bool
}

// gkStats is one sample: its value, the rank gap to the previous sample
// and the rank uncertainty.
type gkStats struct {
	v        float64
	g, delta int64
}

const (
	gkCompressThreshold = 10000
	gkHeadSize          = 50000
)

// newGKSummary is an empty summary of relative error relErr (a
// PercentileDigest's starts compressed).
func newGKSummary(relErr float64) *gkSummary {
	return &gkSummary{relErr: relErr, compressed: true}
}

// javaDoubleCompare orders doubles as java.lang.Double.compare, as Scala
// sorts an Array[Double]: -0.0 before 0.0, NaN last.
func javaDoubleCompare(x, y float64) int {
	switch {
	case x < y:
		return -1
	case x > y:
		return 1
	}
	xb, yb := int64(math.Float64bits(x)), int64(math.Float64bits(y))
	if math.IsNaN(x) {
		xb = 0x7ff8000000000000
	}
	if math.IsNaN(y) {
		yb = 0x7ff8000000000000
	}
	switch {
	case xb < yb:
		return -1
	case xb > yb:
		return 1
	}
	return 0
}

func (s *gkSummary) insert(x float64) {
	s.head = append(s.head, x)
	s.compressed = false
	if len(s.head) >= gkHeadSize {
		s.insertHead()
		if len(s.sampled) >= gkCompressThreshold {
			s.compress()
		}
	}
}

// insertHead merges the sorted head buffer into the samples.
func (s *gkSummary) insertHead() {
	if len(s.head) == 0 {
		return
	}
	sorted := s.head
	slices.SortFunc(sorted, javaDoubleCompare)
	cur := s.count
	out := make([]gkStats, 0, len(s.sampled)+len(sorted))
	si := 0
	for oi, x := range sorted {
		for si < len(s.sampled) && s.sampled[si].v <= x {
			out = append(out, s.sampled[si])
			si++
		}
		cur++
		var delta int64
		if len(out) > 0 && !(si == len(s.sampled) && oi == len(sorted)-1) {
			delta = int64(math.Floor(2 * s.relErr * float64(cur)))
		}
		out = append(out, gkStats{v: x, g: 1, delta: delta})
	}
	out = append(out, s.sampled[si:]...)
	s.sampled, s.count, s.head, s.compressed = out, cur, s.head[:0], false
}

func (s *gkSummary) compress() {
	s.insertHead()
	s.sampled = gkCompress(s.sampled, 2*s.relErr*float64(s.count))
	s.compressed = true
}

// gkCompress is Spark's compressImmut: from the last sample backwards,
// samples whose gaps fit under the threshold are merged into the next.
func gkCompress(cur []gkStats, threshold float64) []gkStats {
	if len(cur) == 0 {
		return nil
	}
	var rev []gkStats
	head := cur[len(cur)-1]
	for i := len(cur) - 2; i >= 1; i-- {
		s := cur[i]
		if float64(s.g+head.g+head.delta) < threshold {
			head.g += s.g
		} else {
			rev = append(rev, head)
			head = s
		}
	}
	rev = append(rev, head)
	if cur[0].v <= head.v && len(cur) > 1 {
		rev = append(rev, cur[0])
	}
	slices.Reverse(rev)
	return rev
}

// merge folds other (compressed) into s, as PercentileDigest.merge.
func (s *gkSummary) merge(o *gkSummary) {
	if !s.compressed {
		s.compress()
	}
	if !o.compressed {
		o.compress()
	}
	switch {
	case o.count == 0:
		return
	case s.count == 0:
		s.relErr, s.sampled, s.count, s.compressed = o.relErr, slices.Clone(o.sampled), o.count, o.compressed
		return
	}
	relErr := max(s.relErr, o.relErr)
	count := s.count + o.count
	addSelf := int64(math.Floor(2 * o.relErr * float64(o.count)))
	addOther := int64(math.Floor(2 * s.relErr * float64(s.count)))
	out := make([]gkStats, 0, len(s.sampled)+len(o.sampled))
	i, j := 0, 0
	for i < len(s.sampled) && j < len(o.sampled) {
		a, b := s.sampled[i], o.sampled[j]
		if a.v < b.v {
			i++
			if j > 0 {
				a.delta += addSelf
			}
			out = append(out, a)
		} else {
			j++
			if i > 0 {
				b.delta += addOther
			}
			out = append(out, b)
		}
	}
	out = append(out, s.sampled[i:]...)
	out = append(out, o.sampled[j:]...)
	s.sampled = gkCompress(out, 2*relErr*float64(count))
	s.relErr, s.count, s.compressed = relErr, count, true
}

// query returns the approximate percentiles (nil for an empty summary).
func (s *gkSummary) query(pcts []float64) []float64 {
	if !s.compressed {
		s.compress()
	}
	if s.count == 0 || len(s.sampled) == 0 || len(pcts) == 0 {
		return nil
	}
	maxGD := int64(math.MinInt64)
	for _, st := range s.sampled {
		maxGD = max(maxGD, st.delta+st.g)
	}
	targetError := float64(maxGD / 2)
	order := make([]int, len(pcts))
	for i := range order {
		order[i] = i
	}
	slices.SortStableFunc(order, func(a, b int) int { return javaDoubleCompare(pcts[a], pcts[b]) })
	out := make([]float64, len(pcts))
	index, minRank := 0, s.sampled[0].g
	for _, pos := range order {
		p := pcts[pos]
		switch {
		case p <= s.relErr:
			out[pos] = s.sampled[0].v
		case p >= 1-s.relErr:
			out[pos] = s.sampled[len(s.sampled)-1].v
		default:
			var v float64
			index, minRank, v = s.find(index, minRank, targetError, p)
			out[pos] = v
		}
	}
	return out
}

// find is Spark's findApproxQuantile.
func (s *gkSummary) find(index int, minRank int64, targetError, p float64) (int, int64, float64) {
	cur := s.sampled[index]
	rank := int64(math.Ceil(p * float64(s.count)))
	for i := index; i < len(s.sampled)-1; {
		maxRank := minRank + cur.delta
		if float64(maxRank)-targetError <= float64(rank) && float64(rank) <= float64(minRank)+targetError {
			return i, minRank, cur.v
		}
		i++
		cur = s.sampled[i]
		minRank += cur.g
	}
	return len(s.sampled) - 1, 0, s.sampled[len(s.sampled)-1].v
}

// appendBinary serializes the summary (compressed) as Spark's digest
// serializer lays it out: relative error, count, samples.
func (s *gkSummary) appendBinary(b []byte) []byte {
	if !s.compressed {
		s.compress()
	}
	b = binary.BigEndian.AppendUint64(b, math.Float64bits(s.relErr))
	b = binary.BigEndian.AppendUint64(b, uint64(s.count))
	b = binary.BigEndian.AppendUint32(b, uint32(len(s.sampled)))
	for _, st := range s.sampled {
		b = binary.BigEndian.AppendUint64(b, math.Float64bits(st.v))
		b = binary.BigEndian.AppendUint64(b, uint64(st.g))
		b = binary.BigEndian.AppendUint64(b, uint64(st.delta))
	}
	return b
}

// decodeGKSummary reads a summary written by appendBinary.
func decodeGKSummary(b []byte) (*gkSummary, error) {
	if len(b) < 20 {
		return nil, fmt.Errorf("vector: percentile_approx state of %d bytes: %w", len(b), ErrType)
	}
	s := &gkSummary{compressed: true}
	s.relErr = math.Float64frombits(binary.BigEndian.Uint64(b))
	s.count = int64(binary.BigEndian.Uint64(b[8:]))
	n := int(binary.BigEndian.Uint32(b[16:]))
	b = b[20:]
	if n < 0 || len(b) != n*24 {
		return nil, fmt.Errorf("vector: percentile_approx state with %d samples in %d bytes: %w", n, len(b), ErrType)
	}
	s.sampled = make([]gkStats, n)
	for i := range s.sampled {
		s.sampled[i] = gkStats{v: math.Float64frombits(binary.BigEndian.Uint64(b)),
			g: int64(binary.BigEndian.Uint64(b[8:])), delta: int64(binary.BigEndian.Uint64(b[16:]))}
		b = b[24:]
	}
	return s, nil
}
