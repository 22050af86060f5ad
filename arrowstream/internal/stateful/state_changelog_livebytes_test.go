package stateful

import (
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/arrowstream/arrowstream/checkpoint"
)

// bytesWriter is a ChangelogWriter that records what an operator declares
// (and, with batch, takes batches as a ChangelogBatcher would).
type bytesWriter struct {
	rows, live int64
	declared   bool
}

func (w *bytesWriter) LogUpsert(key, value []byte) {}
func (w *bytesWriter) LogDelete(key []byte)        {}
func (w *bytesWriter) SetLiveRows(n int64)         { w.rows = n }
func (w *bytesWriter) SetLiveBytes(n int64)        { w.live, w.declared = n, true }

var _ checkpoint.LiveBytesSetter = (*bytesWriter)(nil)

// TestChangelogDeclaresLiveBytes: an operator writing through
// changelogState (the aggregations, session windows) declares each
// partition's live bytes to a store that weighs its snapshots by them
// (checkpoint.LiveBytesSetter), within 1.5× of the key and value bytes a
// model of the partition holds, through single and batched upserts,
// overwrites and deletes; a partition that never logged an upsert
// declares nothing. Before, only the join declared: an aggregation's
// snapshot schedule ignored its size.
func TestChangelogDeclaresLiveBytes(t *testing.T) {
	const parts = 4
	rng := rand.New(rand.NewPCG(3, 9))
	ws := make([]*bytesWriter, parts)
	var c changelogState
	for p := range ws {
		ws[p] = &bytesWriter{}
		c.writers = append(c.writers, ws[p])
	}
	c.rows = make([]int64, parts)
	c.sizeUpserts()                        // as bind does
	model := make([]map[string]int, parts) // key → value length
	for p := range model {
		model[p] = map[string]int{}
	}
	var b logBatches
	for epoch := range 40 {
		for p := range parts - 1 { // the last partition never changes
			// Values of 8..24 bytes, as accumulators of a few columns.
			val := func() []byte { return []byte(strings.Repeat("v", 8+rng.IntN(17))) }
			if epoch%2 == 0 {
				for range 1 + rng.IntN(30) {
					k := fmt.Sprint("key", rng.IntN(200))
					v := val()
					_, had := model[p][k]
					c.upsert(p, []byte(k), v, !had)
					model[p][k] = len(v)
				}
			} else {
				b.keys, b.vals, b.kend, b.vend = b.keys[:0], b.vals[:0], b.kend[:0], b.vend[:0]
				added := 0
				seen := map[string]bool{}
				for range 1 + rng.IntN(30) {
					k := fmt.Sprint("key", rng.IntN(200))
					if seen[k] {
						continue
					}
					seen[k] = true
					v := val()
					if _, had := model[p][k]; !had {
						added++
					}
					b.add([]byte(k), v)
					model[p][k] = len(v)
				}
				c.upserts(p, &b, added)
			}
			for k := range model[p] {
				if rng.IntN(8) == 0 {
					c.remove(p, []byte(k))
					delete(model[p], k)
				}
			}
		}
		if err := c.finish(1); err != nil {
			t.Fatal(err)
		}
		for p, w := range ws {
			var held int64
			for k, n := range model[p] {
				held += int64(len(k) + n)
			}
			if w.rows != int64(len(model[p])) {
				t.Fatalf("epoch %d partition %d: %d rows declared, the model holds %d", epoch, p, w.rows, len(model[p]))
			}
			if p == parts-1 {
				if w.declared {
					t.Fatalf("partition %d logged no upsert but declared %d live bytes", p, w.live)
				}
				continue
			}
			if !w.declared {
				t.Fatalf("epoch %d partition %d: no live bytes declared", epoch, p)
			}
			if held > 0 && (float64(w.live) > 1.5*float64(held) || float64(w.live) < float64(held)/1.5) {
				t.Fatalf("epoch %d partition %d: declared %d live bytes, the model holds %d", epoch, p, w.live, held)
			}
		}
	}
}
