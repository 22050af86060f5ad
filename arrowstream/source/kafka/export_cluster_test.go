package kafka

import "time"

// OffsetFetchesOf is the number of OffsetFetch requests the member of
// table's group on c has sent (-1 when its query does not run there).
func OffsetFetchesOf(c *Cluster, table string) int64 {
	c.mu.Lock()
	gm := c.members[c.GroupID(table)]
	c.mu.Unlock()
	if gm == nil {
		return -1
	}
	return gm.offsetFetches.Load()
}

// PlansOf is the number of plannings over owned partitions by the member
// of table's group on c (-1 when its query does not run there).
func PlansOf(c *Cluster, table string) int64 {
	c.mu.Lock()
	gm := c.members[c.GroupID(table)]
	c.mu.Unlock()
	if gm == nil {
		return -1
	}
	return gm.plans.Load()
}

// ListingsOf is the number of end-offset listings by the source in
// table's group on c (-1 when its query does not run there).
func ListingsOf(c *Cluster, table string) int64 {
	c.mu.Lock()
	gm := c.members[c.GroupID(table)]
	c.mu.Unlock()
	if gm == nil {
		return -1
	}
	return gm.listings.Load()
}

// HopPaceForTest and HopPacerForTest expose the hop's pacing rule
// (hop_pace.go).
type HopPaceForTest struct{ p *hopPace }

func NewHopPaceForTest() HopPaceForTest          { return HopPaceForTest{newHopPace()} }
func (p HopPaceForTest) Committed(now time.Time) { p.p.committed(now) }
func (p HopPaceForTest) Next() <-chan struct{}   { return p.p.next() }
func (p HopPaceForTest) Started(now time.Time)   { p.p.started(now) }
func (p HopPaceForTest) Ended()                  { p.p.ended() }
func (p HopPaceForTest) Held(deadline time.Time) { p.p.held(deadline) }

type HopPacerForTest struct{ h *hopPacer }

func NewHopPacerForTest(p HopPaceForTest, maxDelay time.Duration) HopPacerForTest {
	return HopPacerForTest{&hopPacer{pace: p.p, maxDelay: maxDelay}}
}
func (h HopPacerForTest) Hold(now time.Time) bool                   { return h.h.hold(now) }
func (h HopPacerForTest) UntilDeadline(now time.Time) time.Duration { return h.h.untilDeadline(now) }

// WatchOf reports the watcher of the source in table's group on c: the
// fetches that returned, the wakes by data, and the partitions it is
// armed on (nil when not armed); ok is false without a watcher.
func WatchOf(c *Cluster, table string) (fetches, wakes int, armed map[string][]int32, ok bool) {
	fetches, wakes, armed, _, ok = WatchOwnedOf(c, table)
	return
}

// WatchOwnedOf is WatchOf with the partitions the member owns now.
func WatchOwnedOf(c *Cluster, table string) (fetches, wakes int, armed, owned map[string][]int32, ok bool) {
	c.mu.Lock()
	gm := c.members[c.GroupID(table)]
	c.mu.Unlock()
	if gm == nil {
		return 0, 0, nil, nil, false
	}
	gm.mu.Lock()
	w := gm.watch
	gm.mu.Unlock()
	if w == nil {
		return 0, 0, nil, nil, false
	}
	owned = gm.ownedNow()
	fetches, wakes = w.counts()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.armed {
		armed = map[string][]int32{}
		for t, ps := range w.ends {
			for p := range ps {
				armed[t] = append(armed[t], p)
			}
		}
	}
	return fetches, wakes, armed, owned, true
}
