package engine

import (
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"testing"

	memsource "github.com/arrowstream/arrowstream/arrowstream/source/memory"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/arrowstream/source/rate"
	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/vector"
)

func closed(ch <-chan struct{}) bool {
	select {
	case <-ch:
		return true
	default:
		return false
	}
}

// TestWakeChannelsFireOnData: the idle wait of a query over a memory
// stream ends when data is added after the trigger looked.
func TestWakeChannelsFireOnData(t *testing.T) {
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{{Name: "v", Type: vector.Int64, Nullable: true}}, nil)
	a, b := memsource.New(mem, schema), memsource.New(mem, schema)
	defer a.Close()
	defer b.Close()
	rate, err := rate.NewRateMicroBatchSource(mem, rate.RateMicroBatchOptions{RowsPerBatch: 1})
	if err != nil {
		t.Fatal(err)
	}
	defer rate.Close()
	chs := wakeChannels([]stream.Source{a, rate, b})
	if len(chs) != 2 {
		t.Fatalf("%d wake channels, want 2 (the memory streams; the rate source cannot notify)", len(chs))
	}
	woken, stop := anyClosed(chs)
	defer stop()
	if closed(woken) {
		t.Fatal("woken before any data")
	}
	if _, err := b.AddData([]any{int64(1)}); err != nil {
		t.Fatal(err)
	}
	<-woken // blocks (and the test times out) if the signal is lost
}

func TestAnyClosed(t *testing.T) {
	for _, n := range []int{0, 1, 3} {
		chs := make([]chan struct{}, n)
		ro := make([]<-chan struct{}, n)
		for i := range chs {
			chs[i] = make(chan struct{})
			ro[i] = chs[i]
		}
		ch, stop := anyClosed(ro)
		if n == 0 {
			if ch != nil {
				t.Fatal("no Sources: want a nil channel (never fires)")
			}
			stop()
			continue
		}
		if closed(ch) {
			t.Fatalf("%d channels: woken before any fired", n)
		}
		close(chs[n-1])
		<-ch
		stop()
	}
	// stop without any signal releases the watchers.
	_, stop := anyClosed([]<-chan struct{}{make(chan struct{}), make(chan struct{})})
	stop()
}
