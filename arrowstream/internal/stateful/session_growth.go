package stateful

import "unsafe"

// sessionGrowth reserves a session window partition's growth within an
// epoch as it happens (stateAccount, growthMeter): the merged sessions'
// encoded rows as they are copied, the live map's change as each key's
// sessions are saved, and the end index's entries that the epoch will add
// (sessionIndex.apply), so that an epoch that would take the state far
// past the limit is refused near it instead of after its commit. The
// reservation after the epoch (set) makes it the index's estimate again.
type sessionGrowth struct {
	s     *statefulSessionWindow
	p     int
	meter growthMeter
	live  int64 // the live map's bytes of the partition when last noted
	grown int64 // the growth so far: copies, the live map's change, end entries
}

// sessionEntryCopy approximates a copied session entry's Go-heap bytes
// besides its encoded row (its start, end and slice header).
const sessionEntryCopy = int64(unsafe.Sizeof(struct {
	start int64
	sessionEntry
}{}))

// sessionEndEntry is an end index entry's bytes besides its key.
const sessionEndEntry = int64(unsafe.Sizeof(timed[sessionKey]{}))

func (s *statefulSessionWindow) newSessionGrowth(p int) *sessionGrowth {
	return &sessionGrowth{s: s, p: p, meter: newGrowthMeter(&s.acct, 0, len(s.state.stores)), live: s.index.live.partBytes(p)}
}

// copied notes an encoded session row of n bytes copied for saving.
func (g *sessionGrowth) copied(n int) error {
	g.grown += int64(n) + sessionEntryCopy
	return g.meter.note(g.grown)
}

// saved notes a key of keyLen bytes whose sessions (sessions of them)
// were written.
func (g *sessionGrowth) saved(keyLen, sessions int) error {
	now := g.s.index.live.partBytes(g.p)
	g.grown += now - g.live
	g.live = now
	if g.s.indexed() {
		g.grown += int64(sessions) * (sessionEndEntry + int64(keyLen))
	}
	return g.meter.note(g.grown)
}

// partBytes is partition p's live map bytes (0: the sessions are not
// live).
func (l *sessionLive) partBytes(p int) int64 {
	if !l.on() {
		return 0
	}
	return l.bytes[p]
}
