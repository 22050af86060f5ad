package stream

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// ParseDuration parses durations the way users write them in options:
// "10 seconds", "1 minute", "500 ms", "1 hour 30 minutes", "2s", "0".
func ParseDuration(s string) (time.Duration, error) {
	s = strings.TrimSpace(strings.ToLower(s))
	if s == "" {
		return 0, fmt.Errorf("empty duration")
	}
	if s == "0" {
		return 0, nil
	}
	if d, err := time.ParseDuration(strings.ReplaceAll(s, " ", "")); err == nil {
		if d < 0 {
			return 0, fmt.Errorf("negative duration %q", s)
		}
		return d, nil
	}
	fields := strings.Fields(strings.TrimPrefix(s, "interval"))
	if len(fields) == 0 || len(fields)%2 != 0 {
		return 0, fmt.Errorf("cannot parse duration %q (want e.g. '10 seconds')", s)
	}
	var total time.Duration
	for i := 0; i < len(fields); i += 2 {
		n, err := strconv.ParseInt(strings.Trim(fields[i], "'"), 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("cannot parse duration %q: %q is not a non-negative number", s, fields[i])
		}
		unit, ok := durationUnits[strings.TrimSuffix(strings.Trim(fields[i+1], "'"), "s")]
		if !ok {
			return 0, fmt.Errorf("cannot parse duration %q: unknown unit %q", s, fields[i+1])
		}
		total += time.Duration(n) * unit
	}
	return total, nil
}

// durationUnits is keyed by unit names with one trailing "s" removed
// ("seconds" → "second", "ms" → "m", "us" → "u").
var durationUnits = map[string]time.Duration{
	"microsecond": time.Microsecond,
	"u":           time.Microsecond,
	"millisecond": time.Millisecond,
	"milli":       time.Millisecond,
	"m":           time.Millisecond,
	"second":      time.Second,
	"sec":         time.Second,
	"minute":      time.Minute,
	"min":         time.Minute,
	"hour":        time.Hour,
	"day":         24 * time.Hour,
	"week":        7 * 24 * time.Hour,
}
