package engine

import (
	"context"
	"time"
)

// TriggerKind says when a query runs its epochs.
type TriggerKind int

// The trigger kinds (arrowstream.Trigger builds them).
const (
	TriggerProcessingTime TriggerKind = iota
	TriggerOnce
	TriggerAvailableNow
	TriggerContinuous
)

// Trigger is a query's trigger as the loops see it: its kind and interval
// (the epoch interval of a continuous query).
type Trigger struct {
	Kind     TriggerKind
	Interval time.Duration
}

// Clock is the engine's notion of processing time (arrowstream.Clock).
type Clock interface {
	Now() time.Time
	// WaitUntil blocks until the clock reaches t or ctx ends.
	WaitUntil(ctx context.Context, t time.Time) error
}
