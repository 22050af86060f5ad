package engine

import "time"

// maxIdleFlushDelay bounds how long a staged commit record waits for the
// next epoch when the query's epochs come at long intervals: past it the
// idle loop makes the record durable, so that a crash re-runs at most
// one epoch of that age.
const maxIdleFlushDelay = time.Second

// idleFlushGapFactor: the commit record waits for this many times the
// interval between the last two epochs before the idle loop flushes it.
// A stage paced by another (the hop's downstream waits for its
// instance's upstream epoch) or by a trigger delay idles between epochs
// for about that interval; waiting for twice it lets the next epoch's
// write carry the record (one fdatasync per epoch, not two) while the
// interval wobbles, and still flushes soon after the epochs stop.
const idleFlushGapFactor = 2

// idleFlusher decides when an idle micro-batch loop makes the last
// epoch's staged commit record (commitWithNext) durable without waiting
// further for the next epoch.
type idleFlusher struct {
	// base is the shortest wait (idleFlushDelay; tests change it).
	base time.Duration
	// stagedAt is when the last commit record was staged; gap the time
	// between the last two stagings (zero before the second).
	stagedAt time.Time
	gap      time.Duration
}

// staged records that an epoch's commit record was staged at now.
func (f *idleFlusher) staged(now time.Time) {
	if !f.stagedAt.IsZero() {
		f.gap = now.Sub(f.stagedAt)
	}
	f.stagedAt = now
}

// delay is how long the staged record waits for the next epoch: base, or
// idleFlushGapFactor times the last interval between epochs when that is
// longer, at most maxIdleFlushDelay (or base when base is longer).
func (f *idleFlusher) delay() time.Duration {
	d := f.base
	if w := min(idleFlushGapFactor*f.gap, maxIdleFlushDelay); w > d {
		d = w
	}
	return d
}

// due says whether an idle loop should flush the staged record at now.
func (f *idleFlusher) due(now time.Time) bool {
	return now.Sub(f.stagedAt) >= f.delay()
}
