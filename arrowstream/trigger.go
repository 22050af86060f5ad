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
	triggerContinuous
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

// DefaultContinuousInterval is the epoch interval of Continuous(0), as
// Spark's default checkpoint interval for continuous queries.
const DefaultContinuousInterval = time.Second

// Continuous runs the query with continuous processing (SEMANTICS.md §10):
// data is processed as it arrives by a long-running pipeline, and an epoch
// is committed to the checkpoint (and, by default, made visible in the
// sink) every interval. Only map-like queries (projections, filters,
// explode, stream-static joins) and, beyond Spark, aggregations in Update
// mode are supported; see docs/continuous.md. An interval of 0 means
// DefaultContinuousInterval.
func Continuous(interval time.Duration) Trigger {
	if interval <= 0 {
		interval = DefaultContinuousInterval
	}
	return Trigger{kind: triggerContinuous, interval: interval}
}

// IsContinuous reports whether t is a Continuous trigger.
func (t Trigger) IsContinuous() bool { return t.kind == triggerContinuous }

// Interval is the ProcessingTime or Continuous interval (0 for other
// triggers).
func (t Trigger) Interval() time.Duration { return t.interval }

func (t Trigger) String() string {
	switch t.kind {
	case triggerOnce:
		return "Once"
	case triggerAvailableNow:
		return "AvailableNow"
	case triggerContinuous:
		return fmt.Sprintf("Continuous(%s)", t.interval)
	}
	return fmt.Sprintf("ProcessingTime(%s)", t.interval)
}

// ParseTrigger parses the trigger forms of TBLPROPERTIES ('trigger' = ...):
// "once", "availableNow" (or "available now"), a duration such as
// "1 second", "500 ms", "10 seconds", "0", "processingTime 1 second", or
// "continuous" / "continuous 100 ms" (continuous processing with that epoch
// interval).
func ParseTrigger(s string) (Trigger, error) {
	norm := strings.ToLower(strings.TrimSpace(s))
	switch strings.ReplaceAll(norm, " ", "") {
	case "once":
		return Once(), nil
	case "availablenow":
		return AvailableNow(), nil
	}
	if rest, ok := strings.CutPrefix(norm, "continuous"); ok {
		rest = strings.TrimSpace(rest)
		if rest == "" {
			return Continuous(0), nil
		}
		d, err := ParseDuration(rest)
		if err != nil {
			return Trigger{}, fmt.Errorf("arrowstream: trigger %q: %w", s, err)
		}
		if d <= 0 {
			return Trigger{}, fmt.Errorf("arrowstream: trigger %q: the continuous epoch interval must be positive", s)
		}
		return Continuous(d), nil
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
