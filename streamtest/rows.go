package streamtest

import (
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strings"
	"time"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/vector/vectortest"
)

// snapshotRows reads a sink snapshot as rows and releases it.
func snapshotRows(snap *memsink.Snapshot) []Row {
	defer snap.Release()
	return recordRows(snap.Records()...)
}

// recordRows reads records as rows of canonical values (the shared
// vectortest.Normalizer with times): integers as int64, floats as
// float64, timestamps as time.Time (UTC), dates as time.Time, decimals as
// their decimal string, structs and lists as []any.
func recordRows(recs ...arrow.Record) []Row {
	return vectortest.Rows[Row](vectortest.Normalizer{Times: true}, recs...)
}

// number is a value that compares numerically.
type number struct {
	i     int64
	f     float64
	float bool
}

// toNumber reads any integer or float kind (and json.Number, as expected
// values are decoded) as a number.
func toNumber(v any) (number, bool) {
	switch x := v.(type) {
	case int:
		return number{i: int64(x)}, true
	case int8:
		return number{i: int64(x)}, true
	case int16:
		return number{i: int64(x)}, true
	case int32:
		return number{i: int64(x)}, true
	case int64:
		return number{i: x}, true
	case uint8:
		return number{i: int64(x)}, true
	case uint16:
		return number{i: int64(x)}, true
	case uint32:
		return number{i: int64(x)}, true
	case float32:
		return number{f: float64(x), float: true}, true
	case float64:
		return number{f: x, float: true}, true
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return number{i: i}, true
		}
		if f, err := x.Float64(); err == nil {
			return number{f: f, float: true}, true
		}
	}
	return number{}, false
}

func (n number) float64() float64 {
	if n.float {
		return n.f
	}
	return float64(n.i)
}

// valueEqual compares an expected value with an actual (canonical) one.
func valueEqual(want, got any) bool {
	if want == nil || got == nil {
		return want == nil && got == nil
	}
	if t, ok := got.(time.Time); ok {
		switch w := want.(type) {
		case time.Time:
			return t.Equal(w)
		default:
			// A number is seconds since the Unix epoch.
			n, ok := toNumber(want)
			if !ok {
				return false
			}
			if !n.float {
				return t.UnixMicro() == n.i*1_000_000
			}
			return t.UnixMicro() == int64(math.Round(n.f*1e6))
		}
	}
	if wn, ok := toNumber(want); ok {
		gn, ok := toNumber(got)
		if !ok {
			return false
		}
		if !wn.float && !gn.float {
			return wn.i == gn.i
		}
		return vectortest.FloatsEqual(wn.float64(), gn.float64())
	}
	switch w := want.(type) {
	case []any:
		g, ok := got.([]any)
		return ok && slices.EqualFunc(w, g, valueEqual)
	case []byte:
		g, ok := got.(string)
		return ok && g == string(w)
	}
	return want == got
}

func rowEqual(want, got Row) bool { return valueEqual([]any(want), []any(got)) }

// compareRows compares expected and actual rows (in order, or as
// multisets) and describes the first difference, "" when equal.
func compareRows(want, got []Row, ordered bool) string {
	if ordered {
		for i := 0; i < len(want) && i < len(got); i++ {
			if !rowEqual(want[i], got[i]) {
				return fmt.Sprintf("row %d is %s, want %s", i, FormatRow(got[i]), FormatRow(want[i]))
			}
		}
		switch {
		case len(got) > len(want):
			return fmt.Sprintf("unexpected row %d %s (got %d rows, want %d)", len(want), FormatRow(got[len(want)]), len(got), len(want))
		case len(got) < len(want):
			return fmt.Sprintf("missing row %d %s (got %d rows, want %d)", len(got), FormatRow(want[len(got)]), len(got), len(want))
		}
		return ""
	}
	used := make([]bool, len(got))
	var missing []Row
	for _, w := range want {
		found := false
		for j, g := range got {
			if !used[j] && rowEqual(w, g) {
				used[j], found = true, true
				break
			}
		}
		if !found {
			missing = append(missing, w)
		}
	}
	var extra []Row
	for j, g := range got {
		if !used[j] {
			extra = append(extra, g)
		}
	}
	var parts []string
	if len(missing) > 0 {
		parts = append(parts, "missing "+formatRowList(missing))
	}
	if len(extra) > 0 {
		parts = append(parts, "unexpected "+formatRowList(extra))
	}
	return strings.Join(parts, "; ")
}

func formatRowList(rows []Row) string {
	const max = 5
	parts := make([]string, 0, min(len(rows), max))
	for i, r := range rows {
		if i == max {
			parts = append(parts, fmt.Sprintf("... (%d more)", len(rows)-max))
			break
		}
		parts = append(parts, FormatRow(r))
	}
	return strings.Join(parts, ", ")
}

// FormatRow renders a row as [v1, v2, ...] (timestamps in RFC 3339 UTC,
// strings quoted, NULL for nil).
func FormatRow(r Row) string { return formatValue([]any(r)) }

// FormatRows renders rows one per line, indented.
func FormatRows(rows []Row) string {
	if len(rows) == 0 {
		return "    (no rows)\n"
	}
	var b strings.Builder
	for _, r := range rows {
		fmt.Fprintf(&b, "    %s\n", FormatRow(r))
	}
	return b.String()
}

func formatValue(v any) string { return vectortest.ValueFormat{Open: "[", Close: "]"}.Format(v) }
