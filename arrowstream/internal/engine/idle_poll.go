package engine

import (
	"time"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
)

// maxIdlePoll bounds how long an idle query sleeps on its sources' word
// (stream.IdlePollSource): a stop, a cancellation and a NotifyingSource
// still wake it at once.
const maxIdlePoll = time.Second

// idlePollDelay is how long an idle ProcessingTime(0) query sleeps
// before asking its sources again: pollingDelay, or longer when every
// source says it has nothing new before then (the shortest of their
// delays).
func idlePollDelay(sources []stream.Source) time.Duration {
	d := maxIdlePoll
	for _, s := range sources {
		h := pollingDelay
		if ip, ok := s.(stream.IdlePollSource); ok {
			h = ip.IdlePollDelay()
		}
		d = min(d, max(h, pollingDelay))
	}
	if len(sources) == 0 {
		return pollingDelay
	}
	return d
}
