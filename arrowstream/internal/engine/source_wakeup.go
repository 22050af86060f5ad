package engine

import (
	"context"
	"sync"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
)

// The micro-batch loop's idle wait also listens to NotifyingSource: an idle
// query whose source says data was added starts its next epoch at once
// instead of after the polling delay (10 ms, Spark's pollingDelay). Sources
// that cannot notify are polled as before.

// wakeChannels returns the DataAvailable channels of the sources that can
// notify. The loop takes them before a trigger looks for data, so data
// added after that look wakes the idle wait that follows.
func wakeChannels(sources []stream.Source) []<-chan struct{} {
	return appendWakeChannels(nil, sources)
}

// appendWakeChannels appends the sources' DataAvailable channels to chs
// (the loop passes its slice of the previous trigger, emptied, so that
// taking them allocates nothing per trigger).
func appendWakeChannels(chs []<-chan struct{}, sources []stream.Source) []<-chan struct{} {
	for _, s := range sources {
		if n, ok := s.(stream.NotifyingSource); ok {
			chs = append(chs, n.DataAvailable())
		}
	}
	return chs
}

// directWake is how many wake channels waitWake selects on directly.
const directWake = 4

// waitWake blocks until timer fires, one of chs is closed (data was added
// to a notifying source) or ctx ends (its error). Up to directWake
// channels are in the select itself; only more take anyClosed's watching
// goroutines. A goroutine per channel, started and stopped by every idle
// wait, cost a query of three memory streams three goroutine starts and
// as many wake-ups per idle trigger, and ProcessAllAvailable makes one
// idle trigger after every epoch.
func waitWake(ctx context.Context, timer <-chan time.Time, chs []<-chan struct{}) error {
	if len(chs) > directWake {
		woken, stop := anyClosed(chs)
		defer stop()
		chs = []<-chan struct{}{woken}
	}
	var c [directWake]<-chan struct{} // nil never fires
	copy(c[:], chs)
	select {
	case <-timer:
	case <-c[0]:
	case <-c[1]:
	case <-c[2]:
	case <-c[3]:
	case <-ctx.Done():
		return ctx.Err()
	}
	return nil
}

// anyClosed returns a channel closed as soon as one of chs is (nil, which
// never fires in a select, when chs is empty); stop releases the watching
// goroutines when the caller no longer waits.
func anyClosed(chs []<-chan struct{}) (ch <-chan struct{}, stop func()) {
	switch len(chs) {
	case 0:
		return nil, func() {}
	case 1:
		return chs[0], func() {}
	}
	out, quit := make(chan struct{}), make(chan struct{})
	var once sync.Once
	for _, c := range chs {
		go func() {
			select {
			case <-c:
				once.Do(func() { close(out) })
			case <-quit:
			}
		}()
	}
	return out, func() { close(quit) }
}
