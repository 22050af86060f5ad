package stateful

import (
	"errors"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/checkpoint"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/plan"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// TestOverWaitingRowsReservedAsCopied: a streaming OVER epoch of 200K
// new rows (about 11 MB of waiting rows estimated) under a 1 MiB limit
// is refused while its rows are copied into the partitions' waiting
// lists, near the limit; before session 14 every row was copied first
// and the growth reserved only as the entries were written after.
func TestOverWaitingRowsReservedAsCopied(t *testing.T) {
	const rows, limit = 200_000, 1 << 20
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	r := &limitedReserver{Allocator: mem, limit: limit}
	partCodec, err := newRowCodec(mem, liveInSchema, []int{0})
	if err != nil {
		t.Fatal(err)
	}
	rowCodec, err := newValueCodec(mem, liveInSchema, []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	o := &statefulOver{mem: r, node: &plan.StreamingOver{TimeCol: 1}, input: liveInSchema, partCodec: partCodec, rowCodec: rowCodec,
		acct: newStateAccount(r, "streaming OVER state")}
	o.state.stores = make([]checkpoint.StateStore, 4)
	o.live = &overLive{parts: make([]overPart, 4)}
	for p := range o.live.parts {
		o.live.parts[p] = overPart{rows: map[string]*overEntry{}, wait: map[string]struct{}{}}
	}
	data := make([]vt.Row, rows)
	for i := range data {
		data[i] = vt.Row{int64(i), int64(i) * 1000}
	}
	rec := vt.BuildRecord(mem, liveInSchema, data)
	defer rec.Release()
	dirty := make([]map[string]struct{}, 4)
	for p := range dirty {
		dirty[p] = map[string]struct{}{}
	}
	meter := newGrowthMeter(&o.acct, o.live.bytes, 1)
	err = o.add([]arrow.Record{rec}, dirty, &meter)
	t.Logf("refused after %d of %d rows copied (%d bytes reserved): %v", o.live.waiting, rows, r.held.Load(), err)
	if !errors.Is(err, errOverLimit) || !strings.Contains(err.Error(), "within the epoch") {
		t.Fatalf("%d new rows under a %d-byte limit: %v, want the limit's error while they are copied", rows, limit, err)
	}
	if o.live.waiting >= rows/4 {
		t.Errorf("%d of %d rows were copied before the refusal", o.live.waiting, rows)
	}
	o.acct.release()
	if r.held.Load() != 0 {
		t.Errorf("after release %d bytes stay reserved", r.held.Load())
	}
}
