package rate

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
)

// A rate source's offset is, as in Spark, the whole seconds since the
// query started ("12": the rows of seconds 0–11). An epoch bounded by
// maxRowsPerTrigger may end inside a second whose rows do not all fit:
// its end offset is then [12,300], the rows of seconds 0–11 and the
// first 300 rows of second 12 (a JSON array: the offset log keeps only
// single-line JSON offsets). The offset log records that end, so a
// restart resumes at the same row; offsets of whole seconds (every
// offset written before this form existed) keep their meaning. The form
// "12+300", which the offset log refused, is still read.

// ratePos is a position in the source's rows: s whole seconds and r rows
// of the next one (0 <= r < that second's rows).
type ratePos struct{ s, r int64 }

// parseRateOffset reads "S", "[S,R]" or "S+R"; a nil offset is the start.
func parseRateOffset(o stream.Offset) (ratePos, error) {
	if o == nil {
		return ratePos{}, nil
	}
	text := strings.TrimSpace(string(o))
	sep := "+"
	if inner, ok := strings.CutPrefix(text, "["); ok {
		inner, ok = strings.CutSuffix(inner, "]")
		if !ok {
			return ratePos{}, fmt.Errorf("offset %q: not a second or [second,rows]", o)
		}
		text, sep = strings.ReplaceAll(inner, " ", ""), ","
	}
	sec, rows, partial := strings.Cut(text, sep)
	s, err := strconv.ParseInt(sec, 10, 64)
	if err != nil {
		return ratePos{}, fmt.Errorf("offset %q: not a second or second+rows: %w", o, err)
	}
	var r int64
	if partial {
		if r, err = strconv.ParseInt(rows, 10, 64); err != nil || r < 0 {
			return ratePos{}, fmt.Errorf("offset %q: bad row count %q", o, rows)
		}
	}
	return ratePos{s: max(s, 0), r: r}, nil
}

// offset formats p ("S" when it is a whole second, else "[S,R]").
func (p ratePos) offset() stream.Offset {
	if p.r == 0 {
		return stream.Offset(strconv.FormatInt(p.s, 10))
	}
	return stream.Offset("[" + strconv.FormatInt(p.s, 10) + "," + strconv.FormatInt(p.r, 10) + "]")
}

// value is the number of rows before p.
func (r *RateSource) value(p ratePos) int64 {
	return valueAtSecond(p.s, r.opts.RowsPerSecond, r.rampUpSecs) + p.r
}

// posOf is the position of row value v, searching seconds in [lo, hi]
// (valueAtSecond(lo) <= v).
func (r *RateSource) posOf(v, lo, hi int64) ratePos {
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		if valueAtSecond(mid, r.opts.RowsPerSecond, r.rampUpSecs) <= v {
			lo = mid
		} else {
			hi = mid - 1
		}
	}
	return ratePos{s: lo, r: v - valueAtSecond(lo, r.opts.RowsPerSecond, r.rampUpSecs)}
}

// msAt is the time of position p in milliseconds since the start: second
// s plus the share of second s+1 its r rows take.
func (r *RateSource) msAt(p ratePos) float64 {
	ms := float64(p.s * 1000)
	if p.r > 0 {
		inSecond := valueAtSecond(p.s+1, r.opts.RowsPerSecond, r.rampUpSecs) - valueAtSecond(p.s, r.opts.RowsPerSecond, r.rampUpSecs)
		ms += float64(p.r) * 1000 / float64(inSecond)
	}
	return ms
}
