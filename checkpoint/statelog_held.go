package checkpoint

// heldFrom is the first version from which the log still holds every
// record: its first version (CoverFrom) until retention purges records,
// then its oldest record's. A partition that needs a delta before it
// cannot rebuild that version from the log (a missing entry there is not
// "unchanged": it was purged). MaxInt64 when the log has no record.
func (l *StateLog) heldFrom() int64 {
	l.mu.Lock()
	defer l.mu.Unlock()
	cover := l.coverFromLocked()
	for _, s := range l.segs {
		if len(s.recs) > 0 {
			return max(cover, s.recs[0].version)
		}
	}
	return cover
}
