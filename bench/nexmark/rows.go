package nexmark

import (
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// Answers are compared as sorted lists of canonical rows: each value
// formatted by its type (integers and timestamps in decimal, timestamps in
// microseconds, decimals with their scale, doubles to 9 significant digits,
// since summation order may change the last bits), joined by '|'.

func fmtInt(v int64) string { return strconv.FormatInt(v, 10) }

func fmtFloat(v float64) string { return strconv.FormatFloat(v, 'g', 9, 64) }

// fmtDecimal formats an unscaled value with scale digits after the point.
func fmtDecimal(unscaled int64, scale int) string {
	neg := unscaled < 0
	if neg {
		unscaled = -unscaled
	}
	s := strconv.FormatInt(unscaled, 10)
	for len(s) <= scale {
		s = "0" + s
	}
	s = s[:len(s)-scale] + "." + s[len(s)-scale:]
	if neg {
		s = "-" + s
	}
	return s
}

func row(vals ...string) string { return strings.Join(vals, "|") }

// canonRows formats every row of recs.
func canonRows(recs []arrow.Record) ([]string, error) {
	var out []string
	vals := []string{}
	for _, rec := range recs {
		for i := range int(rec.NumRows()) {
			vals = vals[:0]
			for c := range int(rec.NumCols()) {
				v, err := canonValue(rec.Column(c), i)
				if err != nil {
					return nil, fmt.Errorf("column %s: %w", rec.Schema().Field(c).Name, err)
				}
				vals = append(vals, v)
			}
			out = append(out, row(vals...))
		}
	}
	slices.Sort(out)
	return out, nil
}

func canonValue(arr arrow.Array, i int) (string, error) {
	if arr.IsNull(i) {
		return "NULL", nil
	}
	switch a := arr.(type) {
	case *array.Int64:
		return fmtInt(a.Value(i)), nil
	case *array.Int32:
		return fmtInt(int64(a.Value(i))), nil
	case *array.Timestamp:
		return fmtInt(int64(a.Value(i))), nil
	case *array.Float64:
		return fmtFloat(a.Value(i)), nil
	case *array.String:
		return a.Value(i), nil
	case *array.Boolean:
		return strconv.FormatBool(a.Value(i)), nil
	case *array.Decimal128:
		return a.Value(i).ToString(a.DataType().(*arrow.Decimal128Type).Scale), nil
	case *array.Dictionary:
		return canonValue(a.Dictionary(), a.GetValueIndex(i))
	case *array.Struct:
		parts := make([]string, a.NumField())
		for f := range a.NumField() {
			v, err := canonValue(a.Field(f), i)
			if err != nil {
				return "", err
			}
			parts[f] = v
		}
		return "{" + strings.Join(parts, ",") + "}", nil
	}
	return "", fmt.Errorf("no canonical form for %s", arr.DataType())
}

// diffRows describes how got differs from want (both sorted), or returns
// "" when they are equal.
func diffRows(got, want []string) string {
	if slices.Equal(got, want) {
		return ""
	}
	var missing, extra []string
	i, j := 0, 0
	for i < len(got) || j < len(want) {
		switch {
		case j == len(want) || (i < len(got) && got[i] < want[j]):
			extra = append(extra, got[i])
			i++
		case i == len(got) || want[j] < got[i]:
			missing = append(missing, want[j])
			j++
		default:
			i++
			j++
		}
	}
	head := func(s []string) []string { return s[:min(len(s), 3)] }
	return fmt.Sprintf("%d rows, want %d: %d missing (first %q), %d unexpected (first %q)",
		len(got), len(want), len(missing), head(missing), len(extra), head(extra))
}
