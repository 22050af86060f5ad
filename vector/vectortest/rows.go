package vectortest

import (
	"fmt"
	"slices"
	"sort"
	"strings"
	"time"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
)

// RowsOf reads records back as rows of normalized values (see
// Normalizer and Normalize).
func RowsOf(recs ...arrow.Record) []Row { return Rows[Row](Normalizer{}, recs...) }

// ValuesOf reads an array as normalized values.
func ValuesOf(arr arrow.Array) []any {
	out := make([]any, arr.Len())
	for i := range out {
		out[i] = Normalizer{}.Value(vector.ValueAt(arr, i), arr.DataType())
	}
	return out
}

// Normalize maps a Go value to the form results are compared in: every
// integer kind (and arrow.Timestamp, arrow.Date32) becomes int64, float32
// becomes float64, []byte becomes string, slices are normalized element by
// element. Decimals read from arrays are compared as their decimal string
// ("12.30" for decimal(4,2)); write expected decimals that way.
func Normalize(v any) any {
	switch x := v.(type) {
	case int:
		return int64(x)
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case uint8:
		return int64(x)
	case uint16:
		return int64(x)
	case uint32:
		return int64(x)
	case arrow.Timestamp:
		return int64(x)
	case arrow.Date32:
		return int64(x)
	case float32:
		return float64(x)
	case []byte:
		return string(x)
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = Normalize(x[i])
		}
		return out
	case Row:
		return Normalize([]any(x))
	}
	return v
}

// ValueEqual compares two normalized values; floats compare with a relative
// tolerance of 1e-9 (sums in another order differ in the last bits) and NaN
// equals NaN.
func ValueEqual(a, b any) bool {
	a, b = Normalize(a), Normalize(b)
	switch x := a.(type) {
	case float64:
		y, ok := b.(float64)
		return ok && FloatsEqual(x, y)
	case []any:
		y, ok := b.([]any)
		return ok && slices.EqualFunc(x, y, ValueEqual)
	case vector.MapValue:
		y, ok := b.(vector.MapValue)
		return ok && slices.EqualFunc(x.Keys, y.Keys, ValueEqual) && slices.EqualFunc(x.Values, y.Values, ValueEqual)
	}
	return a == b
}

// RowsEqual compares rows in order.
func RowsEqual(want, got []Row) bool {
	return slices.EqualFunc(want, got, func(w, g Row) bool { return ValueEqual([]any(w), []any(g)) })
}

// SortRows returns a copy of rows in a canonical order (by rendering), so
// that two multisets can be compared with RowsEqual.
func SortRows(rows []Row) []Row {
	out := append([]Row(nil), rows...)
	keys := make(map[int]string, len(out))
	idx := make([]int, len(out))
	for i := range out {
		idx[i] = i
		keys[i] = renderKey(Normalize(out[i]))
	}
	sort.SliceStable(idx, func(a, b int) bool { return keys[idx[a]] < keys[idx[b]] })
	sorted := make([]Row, len(out))
	for i, j := range idx {
		sorted[i] = out[j]
	}
	return sorted
}

func renderKey(v any) string {
	switch x := v.(type) {
	case float64:
		return fmt.Sprintf("f%.9g", x)
	case []any:
		parts := make([]string, len(x))
		for i := range x {
			parts[i] = renderKey(x[i])
		}
		return "[" + strings.Join(parts, "|") + "]"
	case nil:
		return "\x00null"
	}
	return fmt.Sprintf("%T:%v", v, v)
}

// FormatRows renders rows one per line for failure messages.
func FormatRows(rows []Row) string {
	var b strings.Builder
	for _, r := range rows {
		b.WriteString("  ")
		for i, v := range r {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(formatValue(Normalize(v)))
		}
		b.WriteString("\n")
	}
	if len(rows) == 0 {
		b.WriteString("  (no rows)\n")
	}
	return b.String()
}

func formatValue(v any) string { return ValueFormat{Open: "{", Close: "}"}.Format(v) }

// ValueFormat renders values in failure messages: NULL for nil, strings
// quoted, times in RFC 3339 UTC with microseconds, nested values ([]any)
// between Open and Close, separated by ", "; anything else as fmt.Sprint
// does. The vector harness writes nested values as {…}, streamtest as […].
type ValueFormat struct{ Open, Close string }

// Format renders v.
func (f ValueFormat) Format(v any) string {
	switch x := v.(type) {
	case nil:
		return "NULL"
	case string:
		return fmt.Sprintf("%q", x)
	case time.Time:
		return x.UTC().Format("2006-01-02T15:04:05.999999Z")
	case []any:
		parts := make([]string, len(x))
		for i := range x {
			parts[i] = f.Format(x[i])
		}
		return f.Open + strings.Join(parts, ", ") + f.Close
	}
	return fmt.Sprint(v)
}
