package kafka

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
)

// An idle cluster instance listed its partitions' end offsets every
// idleBackoffMax (100 ms) to notice new data: a timer wake-up, a planning
// and a ListOffsets round trip each, most of an idle instance's CPU, paid
// by every instance per wall-second whatever its share of the input
// (docs/cluster.md, issue 23). The watcher replaces those listings while
// nothing arrives by a long-poll fetch: once a listing has found the same
// ends twice (the source is idle), a consumer of the owned partitions
// (no group) fetches from those ends with a wait of seconds and a byte
// limit of one, so the broker answers when the first record past the
// ends arrives, and the watcher then wakes the query
// (stream.NotifyingSource), which lists again. The listing stays the
// source of truth for what is read and claimed: the watcher only wakes,
// and the source still lists every watchRelist while it is quiet, and at
// once after a wake, a rebalance (the member's assignment hook) or a
// fetch error.

// watchMaxWait is how long the broker holds the watcher's fetch when no
// record arrives (then franz-go sends the next one): one request per
// partition leader per watchMaxWait while idle.
const watchMaxWait = 5 * time.Second

// watchRelist is how long a quiet watched source reports its last listing
// before it lists again anyway (the engine still asks it at least every
// second, answered from that listing without a round trip).
const watchRelist = 5 * time.Second

// watchRetry is how long a watcher whose fetch failed refuses to be armed
// again: meanwhile the source lists on its usual backoff.
const watchRetry = 5 * time.Second

// endWatcher is a cluster source's long-poll fetch. Its channel (next)
// is closed when a fetch returns data past the armed ends, when the
// member's assignment changes and when the source's own poll is due
// (pollAfter: a query that waits on the channel alone, a continuous one,
// still polls on the backoff while the watcher is not armed).
type endWatcher struct {
	newClient func(...kgo.Opt) (*kgo.Client, error)
	opts      []kgo.Opt // the watcher client's options (brokers, dial, isolation)

	mu       sync.Mutex
	ch       chan struct{} // handed out by next; closed and replaced by fireLocked
	ends     PartitionOffsets
	ver      uint64 // the member's assignment version the ends were listed at
	armed    bool   // fetching from ends; false once it fired
	brokeAt  time.Time
	kick     chan struct{} // wakes the loop: new ends or stop (buffer 1)
	cancel   context.CancelFunc
	pollStop context.CancelFunc // the poll in flight (a new arm cancels it)
	done     chan struct{}      // closed when the loop returns
	poll     *time.Timer        // pollAfter's timer
	fetches  int                // fetches that returned (tests)
	wakes    int                // wakes by data (tests)

	// also, when set, is another wake (a hop's local upstream commits,
	// hop_pace.go) forwarded to the channel while the source is open.
	also    func() <-chan struct{}
	fwdStop context.CancelFunc
	fwdDone chan struct{}
	noPoll  bool // pollAfter does nothing (set before use)
}

// newEndWatcher returns a watcher whose client is made with opts; no
// goroutine runs until it is first armed.
func newEndWatcher(opts []kgo.Opt) *endWatcher {
	return &endWatcher{newClient: kgo.NewClient, opts: opts, ch: make(chan struct{})}
}

// watcherOpts are the watcher client's options: fetches that the broker
// holds for watchMaxWait and answers with the first record batch.
func (s *Source) watcherOpts() []kgo.Opt {
	opts := []kgo.Opt{
		kgo.SeedBrokers(s.opts.Brokers...),
		kgo.FetchMaxWait(watchMaxWait),
		kgo.FetchMaxBytes(1),
		kgo.FetchMaxPartitionBytes(1),
		kgo.MetadataMinAge(clusterMetadataMinAge),
		kgo.DisableClientMetrics(),
	}
	if s.hop {
		// Only a committed transaction is new data for a hop's reader.
		opts = append(opts, kgo.FetchIsolationLevel(kgo.ReadCommitted()))
	}
	return append(opts, dialOpts(s.opts.Control)...)
}

// next returns the channel the next wake closes.
func (w *endWatcher) next() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.also != nil && w.fwdDone == nil {
		ctx, cancel := context.WithCancel(context.Background())
		w.fwdStop, w.fwdDone = cancel, make(chan struct{})
		go w.forward(ctx, w.also, w.fwdDone)
	}
	return w.ch
}

// forward fires the watcher at each of also's wakes until ctx ends. The
// next wake's channel is taken before firing, so that a wake after the
// fire (after the query's listing that the fire causes) is not missed.
func (w *endWatcher) forward(ctx context.Context, also func() <-chan struct{}, done chan struct{}) {
	defer close(done)
	ch := also()
	for {
		select {
		case <-ch:
		case <-ctx.Done():
			return
		}
		ch = also()
		w.mu.Lock()
		w.fireLocked()
		w.kickLocked()
		w.mu.Unlock()
	}
}

// fireLocked wakes whoever waits on the channel and disarms: the source
// lists at its next poll and arms again when it is idle.
func (w *endWatcher) fireLocked() {
	close(w.ch)
	w.ch = make(chan struct{})
	w.armed = false
}

// assignChanged is the member's assignment hook: the owned partitions
// changed, so the source must list them at once.
func (w *endWatcher) assignChanged() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.fireLocked()
	w.kickLocked()
}

// pollAfter closes the channel after d unless the watcher is armed by
// then (a query that waits on the channel polls on the source's backoff).
func (w *endWatcher) pollAfter(d time.Duration) {
	if w.noPoll {
		return
	}
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.poll == nil {
		w.poll = time.AfterFunc(d, w.pollDue)
		return
	}
	w.poll.Reset(d)
}

func (w *endWatcher) pollDue() {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.armed {
		w.fireLocked()
	}
}

// quiet reports whether the watcher is fetching from the ends listed at
// assignment version ver with nothing past them yet: the source may
// report its last listing.
func (w *endWatcher) quiet(ver uint64) bool {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.armed && w.ver == ver
}

// arm makes the watcher fetch from ends (the owned partitions' listed
// ends at assignment version ver). It starts the loop at the first arm.
// The stand-down after a failure is real time (broke), whatever the
// source's clock.
func (w *endWatcher) arm(ver uint64, ends PartitionOffsets) {
	now := time.Now()
	w.mu.Lock()
	defer w.mu.Unlock()
	if w.armed && w.ver == ver && sameOffsets(w.ends, ends) {
		return
	}
	if !w.brokeAt.IsZero() && now.Sub(w.brokeAt) < watchRetry {
		return
	}
	w.ends, w.ver, w.armed, w.brokeAt = ends.clone(), ver, true, time.Time{}
	if w.done == nil {
		ctx, cancel := context.WithCancel(context.Background())
		w.cancel, w.kick, w.done = cancel, make(chan struct{}, 1), make(chan struct{})
		go w.loop(ctx, w.kick, w.done)
	}
	w.kickLocked()
}

// kickLocked wakes the loop and cancels its poll in flight.
func (w *endWatcher) kickLocked() {
	if w.kick == nil {
		return
	}
	if w.pollStop != nil {
		w.pollStop()
	}
	select {
	case w.kick <- struct{}{}:
	default:
	}
}

// close stops the loop and its client and wakes any waiter; the watcher
// can be armed again afterwards (a restarted query).
func (w *endWatcher) close() {
	w.mu.Lock()
	if w.poll != nil {
		w.poll.Stop()
	}
	cancel, done := w.cancel, w.done
	w.cancel, w.done, w.kick = nil, nil, nil
	fwdStop, fwdDone := w.fwdStop, w.fwdDone
	w.fwdStop, w.fwdDone = nil, nil
	if w.pollStop != nil {
		w.pollStop()
	}
	w.armed = false
	w.mu.Unlock()
	if cancel != nil {
		cancel()
		<-done
	}
	if fwdStop != nil {
		fwdStop()
		<-fwdDone
	}
}

// loop fetches from the armed ends until a record arrives, then idles
// until it is armed again. Only the loop uses the client. Its kick and
// done channels are passed in, not read from w: close clears w's fields
// under the lock and may run before the goroutine starts.
func (w *endWatcher) loop(ctx context.Context, kick <-chan struct{}, done chan struct{}) {
	defer close(done)
	var cl *kgo.Client
	defer func() {
		if cl != nil {
			cl.Close()
		}
	}()
	var consuming map[string][]int32
	stopConsuming := func() {
		if cl != nil && len(consuming) > 0 {
			cl.RemoveConsumePartitions(consuming)
		}
		consuming = nil
	}
	for {
		select {
		case <-ctx.Done():
			return
		case <-kick:
		}
		w.mu.Lock()
		armed, ends := w.armed, w.ends
		pctx, stop := context.WithCancel(ctx)
		w.pollStop = stop
		w.mu.Unlock()
		stopConsuming()
		if !armed || len(ends) == 0 {
			stop()
			continue
		}
		if cl == nil {
			c, err := w.newClient(w.opts...)
			if err != nil {
				stop()
				w.broke(fmt.Errorf("kafka: cluster watcher client: %w", err))
				continue
			}
			cl = c
		}
		add := map[string]map[int32]kgo.Offset{}
		consuming = map[string][]int32{}
		for t, ps := range ends {
			add[t] = map[int32]kgo.Offset{}
			for p, off := range ps {
				add[t][p] = kgo.NewOffset().At(off)
				consuming[t] = append(consuming[t], p)
			}
		}
		cl.AddConsumePartitions(add)
		w.wait(pctx, cl, ends)
		stop()
		stopConsuming()
	}
}

// wait polls until a record at or past the armed ends arrives (a wake),
// a fetch fails (the watcher stands down for watchRetry) or ctx ends (a
// new arm or close).
func (w *endWatcher) wait(ctx context.Context, cl *kgo.Client, ends PartitionOffsets) {
	for {
		fs := cl.PollFetches(ctx)
		if ctx.Err() != nil {
			return
		}
		w.mu.Lock()
		w.fetches++
		w.mu.Unlock()
		var ferr error
		fs.EachError(func(t string, p int32, err error) {
			if !errors.Is(err, context.Canceled) && ferr == nil {
				ferr = fmt.Errorf("kafka: cluster watcher: fetch %s-%d: %w", t, p, err)
			}
		})
		if ferr != nil {
			w.broke(ferr)
			return
		}
		past := false
		fs.EachRecord(func(r *kgo.Record) {
			if end, ok := ends.get(r.Topic, r.Partition); ok && r.Offset >= end {
				past = true
			}
		})
		if past {
			w.mu.Lock()
			w.wakes++
			if ctx.Err() == nil { // not re-armed meanwhile
				w.fireLocked()
			}
			w.mu.Unlock()
			return
		}
	}
}

// broke stands the watcher down after a failure: the source lists on its
// usual backoff until watchRetry has passed, and lists at once now.
func (w *endWatcher) broke(err error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.brokeAt = time.Now()
	w.fireLocked()
	_ = err // the listing reports the brokers' errors; a watcher only wakes
}

// counts returns the fetches that returned and the wakes by data (tests).
func (w *endWatcher) counts() (fetches, wakes int) {
	w.mu.Lock()
	defer w.mu.Unlock()
	return w.fetches, w.wakes
}

// watchedCache returns the last listing while the watcher is quiet at
// assignment version ver, for up to watchRelist after that listing.
func (s *Source) watchedCache(now time.Time, ver uint64) (PartitionOffsets, bool) {
	b := &s.idle
	if s.watch == nil || b.last == nil || b.held || b.assign != ver || now.Sub(b.listedAt) >= watchRelist || !s.watch.quiet(ver) {
		return nil, false
	}
	return b.last.clone(), true
}

// afterListing arms the watcher when the listing found the same ends as
// the one before (the source is idle; not while an epoch is held for
// minOffsetsPerTrigger, which lists on its own schedule), and schedules
// the channel's poll at the source's next due listing.
func (s *Source) afterListing(ver uint64, ends PartitionOffsets) {
	if s.watch == nil {
		return
	}
	b := &s.idle
	if !b.held && b.wait > 0 && len(ends) > 0 {
		s.watch.arm(ver, ends)
	}
	s.watch.pollAfter(max(s.IdlePollDelay(), 10*time.Millisecond))
}

// watchHop gives a hop's downstream source its watcher (read-committed:
// a committed transaction of any instance's upstream wakes it), which
// also forwards the local upstream's commits (pace) that the hop source
// waited on before.
func (s *Source) watchHop(pace *hopPace) {
	if s.cluster.opts.ListWhileIdle {
		return
	}
	s.watch = newEndWatcher(s.watcherOpts())
	s.watch.also = pace.next
	// A hop stage runs micro-batches only, which wait on the source's
	// IdlePollDelay (the pacer's deadline while held) and need no poll
	// timer; one would wake a held downstream at the listing backoff.
	s.watch.noPoll = true
}

// watchedSource is the cluster input source with its watcher: a
// stream.NotifyingSource, so that the trigger loop waits on the watcher
// instead of listing while idle. Only cluster sources are wrapped (a
// continuous query stops polling a notifying source; the watcher's poll
// timer keeps polling it on the backoff while it is not armed).
type watchedSource struct{ *Source }

// newWatchedSource wraps a cluster source.
func newWatchedSource(s *Source) *watchedSource {
	s.watch = newEndWatcher(s.watcherOpts())
	return &watchedSource{s}
}

// DataAvailable implements stream.NotifyingSource.
func (s *watchedSource) DataAvailable() <-chan struct{} { return s.watch.next() }

var _ stream.NotifyingSource = (*watchedSource)(nil)

// setWatcher makes w wake after each assignment change of the member.
func (gm *groupMember) setWatcher(w *endWatcher) {
	gm.mu.Lock()
	defer gm.mu.Unlock()
	gm.watch = w
}
