package vector

import (
	"math"
	"sync"
	"sync/atomic"
	"time"
)

// Spark's string → timestamp and string → date parsers (legacy, non-ANSI:
// failure is NULL), and proleptic Gregorian calendar arithmetic on days
// since the epoch. Everything is UTC unless the string names a zone.

// daysFromCivil returns the days since 1970-01-01 of y-m-d (proleptic
// Gregorian; m in 1..12).
func daysFromCivil(y int64, m, d int) int64 {
	if m <= 2 {
		y--
	}
	era := fnFloorDiv(y, 400)
	yoe := y - era*400
	mp := int64((m + 9) % 12)
	doy := (153*mp+2)/5 + int64(d) - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return era*146097 + doe - 719468
}

// civilFromDays is the inverse of daysFromCivil.
func civilFromDays(z int64) (y int64, m, d int) {
	z += 719468
	era := fnFloorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = int(doy - (153*mp+2)/5 + 1)
	if mp < 10 {
		m = int(mp + 3)
	} else {
		m = int(mp - 9)
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

func fnIsLeap(y int64) bool { return y%4 == 0 && (y%100 != 0 || y%400 == 0) }

// fnDaysInMonth returns the length of month m of year y.
func fnDaysInMonth(y int64, m int) int {
	switch m {
	case 2:
		if fnIsLeap(y) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// fnValidDate reports whether y-m-d is a date Java's LocalDate accepts.
func fnValidDate(y int64, m, d int) bool {
	return y >= -999_999_999 && y <= 999_999_999 && m >= 1 && m <= 12 && d >= 1 && d <= fnDaysInMonth(y, m)
}

// parseDate parses like Spark's stringToDate: [+-]yyyy*, [+-]yyyy*-[m]m,
// [+-]yyyy*-[m]m-[d]d, optionally followed by ' ' or 'T' and anything. The
// year has 4 to 7 digits.
func parseDate(b []byte) (int32, bool) {
	b = trimSpark(b)
	if len(b) == 0 {
		return 0, false
	}
	valid := func(seg, digits int) bool {
		return seg == 0 && digits >= 4 && digits <= 7 || seg != 0 && digits > 0 && digits <= 2
	}
	segs := [3]int64{1, 1, 1}
	sign := int64(1)
	j := 0
	if b[0] == '-' || b[0] == '+' {
		if b[0] == '-' {
			sign = -1
		}
		j++
	}
	i, cur, digits := 0, int64(0), 0
	for ; j < len(b) && i < 3 && b[j] != ' ' && b[j] != 'T'; j++ {
		c := b[j]
		if i < 2 && c == '-' {
			if !valid(i, digits) {
				return 0, false
			}
			segs[i] = cur
			cur, digits = 0, 0
			i++
			continue
		}
		if c < '0' || c > '9' || digits >= 9 {
			return 0, false
		}
		cur = cur*10 + int64(c-'0')
		digits++
	}
	if !valid(i, digits) || i < 2 && j < len(b) {
		return 0, false
	}
	segs[i] = cur
	y := sign * segs[0]
	if !fnValidDate(y, int(segs[1]), int(segs[2])) {
		return 0, false
	}
	days := daysFromCivil(y, int(segs[1]), int(segs[2]))
	if days != int64(int32(days)) {
		return 0, false
	}
	return int32(days), true
}

// parseTimestamp parses like Spark's stringToTimestamp with the session
// zone UTC:
//
//	[+-]yyyy*[-[m]m[-[d]d]]
//	[+-]yyyy*-[m]m-[d]d[( |T)[h]h[:[m]m[:[s]s[.fraction]]][zone]]
//
// The year has 4 to 6 digits; fraction digits past microseconds are
// dropped; zone is Z, an offset (+hh, +hh:mm, +hhmm, +hh:mm:ss), UTC, GMT
// or UT optionally followed by an offset, one of Java's short ids (PST,
// CET, ...) or a region such as Europe/Paris. Strings holding only a time
// of day are NULL: Spark would take the current date, which is not
// deterministic.
func parseTimestamp(b []byte) (int64, bool) { return parseTimestampIn(b, nil) }

// parseTimestampIn is parseTimestamp reading a string without a zone in
// loc (the session time zone; nil is UTC).
func parseTimestampIn(b []byte, loc *time.Location) (int64, bool) {
	if v, ok := parseCanonicalTimestamp(b); ok {
		return localToInstant(loc, v), true
	}
	segs, zone, justTime, ok := timestampSegments(b)
	if !ok || justTime {
		return 0, false
	}
	y, mo, d := segs[0], int(segs[1]), int(segs[2])
	h, mi, s, us := segs[3], segs[4], segs[5], segs[6]
	if !fnValidDate(y, mo, d) || h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 59 {
		return 0, false
	}
	offset := int64(0)
	if zone != nil {
		off, loc, ok := parseZone(zone)
		if !ok {
			return 0, false
		}
		if loc != nil {
			if y < -290_000 || y > 290_000 {
				return 0, false
			}
			t := time.Date(int(y), time.Month(mo), d, int(h), int(mi), int(s), int(us)*1000, loc)
			return t.UnixMicro(), true
		}
		offset = int64(off)
	}
	days := daysFromCivil(y, mo, d)
	secs := days*86400 + h*3600 + mi*60 + s - offset
	if secs > math.MaxInt64/fnMicrosPerSecond-1 || secs < math.MinInt64/fnMicrosPerSecond+1 {
		return 0, false
	}
	if zone == nil {
		return localToInstant(loc, secs*fnMicrosPerSecond+us), true
	}
	return secs*fnMicrosPerSecond + us, true
}

// parseCanonicalTimestamp is the fast path for the common shape
// yyyy-MM-dd HH:mm:ss[.fraction] (or with 'T'), without a zone or
// surrounding space; anything else goes to the general parser, which
// gives the same result for these strings.
func parseCanonicalTimestamp(b []byte) (int64, bool) {
	if len(b) < 19 || b[4] != '-' || b[7] != '-' || b[10] != ' ' && b[10] != 'T' || b[13] != ':' || b[16] != ':' {
		return 0, false
	}
	num := func(k, n int) (int64, bool) {
		v := int64(0)
		for _, c := range b[k : k+n] {
			if c < '0' || c > '9' {
				return 0, false
			}
			v = v*10 + int64(c-'0')
		}
		return v, true
	}
	y, ok1 := num(0, 4)
	mo, ok2 := num(5, 2)
	d, ok3 := num(8, 2)
	h, ok4 := num(11, 2)
	mi, ok5 := num(14, 2)
	sec, ok6 := num(17, 2)
	if !(ok1 && ok2 && ok3 && ok4 && ok5 && ok6) || h > 23 || mi > 59 || sec > 59 || !fnValidDate(y, int(mo), int(d)) {
		return 0, false
	}
	us := int64(0)
	if len(b) > 19 {
		if b[19] != '.' || len(b) == 20 || len(b) > 29 {
			return 0, false
		}
		digits := 0
		for _, c := range b[20:] {
			if c < '0' || c > '9' {
				return 0, false
			}
			if digits < 6 {
				us = us*10 + int64(c-'0')
				digits++
			}
		}
		for ; digits < 6; digits++ {
			us *= 10
		}
	}
	days := daysFromCivil(y, int(mo), int(d))
	return (days*86400+h*3600+mi*60+sec)*fnMicrosPerSecond + us, true
}

// timestampSegments is Spark's parseTimestampString state machine: it
// splits the string into year, month, day, hour, minute, second,
// microseconds and the zone text.
func timestampSegments(raw []byte) (segs [9]int64, zone []byte, justTime, ok bool) {
	start, end := 0, len(raw)
	for start < end && isSparkSpace(raw[start]) {
		start++
	}
	for end > start && isSparkSpace(raw[end-1]) {
		end--
	}
	if start == end {
		return segs, nil, false, false
	}
	valid := func(seg, digits int) bool {
		return seg == 6 || seg == 0 && digits >= 4 && digits <= 6 || seg == 7 && digits <= 2 ||
			seg != 0 && seg != 6 && seg != 7 && digits > 0 && digits <= 2
	}
	segs = [9]int64{1, 1, 1, 0, 0, 0, 0, 0, 0}
	i, cur, digits, fracDigits := 0, int64(0), 0, 0
	yearSign := int64(0)
	j := start
	if raw[j] == '-' || raw[j] == '+' {
		yearSign = 1
		if raw[j] == '-' {
			yearSign = -1
		}
		j++
	}
	// next closes the current segment and moves to segment to.
	next := func(to int) bool {
		if !valid(i, digits) || i >= len(segs) {
			return false
		}
		segs[i] = cur
		cur, digits = 0, 0
		i = to
		return true
	}
	for ; j < end; j++ {
		c := raw[j]
		if c >= '0' && c <= '9' {
			if i == 6 {
				fracDigits++
			}
			if (i != 6 || digits < 6) && digits < 18 {
				cur = cur*10 + int64(c-'0')
			}
			digits++
			continue
		}
		switch {
		case j == 0 && c == 'T':
			justTime = true
			i += 3
		case i < 2:
			switch {
			case c == '-':
				if !next(i + 1) {
					return segs, nil, false, false
				}
			case i == 0 && c == ':' && yearSign == 0:
				justTime = true
				i = 3
				if !next(4) {
					return segs, nil, false, false
				}
			default:
				return segs, nil, false, false
			}
		case i == 2:
			if (c != ' ' && c != 'T') || !next(3) {
				return segs, nil, false, false
			}
		case i == 3 || i == 4:
			if c != ':' || !next(i+1) {
				return segs, nil, false, false
			}
		case i == 5 || i == 6:
			if c == '.' && i == 5 {
				if !next(6) {
					return segs, nil, false, false
				}
			} else {
				if !next(i + 1) {
					return segs, nil, false, false
				}
				zone = raw[j:end]
				j = end - 1
			}
			if i == 6 && c != '.' {
				i++
			}
		default:
			if i >= len(segs) || (c != ':' && c != ' ') || !next(i+1) {
				return segs, nil, false, false
			}
		}
	}
	if i >= len(segs) || !valid(i, digits) {
		return segs, nil, false, false
	}
	segs[i] = cur
	for ; fracDigits < 6; fracDigits++ {
		segs[6] *= 10
	}
	if yearSign != 0 {
		segs[0] *= yearSign
	}
	return segs, zone, justTime, true
}

// javaShortIDs is java.time.ZoneId.SHORT_IDS, which Spark consults.
var javaShortIDs = map[string]string{
	"ACT": "Australia/Darwin", "AET": "Australia/Sydney", "AGT": "America/Argentina/Buenos_Aires",
	"ART": "Africa/Cairo", "AST": "America/Anchorage", "BET": "America/Sao_Paulo",
	"BST": "Asia/Dhaka", "CAT": "Africa/Harare", "CNT": "America/St_Johns",
	"CST": "America/Chicago", "CTT": "Asia/Shanghai", "EAT": "Africa/Addis_Ababa",
	"ECT": "Europe/Paris", "IET": "America/Indiana/Indianapolis", "IST": "Asia/Kolkata",
	"JST": "Asia/Tokyo", "MIT": "Pacific/Apia", "NET": "Asia/Yerevan",
	"NST": "Pacific/Auckland", "PLT": "Asia/Karachi", "PNT": "America/Phoenix",
	"PRT": "America/Puerto_Rico", "PST": "America/Los_Angeles", "SST": "Pacific/Guadalcanal",
	"VST": "Asia/Ho_Chi_Minh", "EST": "-05:00", "MST": "-07:00", "HST": "-10:00",
}

// parseZone resolves a zone as Spark's getZoneId does: either a fixed
// offset in seconds, or a location for region ids.
func parseZone(z []byte) (offset int, loc *time.Location, ok bool) {
	i, j := 0, len(z)
	for i < j && z[i] <= ' ' {
		i++
	}
	for j > i && z[j-1] <= ' ' {
		j--
	}
	id := normalizeOffset(string(z[i:j]))
	if full, ok := javaShortIDs[id]; ok {
		id = full
	}
	switch {
	case id == "Z":
		return 0, nil, true
	case len(id) <= 1 || id[0] == '+' || id[0] == '-':
		off, ok := parseZoneOffset(id)
		return off, nil, ok
	case id == "UTC" || id == "GMT" || id == "UT":
		return 0, nil, true
	}
	for _, prefix := range []string{"UTC", "GMT", "UT"} {
		if len(id) > len(prefix) && id[:len(prefix)] == prefix && (id[len(prefix)] == '+' || id[len(prefix)] == '-') {
			off, ok := parseZoneOffset(id[len(prefix):])
			return off, nil, ok
		}
	}
	loc, ok = loadRegion(id)
	return 0, loc, ok
}

// normalizeOffset applies Spark's pre-Java-8 fixes: "+h:mm" → "+0h:mm" and
// a trailing "+hh:m" → "+hh:0m".
func normalizeOffset(id string) string {
	isDigit := func(c byte) bool { return c >= '0' && c <= '9' }
	for k := 0; k+2 < len(id); k++ {
		if (id[k] == '+' || id[k] == '-') && isDigit(id[k+1]) && id[k+2] == ':' {
			id = id[:k+1] + "0" + id[k+1:]
			break
		}
	}
	if n := len(id); n >= 5 && (id[n-5] == '+' || id[n-5] == '-') && isDigit(id[n-4]) && isDigit(id[n-3]) && id[n-2] == ':' && isDigit(id[n-1]) {
		id = id[:n-1] + "0" + id[n-1:]
	}
	return id
}

// parseZoneOffset parses Java's ZoneOffset.of forms: ±h, ±hh, ±hhmm,
// ±hh:mm, ±hhmmss, ±hh:mm:ss, within ±18:00.
func parseZoneOffset(s string) (int, bool) {
	if len(s) < 2 || s[0] != '+' && s[0] != '-' {
		return 0, false
	}
	num := func(k int) (int, bool) {
		if k+2 > len(s) || s[k] < '0' || s[k] > '9' || s[k+1] < '0' || s[k+1] > '9' {
			return 0, false
		}
		return int(s[k]-'0')*10 + int(s[k+1]-'0'), true
	}
	var h, m, sec int
	ok := true
	switch len(s) {
	case 2:
		if s[1] < '0' || s[1] > '9' {
			return 0, false
		}
		h = int(s[1] - '0')
	case 3:
		h, ok = num(1)
	case 5:
		h, ok = num(1)
		if ok {
			m, ok = num(3)
		}
	case 6:
		h, ok = num(1)
		if ok && s[3] == ':' {
			m, ok = num(4)
		} else {
			ok = false
		}
	case 7:
		h, ok = num(1)
		if ok {
			m, ok = num(3)
		}
		if ok {
			sec, ok = num(5)
		}
	case 9:
		h, ok = num(1)
		if ok && s[3] == ':' && s[6] == ':' {
			m, ok = num(4)
			if ok {
				sec, ok = num(7)
			}
		} else {
			ok = false
		}
	default:
		return 0, false
	}
	if !ok || h > 18 || m > 59 || sec > 59 {
		return 0, false
	}
	total := h*3600 + m*60 + sec
	if total > 18*3600 {
		return 0, false
	}
	if s[0] == '-' {
		total = -total
	}
	return total, true
}

// Region ids are loaded from the system's time zone database once; the
// cache is bounded so that garbage input cannot grow it without limit.
var (
	regionCache     sync.Map // string → *time.Location (nil: unknown)
	regionCacheSize atomic.Int64
)

const regionCacheLimit = 1024

func loadRegion(id string) (*time.Location, bool) {
	if v, ok := regionCache.Load(id); ok {
		loc := v.(*time.Location)
		return loc, loc != nil
	}
	if !regionID(id) {
		return nil, false
	}
	loc, err := time.LoadLocation(id)
	if err != nil {
		loc = nil
	}
	if regionCacheSize.Add(1) <= regionCacheLimit {
		regionCache.Store(id, loc)
	}
	return loc, loc != nil
}

// regionID checks the syntax of a Java region id ([A-Za-z][A-Za-z0-9~/._+-]+)
// so that nothing else reaches the file system.
func regionID(id string) bool {
	if len(id) < 2 || id == "Local" || !(id[0] >= 'A' && id[0] <= 'Z' || id[0] >= 'a' && id[0] <= 'z') {
		return false
	}
	for k := 1; k < len(id); k++ {
		c := id[k]
		ok := c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' ||
			c == '~' || c == '/' || c == '.' || c == '_' || c == '+' || c == '-'
		if !ok {
			return false
		}
	}
	return !containsDotDot(id)
}

func containsDotDot(s string) bool {
	for k := 0; k+1 < len(s); k++ {
		if s[k] == '.' && s[k+1] == '.' {
			return true
		}
	}
	return false
}
