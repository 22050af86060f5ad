package kafka

import (
	"context"
)

// The input side of cluster mode asked the group coordinator for the
// committed offsets three times per epoch (to plan, to decide, to claim):
// an OffsetFetch round trip each, which every instance pays per epoch
// whatever its share of the input, so that it dominated small epochs at
// three instances (docs/cluster.md, figures). The member now remembers
// the offsets it fetched and the claims it wrote itself.
//
// Why a cached offset is the group's: a partition's committed offset is
// moved only by a claim (claim, under gm.mu) of a member that owns the
// partition under the current generation. While this member's
// assignment has not changed since the cache was filled, no other
// member was given any partition this member owns (the cooperative
// protocol revokes a partition from its owner before another member gets
// it, and revocation waits for a claim in flight: gm.mu), and a member
// that lost its partitions (a zombie past its session) is refused by the
// coordinator for its stale generation. So, for the partitions this
// member owns, the cache plus its own accepted claims is exactly what a
// fetch would return. Every change of assignment (assigned, revoked,
// lost), every claim refused for a partition, and every claim whose
// outcome is unknown (the request failed) drops the cache; the next use
// fetches again. The hop's downstream side (hop_source_moving.go,
// state_move_txn.go) commits through transactions: its member is
// uncached for claims, and its cache (for planning only) is filled by
// the stable fetch each epoch's Read makes, or by a planning's fetch
// while it has none (after a rebalance, before the next epoch), and
// moved by the epoch's committed transaction (noteStable,
// noteTxnCommitLocked).
//
// Why the downstream may plan from that cache: its partitions' committed
// offsets move only by its own transactions while its assignment is
// unchanged (the coordinator refuses a TxnOffsetCommit of a stale
// generation), so the stable fetch plus its own commits is what a fetch
// would return. And a plan is only a proposal: Read fetches the stable
// offsets again and reads a planned range only if it still starts at the
// committed offset, so a stale cache costs at most an epoch that reads
// nothing, never a row. Before, the downstream fetched its committed
// offsets at every poll (every 10 ms, also while idle).

// offsetCache is the member's view of its group's committed offsets and
// claim histories; nil fields mean "fetch".
type offsetCache struct {
	offs  PartitionOffsets
	hists map[string]map[int32]claimHistory
}

// invalidateCacheLocked drops the cache (gm.mu held).
func (gm *groupMember) invalidateCacheLocked() {
	gm.cache = nil
	gm.cacheVer++
}

// cachedCommitted returns the committed offsets and histories, from the
// cache when it is valid, otherwise fetched (and cached if nothing
// changed meanwhile). The result is the caller's to modify.
func (gm *groupMember) cachedCommitted(ctx context.Context) (PartitionOffsets, map[string]map[int32]claimHistory, error) {
	gm.mu.Lock()
	if c := gm.cache; c != nil {
		offs, hists := c.clone()
		gm.mu.Unlock()
		return offs, hists, nil
	}
	ver := gm.cacheVer
	gm.mu.Unlock()
	offs, hists, err := gm.committedOffsets(ctx)
	if err != nil {
		return nil, nil, err
	}
	gm.mu.Lock()
	if gm.cacheVer == ver {
		// No assignment change, no claim and no committed transaction
		// since the fetch began. For a hop's downstream (uncached) this
		// is its planning cache, as a stable fetch fills it (noteStable):
		// without it an idle downstream whose cache a rebalance dropped
		// fetched at every planning until its next epoch's Read, about
		// one OffsetFetch per listing (8.7 a second on an idle instance
		// of three, a third of its requests; docs/cluster.md, k23g). A
		// transaction of the previous owner still pending makes the plan
		// start too early, which Read's stable fetch refuses (an epoch
		// that reads nothing), as for a stale noteStable.
		gm.cache = &offsetCache{offs: offs, hists: hists}
		offs, hists = gm.cache.clone()
	}
	gm.mu.Unlock()
	return offs, hists, nil
}

// cachedCommittedLocked is cachedCommitted with gm.mu held (claim): the
// fetch runs under the lock, as it did before the cache.
func (gm *groupMember) cachedCommittedLocked(ctx context.Context) (PartitionOffsets, map[string]map[int32]claimHistory, error) {
	if gm.uncached {
		return gm.committedOffsets(ctx)
	}
	if c := gm.cache; c != nil {
		offs, hists := c.clone()
		return offs, hists, nil
	}
	offs, hists, err := gm.committedOffsets(ctx)
	if err != nil {
		return nil, nil, err
	}
	gm.cache = &offsetCache{offs: offs, hists: hists}
	offs, hists = gm.cache.clone()
	return offs, hists, nil
}

// noteClaimLocked records an accepted claim of t-p up to end with meta
// (gm.mu held).
func (gm *groupMember) noteClaimLocked(t string, p int32, end int64, h claimHistory) {
	gm.cacheVer++
	if gm.uncached {
		// A hop downstream's claim of a fresh partition (a claim of
		// nothing): its planning cache would still lack it and plan the
		// claim again; the next planning fetches instead.
		gm.cache = nil
		return
	}
	if gm.cache == nil {
		return
	}
	gm.cache.offs.set(t, p, end)
	if gm.cache.hists[t] == nil {
		gm.cache.hists[t] = map[int32]claimHistory{}
	}
	gm.cache.hists[t][p] = h
}

func (c *offsetCache) clone() (PartitionOffsets, map[string]map[int32]claimHistory) {
	hists := make(map[string]map[int32]claimHistory, len(c.hists))
	for t, ps := range c.hists {
		m := make(map[int32]claimHistory, len(ps))
		for p, h := range ps {
			m[p] = h // never modified in place (with copies)
		}
		hists[t] = m
	}
	return c.offs.clone(), hists
}

// noteStable makes offs, fetched stable by the hop's downstream Read
// while the cache version was ver, the member's cache for planning,
// unless the assignment or a transaction changed it meanwhile.
func (gm *groupMember) noteStable(offs PartitionOffsets, ver uint64) {
	gm.mu.Lock()
	defer gm.mu.Unlock()
	if gm.cacheVer == ver {
		gm.cache = &offsetCache{offs: offs.clone(), hists: map[string]map[int32]claimHistory{}}
	}
}

// cacheVersion is the cache's version (noteStable).
func (gm *groupMember) cacheVersion() uint64 {
	gm.mu.Lock()
	defer gm.mu.Unlock()
	return gm.cacheVer
}

// noteTxnCommitLocked records offsets of topic committed by the
// member's transaction that just committed (gm.mu held).
func (gm *groupMember) noteTxnCommitLocked(topic string, offsets map[int32]int64) {
	gm.cacheVer++
	if gm.cache == nil {
		return
	}
	for p, off := range offsets {
		gm.cache.offs.set(topic, p, off)
	}
}

// invalidateCache drops the cache (a transaction whose outcome is not
// known to be a commit).
func (gm *groupMember) invalidateCache() {
	gm.mu.Lock()
	gm.invalidateCacheLocked()
	gm.mu.Unlock()
}
