package checkpoint

import (
	"fmt"
	"math/rand"
	"testing"
)

// TestPurgeBaseMatchesFiles checks the base versions a partition publishes
// for the state log purge (noteBases, purgeBase) against the answer read
// from its file index, as the purge computed it before: the newest
// snapshot or segment at or below the oldest retained version, 0 when
// none.
func TestPurgeBaseMatchesFiles(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	kinds := []string{"delta", "snapshot", segmentKind(3)}
	for trial := range 200 {
		p := &StorePartition{files: map[fileKey]bool{}}
		for range rng.Intn(12) {
			p.files[fileKey{int64(rng.Intn(40)), kinds[rng.Intn(len(kinds))]}] = true
		}
		if trial%3 > 0 {
			p.noteBases()
		}
		for oldest := int64(-1); oldest <= 41; oldest++ {
			want := int64(0)
			if trial%3 > 0 {
				for k := range p.files {
					if isBase(k) && k.version <= oldest && k.version > want {
						want = k.version
					}
				}
			}
			if got := p.purgeBase(oldest); got != want {
				t.Fatalf("trial %d files %v: purgeBase(%d) = %d, want %d", trial, fmt.Sprint(p.files), oldest, got, want)
			}
		}
	}
}
