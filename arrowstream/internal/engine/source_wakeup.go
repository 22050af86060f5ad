package engine

import (
	"sync"

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
	var chs []<-chan struct{}
	for _, s := range sources {
		if n, ok := s.(stream.NotifyingSource); ok {
			chs = append(chs, n.DataAvailable())
		}
	}
	return chs
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
