package arrowstream

import (
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

func closed(c <-chan struct{}) bool {
	select {
	case <-c:
		return true
	default:
		return false
	}
}

// TestMemoryStreamDataArrived: the channel closes on the next AddRecord,
// and sourcesArrived merges several notifying sources.
func TestMemoryStreamDataArrived(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: vector.Int64, Nullable: true}}, nil)
	a, b := NewMemoryStream(mem, schema), NewMemoryStream(mem, schema)
	defer a.Close()
	defer b.Close()
	ch := a.DataArrived()
	if closed(ch) {
		t.Fatal("closed before any data")
	}
	if _, err := a.AddData([]any{int64(1)}); err != nil {
		t.Fatal(err)
	}
	if !closed(ch) {
		t.Fatal("not closed after AddData")
	}
	if closed(a.DataArrived()) {
		t.Fatal("a new channel is closed already")
	}

	if c, stop := sourcesArrived(nil); c != nil {
		t.Fatal("no notifying source: want a nil channel")
	} else {
		stop()
	}
	merged, stop := sourcesArrived([]Source{a, b})
	defer stop()
	if _, err := b.AddData([]any{int64(2)}); err != nil {
		t.Fatal(err)
	}
	select {
	case <-merged:
	case <-time.After(10 * time.Second): // a bound, not a speed check
		t.Fatal("the merged channel did not close when the second source got data")
	}
}
