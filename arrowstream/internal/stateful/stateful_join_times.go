package stateful

import (
	"math"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// joinTimes are the event times (µs) of a column, read once per column
// rather than through an interface call per row: a timestamp column, or
// the end of a window struct, as timeAt reads them.
type joinTimes struct {
	ts    []arrow.Timestamp
	valid []bool // nil: every row has a time
}

// at is row i's time, false when it has none.
func (t joinTimes) at(i int) (int64, bool) {
	if t.valid != nil && !t.valid[i] {
		return 0, false
	}
	return int64(t.ts[i]), true
}

// timesOf reads a's times; a nil or untimed column has none.
func timesOf(a arrow.Array) joinTimes {
	if a == nil {
		return joinTimes{}
	}
	n := a.Len()
	var ts *array.Timestamp
	switch c := a.(type) {
	case *array.Timestamp:
		ts = c
	case *array.Struct:
		if c.NumField() >= 2 {
			ts, _ = c.Field(1).(*array.Timestamp)
		}
	}
	if ts == nil {
		return joinTimes{ts: make([]arrow.Timestamp, n), valid: make([]bool, n)}
	}
	out := joinTimes{ts: ts.TimestampValues()}
	if a.NullN() > 0 || (arrow.Array(ts) != a && ts.NullN() > 0) {
		out.valid = make([]bool, n)
		for i := range out.valid {
			out.valid[i] = a.IsValid(i) && ts.IsValid(i)
		}
	}
	return out
}

// noneLate reports whether every row of the timestamp column a has a time
// after late (µs); false for any other column or when a row has no time
// (the row-by-row filter then decides).
func noneLate(a arrow.Array, late int64) bool {
	ts, ok := a.(*array.Timestamp)
	if !ok || ts.NullN() > 0 {
		return false
	}
	lo := int64(math.MaxInt64)
	for _, t := range ts.TimestampValues() {
		lo = min(lo, int64(t))
	}
	return lo > late
}
