package stateful

import (
	"fmt"
	"math/rand"
	"slices"
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
)

// TestGroupLiveTimeoutsMatchScan: the timeout heap of the live
// flatMapGroupsWithState state returns, epoch after epoch, exactly the
// keys that a scan of every key finds timed out (timeout strictly below
// the threshold), while the keys are updated, given new timeouts, the
// same timeout again, no timeout, or removed, with rows or after timing
// out, as the operator does.
func TestGroupLiveTimeoutsMatchScan(t *testing.T) {
	for seed := int64(1); seed <= 20; seed++ {
		rng := rand.New(rand.NewSource(seed))
		p := &groupLivePart{keys: map[string]*groupEntry{}}
		model := map[string]int64{} // key → timeout
		// call is the operator's write-back for one key.
		call := func(k string) {
			old, ok := model[k]
			switch rng.Intn(5) {
			case 0: // removed
				delete(model, k)
				p.remove(k)
			case 1: // no timeout
				model[k] = stream.NoTimeoutSet
				p.set(k, true, stream.NoTimeoutSet, []byte(k))
			case 2: // unchanged: re-indexed when its timeout was popped
				if !ok {
					return
				}
				if e := p.keys[k]; old != stream.NoTimeoutSet && e.heapAt == stream.NoTimeoutSet {
					p.set(k, e.exists, e.timeoutMs, e.value)
				}
			default:
				at := int64(rng.Intn(200))
				model[k] = at
				p.set(k, true, at, []byte(k))
			}
		}
		threshold := int64(0)
		for epoch := 0; epoch < 60; epoch++ {
			for n := rng.Intn(6); n > 0; n-- {
				call(fmt.Sprint("k", rng.Intn(30)))
			}
			threshold += int64(rng.Intn(10))
			var want []string
			for k, at := range model {
				if at != stream.NoTimeoutSet && at < threshold {
					want = append(want, k)
				}
			}
			got := p.expired(threshold)
			slices.Sort(got)
			slices.Sort(want)
			if !slices.Equal(got, want) {
				t.Fatalf("seed %d epoch %d threshold %d: heap %v, scan %v", seed, epoch, threshold, got, want)
			}
			for _, k := range got {
				call(k)
			}
		}
	}
}
