package arrowstream

import (
	"fmt"
	"strconv"
	"strings"
	"time"
)

// Trigger decides when a streaming query runs its epochs (SEMANTICS.md
// §10). The zero value is ProcessingTime(0): epochs back to back.
type Trigger struct {
	kind     triggerKind
	interval time.Duration
}

type triggerKind int

const (
	triggerProcessingTime triggerKind = iota
	triggerOnce
	triggerAvailableNow
)

// ProcessingTime runs an epoch at every multiple of interval (aligned to the
// clock), or back to back when interval is 0. A trigger that takes longer
// than the interval is followed immediately by the next.
func ProcessingTime(interval time.Duration) Trigger {
	return Trigger{kind: triggerProcessingTime, interval: interval}
}

// Once runs a single epoch with all available data, then stops the query
// (no no-data epoch is run).
func Once() Trigger { return Trigger{kind: triggerOnce} }

// AvailableNow processes the data available at start, in as many epochs
// (and no-data epochs) as needed, then stops the query.
func AvailableNow() Trigger { return Trigger{kind: triggerAvailableNow} }

// Interval is the ProcessingTime interval (0 for other triggers).
func (t Trigger) Interval() time.Duration { return t.interval }

func (t Trigger) String() string {
	switch t.kind {
	case triggerOnce:
		return "Once"
	case triggerAvailableNow:
		return "AvailableNow"
	}
	return fmt.Sprintf("ProcessingTime(%s)", t.interval)
}

// ParseTrigger parses the trigger forms of TBLPROPERTIES ('trigger' = ...):
// "once", "availableNow" (or "available now"), a duration such as
// "1 second", "500 ms", "10 seconds", "0", or "processingTime 1 second".
func ParseTrigger(s string) (Trigger, error) {
	norm := strings.ToLower(strings.TrimSpace(s))
	switch strings.ReplaceAll(norm, " ", "") {
	case "once":
		return Once(), nil
	case "availablenow":
		return AvailableNow(), nil
	}
	norm = strings.TrimPrefix(norm, "processingtime")
	d, err := ParseDuration(norm)
	if err != nil {
		return Trigger{}, fmt.Errorf("arrowstream: trigger %q: %w", s, err)
	}
	return ProcessingTime(d), nil
}

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
