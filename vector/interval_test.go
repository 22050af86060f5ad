package vector_test

import (
	"errors"
	"math"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

func TestParseInterval(t *testing.T) {
	const sec = int64(1_000_000)
	good := map[string]int64{
		"10 seconds":                    sec * 10,
		"10 second":                     sec * 10,
		"1 minute":                      60 * sec,
		"1 hour 30 minutes":             90 * 60 * sec,
		"INTERVAL 10 SECONDS":           10 * sec,
		"interval '10' second":          10 * sec,
		"INTERVAL '1 day 2 hours'":      26 * 3600 * sec,
		"2 weeks":                       14 * 86400 * sec,
		"1.5 seconds":                   1_500_000,
		"-10 seconds":                   -10 * sec,
		"3 milliseconds 4 microseconds": 3004,
		"  1   Hour ":                   3600 * sec,
	}
	for s, want := range good {
		got, err := vector.ParseInterval(s)
		if err != nil || got != want {
			t.Errorf("ParseInterval(%q) = %d, %v; want %d", s, got, err, want)
		}
	}
	bad := map[string]string{
		"":                     "empty interval",
		"interval":             "empty interval",
		"1 month":              "Intervals greater than a month is not supported",
		"2 years":              "Intervals greater than a month is not supported",
		"10":                   "pairs of a number and a unit",
		"ten seconds":          "is not a number",
		"10 fortnights":        "unknown unit",
		"--1 second":           "is not a number",
		"99999999999999 weeks": "out of range",
	}
	for s, want := range bad {
		_, err := vector.ParseInterval(s)
		if err == nil || !strings.Contains(err.Error(), want) || !errors.Is(err, vector.ErrInterval) {
			t.Errorf("ParseInterval(%q) error = %v, want %q", s, err, want)
		}
	}
}

func TestFormatInterval(t *testing.T) {
	for micros, want := range map[int64]string{
		0:              "0 seconds",
		10_000_000:     "10 seconds",
		5_400_000_000:  "1 hours 30 minutes",
		90_061_500_000: "1 days 1 hours 1 minutes 1.5 seconds",
		-1_000_000:     "-1 seconds",
		math.MinInt64:  "-106751991 days -4 hours -54.775808 seconds",
	} {
		if got := vector.FormatInterval(micros); got != want {
			t.Errorf("FormatInterval(%d) = %q, want %q", micros, got, want)
		}
	}
}

func TestTimestampAddInterval(t *testing.T) {
	s := schemaOf("ts", vector.Timestamp)
	vt.RunExpr(t,
		vt.ExprCase{Name: "minus-10s", Schema: s, Rows: column(tsMicros("2026-01-01 00:00:05")),
			Expr: vector.TimestampAddInterval(vector.Col("ts"), -10_000_000), Want: []any{tsMicros("2025-12-31 23:59:55")}, WantType: vector.Timestamp, NullIntolerant: true},
		vt.ExprCase{Name: "plus", Schema: s, Rows: column(0, 1),
			Expr: vector.TimestampAddInterval(vector.Col("ts"), 3_600_000_000), Want: []any{3_600_000_000, 3_600_000_001}, NullIntolerant: true},
		vt.ExprCase{Name: "overflow", Schema: s, Rows: column(int64(math.MaxInt64 - 5)),
			Expr: vector.TimestampAddInterval(vector.Col("ts"), 10), WantErr: "arithmetic overflow"},
		vt.ExprCase{Name: "date", Schema: schemaOf("d", vector.Date), Rows: column(arrow.Date32(1)),
			Expr: vector.TimestampAddInterval(vector.Col("d"), 1), Want: []any{86_400_000_001}, NullIntolerant: true},
		vt.ExprCase{Name: "constant", Schema: s, Rows: column(1),
			Expr: vector.TimestampAddInterval(vector.Lit("2026-01-01"), -1), Want: []any{tsMicros("2025-12-31 23:59:59.999999")}},
		vt.ExprCase{Name: "bad-type", Schema: schemaOf("x", vector.Int64), Rows: column(1),
			Expr: vector.TimestampAddInterval(vector.Col("x"), 1), WantErr: "cannot bind (x + INTERVAL '0.000001 seconds'): cannot add an interval to bigint"},
	)
	if got := vector.TimestampAddInterval(vector.Col("ts"), -10_000_000).String(); got != "(ts - INTERVAL '10 seconds')" {
		t.Errorf("String = %q", got)
	}
}

func TestIntervalLiteral(t *testing.T) {
	mem := vt.NewAllocator(t)
	lit := vector.IntervalLit(90_000_000)
	if lit.String() != "INTERVAL '1 minutes 30 seconds'" {
		t.Errorf("String = %q", lit.String())
	}
	s := schemaOf("x", vector.Int64)
	ev, err := lit.Bind(s, mem)
	if err != nil {
		t.Fatal(err)
	}
	c, ok := ev.(vector.ConstantEvaluator)
	if !ok || c.Value() != arrow.Duration(90_000_000) || !arrow.TypeEqual(c.DataType(), vector.Interval) {
		t.Fatalf("constant %v %v", c, ok)
	}
	rec := vt.BuildRecord(mem, s, column(1, 2))
	defer rec.Release()
	arr, err := ev.Eval(t.Context(), rec)
	if err != nil {
		t.Fatal(err)
	}
	defer arr.Release()
	if arr.Len() != 2 || arr.DataType().ID() != arrow.DURATION {
		t.Errorf("got %s", arr)
	}
	_ = memory.DefaultAllocator
}

// FuzzParseInterval checks that no input makes ParseInterval panic and
// that what it accepts is a whole number of microseconds it can print.
func FuzzParseInterval(f *testing.F) {
	for _, s := range []string{"10 seconds", "INTERVAL '1 hour 30 minutes'", "1 month", "-1.5 weeks", "1e9 days", "'", "interval interval"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		v, err := vector.ParseInterval(s)
		if err != nil {
			if !errors.Is(err, vector.ErrInterval) {
				t.Fatalf("error %v does not wrap ErrInterval", err)
			}
			return
		}
		_ = vector.FormatInterval(v)
	})
}
