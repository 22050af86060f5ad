package vector

import (
	"fmt"
	"math"
	"strings"
	"time"
)

// Spark datetime patterns (to_timestamp, unix_timestamp, to_date), compiled
// once into a list of fields and parsed without time.Parse: Go layouts
// cannot express Spark's fraction widths or case-insensitive text.
//
// Supported letters (parsing, case-insensitive as Spark's formatter):
//
//	y     year: yyyy 4 digits (4-6 when not followed by a number), yy 2 digits
//	      (2000-2099), y 1-9 digits
//	M, L  month: M 1-2 digits, MM 2 digits, MMM Jan, MMMM January
//	d     day of month: d 1-2 digits, dd 2 digits
//	D     day of year: 1-3 digits (DD 2-3, DDD 3)
//	H     hour 0-23; k hour 1-24; h hour 1-12 and K hour 0-11 (with a)
//	m, s  minute, second: 1-2 digits (mm, ss: 2)
//	S     fraction of a second: SSS accepts 1 to 3 digits (up to 9 S)
//	a     AM or PM
//	E     day of week, Mon or Monday (read and not checked)
//	X, x  zone offset: Z (X only), +HH, +HHmm, +HH:mm, +HH:mm:ss (any
//	      of the forms whatever the count: parsing is lenient here)
//	Z     zone offset as X without Z; ZZZZ GMT+HH:mm; ZZZZZ also Z
//	VV    zone id (Europe/Paris); z zone name (UTC, PST, CET)
//	'..'  quoted literal ('' is a quote); other non-letters are literals
//	[..]  optional section (may nest; an unclosed one ends with the
//	      pattern): parsed when its whole content matches, else skipped
//	      with nothing consumed, as Java's DateTimeFormatter does
//
// Week-based letters (Y, w, u, W, e, c) and the rest are rejected, as are
// '{', '}' and '#'. Missing fields default to 1970-01-01 00:00:00 UTC; the
// whole input must be consumed. A field given twice must have the same
// value both times (Java's DateTimeParseContext refuses a conflict).

type dtKind uint8

const (
	dtLiteral dtKind = iota
	dtYear
	dtMonth
	dtMonthText
	dtDay
	dtDayOfYear
	dtHour   // H 0-23
	dtHourK1 // k 1-24
	dtHour12 // h 1-12
	dtHourK0 // K 0-11
	dtMinute
	dtSecond
	dtFraction
	dtAmPm
	dtDayName
	dtOffset // X, x, Z
	dtZoneID // VV, z
	dtOptional
	dtEra        // G: formatting only
	dtQuarter    // q, Q: formatting only
	dtAlignedDOW // F (Java's ALIGNED_DAY_OF_WEEK_IN_MONTH): formatting only
	dtKinds      // the number of kinds
)

type dtItem struct {
	kind     dtKind
	count    int
	min, max int    // digits
	lit      string // literal text
	letter   byte
	sub      []dtItem // the items of an optional section
}

// datetimePattern is a compiled Spark datetime pattern.
type datetimePattern struct {
	src   string
	items []dtItem
}

// DefaultTimestampFormat is the format unix_timestamp uses without one.
const DefaultTimestampFormat = "yyyy-MM-dd HH:mm:ss"

func errPattern(p string, format string, args ...any) error {
	return fmt.Errorf("invalid datetime pattern '%s': %s", p, fmt.Sprintf(format, args...))
}

// compileDatetimePattern parses a Spark datetime pattern.
func compileDatetimePattern(p string) (*datetimePattern, error) {
	items, i, err := compileItems(p, 0, 0)
	if err != nil {
		return nil, err
	}
	if i < len(p) { // a ']' without its '['
		return nil, errPattern(p, "']' without a previous '['")
	}
	return &datetimePattern{src: p, items: items}, nil
}

// compileParsePattern compiles a pattern that reads text: the letters
// only formatting implements are refused.
func compileParsePattern(p string) (*datetimePattern, error) {
	out, err := compileDatetimePattern(p)
	if err != nil {
		return nil, err
	}
	if err := out.checkParsable(); err != nil {
		return nil, err
	}
	return out, nil
}

// compileItems compiles p from i to the end or, inside an optional section
// (depth > 0), to its ']'; it returns the items and the index after them
// (at the ']', which the caller consumes).
func compileItems(p string, i, depth int) ([]dtItem, int, error) {
	var items []dtItem
	addLit := func(s string) {
		if n := len(items); n > 0 && items[n-1].kind == dtLiteral {
			items[n-1].lit += s
			return
		}
		items = append(items, dtItem{kind: dtLiteral, lit: s})
	}
	for i < len(p) {
		c := p[i]
		if c == '\'' {
			j := i + 1
			var lit strings.Builder
			closed := false
			for j < len(p) {
				if p[j] == '\'' {
					if j+1 < len(p) && p[j+1] == '\'' {
						lit.WriteByte('\'')
						j += 2
						continue
					}
					closed = true
					j++
					break
				}
				lit.WriteByte(p[j])
				j++
			}
			if !closed {
				return nil, 0, errPattern(p, "unterminated quote")
			}
			if lit.Len() == 0 && j == i+2 {
				addLit("'")
			} else {
				addLit(lit.String())
			}
			i = j
			continue
		}
		if c == '[' {
			sub, j, err := compileItems(p, i+1, depth+1)
			if err != nil {
				return nil, 0, err
			}
			items = append(items, dtItem{kind: dtOptional, sub: sub})
			if j < len(p) {
				j++ // the ']'
			}
			i = j
			continue
		}
		if c == ']' {
			if depth == 0 {
				return items, i, nil
			}
			return finishItems(items), i, nil
		}
		if !(c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z') {
			if c == '{' || c == '}' || c == '#' {
				return nil, 0, errPattern(p, "'%c' is not supported", c)
			}
			addLit(p[i : i+1]) // a byte of the text: multibyte characters stay whole
			i++
			continue
		}
		n := 1
		for i+n < len(p) && p[i+n] == c {
			n++
		}
		item, err := patternLetter(p, c, n)
		if err != nil {
			return nil, 0, err
		}
		items = append(items, item)
		i += n
	}
	return finishItems(items), i, nil
}

// finishItems lets yyyy take more digits only when no number follows it
// directly.
func finishItems(items []dtItem) []dtItem {
	for k := range items {
		it := &items[k]
		if it.kind == dtYear && it.count == 4 && (k+1 == len(items) || !items[k+1].numeric()) {
			it.max = 6
		}
	}
	return items
}

func (it dtItem) numeric() bool {
	switch it.kind {
	case dtLiteral, dtMonthText, dtAmPm, dtDayName, dtOffset, dtZoneID, dtEra:
		return false
	case dtOptional:
		return len(it.sub) > 0 && it.sub[0].numeric()
	}
	return true
}

// patternLetter compiles n repetitions of letter c.
func patternLetter(p string, c byte, n int) (dtItem, error) {
	it := dtItem{count: n, letter: c}
	num := func(kind dtKind, maxCount int, one, two [2]int) (dtItem, error) {
		if n > maxCount {
			return it, errPattern(p, "too many pattern letters '%c'", c)
		}
		it.kind = kind
		if n == 1 {
			it.min, it.max = one[0], one[1]
		} else {
			it.min, it.max = two[0], two[1]
		}
		return it, nil
	}
	switch c {
	case 'y':
		if n > 6 {
			return it, errPattern(p, "too many pattern letters 'y'")
		}
		it.kind = dtYear
		switch n {
		case 2:
			it.min, it.max = 2, 2
		case 1, 3:
			it.min, it.max = n, 9
		default:
			it.min, it.max = n, n
		}
		return it, nil
	case 'M', 'L':
		if n > 4 {
			return it, errPattern(p, "too many pattern letters '%c'", c)
		}
		if n >= 3 {
			it.kind = dtMonthText
			return it, nil
		}
		return num(dtMonth, 2, [2]int{1, 2}, [2]int{2, 2})
	case 'd':
		return num(dtDay, 2, [2]int{1, 2}, [2]int{2, 2})
	case 'D':
		it, err := num(dtDayOfYear, 3, [2]int{1, 3}, [2]int{n, 3})
		return it, err
	case 'H':
		return num(dtHour, 2, [2]int{1, 2}, [2]int{2, 2})
	case 'k':
		return num(dtHourK1, 2, [2]int{1, 2}, [2]int{2, 2})
	case 'h':
		return num(dtHour12, 2, [2]int{1, 2}, [2]int{2, 2})
	case 'K':
		return num(dtHourK0, 2, [2]int{1, 2}, [2]int{2, 2})
	case 'm':
		return num(dtMinute, 2, [2]int{1, 2}, [2]int{2, 2})
	case 's':
		return num(dtSecond, 2, [2]int{1, 2}, [2]int{2, 2})
	case 'S':
		return num(dtFraction, 9, [2]int{1, 1}, [2]int{1, n})
	case 'a':
		if n > 1 {
			return it, errPattern(p, "too many pattern letters 'a'")
		}
		it.kind = dtAmPm
		return it, nil
	case 'E':
		if n > 4 {
			return it, errPattern(p, "too many pattern letters 'E'")
		}
		it.kind = dtDayName
		return it, nil
	case 'X', 'x', 'Z':
		if n > 5 {
			return it, errPattern(p, "too many pattern letters '%c'", c)
		}
		it.kind = dtOffset
		return it, nil
	case 'O':
		if n != 1 && n != 4 {
			return it, errPattern(p, "pattern letter count must be 1 or 4: 'O'")
		}
		it.kind = dtOffset
		return it, nil
	case 'G':
		// Spark 3 refuses the narrow GGGGG (Spark 2 printed the full
		// form): DATETIME_PATTERN_RECOGNITION.
		if n > 4 {
			return it, errPattern(p, "the pattern '%s' is not supported (Spark 3 fails to recognize it)", strings.Repeat("G", n))
		}
		it.kind = dtEra
		return it, nil
	case 'q', 'Q':
		if c == 'q' && n > 2 || n > 4 {
			return it, errPattern(p, "too many pattern letters '%c'", c)
		}
		it.kind = dtQuarter
		return it, nil
	case 'F':
		if n > 1 {
			return it, errPattern(p, "too many pattern letters 'F'")
		}
		it.kind = dtAlignedDOW
		return it, nil
	case 'V':
		if n != 2 {
			return it, errPattern(p, "pattern letter count must be 2: 'V'")
		}
		it.kind = dtZoneID
		return it, nil
	case 'z':
		if n > 4 {
			return it, errPattern(p, "too many pattern letters 'z'")
		}
		it.kind = dtZoneID
		return it, nil
	case 'Y', 'w', 'u', 'W', 'e', 'c':
		return it, errPattern(p, "week-based pattern letter '%c' is not supported", c)
	}
	return it, errPattern(p, "unsupported pattern letter '%c'", c)
}

var (
	monthNames = []string{"january", "february", "march", "april", "may", "june", "july",
		"august", "september", "october", "november", "december"}
	dayNames = []string{"monday", "tuesday", "wednesday", "thursday", "friday", "saturday", "sunday"}
)

// hasFoldPrefix reports whether s starts with the ASCII word w, ignoring case.
func hasFoldPrefix(s []byte, w string) bool {
	return len(s) >= len(w) && strings.EqualFold(bytesString(s[:len(w)]), w)
}

// matchName matches a full or three-letter name at the start of s and
// returns its index and length.
func matchName(s []byte, names []string, full bool) (int, int, bool) {
	for k, name := range names {
		if !full {
			name = name[:3]
		}
		if hasFoldPrefix(s, name) {
			return k, len(name), true
		}
	}
	return 0, 0, false
}

// dtFields collects parsed values.
type dtFields struct {
	year, month, day, doy  int64
	hour, minute, second   int64
	micros                 int64
	hourKind               dtKind
	pm, hasAmPm, hasOffset bool
	offset                 int
	loc                    *time.Location
	hasMonth, hasDay       bool
	// seen and value hold each numeric field parsed so far (the fraction
	// in nanoseconds), to refuse a second, different value of it.
	seen  [dtKinds]bool
	value [dtKinds]int64
}

// set records field kind's value v; false when the field already had
// another value.
func (f *dtFields) set(kind dtKind, v int64) bool {
	if f.seen[kind] && f.value[kind] != v {
		return false
	}
	f.seen[kind], f.value[kind] = true, v
	return true
}

// checkParsable refuses the pattern letters only formatting implements:
// the era, the quarter, F and the localized offset O.
func (p *datetimePattern) checkParsable() error {
	return checkParsable(p.src, p.items)
}

func checkParsable(src string, items []dtItem) error {
	for _, it := range items {
		switch {
		case it.kind == dtEra, it.kind == dtQuarter, it.kind == dtAlignedDOW, it.kind == dtOffset && it.letter == 'O':
			return errPattern(src, "parsing with the pattern letter '%c' is not supported", it.letter)
		case it.kind == dtOptional:
			if err := checkParsable(src, it.sub); err != nil {
				return err
			}
		}
	}
	return nil
}

// parsedTime is text read by a pattern: the wall-clock time it names
// (microseconds since the epoch, as if UTC) and the zone or offset it
// gives, if any.
type parsedTime struct {
	wall   int64
	zoned  bool
	offset int            // seconds east of UTC, when loc is nil
	loc    *time.Location // a region (z, VV)
}

// instant is the instant t names: its wall time in its own zone, or in
// session when the text gave none (as Spark's to_timestamp reads it).
func (t parsedTime) instant(session *time.Location) (int64, bool) {
	switch {
	case !t.zoned:
		return localToInstant(session, t.wall), true
	case t.loc != nil:
		return localToInstant(t.loc, t.wall), true
	}
	off := int64(t.offset) * fnMicrosPerSecond
	if off > 0 && t.wall < math.MinInt64+off || off < 0 && t.wall > math.MaxInt64+off {
		return 0, false
	}
	return t.wall - off, true
}

// parse parses s completely.
func (p *datetimePattern) parse(s []byte) (parsedTime, bool) {
	f := dtFields{year: 1970, month: 1, day: 1, hourKind: dtHour}
	pos, ok := parseItems(p.items, s, 0, &f)
	if !ok || pos != len(s) {
		return parsedTime{}, false
	}
	wall, ok := f.resolve()
	return parsedTime{wall: wall, zoned: f.hasOffset, offset: f.offset, loc: f.loc}, ok
}

// parseItems parses items from s[pos:] into f and returns the position
// after them.
func parseItems(items []dtItem, s []byte, pos int, f *dtFields) (int, bool) {
	digits := func(min, max int) (int64, bool) {
		v, k := int64(0), 0
		for k < max && pos+k < len(s) && s[pos+k] >= '0' && s[pos+k] <= '9' {
			v = v*10 + int64(s[pos+k]-'0')
			k++
		}
		if k < min {
			return 0, false
		}
		pos += k
		return v, true
	}
	for _, it := range items {
		var v int64
		ok := true
		switch it.kind {
		case dtLiteral:
			if !hasFoldPrefix(s[pos:], it.lit) {
				return 0, false
			}
			pos += len(it.lit)
			continue
		case dtOptional:
			// A section that does not match leaves neither position nor
			// fields changed.
			g := *f
			if end, matched := parseItems(it.sub, s, pos, &g); matched {
				*f, pos = g, end
			}
			continue
		case dtMonthText:
			k, w, found := matchName(s[pos:], monthNames, it.count == 4)
			if !found || !f.set(dtMonth, int64(k+1)) {
				return 0, false
			}
			f.month, f.hasMonth = int64(k+1), true
			pos += w
			continue
		case dtDayName:
			_, w, found := matchName(s[pos:], dayNames, it.count == 4)
			if !found {
				return 0, false
			}
			pos += w
			continue
		case dtAmPm:
			switch {
			case hasFoldPrefix(s[pos:], "AM"):
			case hasFoldPrefix(s[pos:], "PM"):
				f.pm = true
			default:
				return 0, false
			}
			f.hasAmPm = true
			pos += 2
			continue
		case dtOffset:
			off, w, found := parseOffsetField(s[pos:], it)
			if !found {
				return 0, false
			}
			f.offset, f.hasOffset = off, true
			pos += w
			continue
		case dtZoneID:
			k := pos
			for k < len(s) && (s[k] >= 'A' && s[k] <= 'Z' || s[k] >= 'a' && s[k] <= 'z' || s[k] >= '0' && s[k] <= '9' ||
				s[k] == '/' || s[k] == '_' || s[k] == '+' || s[k] == '-' || s[k] == ':') {
				k++
			}
			off, loc, found := parseZone(s[pos:k])
			if !found || k == pos {
				return 0, false
			}
			f.offset, f.loc, f.hasOffset = off, loc, true
			pos = k
			continue
		case dtFraction:
			start := pos
			v, ok = digits(it.min, it.max)
			if ok {
				n := pos - start
				nanos := v
				for k := n; k < 9; k++ {
					nanos *= 10
				}
				for ; n < 6; n++ {
					v *= 10
				}
				for ; n > 6; n-- {
					v /= 10
				}
				f.micros = v
				ok = f.set(dtFraction, nanos)
			}
		default:
			v, ok = digits(it.min, it.max)
		}
		if !ok {
			return 0, false
		}
		switch it.kind {
		case dtYear:
			if it.count == 2 {
				v += 2000
			}
			f.year = v
		case dtMonth:
			f.month, f.hasMonth = v, true
		case dtDay:
			f.day, f.hasDay = v, true
		case dtDayOfYear:
			f.doy = v
		case dtHour, dtHourK1, dtHour12, dtHourK0:
			f.hour, f.hourKind = v, it.kind
		case dtMinute:
			f.minute = v
		case dtSecond:
			f.second = v
		}
		if it.kind != dtFraction && !f.set(it.kind, v) {
			return 0, false
		}
	}
	return pos, true
}

// parseOffsetField reads a zone offset for X, x or Z.
func parseOffsetField(s []byte, it dtItem) (int, int, bool) {
	if (it.letter == 'X' || it.letter == 'Z' && it.count >= 4) && len(s) > 0 && s[0] == 'Z' {
		return 0, 1, true
	}
	k := 0
	if it.letter == 'Z' && it.count == 4 {
		if !hasFoldPrefix(s, "GMT") {
			return 0, 0, false
		}
		k = 3
		if k == len(s) || s[k] != '+' && s[k] != '-' {
			return 0, k, true
		}
	}
	end := k
	if end < len(s) && (s[end] == '+' || s[end] == '-') {
		end++
		for end < len(s) && end-k < 9 && (s[end] >= '0' && s[end] <= '9' || s[end] == ':') {
			end++
		}
	}
	off, ok := parseZoneOffset(string(s[k:end]))
	return off, end, ok
}

// resolve turns the fields into the wall-clock time they name, in
// microseconds since the epoch as if UTC.
func (f *dtFields) resolve() (int64, bool) {
	if f.doy != 0 {
		last := int64(365)
		if fnIsLeap(f.year) {
			last = 366
		}
		if f.doy < 1 || f.doy > last {
			return 0, false
		}
		days := daysFromCivil(f.year, 1, 1) + f.doy - 1
		y, m, d := civilFromDays(days)
		if (f.hasMonth && int64(m) != f.month) || (f.hasDay && int64(d) != f.day) || y != f.year {
			return 0, false
		}
		f.month, f.day = int64(m), int64(d)
	}
	h := f.hour
	switch f.hourKind {
	case dtHourK1:
		if h < 1 || h > 24 {
			return 0, false
		}
		h %= 24
	case dtHour12, dtHourK0:
		if f.hourKind == dtHour12 && (h < 1 || h > 12) || f.hourKind == dtHourK0 && h > 11 {
			return 0, false
		}
		h %= 12
		if f.pm {
			h += 12
		}
	default:
		if f.hasAmPm && f.pm && h < 12 {
			h += 12
		}
	}
	if f.month < 1 || f.month > 12 || !fnValidDate(f.year, int(f.month), int(f.day)) ||
		h > 23 || f.minute > 59 || f.second > 59 {
		return 0, false
	}
	days := daysFromCivil(f.year, int(f.month), int(f.day))
	secs := days*86400 + h*3600 + f.minute*60 + f.second
	// secs*10^6 fits for |secs| <= 9_223_372_036_854; adding the fraction
	// can still pass the largest timestamp (294247-01-10 04:00:54.775807).
	// Only a positive secs can: for a negative one MaxInt64-secs*10^6
	// would itself overflow (every time before 1970 was refused).
	if secs > 9_223_372_036_854 || secs < -9_223_372_036_854 || secs > 0 && f.micros > math.MaxInt64-secs*fnMicrosPerSecond {
		return 0, false
	}
	return secs*fnMicrosPerSecond + f.micros, true
}
