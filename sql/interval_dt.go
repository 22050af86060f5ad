package sql

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"
)

// Day-time field ranges of interval literals (INTERVAL '1 2:03:04.5' DAY
// TO SECOND), read as Spark's castStringToDTInterval reads them: each
// range has one pattern, the leading field is bounded only by what fits
// a long of microseconds, the inner fields by the clock (hours 0-23,
// minutes 0-59), the seconds with up to nine fraction digits truncated
// to microseconds. A '-' before the string negates it as Spark's parser
// does: it removes a leading '-' of the string, or adds one.

// dtRangePatterns are the patterns of the field ranges. The sign class
// [+|-] is Spark's own, '|' included (it counts as '+').
var dtRangePatterns = map[string]*regexp.Regexp{
	"DAY TO HOUR":      regexp.MustCompile(`^([+|-])?(\d{1,9}) (\d{1,2})$`),
	"DAY TO MINUTE":    regexp.MustCompile(`^([+|-])?(\d{1,9}) (\d{1,2}):(\d{1,2})$`),
	"DAY TO SECOND":    regexp.MustCompile(`^([+|-])?(\d{1,9}) (\d{1,2}):(\d{1,2}):(\d{1,2})(\.\d{1,9})?$`),
	"HOUR TO MINUTE":   regexp.MustCompile(`^([+|-])?(\d{1,10}):(\d{1,2})$`),
	"HOUR TO SECOND":   regexp.MustCompile(`^([+|-])?(\d{1,10}):(\d{1,2}):(\d{1,2})(\.\d{1,9})?$`),
	"MINUTE TO SECOND": regexp.MustCompile(`^([+|-])?(\d{1,12}):(\d{1,2})(\.\d{1,9})?$`),
}

// dtRangeFormats are the forms Spark's error names for each range.
var dtRangeFormats = map[string]string{
	"DAY TO HOUR": "[+|-]d h", "DAY TO MINUTE": "[+|-]d h:m", "DAY TO SECOND": "[+|-]d h:m:s.n",
	"HOUR TO MINUTE": "[+|-]h:m", "HOUR TO SECOND": "[+|-]h:m:s.n", "MINUTE TO SECOND": "[+|-]m:s.n",
}

// dtRangeUnits are the microseconds of each field of a range, in order:
// the leading field is bounded only by the long, the others are clock
// fields; a microsPerSecond field is the seconds with their fraction.
var dtRangeUnits = map[string][]int64{
	"DAY TO HOUR":      {86_400 * microsPerSecond, microsPerHour},
	"DAY TO MINUTE":    {86_400 * microsPerSecond, microsPerHour, microsPerMinute},
	"DAY TO SECOND":    {86_400 * microsPerSecond, microsPerHour, microsPerMinute, microsPerSecond},
	"HOUR TO MINUTE":   {microsPerHour, microsPerMinute},
	"HOUR TO SECOND":   {microsPerHour, microsPerMinute, microsPerSecond},
	"MINUTE TO SECOND": {microsPerMinute, microsPerSecond},
}

const (
	microsPerSecond = 1_000_000
	microsPerMinute = 60 * microsPerSecond
	microsPerHour   = 60 * microsPerMinute
)

// errDTOverflow is a day-time literal beyond a long of microseconds.
var errDTOverflow = errors.New("long overflow")

// dayTimeRange returns the microseconds of the day-time range literal
// INTERVAL [-]'value' FROM TO TO, where unit is "FROM TO TO".
func dayTimeRange(neg bool, value, unit string) (int64, error) {
	re, ok := dtRangePatterns[unit]
	if !ok {
		from, to, _ := strings.Cut(unit, " TO ")
		return 0, fmt.Errorf("Intervals FROM %s TO %s are not supported", strings.ToLower(from), strings.ToLower(to))
	}
	if neg {
		if rest, had := strings.CutPrefix(value, "-"); had {
			value = rest
		} else {
			value = "-" + value
		}
	}
	// UTF8String.trimAll: every character up to ' ' (tabs, newlines).
	s := strings.TrimFunc(value, func(r rune) bool { return r <= ' ' })
	m := re.FindStringSubmatch(s)
	if m == nil {
		return 0, fmt.Errorf("Interval string does not match day-time format of `%s` when cast to %s: %s",
			dtRangeFormats[unit], strings.ToLower("interval "+unit), value)
	}
	sign := int64(1)
	if m[1] == "-" {
		sign = -1
	}
	fields := m[2:]
	units := dtRangeUnits[unit]
	var total int64
	for i, u := range units {
		v, err := strconv.ParseInt(fields[i], 10, 64)
		if err != nil {
			return 0, fmt.Errorf("Error parsing interval day-time string: %w", err)
		}
		if u == microsPerSecond {
			// Seconds and their fraction, truncated to microseconds.
			if v > math.MaxInt64/microsPerSecond {
				return 0, fmt.Errorf("Error parsing interval day-time string: second %d outside range", v)
			}
			micros := v * microsPerSecond
			if frac := fields[i+1]; frac != "" {
				digits := (frac[1:] + "000000000")[:9]
				nanos, _ := strconv.ParseInt(digits, 10, 64)
				micros += nanos / 1000
			}
			var ok bool
			if total, ok = addMul(total, sign, micros, 1); !ok {
				return 0, fmt.Errorf("Error parsing interval day-time string: %w", errDTOverflow)
			}
			continue
		}
		switch {
		case i > 0 && u == microsPerHour && v > 23:
			return 0, fmt.Errorf("Error parsing interval day-time string: hour %d outside range [0, 23]", v)
		case i > 0 && u == microsPerMinute && v > 59:
			return 0, fmt.Errorf("Error parsing interval day-time string: minute %d outside range [0, 59]", v)
		case i == 0 && v > math.MaxInt64/u:
			return 0, fmt.Errorf("Error parsing interval day-time string: %s %d outside range [0, %d]",
				strings.ToLower(strings.Fields(unit)[0]), v, math.MaxInt64/u)
		}
		var ok bool
		if total, ok = addMul(total, sign, v, u); !ok {
			return 0, fmt.Errorf("Error parsing interval day-time string: %w", errDTOverflow)
		}
	}
	return total, nil
}

// addMul returns total + sign*v*u, false on overflow (v*u fits already).
func addMul(total, sign, v, u int64) (int64, bool) {
	d := sign * v * u
	r := total + d
	if (d > 0 && r < total) || (d < 0 && r > total) {
		return 0, false
	}
	return r, true
}
