package sql

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// Interval is a span of time as Spark's CalendarInterval keeps it: months,
// days and microseconds, each signed, because months and days have no
// fixed length in microseconds.
type Interval struct {
	Months int32
	Days   int32
	Micros int64
}

// MicrosPerDay is the length of a day in Fixed: 24 hours, as Spark counts
// a day in watermark delays and window durations.
const MicrosPerDay = 24 * 3600 * 1_000_000

// errIntervalOverflow reports an interval too large for its fields.
var errIntervalOverflow = errors.New("interval is out of range")

// Fixed returns the interval in microseconds, counting a day as 24 hours.
// It fails for intervals with months, whose length varies.
func (iv Interval) Fixed() (int64, error) {
	if iv.Months != 0 {
		return 0, errors.New("interval has months or years, which have no fixed length")
	}
	d, ok := mulAdd(int64(iv.Days), MicrosPerDay, iv.Micros)
	if !ok {
		return 0, errIntervalOverflow
	}
	return d, nil
}

// Value computes the interval the literal denotes.
func (l *IntervalLit) Value() (Interval, error) {
	if l.Parts == nil {
		iv, err := ParseInterval(l.Text)
		if err != nil {
			return Interval{}, fmt.Errorf("interval literal at %s: %w", l.Pos, err)
		}
		return iv, nil
	}
	var iv Interval
	for _, p := range l.Parts {
		v := strings.TrimSpace(p.Value)
		neg := p.Neg
		if p.Quoted && v != "" && (v[0] == '-' || v[0] == '+') {
			neg = neg != (v[0] == '-')
			v = strings.TrimSpace(v[1:])
		}
		if strings.Contains(p.Unit, " ") {
			if err := iv.rangePart(l, p); err != nil {
				return Interval{}, fmt.Errorf("interval literal at %s: %w", p.Pos, err)
			}
			continue
		}
		if err := iv.add(neg, v, p.Unit); err != nil {
			return Interval{}, fmt.Errorf("interval literal at %s: %w", p.Pos, err)
		}
	}
	return iv, nil
}

// ParseInterval parses an interval string such as "10 seconds",
// "1 minute", "1 hour 30 minutes" or "interval -2 days": the duration
// strings of window(), watermark delays and triggers. Units are singular
// or plural and case-insensitive; SECOND and MILLISECOND values may have a
// fraction down to the microsecond. A string that starts with INTERVAL and
// quotes a value ("interval '5' hour", "interval '1-2' year to month") is
// an interval literal in SQL syntax, read as the SQL parser reads it.
func ParseInterval(s string) (Interval, error) {
	if t := strings.TrimSpace(s); len(t) > len("interval") && strings.EqualFold(t[:len("interval")], "interval") && strings.Contains(t, "'") {
		return parseIntervalLiteral(s)
	}
	fields := strings.Fields(s)
	if len(fields) > 0 && strings.EqualFold(fields[0], "interval") {
		fields = fields[1:]
	}
	if len(fields) == 0 {
		return Interval{}, fmt.Errorf("invalid interval %q: no value and unit", s)
	}
	var iv Interval
	for len(fields) > 0 {
		v := fields[0]
		neg := false
		if v == "-" || v == "+" {
			// A sign separated from its number by a space.
			if len(fields) < 2 {
				return Interval{}, fmt.Errorf("invalid interval %q: sign without a number", s)
			}
			neg, v, fields = v == "-", fields[1], fields[1:]
		} else if v[0] == '-' || v[0] == '+' {
			neg, v = v[0] == '-', v[1:]
		}
		if len(fields) < 2 {
			return Interval{}, fmt.Errorf("invalid interval %q: %q has no unit", s, v)
		}
		unit := intervalUnits[strings.ToUpper(fields[1])]
		if unit == "" {
			return Interval{}, fmt.Errorf("invalid interval %q: unknown unit %q", s, fields[1])
		}
		if err := iv.add(neg, v, unit); err != nil {
			return Interval{}, fmt.Errorf("invalid interval %q: %w", s, err)
		}
		fields = fields[2:]
	}
	return iv, nil
}

// parseIntervalLiteral reads s as a whole SQL interval literal. Spark's
// fromIntervalString hands strings that start with "interval" to its SQL
// parser, so the quoted and field-range forms of ANSI intervals are valid
// duration strings too (SPARK-35815).
func parseIntervalLiteral(s string) (Interval, error) {
	e, err := ParseExpr(s)
	if err != nil {
		return Interval{}, fmt.Errorf("invalid interval %q: %w", s, err)
	}
	lit, ok := e.(*IntervalLit)
	if !ok {
		return Interval{}, fmt.Errorf("invalid interval %q: not a single interval literal", s)
	}
	iv, err := lit.Value()
	if err != nil {
		return Interval{}, fmt.Errorf("invalid interval %q: %w", s, err)
	}
	return iv, nil
}

// unitMicros is the length of the units below a day, in microseconds.
var unitMicros = map[string]int64{
	"HOUR": 3600 * 1_000_000, "MINUTE": 60 * 1_000_000, "SECOND": 1_000_000,
	"MILLISECOND": 1000, "MICROSECOND": 1,
}

// add adds the amount v (unsigned digits with an optional fraction) of
// unit to iv.
func (iv *Interval) add(neg bool, v, unit string) error {
	if !isPlainDecimal(v) {
		return fmt.Errorf("%q is not a number", v)
	}
	whole, frac, _ := strings.Cut(v, ".")
	n := int64(0)
	if whole != "" {
		var err error
		if n, err = strconv.ParseInt(whole, 10, 64); err != nil {
			return errIntervalOverflow
		}
	}
	if neg {
		n = -n
	}
	frac = strings.TrimRight(frac, "0")
	var ok bool
	switch unit {
	case "YEAR", "MONTH", "WEEK", "DAY":
		if frac != "" {
			return fmt.Errorf("%s cannot have a fraction (%s)", unit, v)
		}
		switch unit {
		case "YEAR":
			iv.Months, ok = add32(iv.Months, n, 12)
		case "MONTH":
			iv.Months, ok = add32(iv.Months, n, 1)
		case "WEEK":
			iv.Days, ok = add32(iv.Days, n, 7)
		default:
			iv.Days, ok = add32(iv.Days, n, 1)
		}
	default:
		per := unitMicros[unit]
		f := int64(0)
		if frac != "" {
			// The fraction must come out in whole microseconds.
			if unit != "SECOND" && unit != "MILLISECOND" {
				return fmt.Errorf("%s cannot have a fraction (%s)", unit, v)
			}
			digits := len(strconv.FormatInt(per, 10)) - 1
			if unit == "SECOND" && len(frac) > digits && len(frac) <= 9 {
				// Spark reads seconds to the nanosecond and truncates to
				// microseconds (13.123456789 is 13.123456).
				frac = frac[:digits]
			}
			if len(frac) > digits {
				finest := "a microsecond"
				if unit == "SECOND" {
					finest = "a nanosecond"
				}
				return fmt.Errorf("%s %s is finer than %s", v, unit, finest)
			}
			f, _ = strconv.ParseInt(frac+strings.Repeat("0", digits-len(frac)), 10, 64)
			if neg {
				f = -f
			}
		}
		var m int64
		if m, ok = mulAdd(n, per, f); ok {
			iv.Micros, ok = mulAdd(1, iv.Micros, m)
		}
	}
	if !ok {
		return errIntervalOverflow
	}
	return nil
}

// add32 returns a + n*k if it fits an int32.
func add32(a int32, n, k int64) (int32, bool) {
	r, ok := mulAdd(n, k, int64(a))
	if !ok || r < math.MinInt32 || r > math.MaxInt32 {
		return 0, false
	}
	return int32(r), true
}

// mulAdd returns a*b + c, reporting false on int64 overflow.
func mulAdd(a, b, c int64) (int64, bool) {
	if a != 0 && b != 0 {
		p := a * b
		if p/b != a || (a == -1 && b == math.MinInt64) || (b == -1 && a == math.MinInt64) {
			return 0, false
		}
		a = p
	} else {
		a = 0
	}
	s := a + c
	if (c > 0 && s < a) || (c < 0 && s > a) {
		return 0, false
	}
	return s, true
}
