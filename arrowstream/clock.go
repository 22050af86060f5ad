package arrowstream

import (
	"context"
	"time"
)

// Clock is the engine's notion of processing time: trigger scheduling and
// batch timestamps (current_timestamp()) come from it, so tests can drive a
// query with a ManualClock.
type Clock interface {
	Now() time.Time
	// WaitUntil blocks until the clock reaches t or ctx ends.
	WaitUntil(ctx context.Context, t time.Time) error
}

// SystemClock is the wall clock.
type SystemClock struct{}

// Now implements Clock.
func (SystemClock) Now() time.Time { return time.Now() }

// WaitUntil implements Clock.
func (SystemClock) WaitUntil(ctx context.Context, t time.Time) error {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err()
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-timer.C:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}
