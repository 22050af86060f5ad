package streamtest

import (
	"context"
	"sync"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream"
)

// switchClock is the session's clock: the fixture points it at the system
// clock or at its manual clock when it starts a run (one run at a time).
type switchClock struct {
	mu sync.Mutex
	c  arrowstream.Clock
}

func (s *switchClock) use(c arrowstream.Clock) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.c = c
}

func (s *switchClock) get() arrowstream.Clock {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.c
}

// Now implements arrowstream.Clock.
func (s *switchClock) Now() time.Time { return s.get().Now() }

// WaitUntil implements arrowstream.Clock.
func (s *switchClock) WaitUntil(ctx context.Context, t time.Time) error {
	return s.get().WaitUntil(ctx, t)
}

// faultInjector fails the next epoch with input rows once armed
// (FailNextEpoch), in this run or a later one.
type faultInjector struct {
	mu    sync.Mutex
	armed bool
	fired []int64 // epochs failed
}

func (f *faultInjector) arm() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.armed = true
}

// BeforeSink implements arrowstreamtest.FaultInjector.
func (f *faultInjector) BeforeSink(_ string, epoch, inputRows int64) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.armed || inputRows == 0 {
		return nil
	}
	f.armed = false
	f.fired = append(f.fired, epoch)
	return errInjected
}

// errInjected is the error of an epoch failed by FailNextEpoch.
var errInjected = injectedError{}

type injectedError struct{}

func (injectedError) Error() string { return "streamtest: injected failure (fail_next_epoch)" }
