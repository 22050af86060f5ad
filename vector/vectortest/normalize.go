package vectortest

import (
	"math"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/decimal128"

	"github.com/arrowstream/arrowstream/vector"
)

// Normalizer turns values read from arrays (vector.ValueAt) into the
// form test harnesses compare: decimals as their decimal string ("12.30"
// for decimal(4,2)), structs and lists as []any of normalized values, and
// every other value as Normalize makes it. It is the one normalizer of
// the vector harness (RowsOf, ValuesOf) and of streamtest's sink checks.
type Normalizer struct {
	// Times reads timestamps and dates as time.Time in UTC (streamtest,
	// whose expected rows are written as times); otherwise they are their
	// int64 count of the type's units (days for dates), as Normalize
	// makes them.
	Times bool
}

// Value normalizes v, read from an array of type dt.
func (n Normalizer) Value(v any, dt arrow.DataType) any {
	if v == nil {
		return nil
	}
	switch t := vector.Unwrap(dt).(type) {
	case *arrow.TimestampType:
		if ts, ok := v.(arrow.Timestamp); ok && n.Times {
			return ts.ToTime(t.Unit).UTC()
		}
	case *arrow.Date32Type:
		if d, ok := v.(arrow.Date32); ok && n.Times {
			return d.ToTime().UTC()
		}
	case *arrow.Decimal128Type:
		if d, ok := v.(decimal128.Num); ok {
			return d.ToString(t.Scale)
		}
	case *arrow.StructType:
		if vs, ok := v.([]any); ok {
			out := make([]any, len(vs))
			for i := range vs {
				out[i] = n.Value(vs[i], t.Field(i).Type)
			}
			return out
		}
	case *arrow.ListType:
		if vs, ok := v.([]any); ok {
			out := make([]any, len(vs))
			for i := range vs {
				out[i] = n.Value(vs[i], t.Elem())
			}
			return out
		}
	}
	return Normalize(v)
}

// Rows reads records as rows of values normalized by n.
func Rows[R ~[]any](n Normalizer, recs ...arrow.Record) []R {
	var out []R
	for _, rec := range recs {
		for r := 0; r < int(rec.NumRows()); r++ {
			row := make(R, rec.NumCols())
			for c, col := range rec.Columns() {
				row[c] = n.Value(vector.ValueAt(col, r), col.DataType())
			}
			out = append(out, row)
		}
	}
	return out
}

// FloatsEqual compares floats as the harnesses do: with a relative
// tolerance of 1e-9 (sums in another order differ in the last bits), and
// NaN equal to NaN.
func FloatsEqual(a, b float64) bool {
	if math.IsNaN(a) || math.IsNaN(b) {
		return math.IsNaN(a) && math.IsNaN(b)
	}
	return a == b || math.Abs(a-b) <= 1e-9*math.Max(math.Abs(a), math.Abs(b))
}
