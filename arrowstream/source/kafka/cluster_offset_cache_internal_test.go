package kafka

import "testing"

// TestHopMemberClaimDropsPlanningCache: a hop downstream's planning
// fetch now fills its planning cache (cluster_offset_cache.go); a claim
// of a fresh partition (a claim of nothing) then drops it, where it was
// left as it was (filled only by Read's stable fetch before): a cache
// without the claimed partition would plan it as fresh, and claim it,
// at every planning until the next Read. A member that is not a hop's
// keeps the claim in its cache.
func TestHopMemberClaimDropsPlanningCache(t *testing.T) {
	for _, hop := range []bool{true, false} {
		gm := &groupMember{uncached: hop}
		gm.cache = &offsetCache{offs: PartitionOffsets{}, hists: map[string]map[int32]claimHistory{}}
		gm.cache.offs.set("h", 0, 7)
		ver := gm.cacheVer
		gm.mu.Lock()
		gm.noteClaimLocked("h", 1, 0, claimHistory{"i1": 0})
		gm.mu.Unlock()
		if gm.cacheVer == ver {
			t.Fatalf("hop=%v: the claim did not move the cache version", hop)
		}
		if hop {
			if gm.cache != nil {
				t.Fatalf("hop member: the planning cache outlived a claim: %v", gm.cache.offs)
			}
			continue
		}
		if off, ok := gm.cache.offs.get("h", 1); !ok || off != 0 {
			t.Fatalf("input member: the claim is not in the cache: %v", gm.cache.offs)
		}
	}
}
