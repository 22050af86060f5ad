package vector

import (
	"math"
	"time"
)

// The session time zone (spark.sql.session.timeZone). Timestamps are
// instants (microseconds since the epoch, UTC); the zone only matters where
// an instant meets a wall clock: formatting and parsing strings, dates,
// and the fields and truncations of the timestamp functions. A nil
// *time.Location means UTC everywhere, so the UTC paths stay as fast as
// they were.

// isUTC reports whether loc is nil or UTC.
func isUTC(loc *time.Location) bool { return loc == nil || loc == time.UTC }

// zoneCache remembers the offset of the zone period of the last instant
// looked up, so that a column of nearby instants costs one lookup per
// period rather than one per row.
type zoneCache struct {
	lo, hi int64 // the cached period, [lo, hi) in microseconds
	off    int64 // its offset from UTC in microseconds
	ok     bool
}

// maxZoneMicros bounds the instants given to package time (whose Unix
// seconds must fit an int64 after adding its internal epoch offset).
const maxZoneMicros = math.MaxInt64 / 2

// offsetMicros is loc's offset from UTC at the instant micros.
func (z *zoneCache) offsetMicros(loc *time.Location, micros int64) int64 {
	if isUTC(loc) {
		return 0
	}
	if z.ok && micros >= z.lo && micros < z.hi {
		return z.off
	}
	if micros > maxZoneMicros || micros < -maxZoneMicros {
		return 0
	}
	t := time.UnixMicro(micros).In(loc)
	_, off := t.Zone()
	start, end := t.ZoneBounds()
	z.off = int64(off) * fnMicrosPerSecond
	z.lo, z.hi = math.MinInt64, math.MaxInt64
	if !start.IsZero() {
		z.lo = start.UnixMicro()
	}
	if !end.IsZero() {
		z.hi = end.UnixMicro()
	}
	z.ok = true
	return z.off
}

// localToInstant reads wall-clock microseconds (the local date and time
// counted as if they were UTC) in loc and returns the instant. A wall time
// in a daylight-saving gap moves forward, as Java's ZonedDateTime does.
func localToInstant(loc *time.Location, wall int64) int64 {
	if isUTC(loc) || wall > maxZoneMicros || wall < -maxZoneMicros {
		return wall
	}
	secs := fnFloorDiv(wall, fnMicrosPerSecond)
	frac := wall - secs*fnMicrosPerSecond
	t := time.Unix(secs, 0).UTC()
	l := time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), 0, loc)
	return l.Unix()*fnMicrosPerSecond + frac
}

// localMidnight is the instant the date days (since the epoch) starts in
// loc.
func localMidnight(loc *time.Location, days int64) int64 {
	return localToInstant(loc, days*fnMicrosPerDay)
}

// toWall is the wall-clock microseconds of an instant in loc (the inverse
// of localToInstant outside gaps and overlaps).
func toWall(z *zoneCache, loc *time.Location, micros int64) int64 {
	return micros + z.offsetMicros(loc, micros)
}
