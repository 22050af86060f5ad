package checkpoint

import (
	"math"
	"runtime"
	"sync"
)

// maintPool runs state partitions' background maintenance (snapshots,
// cleanup) on at most limit goroutines shared by every partition of a
// provider. Workers start when work is queued and exit when the queue is
// empty, so an idle query holds none, and an epoch that changes three of
// 200 partitions wakes at most three workers' worth of work instead of
// starting a goroutine per partition.
type maintPool struct {
	mu      sync.Mutex
	queue   []func()
	workers int
	limit   int
	// submitted counts the jobs queued (tests: which commits started
	// maintenance).
	submitted int64
}

// newMaintPool returns a pool of at most limit workers (at least one).
func newMaintPool(limit int) *maintPool {
	return &maintPool{limit: max(limit, 1)}
}

// defaultMaintWorkers bounds a provider's maintenance workers. A snapshot
// encodes a partition's state (CPU) and then waits for its fsync (the
// disk): with only as many workers as CPUs, snapshots of the partitions a
// busy epoch changes were synced one after another, keeping the disk busy
// under the next epochs' own fdatasync (YSB paced at 1 M events/s with
// fsync kept up half as well as with a goroutine per partition).
func defaultMaintWorkers() int { return max(4*runtime.GOMAXPROCS(0), 16) }

// submit queues p's maintenance. The caller has done p.maint.Add(1);
// maintainInBackground does the Done.
func (q *maintPool) submit(p *StorePartition) { q.submitJob(p.maintainInBackground) }

// submitJob queues job (the maintenance of one partition, or of an
// operator's partitions: maintDue).
func (q *maintPool) submitJob(job func()) {
	q.mu.Lock()
	q.queue = append(q.queue, job)
	q.submitted++
	start := q.workers < q.limit
	if start {
		q.workers++
	}
	q.mu.Unlock()
	if start {
		go q.work()
	}
}

func (q *maintPool) work() {
	for {
		q.mu.Lock()
		if len(q.queue) == 0 {
			q.workers--
			q.queue = q.queue[:0:0]
			q.mu.Unlock()
			return
		}
		job := q.queue[0]
		q.queue[0] = nil
		q.queue = q.queue[1:]
		q.mu.Unlock()
		job()
	}
}

// maintenanceDue reports whether a commit that published version latest
// needs maintenance: once latest reaches the version from which the last
// maintenance said work would be due without changes (nextMaint: a
// snapshot leaving the retained versions makes older files deletable, or
// the delta count bound), and for a commit that changed the partition,
// when its changes make a snapshot due (snapshotDue, as maintenance itself
// decides). A changed commit used to start maintenance every time: a job
// per operator and epoch that nearly always found nothing to do (1–4 µs)
// but woke an idle thread to run it, one of the few goroutine hand-offs
// of a small epoch. Callers hold p.mu, after the commit's delta bytes are
// counted in sinceSnap.
func (p *StorePartition) maintenanceDue(latest int64, changed bool) bool {
	if latest >= p.nextMaint {
		return true
	}
	if !changed {
		return false
	}
	if p.files == nil || p.live.view != nil {
		// Without a file index (the first maintenance lists the
		// directory) the newest snapshot is not known here; a live
		// view handed for a snapshot is consumed or dropped only by
		// maintenance.
		return true
	}
	return p.snapshotDue(latest, p.purgeBase(latest))
}

// nextMaintenance returns the first version at which maintenance of an
// unchanged partition has work, given its files after maintenance of
// version latest: a snapshot falling out of the retained versions makes
// the files before it deletable, and changes not yet in a snapshot make
// one due after 10*MaxDeltasForSnapshot versions (snapshotDue). Reading
// it costs the partition's file index, paid only by maintenance, which
// runs only for partitions that changed or reached this version.
func (p *StorePartition) nextMaintenance(latest int64) int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.files == nil {
		return 0
	}
	retain := int64(p.opts.MinVersionsToRetain)
	oldest := latest - retain
	keepFrom, lastSnap := int64(0), int64(0)
	if k, ok := newestBase(p.files, oldest); ok {
		keepFrom = k.version
	}
	if k, ok := newestBase(p.files, latest); ok {
		lastSnap = k.version
	}
	// A base (snapshot or segment) newer than keepFrom becomes the base
	// to keep once it leaves the retained versions: the files before it
	// (outside the chains kept) can then go.
	next := int64(math.MaxInt64)
	for k := range p.files {
		if isBase(k) && k.version > keepFrom {
			next = min(next, k.version+retain)
		}
	}
	// Changes since the newest snapshot make one due by their count
	// (snapshotDue) even if the partition changes no more. Asking the
	// state log whether there are any costs its index of the partition,
	// so it is asked only when a snapshot is due now and was not
	// written (the partition moved on while it was encoded, or
	// compaction skipped it): then the next commit tries again.
	if lastSnap < latest {
		if p.snapshotDue(p.version, lastSnap) {
			if p.glog == nil || p.changedSince(p.files, lastSnap, latest) {
				return 0
			}
		} else {
			due := lastSnap + max(int64(p.opts.MinDeltasForSnapshot)+1, 10*int64(p.opts.MaxDeltasForSnapshot))
			next = min(next, max(due, latest+1))
		}
	}
	return next
}
