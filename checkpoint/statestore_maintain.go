package checkpoint

import (
	"fmt"
	"maps"
)

// fileIndex returns a copy of the partition's file index, listing the
// directory on first use. Callers hold p.mu.
func (p *StorePartition) fileIndex() (map[fileKey]bool, error) {
	if p.files == nil {
		files, err := p.listFiles()
		if err != nil {
			return nil, err
		}
		if p.packs != nil {
			keys, err := p.packs.keys(p.packPart)
			if err != nil {
				return nil, err
			}
			for _, k := range keys {
				files[k] = true
			}
		}
		p.files = files
		p.noteBases()
	}
	return maps.Clone(p.files), nil
}

// maintainInBackground runs maintain and records its error for the next
// commit.
func (p *StorePartition) maintainInBackground() {
	p.mu.Lock()
	latest := p.version
	p.mu.Unlock()
	done, err := p.maintain()
	if p.endMaintenance(max(latest, done), err) {
		p.opts.maint.submit(p)
	}
}

// endMaintenance ends the background maintenance of version latest,
// recording err for the next commit and when maintenance is due next.
// It reports whether maintenance must run again at once (the caller
// submits it; maint.Add is done): commits that changed the partition
// came while this ran and made a snapshot due. Waiting for the next
// commit left a query whose last epochs all came during one
// maintenance (a loaded machine, small epochs) without the snapshot
// those epochs made due, until it ran again.
func (p *StorePartition) endMaintenance(latest int64, err error) (again bool) {
	defer p.maint.Done()
	next := int64(0) // after an error: at the next commit
	if err == nil {
		next = p.nextMaintenance(latest)
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	p.maintRunning = false
	p.liveTaken = 0
	if err != nil {
		p.maintErr = fmt.Errorf("checkpoint: state maintenance of %s: %w", p.dir, err)
	}
	p.nextMaint = next
	if !p.maintAgain {
		return false
	}
	// A commit that changed the partition came while this ran: its
	// changes were not looked at.
	p.maintAgain = false
	if err == nil && p.version > latest && p.maintenanceDue(p.version, true) {
		p.maintRunning = true
		p.maint.Add(1)
		return true
	}
	p.nextMaint = 0
	return false
}

// WaitMaintenance waits for background maintenance to finish and returns
// (and clears) its error, if any.
func (p *StorePartition) WaitMaintenance() error {
	p.maint.Wait()
	p.mu.Lock()
	defer p.mu.Unlock()
	err := p.maintErr
	p.maintErr = nil
	return err
}

// snapshotDue reports whether the latest version should be snapshotted,
// given the newest snapshot at or below it. A snapshot costs the state's
// size; it is written once the deltas since the last one are more than
// MinDeltasForSnapshot and hold as many key and value bytes as the last
// snapshot (their cost pays for it: amortized O(changes) per epoch). The
// last snapshot's size, not the state's, is the measure, so that a state
// that only grows (a join side that never evicts) is snapshotted each time
// it has doubled: measured against the state, its deltas never caught up
// and only the bound below snapshotted it, every MaxDeltasForSnapshot
// epochs at the state's growing size, which made the cost per event grow
// with the run. The bytes a load replays are so bounded by the snapshot's;
// their number, by ten times MaxDeltasForSnapshot (a bound of one
// MaxDeltasForSnapshot, even once the deltas held half the snapshot's
// bytes, doubled q4's snapshot cost at 3.2M events: its join state only
// grows).
// Callers hold p.mu.
func (p *StorePartition) snapshotDue(latest, lastSnap int64) bool {
	return p.snapshotDueWith(latest, lastSnap, p.sinceSnap)
}

// snapshotDueWith is snapshotDue with since as the bytes of the deltas
// since the last snapshot (a commit asks before its own are counted:
// WantsLiveSnapshot). Callers hold p.mu.
func (p *StorePartition) snapshotDueWith(latest, lastSnap, since int64) bool {
	deltas := latest - lastSnap
	if deltas <= int64(p.opts.MinDeltasForSnapshot) {
		return false
	}
	maxDeltas := int64(p.opts.MaxDeltasForSnapshot)
	if p.dataless && p.liveBytesKnown {
		return p.replayDue(lastSnap, since, p.liveBytes) || deltas >= 10*maxDeltas
	}
	base := p.snapBytes
	if base <= 0 || lastSnap == 0 {
		base = p.bytes
		if p.dataless {
			base = p.estBytes
		}
	}
	return since >= base || deltas >= 10*maxDeltas
}

// replayDue is snapshotDue for a partition whose operator declares its
// live bytes (LiveBytesSetter, live): a snapshot is due once what a load would
// replay (the newest snapshot and the deltas since, since bytes) is at
// least replayFactor times the live state. A snapshot then costs the live
// bytes and is paid for by replayFactor-1 times as many bytes of changes
// (amortized O(changes)), and a load reads at most about replayFactor
// times the state. A state that only grows has a log that is all live:
// a snapshot of it replaces the log's bytes by as many and saves a load
// nothing, so it is not written (the delta count bound still applies).
// The rule measured against the last snapshot's size alone rewrote such
// a state each time it doubled, and a state that turns over (a join side
// evicted by watermark) a first time at MinDeltasForSnapshot. Callers
// hold p.mu.
func (p *StorePartition) replayDue(lastSnap, since, live int64) bool {
	replay := since
	switch {
	case p.snapBytes > 0:
		replay += p.snapBytes
	case lastSnap > 0:
		// Written by an earlier process: its size is not known here;
		// the live state stands in.
		replay += live
	}
	return replay >= replayFactor*max(live, 1)
}

// replayFactor is how many times the live state a load may replay before
// a snapshot of a partition that declares its live bytes is due. At two
// (a snapshot once half the log was dead), a state that turns over fast
// was rewritten about once per its own size in changes: q11's sessions,
// whose bids rewrite about half of them an epoch, were snapshotted at
// every MinDeltasForSnapshot bound, and the snapshots (the view's copy,
// encode, compression, file) were a quarter of its CPU, several times
// what logging the same bytes costs. At four the snapshots cost at most a
// third of the changes' bytes, and a load replays at most four times the
// state: a load reads the log at the speed it was written, once, while
// the snapshots are paid all the time.
const replayFactor = 4

// maintain writes a snapshot of the latest version when one is due
// (snapshotDue) and deletes files no longer needed to rebuild the retained
// versions, from the partition's file index (no directory listing). It
// copies the latest version's map under the lock (the values are never
// modified in place, only replaced) and encodes it without the lock, so
// that the next epoch's store is not held up.
func (p *StorePartition) maintain() (int64, error) {
	files, latest, err := p.maintainSnapshot()
	if err != nil || files == nil {
		return 0, err
	}
	return latest, p.cleanup(files, latest)
}

// maintainSnapshot is maintain's first half: the snapshot, when one is
// due. It returns the file index cleanup works from (nil: nothing to
// clean up), which the snapshot's install adds its file to, and the
// version maintained.
func (p *StorePartition) maintainSnapshot() (map[fileKey]bool, int64, error) {
	p.mu.Lock()
	files, err := p.fileIndex()
	latest := p.version
	p.mu.Unlock()
	if err != nil {
		return nil, 0, err
	}
	if latest <= 0 {
		return nil, 0, nil
	}
	lastSnap := int64(0)
	if k, ok := newestBase(files, latest); ok {
		lastSnap = k.version
	}
	p.mu.Lock()
	due := p.snapshotDue(latest, lastSnap) && (p.glog == nil || p.changedSince(files, lastSnap, latest))
	if due && p.version != latest && p.version > 0 {
		// Moved on meanwhile: the snapshot is of the version the
		// partition holds now (a later version holds every change that
		// made this one due), from its file index now. Skipping it left
		// a partition whose commits outran its maintenance (a loaded
		// machine, small epochs) with no snapshot at all: each run
		// found the next commit in, and the last commit's run was
		// folded into the one under way.
		if files, err = p.fileIndex(); err != nil {
			p.mu.Unlock()
			return nil, 0, err
		}
		latest = p.version
	}
	if !due {
		p.mu.Unlock()
	} else if p.dataless && p.version == latest {
		covered := p.sinceSnap
		p.mu.Unlock()
		if err := p.snapshotLive(files, latest, covered); err != nil {
			return nil, 0, err
		}
	} else if p.version != latest || p.data == nil {
		// Closed meanwhile.
		p.mu.Unlock()
		return nil, 0, nil
	} else {
		data := maps.Clone(p.data)
		covered, state := p.sinceSnap, p.bytes
		p.mu.Unlock()
		// A snapshot's key order does not matter to loading: the keys are
		// not sorted (that was a third of a snapshot's cost).
		raw, err := encodeStateMap(data)
		if err != nil {
			return nil, 0, fmt.Errorf("checkpoint: encode snapshot for %s: %w", p.dir, err)
		}
		if err := p.installSnapshot(files, latest, covered, raw, int64(len(data)), state, nil); err != nil {
			return nil, 0, err
		}
	}
	p.mu.Lock()
	if p.live.view != nil && p.live.version <= latest {
		// Not used (no snapshot was due, or a segment did): a later
		// snapshot wants a later version.
		p.dropLive()
	}
	p.mu.Unlock()
	return files, latest, nil
}

// cleanup is maintain's second half: it deletes the files (or pack
// entries) no longer needed to rebuild the versions retained at latest,
// from files, the index maintainSnapshot returned.
func (p *StorePartition) cleanup(files map[fileKey]bool, latest int64) error {
	// Keep what rebuilding version (latest - retain) needs: its base
	// snapshot and everything after.
	oldest := latest - int64(p.opts.MinVersionsToRetain)
	if oldest <= 0 {
		return nil
	}
	keepFrom := int64(0)
	if k, ok := newestBase(files, oldest); ok {
		keepFrom = k.version
	}
	var chains map[fileKey]bool
	for k := range files {
		if !(k.version < keepFrom || k.version == keepFrom && k.kind == "delta") {
			continue
		}
		if chains == nil {
			// The chains of the snapshots kept are kept whole: a
			// segment's older links are below keepFrom.
			chains = p.keepChains(files, keepFrom)
		}
		if !chains[k] {
			if err := p.removeBase(k); err != nil {
				return err
			}
			p.mu.Lock()
			if p.files != nil {
				delete(p.files, k)
				if isBase(k) {
					p.noteBases()
				}
			}
			p.mu.Unlock()
		}
	}
	return nil
}
