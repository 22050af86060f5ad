package arrowstream

import (
	"fmt"
	"strings"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream/internal/engine"
	"github.com/arrowstream/arrowstream/arrowstream/stream"
)

// Trigger decides when a streaming query runs its epochs (docs/semantics.md
// §10). The zero value is ProcessingTime(0): epochs back to back.
type Trigger struct {
	kind     engine.TriggerKind
	interval time.Duration
}

// toEngine returns the trigger as the loops see it.
func (t Trigger) toEngine() engine.Trigger { return engine.Trigger{Kind: t.kind, Interval: t.interval} }

// ProcessingTime runs an epoch at every multiple of interval (aligned to the
// clock), or back to back when interval is 0. A trigger that takes longer
// than the interval is followed immediately by the next.
func ProcessingTime(interval time.Duration) Trigger {
	return Trigger{kind: engine.TriggerProcessingTime, interval: interval}
}

// Once runs a single epoch with all available data, then stops the query
// (no no-data epoch is run).
func Once() Trigger { return Trigger{kind: engine.TriggerOnce} }

// AvailableNow processes the data available at start, in as many epochs
// (and no-data epochs) as needed, then stops the query.
func AvailableNow() Trigger { return Trigger{kind: engine.TriggerAvailableNow} }

// DefaultContinuousInterval is the epoch interval of Continuous(0), as
// Spark's default checkpoint interval for continuous queries.
const DefaultContinuousInterval = time.Second

// Continuous runs the query with continuous processing (docs/semantics.md §10):
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
	return Trigger{kind: engine.TriggerContinuous, interval: interval}
}

// IsContinuous reports whether t is a Continuous trigger.
func (t Trigger) IsContinuous() bool { return t.kind == engine.TriggerContinuous }

// Interval is the ProcessingTime or Continuous interval (0 for other
// triggers).
func (t Trigger) Interval() time.Duration { return t.interval }

func (t Trigger) String() string {
	switch t.kind {
	case engine.TriggerOnce:
		return "Once"
	case engine.TriggerAvailableNow:
		return "AvailableNow"
	case engine.TriggerContinuous:
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

// ParseDuration parses an interval as SQL and options write it ("10
// seconds", "1 minute", "500 ms", "2 hours", or Go's "1m30s").
func ParseDuration(s string) (time.Duration, error) { return stream.ParseDuration(s) }

// DefaultContinuousMaxPendingBytes bounds the output a continuous query
// holds for its open epoch before it commits the epoch early (writer
// option "continuous.maxPendingBytes").
const DefaultContinuousMaxPendingBytes = engine.DefaultContinuousMaxPendingBytes
