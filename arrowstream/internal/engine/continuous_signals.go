package engine

import (
	"context"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
)

// forwardNotifications turns a source's arrival notifications into
// non-blocking sends on wake until ctx ends. It registers for the next
// notification before it wakes the pipeline, and wakes it once at the
// start, so that no arrival falls between a notification and the
// pipeline's next read.
func forwardNotifications(ctx context.Context, src stream.NotifyingSource, wake chan<- struct{}) {
	ch := src.DataAvailable()
	for {
		select {
		case wake <- struct{}{}:
		default:
		}
		select {
		case <-ch:
			ch = src.DataAvailable()
		case <-ctx.Done():
			return
		}
	}
}

// epochTicker sends on ticks at every multiple of interval on clock (a
// tick not yet taken is not doubled).
func epochTicker(ctx context.Context, clock Clock, interval time.Duration, ticks chan<- struct{}) {
	ms := max(interval.Milliseconds(), 1)
	for {
		now := clock.Now().UnixMilli()
		next := time.UnixMilli((now/ms)*ms + ms)
		if err := clock.WaitUntil(ctx, next); err != nil {
			return
		}
		select {
		case ticks <- struct{}{}:
		default:
		}
	}
}
