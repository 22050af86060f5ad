package sql

import (
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
)

// IntervalKind says which fields an interval literal has: Spark types a
// literal with only YEAR and MONTH fields as a year-month interval and one
// with only DAY to MICROSECOND fields as a day-time interval, and refuses
// a literal with both.
type IntervalKind uint8

const (
	// IntervalDayTime is a literal of DAY, HOUR, ... fields (or none).
	IntervalDayTime IntervalKind = iota
	// IntervalYearMonth is a literal of YEAR and MONTH fields only.
	IntervalYearMonth
	// IntervalMixed has both kinds of fields.
	IntervalMixed
)

// isYMUnit reports whether a canonical unit is a year-month one.
func isYMUnit(u string) bool { return u == "YEAR" || u == "MONTH" || u == "YEAR TO MONTH" }

// Kind reports the fields of the literal, and for a year-month literal
// the fields of its type: "YEAR", "MONTH" or "YEAR TO MONTH" (a literal
// of both fields, a y-m string, or INTERVAL 'text').
func (l *IntervalLit) Kind() (kind IntervalKind, fields string) {
	var ym, dt bool
	units := l.Units()
	for _, u := range units {
		if isYMUnit(u) {
			ym = true
		} else {
			dt = true
		}
	}
	switch {
	case ym && dt:
		return IntervalMixed, ""
	case !ym:
		return IntervalDayTime, ""
	}
	fields = "YEAR TO MONTH"
	if l.Parts != nil {
		hasY, hasM := false, false
		for _, u := range units {
			hasY = hasY || u != "MONTH"
			hasM = hasM || u != "YEAR"
		}
		switch {
		case hasY && !hasM:
			fields = "YEAR"
		case hasM && !hasY:
			fields = "MONTH"
		}
	}
	return IntervalYearMonth, fields
}

// Units are the canonical units of the literal's parts (YEAR, ..., DAY
// TO SECOND), or for INTERVAL 'text' those of the text's words, in order.
func (l *IntervalLit) Units() []string {
	var units []string
	if l.Parts == nil {
		for _, w := range strings.Fields(l.Text) {
			if u := intervalUnits[strings.ToUpper(w)]; u != "" {
				units = append(units, u)
			}
		}
		return units
	}
	for _, p := range l.Parts {
		units = append(units, p.Unit)
	}
	return units
}

// rangePart adds a field range part (INTERVAL '1-2' YEAR TO MONTH) to iv.
// YEAR TO MONTH's value is a string "[+|-]y-m", whitespace around it
// ignored; the day-time ranges are read by dayTimeRange.
func (iv *Interval) rangePart(l *IntervalLit, p IntervalPart) error {
	if !p.Quoted {
		return errors.New("The value of from-to unit must be a string")
	}
	if len(l.Parts) > 1 {
		return errors.New("Can only have a single from-to unit in the interval literal syntax")
	}
	if p.Unit != "YEAR TO MONTH" {
		micros, err := dayTimeRange(p.Neg, p.Value, p.Unit)
		if err != nil {
			return err
		}
		iv.Days, iv.Micros = int32(micros/MicrosPerDay), micros%MicrosPerDay
		return nil
	}
	v := strings.TrimSpace(p.Value)
	neg := p.Neg
	if v != "" && (v[0] == '-' || v[0] == '+') {
		neg = neg != (v[0] == '-')
		v = v[1:]
	}
	ys, ms, ok := strings.Cut(v, "-")
	y, err1 := strconv.ParseUint(ys, 10, 32)
	m, err2 := strconv.ParseUint(ms, 10, 8)
	if !ok || err1 != nil || err2 != nil || m > 11 || ys == "" || ys[0] == '+' || ms[0] == '+' {
		return fmt.Errorf("Interval string does not match year-month format of `[+|-]y-m`: %s", p.Value)
	}
	total := int64(y)*12 + int64(m)
	if neg {
		total = -total
	}
	if total < math.MinInt32 || total > math.MaxInt32 {
		return errors.New("Error parsing interval year-month string: integer overflow")
	}
	iv.Months = int32(total)
	return nil
}
