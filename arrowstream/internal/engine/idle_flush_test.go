package engine

import (
	"context"
	"testing"
	"time"

	memsource "github.com/arrowstream/arrowstream/arrowstream/source/memory"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
)

// TestIdleFlusherWaitsForPacedEpochs: a stage whose epochs come every
// 200 ms (paced by another stage or a trigger delay) idles between them;
// its staged commit record must wait for the next epoch's write rather
// than be flushed at the first idle poll past 50 ms (one fdatasync per
// epoch, not two), and still be flushed once the epochs stop.
func TestIdleFlusherWaitsForPacedEpochs(t *testing.T) {
	t0 := time.Date(2026, 12, 3, 0, 0, 0, 0, time.UTC)
	ms := func(n int) time.Time { return t0.Add(time.Duration(n) * time.Millisecond) }
	cases := []struct {
		name    string
		base    time.Duration
		stagedS []int // stagings, ms
		at      int   // idle poll, ms
		want    bool
	}{
		{"first epoch: the base delay", idleFlushDelay, []int{0}, 49, false},
		{"first epoch past the base delay", idleFlushDelay, []int{0}, 50, true},
		{"fast epochs: the base delay", idleFlushDelay, []int{0, 10}, 60, true},
		{"paced 200 ms: waits between epochs", idleFlushDelay, []int{0, 200, 400}, 550, false},
		{"paced 200 ms: waits up to twice the interval", idleFlushDelay, []int{0, 200, 400}, 799, false},
		{"paced 200 ms: epochs stopped", idleFlushDelay, []int{0, 200, 400}, 800, true},
		{"long intervals: at most maxIdleFlushDelay", idleFlushDelay, []int{0, 60000}, 61000, true},
		{"long intervals: before maxIdleFlushDelay", idleFlushDelay, []int{0, 60000}, 60999, false},
		{"a test's long base wins", time.Hour, []int{0, 200}, 60000, false},
	}
	for _, c := range cases {
		f := idleFlusher{base: c.base}
		for _, s := range c.stagedS {
			f.staged(ms(s))
		}
		if got := f.due(ms(c.at)); got != c.want {
			t.Errorf("%s: staged at %v ms, idle poll at %d ms: due %v, want %v (delay %v)", c.name, c.stagedS, c.at, got, c.want, f.delay())
		}
	}
}

// TestPacedEpochsOneDurableWrite: a stateful query into an
// epoch-idempotent sink whose epochs come at intervals of 120 ms or more
// (longer than idleFlushDelay, as a paced stage's) makes fewer than two
// epoch log appends per epoch: the idle loop leaves the commit record to
// the next epoch's write instead of flushing it in between (with a fixed
// 50 ms delay every such interval cost a second fdatasync). The assertion
// holds however slow the machine: a flush needs an idle wait longer than
// twice the last interval between epochs, which no sleep of this test
// makes on every epoch.
func TestPacedEpochsOneDurableWrite(t *testing.T) {
	ctx := context.Background()
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	src := memsource.New(mem, valueSchema)
	defer src.Close()
	q, appends := countingStatefulQuery(ctx, t, mem, src)
	q.Start(nil)
	defer q.Stop()
	const epochs = 10
	for i := 0; i < epochs; i++ {
		if _, err := src.AddData([]any{i}); err != nil {
			t.Fatal(err)
		}
		if err := q.ProcessAllAvailable(ctx); err != nil {
			t.Fatal(err)
		}
		// The query idles as a paced stage does between its epochs.
		time.Sleep(120 * time.Millisecond)
	}
	got := appends()
	if got >= 2*epochs {
		t.Errorf("%d stateful epochs 120 ms or more apart made %d epoch log appends, want fewer than %d (the idle loop flushed every commit record between epochs)", epochs, got, 2*epochs)
	}
	t.Logf("%d epochs, %d epoch log appends", epochs, got)
}
