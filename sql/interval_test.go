package sql

import (
	"strings"
	"testing"
)

func TestParseInterval(t *testing.T) {
	tests := []struct {
		in   string
		want Interval
	}{
		{"10 seconds", Interval{Micros: 10_000_000}},
		{"10 second", Interval{Micros: 10_000_000}},
		{"1 minute", Interval{Micros: 60_000_000}},
		{"1 HOUR 30 Minutes", Interval{Micros: 5400_000_000}},
		{"interval 2 days", Interval{Days: 2}},
		{"1 week", Interval{Days: 7}},
		{"1 year 2 months", Interval{Months: 14}},
		{"-5 seconds", Interval{Micros: -5_000_000}},
		{"- 5 seconds", Interval{Micros: -5_000_000}},
		{"1.5 seconds", Interval{Micros: 1_500_000}},
		{"0.000001 second", Interval{Micros: 1}},
		{"-1.5 seconds", Interval{Micros: -1_500_000}},
		{"2.5 milliseconds", Interval{Micros: 2500}},
		{"7 microseconds", Interval{Micros: 7}},
		{"0 seconds", Interval{}},
		// Nanoseconds are truncated to microseconds, as Spark's
		// stringToInterval does (interval.sql: 13.123456789 seconds).
		{"13.123456789 seconds", Interval{Micros: 13_123_456}},
		{"-13.123456789 seconds", Interval{Micros: -13_123_456}},
		{"0.0000001 seconds", Interval{}},
		{"  5   seconds  ", Interval{Micros: 5_000_000}},
	}
	for _, tc := range tests {
		got, err := ParseInterval(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseInterval(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	bad := map[string]string{
		"":                          "no value and unit",
		"10":                        "has no unit",
		"10 parsecs":                `unknown unit "parsecs"`,
		"1.5 hours":                 "HOUR cannot have a fraction",
		"1.5 days":                  "DAY cannot have a fraction",
		"0.0000000001 seconds":      "finer than a nanosecond",
		"0.0001 milliseconds":       "finer than a microsecond",
		"x seconds":                 `"x" is not a number`,
		"-":                         "sign without a number",
		"99999999999999999999 days": "out of range",
		"3000000000 days":           "out of range",
		"9223372036854775807 hours": "out of range",
	}
	for in, want := range bad {
		if _, err := ParseInterval(in); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseInterval(%q) error = %v, want it to mention %q", in, err, want)
		}
	}
}

func TestIntervalLitValue(t *testing.T) {
	tests := []struct {
		in   string
		want Interval
	}{
		{"INTERVAL 10 SECONDS", Interval{Micros: 10_000_000}},
		{"INTERVAL '10' SECOND", Interval{Micros: 10_000_000}},
		{"INTERVAL '-10' SECOND", Interval{Micros: -10_000_000}},
		{"INTERVAL -'10' SECOND", Interval{Micros: -10_000_000}},
		{"INTERVAL '1 minute'", Interval{Micros: 60_000_000}},
		{"INTERVAL 1 HOUR 30 MINUTES", Interval{Micros: 5400_000_000}},
		{"INTERVAL 1 DAY -1 HOUR", Interval{Days: 1, Micros: -3600_000_000}},
		{"INTERVAL 1 MONTH", Interval{Months: 1}},
	}
	for _, tc := range tests {
		e, err := ParseExpr(tc.in)
		if err != nil {
			t.Fatalf("ParseExpr(%q): %v", tc.in, err)
		}
		got, err := e.(*IntervalLit).Value()
		if err != nil || got != tc.want {
			t.Errorf("%s: Value() = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	e, _ := ParseExpr("INTERVAL 1.5 HOURS")
	if _, err := e.(*IntervalLit).Value(); err == nil || !strings.Contains(err.Error(), "interval literal at 1:10") {
		t.Errorf("Value() of a fractional hour: %v", err)
	}
}

func TestIntervalFixed(t *testing.T) {
	if d, err := (Interval{Days: 1, Micros: 5}).Fixed(); err != nil || d != MicrosPerDay+5 {
		t.Errorf("Fixed() = %d, %v", d, err)
	}
	if _, err := (Interval{Months: 1}).Fixed(); err == nil {
		t.Error("Fixed() of a month succeeded")
	}
	if _, err := (Interval{Days: 1 << 30, Micros: 1 << 62}).Fixed(); err == nil {
		t.Error("Fixed() overflow not detected")
	}
}

// TestParseIntervalSQLLiteralForms checks the duration strings that Spark
// reads with its SQL parser because they start with "interval": quoted
// values and field ranges (SPARK-35815's delay thresholds).
func TestParseIntervalSQLLiteralForms(t *testing.T) {
	hour := int64(3600_000_000)
	tests := []struct {
		in   string
		want Interval
	}{
		{"inTerval '3' day", Interval{Days: 3}},
		{"interval '5' hour", Interval{Micros: 5 * hour}},
		{"interval '10' second", Interval{Micros: 10_000_000}},
		{"interval '1' year", Interval{Months: 12}},
		{"\tinterval '1' day '2' hours '3' minutes '4' seconds", Interval{Days: 1, Micros: 2*hour + 3*60_000_000 + 4_000_000}},
		{"interval '1 2:3:4' day to second", Interval{Days: 1, Micros: 2*hour + 3*60_000_000 + 4_000_000}},
		{"interval '1' year '2' month", Interval{Months: 14}},
		{"\tinterval '1-2' year to month", Interval{Months: 14}},
		{"interval '-1 year'", Interval{Months: -12}},
	}
	for _, tc := range tests {
		got, err := ParseInterval(tc.in)
		if err != nil || got != tc.want {
			t.Errorf("ParseInterval(%q) = %+v, %v; want %+v", tc.in, got, err, tc.want)
		}
	}
	for _, in := range []string{"intrval '3' day", "interval '5' foo", "interval '1 2:3:4' day to hour", "interval '1 2' year to month", "interval '1' day + 1"} {
		if got, err := ParseInterval(in); err == nil {
			t.Errorf("ParseInterval(%q) = %+v, want an error", in, got)
		}
	}
}
