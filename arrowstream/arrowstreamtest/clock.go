package arrowstreamtest

import (
	"context"
	"sync"
	"time"
)

// ManualClock only moves when told to (Spark's StreamManualClock). Safe for
// concurrent use.
type ManualClock struct {
	mu      sync.Mutex
	now     time.Time
	changed chan struct{}     // closed and replaced on every change
	waiters map[time.Time]int // deadlines of the goroutines in WaitUntil
}

// NewManualClock returns a clock standing at start.
func NewManualClock(start time.Time) *ManualClock {
	return &ManualClock{now: start, changed: make(chan struct{}), waiters: map[time.Time]int{}}
}

// Now implements Clock.
func (c *ManualClock) Now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.now
}

// Advance moves the clock forward by d.
func (c *ManualClock) Advance(d time.Duration) { c.Set(c.Now().Add(d)) }

// Set moves the clock to t (never backwards).
func (c *ManualClock) Set(t time.Time) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if t.After(c.now) {
		c.now = t
	}
	close(c.changed)
	c.changed = make(chan struct{})
}

// Waiting reports whether some goroutine is blocked in WaitUntil for a
// time the clock has not reached, so a test can tell that the query is
// idle, waiting for its next trigger. A waiter whose deadline an Advance
// has passed no longer counts, even before its goroutine wakes up: right
// after Advance, Waiting is false until the query has run the trigger that
// became due and waits for the next one (Spark's isStreamWaitingAt).
func (c *ManualClock) Waiting() bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	for t := range c.waiters {
		if c.now.Before(t) {
			return true
		}
	}
	return false
}

// WaitUntil implements Clock.
func (c *ManualClock) WaitUntil(ctx context.Context, t time.Time) error {
	c.mu.Lock()
	if c.waiters == nil {
		c.waiters = map[time.Time]int{}
	}
	c.waiters[t]++
	defer func() {
		c.mu.Lock()
		if c.waiters[t]--; c.waiters[t] == 0 {
			delete(c.waiters, t)
		}
		c.mu.Unlock()
	}()
	for {
		if !c.now.Before(t) {
			c.mu.Unlock()
			return nil
		}
		ch := c.changed
		c.mu.Unlock()
		select {
		case <-ch:
		case <-ctx.Done():
			return ctx.Err()
		}
		c.mu.Lock()
	}
}
