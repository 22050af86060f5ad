package kafka

import (
	"path/filepath"
	"sync"
	"time"
)

// Pacing the downstream stage of a hop to its own instance's upstream.
//
// Every upstream writer commits one transaction per epoch, and each
// touches every hop partition (its rows, hashed over all of them, and a
// marker per partition). The downstream stage ran an epoch as soon as
// any writer's commit became visible, so with k instances each
// downstream instance ran k epochs for every epoch of its own upstream,
// each carrying a k-th of the rows: k times the fixed work per epoch
// (its Kafka transaction with the offset commits, the claims and
// changelog-ends files, the sink's epoch file, the engine's offset and
// commit logs), paid on every instance. That, not the rows, was what
// grew with the instance count (docs/cluster.md, "Pacing").
//
// The instances' upstream stages share the input evenly and run at about
// the same cadence, so the downstream stage takes its cadence from the
// upstream stage of its own process: while that stage is active (it
// committed within the last maxDelay), a downstream epoch with data
// waits until the local upstream has committed again since the last
// downstream epoch was let through, or until the local upstream is late:
// twice its last interval between commits after its last commit (so
// when the input stops, the last rows of other writers wait about one
// upstream epoch, not maxDelay), and never longer than maxDelay after
// the last downstream epoch. Once the local upstream is late (its input
// ended, or it is slow), the downstream still runs at most one epoch
// per upstream interval until the upstream has been quiet for maxDelay:
// the other writers' last commits of a burst come one by one, and each
// ran an epoch of its own (about one more downstream epoch per instance
// per burst at three instances).
// Each downstream epoch then reads what every writer committed in one
// round, one transaction for all of it, so the cluster runs as many
// downstream epochs as one instance would. The upstream's commit wakes
// the waiting downstream at once (stream.NotifyingSource). With one
// instance nothing waits longer than before (its own commit is every
// commit). An instance whose upstream has no input (idle, or more
// instances than input partitions) does not wait at all. The price is
// latency: rows of another instance's writer wait for the local
// upstream's next commit, at most maxDelay. Nothing read, committed or
// decided changes: a held epoch is simply planned later.
//
// An epoch of the local upstream in flight (planned by its source, not
// yet committed or ended) also holds the downstream, when the local
// upstream has not committed since the last downstream epoch: at most
// maxDelay after that upstream epoch was planned or after the last
// downstream epoch, whichever is later, or after the hold began if that
// comes first (a local epoch longer than maxDelay lets one downstream
// epoch through per maxDelay, not one per other writer's commit).
// Without it two cases ran an epoch for part of a round: the start of a
// burst, when the upstream of this instance had not committed yet
// (inactive: not held) and another writer's first commit ran a
// downstream epoch while the local one was writing; and a local upstream late against its last interval but
// already writing its next epoch (let through by the late rule, then
// again at that commit). Each such epoch cost the full fixed work for a
// fraction of a round (at three instances in backlog the downstreams ran
// about one and a half times their upstreams' epochs). One instance
// never waits on it: its downstream has data only after its own commit.
//
// A local upstream that holds its input for minOffsetsPerTrigger
// (trigger_delay.go: rows are waiting on its partitions, fewer than the
// minimum, and its maxTriggerDelay has not passed) holds the downstream
// too, as an epoch in flight does: when its commit has not come since
// the last downstream epoch, at most maxDelay after the hold began, and
// never past maxDelay after the upstream's own deadline. Its next commit
// comes within the trigger's bounds. Without it the rule above took such
// an upstream for late: after two epochs run back to back (a backlog
// past the minimum) its last interval was the short time between them,
// so the downstream let an epoch through between every two of its
// commits; and at the start of a burst, an upstream that held its first
// rows had not committed yet (inactive), so the other writers' first
// commits ran one downstream epoch each (session 22: at three instances
// in live mode 8 downstream epochs per instance for 6 upstream ones).
//
// While an epoch would be held, the downstream does not list the hop's
// ends either (hopPacer.holds): whatever a listing found would wait for
// the same commit or deadline, and each idle poll's listing (20 to 100
// ms apart) cost a round trip, a planning and a wake-up of the process.

// DefaultHopPaceMaxDelay bounds how long a downstream epoch waits for
// its instance's upstream commit (ClusterOptions.HopPaceMaxDelay).
const DefaultHopPaceMaxDelay = time.Second

// hopPace is shared by one hop's upstream sink and downstream source in
// one process (Cluster.hopPace).
type hopPace struct {
	mu    sync.Mutex
	n     uint64        // upstream commits so far
	at    time.Time     // the last one (zero: none)
	every time.Duration // between the last two (0: fewer than two)
	wake  chan struct{} // closed at the next commit, or when an epoch in flight ends without one
	// writing is when the local upstream's epoch in flight was planned
	// (or, unlinked, began writing; zero: none in flight).
	writing time.Time
	// holding is when the local upstream's trigger delay lets its held
	// input through at the latest (zero: not holding; trigger_delay.go).
	holding time.Time
}

func newHopPace() *hopPace { return &hopPace{wake: make(chan struct{})} }

// committed records an upstream commit and wakes the waiting downstream.
func (p *hopPace) committed(now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.n++
	if !p.at.IsZero() {
		p.every = now.Sub(p.at)
	}
	p.at = now
	p.writing, p.holding = time.Time{}, time.Time{}
	close(p.wake)
	p.wake = make(chan struct{})
}

// started records that the local upstream planned an epoch: it is in
// flight from now until it commits or ends.
func (p *hopPace) started(now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.writing, p.holding = now, time.Time{}
}

// held records that the local upstream holds input for
// minOffsetsPerTrigger until deadline at the latest (zero: it no longer
// holds any; its last planning found nothing waiting).
func (p *hopPace) held(deadline time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.holding = deadline
}

// holdingUntil returns when the local upstream's held input is let
// through at the latest (zero: none held).
func (p *hopPace) holdingUntil() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.holding
}

// writingFrom records that the local upstream's sink began writing an
// epoch, in flight since its planning when the source told (started),
// else from now (a source not linked, hop_mark.go).
func (p *hopPace) writingFrom(now time.Time) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.writing.IsZero() {
		p.writing = now
	}
}

// link makes the upstream stage whose checkpoint is dir tell pace when
// it plans an epoch (stageRead.planned), whichever of the stage's
// source and hop sink is created first.
func (s *stageReads) link(dir string, pace *hopPace) {
	s.mu.Lock()
	defer s.mu.Unlock()
	dir = filepath.Clean(dir)
	if s.paces == nil {
		s.paces = map[string]*hopPace{}
	}
	s.paces[dir] = pace
	if r := s.stages[dir]; r != nil {
		r.mu.Lock()
		r.pace = pace
		r.mu.Unlock()
	}
}

// planned tells the stage's hop pace that the source planned an epoch
// with data (nil-safe): the epoch is in flight from its planning, which
// comes before its claim, its offset log write and its read, so a
// downstream planned meanwhile waits for it too.
func (r *stageRead) planned(now time.Time) {
	if r == nil {
		return
	}
	r.mu.Lock()
	pace := r.pace
	r.mu.Unlock()
	if pace != nil {
		pace.started(now)
	}
}

// holding tells the stage's hop pace that the source holds its input
// for minOffsetsPerTrigger until deadline at the latest, or (zero) that
// it holds none (nil-safe).
func (r *stageRead) holding(deadline time.Time) {
	if r == nil {
		return
	}
	r.mu.Lock()
	pace := r.pace
	r.mu.Unlock()
	if pace != nil {
		pace.held(deadline)
	}
}

// ended records that the local upstream's epoch in flight is over (after
// committed, nothing to do). One that ended without a commit (failed,
// a replay that wrote nothing, a stop) wakes a downstream held for it.
func (p *hopPace) ended() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.writing.IsZero() {
		return
	}
	p.writing = time.Time{}
	close(p.wake)
	p.wake = make(chan struct{})
}

// next returns a channel closed at the next upstream commit.
func (p *hopPace) next() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.wake
}

// state returns the commits so far, when the last was and the interval
// before it.
func (p *hopPace) state() (uint64, time.Time, time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.n, p.at, p.every
}

// inFlight returns when the local upstream's epoch in flight was
// planned (zero: none).
func (p *hopPace) inFlight() time.Time {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.writing
}

// hopPacer is the downstream source's side (the engine calls a source
// from one goroutine at a time).
type hopPacer struct {
	pace     *hopPace
	maxDelay time.Duration // <= 0: no pacing
	seen     uint64        // upstream commits when the last epoch was let through
	last     time.Time     // when it was; zero: never
	held     bool          // the last planning held an epoch
	since    time.Time     // when an epoch in flight first held since the last let-through (zero: not yet)
	until    time.Time     // when the held epoch is let through anyway
}

// hold reports whether an epoch with data waits for the local upstream:
// the upstream has not committed since the last epoch was let through,
// and it is writing an epoch that began less than maxDelay ago, or it
// is active and not late (see above). A false answer lets the epoch
// through and restarts the wait.
func (h *hopPacer) hold(now time.Time) bool {
	n, held := h.check(now)
	if held {
		return true
	}
	h.seen, h.last, h.since = n, now, time.Time{}
	return false
}

// holds reports whether an epoch planned now would be held (and then
// records until when, for untilDeadline); a false answer changes
// nothing, unlike hold's. A paced downstream asks it before listing:
// whatever a listing would find then waits for the local upstream's
// next commit, which wakes the query, or for the deadline, so the
// listing is put off until then (hopSource.LatestOffsetFrom).
func (h *hopPacer) holds(now time.Time) bool {
	_, held := h.check(now)
	return held
}

// check is holds, also returning the upstream commits it saw.
func (h *hopPacer) check(now time.Time) (uint64, bool) {
	h.held = false
	if h.pace == nil || h.maxDelay <= 0 {
		return 0, false
	}
	n, at, every := h.pace.state()
	if w := h.pace.inFlight(); n == h.seen && !w.IsZero() {
		// Its commit (or its end without one) wakes the query. At most
		// maxDelay after the epoch was planned or after the last
		// downstream epoch, whichever is later, and after this hold
		// began: an upstream that fails and plans again and again
		// before its sink runs must not hold the other writers' rows
		// for good. The later of the two: a local epoch that outlasts
		// maxDelay (a backlog read at once, under load: 1.6 s for
		// 200K rows at three instances on two cores) let one epoch
		// through at maxDelay and then, counted from its planning only,
		// every later commit of another writer ran a downstream epoch
		// of its own until the local commit (two or three more per
		// instance in backlog; session 30). Counted from the last
		// downstream epoch too, the downstream runs at most one epoch
		// per maxDelay while the same local epoch is in flight.
		if h.last.After(w) {
			w = h.last
		}
		if h.holdFrom(now, w) {
			return n, true
		}
	}
	if d := h.pace.holdingUntil(); n == h.seen && !d.IsZero() {
		// Held for minOffsetsPerTrigger: the upstream plans at its
		// deadline at the latest (then in flight, above), and its commit
		// wakes the query.
		if h.holdFrom(now, d) {
			return n, true
		}
	}
	if !h.last.IsZero() && n == h.seen && !at.IsZero() && now.Sub(at) < h.maxDelay {
		until := h.last.Add(h.maxDelay)
		if every > 0 {
			// Late, the upstream no longer sets the pace, but the
			// downstream keeps its cadence: one epoch per interval.
			pace := at.Add(2 * every)
			if next := h.last.Add(every); next.After(pace) {
				pace = next
			}
			if pace.Before(until) {
				until = pace
			}
		}
		if now.Before(until) {
			h.held, h.until = true, until
			return n, true
		}
	}
	return n, false
}

// holdFrom holds an epoch planned now until maxDelay after from (the
// upstream's epoch planned, or its minimum's deadline), and at most
// maxDelay after this hold began; it reports whether now is before that.
func (h *hopPacer) holdFrom(now, from time.Time) bool {
	if h.since.IsZero() {
		h.since = now
	}
	until := from.Add(h.maxDelay)
	if u := h.since.Add(h.maxDelay); u.Before(until) {
		until = u
	}
	if !now.Before(until) {
		return false
	}
	h.held, h.until = true, until
	return true
}

// untilDeadline is how long a held epoch may still wait (0: not held).
func (h *hopPacer) untilDeadline(now time.Time) time.Duration {
	if !h.held {
		return 0
	}
	return max(0, h.until.Sub(now))
}

// hopPace returns the pace shared by the stages of hop topic in this
// process.
func (c *Cluster) hopPace(topic string) *hopPace {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.paces == nil {
		c.paces = map[string]*hopPace{}
	}
	p, ok := c.paces[topic]
	if !ok {
		p = newHopPace()
		c.paces[topic] = p
	}
	return p
}
