package vector

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
)

// TimestampNTZ is Spark's TIMESTAMP_NTZ: a date and time of day without a
// time zone, stored as the microseconds of that wall-clock reading counted
// as if it were UTC. It is an Arrow timestamp without a zone, so the
// kernels that only order, compare or hash timestamps serve it unchanged;
// the session time zone never applies to it, only to conversions between
// it and TIMESTAMP (an instant).
var TimestampNTZ arrow.DataType = &arrow.TimestampType{Unit: arrow.Microsecond}

// IsTimestampNTZ reports whether dt is TIMESTAMP_NTZ (a zone-less Arrow
// timestamp).
func IsTimestampNTZ(dt arrow.DataType) bool {
	t, ok := Unwrap(dt).(*arrow.TimestampType)
	return ok && t.TimeZone == ""
}

// ntzCastKernel is the kernel of a cast from or to TIMESTAMP_NTZ, or nil
// when Spark has no such cast (numbers, booleans and binary).
func ntzCastKernel(from, to arrow.DataType) castKernel {
	switch {
	case IsTimestampNTZ(from) && IsTimestampNTZ(to):
		return nil
	case IsTimestampNTZ(from):
		switch {
		case to.ID() == arrow.STRING:
			return inUTC(timestampToString)
		case to.ID() == arrow.DATE32:
			return inUTC(timestampToDate)
		case arrow.TypeEqual(to, Timestamp):
			return ntzToTimestamp
		}
	case IsTimestampNTZ(to):
		switch from.ID() {
		case arrow.STRING:
			return func(c *castEval, arr arrow.Array) (arrow.Array, error) {
				return parseStrings(c, arr, parseTimestampNTZ)
			}
		case arrow.DATE32:
			return inUTC(dateToTimestamp)
		case arrow.TIMESTAMP:
			if arrow.TypeEqual(from, Timestamp) {
				return timestampToNTZ
			}
		}
	}
	return nil
}

// inUTC runs a timestamp kernel with the wall clock of UTC, which is the
// wall clock an NTZ value holds.
func inUTC(k castKernel) castKernel {
	return func(c *castEval, arr arrow.Array) (arrow.Array, error) {
		u := *c
		u.loc = nil
		return k(&u, arr)
	}
}

// timestampToNTZ is the wall-clock reading of each instant in the session
// time zone.
func timestampToNTZ(c *castEval, arr arrow.Array) (arrow.Array, error) {
	src := fnRawValues[int64](arr)
	return castFixedResult(c, arr, func(dst []int64, _ *validityOut) error {
		var z zoneCache
		for i, v := range src {
			dst[i] = toWall(&z, c.loc, v)
		}
		return nil
	})
}

// ntzToTimestamp is the instant each wall-clock reading names in the
// session time zone (a time in a daylight-saving gap moves forward).
func ntzToTimestamp(c *castEval, arr arrow.Array) (arrow.Array, error) {
	src := fnRawValues[int64](arr)
	return castFixedResult(c, arr, func(dst []int64, _ *validityOut) error {
		for i, v := range src {
			dst[i] = localToInstant(c.loc, v)
		}
		return nil
	})
}

// parseTimestampNTZ is Spark's stringToTimestampWithoutTimeZone with time
// zones allowed: the text's zone, when it names a valid one, is ignored.
func parseTimestampNTZ(b []byte) (int64, bool) {
	if v, ok := parseCanonicalTimestamp(b); ok {
		return v, true
	}
	segs, zone, justTime, ok := timestampSegments(b)
	if !ok || justTime {
		return 0, false
	}
	if zone != nil {
		if _, _, ok := parseZone(zone); !ok {
			return 0, false
		}
	}
	y, mo, d := segs[0], int(segs[1]), int(segs[2])
	h, mi, s, us := segs[3], segs[4], segs[5], segs[6]
	if !fnValidDate(y, mo, d) || h < 0 || h > 23 || mi < 0 || mi > 59 || s < 0 || s > 59 {
		return 0, false
	}
	secs := daysFromCivil(y, mo, d)*86400 + h*3600 + mi*60 + s
	if secs > maxNTZSeconds || secs < -maxNTZSeconds {
		return 0, false
	}
	return secs*fnMicrosPerSecond + us, true
}

const maxNTZSeconds = 9223372036854775807/fnMicrosPerSecond - 1

// ntzFunctions are the functions that take a TIMESTAMP_NTZ argument
// correctly: they only move or test values. The others read timestamps as
// instants (fields, truncation and formatting in the session time zone),
// which would be a wrong answer for a wall-clock value, so they refuse it.
var ntzFunctions = map[string]bool{
	"coalesce": true, "nvl": true, "ifnull": true, "if": true, "isnull": true, "isnotnull": true,
	"hour": true, "minute": true, "second": true,
}

// checkNTZArgs refuses a TIMESTAMP_NTZ argument of a function that would
// read it as an instant.
func checkNTZArgs(name string, args []Evaluator) error {
	if ntzFunctions[name] {
		return nil
	}
	for _, a := range args {
		if IsTimestampNTZ(a.DataType()) {
			return fmt.Errorf("%s does not support a timestamp_ntz argument (cast it to timestamp): %w", name, ErrType)
		}
	}
	return nil
}
