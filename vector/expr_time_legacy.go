package vector

import (
	"fmt"
	"time"
)

// Spark 3 parses with java.time; when that fails under the default
// spark.sql.legacy.timeParserPolicy (EXCEPTION) it tries the Spark 2
// parser, java.text.SimpleDateFormat (not lenient), on the same text and
// raises SparkUpgradeException if that one reads it: the answer would
// differ between versions. Only when both fail is the value NULL (without
// ANSI). legacyMayParse answers the question the fallback asks. It models
// SimpleDateFormat's rules for the pattern letters the engine compiles and
// answers true ("may parse", so the caller raises) wherever the model is
// unsure, so that a NULL is only given where Spark gives one.
//
// The rules modelled (java.text.SimpleDateFormat, Java 8):
//   - a number takes as many ASCII digits as follow (a leading '-' makes it
//     negative), or at most as many as the letter count when the next
//     pattern item is another field (an "abutting" run, which Java retries
//     with shorter widths on failure: unmodelled, so "may parse");
//   - spaces and tabs before a field are skipped; literal text must match
//     exactly;
//   - text after the last item is ignored (DateFormat.parse(String));
//   - a non-lenient Calendar then rejects a field outside its range
//     (MONTH 1-12, DAY_OF_MONTH 1-31, DAY_OF_YEAR 1-366, HOUR_OF_DAY 0-23,
//     HOUR 0-11 after h's 12 becomes 0, MINUTE and SECOND 0-59,
//     MILLISECOND 0-999, YEAR from 1) and any field that disagrees with the
//     date the fields resolve to (February 29 of 1970, day 366 of 2019,
//     day 30 with day of year 365); unset fields are 1970-01-01 00:00:00.
//
// Years before 1583 (Java's Julian calendar), zones, day names and
// abutting runs are not modelled.

// errLegacyParses is Spark's SparkUpgradeException for text that only the
// legacy parser reads. It wraps ErrInvalidInput: it is a runtime error of
// the value, not of the query's types.
func errLegacyParses(p *datetimePattern) error {
	return fmt.Errorf("%w: [INCONSISTENT_BEHAVIOR_CROSS_VERSION.PARSE_DATETIME_BY_NEW_PARSER] You may get a different result due to the upgrading to Spark >= 3.0: the text does not parse with the pattern '%s' in the new parser but does in Spark 2's. Set \"spark.sql.legacy.timeParserPolicy\" to \"CORRECTED\" to treat it as an invalid datetime string", ErrInvalidInput, p.src)
}

// legacyMayParse reports whether SimpleDateFormat (not lenient) may read s
// with p; false only when it surely does not.
func (p *datetimePattern) legacyMayParse(s []byte) bool {
	for _, b := range s {
		if b >= 0x80 {
			return true // Java's digits and letters beyond ASCII
		}
	}
	year, month, day, doy := int64(1970), int64(-1), int64(-1), int64(-1)
	hourOfDay, hour12, minute, second, millis := int64(-1), int64(-1), int64(0), int64(0), int64(0)
	pos, hasAmPm, dayName := 0, false, false
	items := legacyItems(p.items)
	for k, it := range items {
		switch it.kind {
		case dtLiteral:
			if len(s)-pos < len(it.lit) || string(s[pos:pos+len(it.lit)]) != it.lit {
				return false
			}
			pos += len(it.lit)
			continue
		case dtOffset, dtZoneID:
			return true
		}
		for pos < len(s) && (s[pos] == ' ' || s[pos] == '\t') {
			pos++
		}
		switch it.kind {
		case dtMonthText:
			k, w, found := matchName(s[pos:], monthNames, true)
			if !found {
				k, w, found = matchName(s[pos:], monthNames, false)
			}
			if !found {
				return false
			}
			month, pos = int64(k+1), pos+w
			continue
		case dtDayName:
			// Java's day names, long or short; whether the day agrees
			// with the date is not modelled (dayName makes the end unsure).
			_, w, found := matchName(s[pos:], dayNames, true)
			if !found {
				_, w, found = matchName(s[pos:], dayNames, false)
			}
			if !found {
				return false
			}
			pos, dayName = pos+w, true
			continue
		case dtAmPm:
			switch {
			case hasFoldPrefix(s[pos:], "AM"), hasFoldPrefix(s[pos:], "PM"):
			default:
				return false
			}
			pos, hasAmPm = pos+2, true
			continue
		}
		abutting := k+1 < len(items) && items[k+1].kind != dtLiteral
		neg := pos < len(s) && s[pos] == '-'
		start := pos
		if neg {
			start++
		}
		end := start
		for end < len(s) && s[end] >= '0' && s[end] <= '9' && (!abutting || end-start < it.count) {
			end++
		}
		if end == start {
			// Nothing to read: Java fails here, but in an abutting run it
			// retries the run with narrower fields.
			return abutting
		}
		if end < len(s) && s[end] == 'E' {
			// DecimalFormat reads an exponent even when parsing integers
			// only (as SimpleDateFormat's does: no fraction, no grouping).
			return true
		}
		if end-start > 12 {
			return true
		}
		var v int64
		for _, b := range s[start:end] {
			v = v*10 + int64(b-'0')
		}
		if neg {
			if v == 0 {
				return true // -0 is 0
			}
			return false // no field takes a negative value
		}
		pos = end
		switch it.kind {
		case dtYear:
			if it.count <= 2 && end-start == 2 {
				// Java's two-digit year: within 80 years before and 20
				// after now; unmodelled at the window's edges.
				now := time.Now().Year()
				year = 1900 + v
				if year < int64(now-80) {
					year += 100
				}
				if year == int64(now-80) || year == int64(now+20) {
					return true
				}
				break
			}
			year = v
		case dtMonth:
			month = v
		case dtDay:
			day = v
		case dtDayOfYear:
			doy = v
		case dtHour, dtHourK1:
			if it.kind == dtHourK1 && v == 24 {
				v = 0
			}
			hourOfDay = v
		case dtHour12, dtHourK0:
			if it.kind == dtHour12 && v == 12 {
				v = 0
			}
			hour12 = v
		case dtMinute:
			minute = v
		case dtSecond:
			second = v
		case dtFraction:
			millis = v
		default:
			return true
		}
	}
	if year == 0 || month == 0 || month > 12 || day == 0 || day > 31 || doy == 0 || doy > 366 ||
		hourOfDay > 23 || hour12 > 11 || minute > 59 || second > 59 || millis > 999 {
		return false // out of the field's range in any calendar
	}
	if year < 1583 || year > 9999 || dayName {
		return true
	}
	if hourOfDay >= 0 && (hour12 >= 0 || hasAmPm) {
		return true // which one Calendar resolves by is not modelled
	}
	// The date the fields resolve to must give back every field set.
	m, d := month, day
	if m < 0 {
		m = 1
	}
	if d < 0 {
		d = 1
	}
	if doy >= 0 {
		days := daysFromCivil(year, 1, 1) + doy - 1
		y, dm, dd := civilFromDays(days)
		if y != year || month >= 0 && int64(dm) != month || day >= 0 && int64(dd) != day {
			return false
		}
		return true
	}
	return fnValidDate(year, int(m), int(d))
}

// legacyItems is items as SimpleDateFormat reads their pattern: it has no
// optional sections, so '[' and ']' are literal characters around the
// section's content.
func legacyItems(items []dtItem) []dtItem {
	var out []dtItem
	for _, it := range items {
		if it.kind != dtOptional {
			out = append(out, it)
			continue
		}
		out = append(out, dtItem{kind: dtLiteral, lit: "["})
		out = append(out, legacyItems(it.sub)...)
		out = append(out, dtItem{kind: dtLiteral, lit: "]"})
	}
	return out
}
