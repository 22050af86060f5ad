package kafka

import (
	"testing"
	"time"
)

// holdClock drives a clusterHold on a fake clock as the source does:
// listings, plannings and epoch reads.
type holdClock struct {
	t   *testing.T
	h   clusterHold
	now time.Time
	end int64 // the partitions' end offset, grown by arrive
}

func newHoldClock(t *testing.T) *holdClock {
	return &holdClock{t: t, now: time.Unix(1_000_000, 0), end: 100}
}

func (c *holdClock) advance(d time.Duration) { c.now = c.now.Add(d) }

// list records a listing of owned of total partitions; arrive offsets
// arrived on partition 0 since the listing before.
func (c *holdClock) list(owned, total int, arrive int64) {
	prev := PartitionOffsets{"t": {0: c.end}}
	c.end += arrive
	c.h.listed(owned, total, prev, PartitionOffsets{"t": {0: c.end}}, true)
}

// plan asks whether an epoch planned now waits, and until when.
func (c *holdClock) plan(maxHold time.Duration) (bool, time.Time) {
	return c.h.hold(c.now, maxHold)
}

// epoch lets an epoch through now and runs it for d (Read at once, the
// next planning after d).
func (c *holdClock) epoch(maxHold, d time.Duration) {
	c.t.Helper()
	if held, _ := c.plan(maxHold); held {
		c.t.Fatalf("epoch at %v held", c.now)
	}
	c.h.readStarted(c.now)
	c.advance(d)
}

// TestClusterHoldRule: the hold of a cluster input's planned epoch on a
// fake clock: (k - 1) x the last epoch's duration after it ended, k from the share owned, capped by maxHold; off at 0, at
// one instance and (maxHold) with minOffsetsPerTrigger set; an input
// that stops arriving is let through at its next listing.
func TestClusterHoldRule(t *testing.T) {
	const cap = 250 * time.Millisecond
	t.Run("share and duration", func(t *testing.T) {
		for _, tc := range []struct {
			owned, total int
			want         time.Duration // the hold after a 40 ms epoch
		}{
			{owned: 4, total: 12, want: 80 * time.Millisecond},  // k = 3
			{owned: 6, total: 12, want: 40 * time.Millisecond},  // k = 2
			{owned: 3, total: 12, want: 120 * time.Millisecond}, // k = 4
			{owned: 5, total: 12, want: 56 * time.Millisecond},  // k = 2.4
		} {
			c := newHoldClock(t)
			c.list(tc.owned, tc.total, 10)
			start := c.now
			c.epoch(cap, 40*time.Millisecond)
			c.list(tc.owned, tc.total, 10)
			end := start.Add(40 * time.Millisecond)
			held, until := c.plan(cap)
			if !held || !until.Equal(end.Add(tc.want)) {
				t.Fatalf("%d of %d partitions, a 40 ms epoch: held %v until +%v after it, want +%v", tc.owned, tc.total, held, until.Sub(end), tc.want)
			}
			// Held at every planning until the window has passed, then
			// let through whatever arrives.
			c.now = end.Add(tc.want - time.Millisecond)
			c.list(tc.owned, tc.total, 10)
			if held, _ := c.plan(cap); !held {
				t.Fatalf("%d of %d: let through before the window passed", tc.owned, tc.total)
			}
			c.now = end.Add(tc.want)
			if held, _ := c.plan(cap); held {
				t.Fatalf("%d of %d: held past the window", tc.owned, tc.total)
			}
		}
	})
	t.Run("the next window follows the next epoch's duration", func(t *testing.T) {
		c := newHoldClock(t)
		c.list(4, 12, 10)
		c.epoch(cap, 20*time.Millisecond)
		c.list(4, 12, 10)
		if held, until := c.plan(cap); !held || until.Sub(c.now) != 40*time.Millisecond {
			t.Fatalf("after a 20 ms epoch: held %v until +%v, want +40ms", held, until.Sub(c.now))
		}
		c.advance(40 * time.Millisecond)
		c.epoch(cap, 70*time.Millisecond) // a larger epoch: 70 ms
		end := c.now
		c.list(4, 12, 10)
		if held, until := c.plan(cap); !held || !until.Equal(end.Add(140*time.Millisecond)) {
			t.Fatalf("after a 70 ms epoch: held %v until +%v, want +140ms", held, until.Sub(end))
		}
		// Held plannings do not change the duration.
		c.advance(50 * time.Millisecond)
		c.list(4, 12, 10)
		if held, until := c.plan(cap); !held || !until.Equal(end.Add(140*time.Millisecond)) {
			t.Fatalf("a held planning moved the deadline to +%v", until.Sub(end))
		}
	})
	t.Run("capped", func(t *testing.T) {
		c := newHoldClock(t)
		c.list(1, 12, 10) // k = 12: 11 x 100 ms
		c.epoch(cap, 100*time.Millisecond)
		end := c.now
		c.list(1, 12, 10)
		if held, until := c.plan(cap); !held || !until.Equal(end.Add(cap)) {
			t.Fatalf("held %v until +%v, want the cap +%v", held, until.Sub(end), cap)
		}
		c.now = end.Add(cap)
		c.list(1, 12, 10)
		if held, _ := c.plan(cap); held {
			t.Fatal("held at the cap")
		}
		// Another cap.
		c.h.readStarted(c.now)
		c.advance(100 * time.Millisecond)
		end = c.now
		c.list(1, 12, 10)
		if held, until := c.plan(30 * time.Millisecond); !held || !until.Equal(end.Add(30*time.Millisecond)) {
			t.Fatalf("a 30 ms cap: held %v until +%v", held, until.Sub(end))
		}
		c.advance(30 * time.Millisecond)
		if held, _ := c.plan(30 * time.Millisecond); held {
			t.Fatal("held past a 30 ms cap")
		}
	})
	t.Run("off", func(t *testing.T) {
		for _, tc := range []struct {
			name         string
			owned, total int
			maxHold      time.Duration
		}{
			{"cap 0", 4, 12, 0},
			{"one instance", 12, 12, cap},
			{"nothing owned", 0, 12, cap},
		} {
			c := newHoldClock(t)
			c.list(tc.owned, tc.total, 10)
			c.epoch(tc.maxHold, 100*time.Millisecond)
			for range 5 {
				c.list(tc.owned, tc.total, 10)
				if held, _ := c.plan(tc.maxHold); held {
					t.Fatalf("%s: held", tc.name)
				}
				c.advance(time.Millisecond)
			}
		}
	})
	t.Run("input stops arriving", func(t *testing.T) {
		c := newHoldClock(t)
		c.list(4, 12, 10)
		c.epoch(cap, 100*time.Millisecond) // window 200 ms
		start := c.now
		c.list(4, 12, 10)
		if held, _ := c.plan(cap); !held {
			t.Fatal("not held while offsets arrive")
		}
		// The next listing finds the same ends: nothing arrives any more,
		// the waiting rows go through at once, before the window ends.
		c.advance(idleBackoffMax)
		c.list(4, 12, 0)
		if held, _ := c.plan(cap); held {
			t.Fatalf("held at +%v with nothing arriving", c.now.Sub(start))
		}
	})
	t.Run("a quiet spell lets the first rows through", func(t *testing.T) {
		c := newHoldClock(t)
		c.list(4, 12, 10)
		c.epoch(cap, 100*time.Millisecond)
		c.list(4, 12, 0)
		c.h.idle(c.now) // caught up: nothing waiting
		c.advance(time.Second)
		c.list(4, 12, 10)
		if held, _ := c.plan(cap); held {
			t.Fatal("rows arriving after a quiet spell longer than the window were held")
		}
	})
	t.Run("rows right after catching up wait for the window", func(t *testing.T) {
		c := newHoldClock(t)
		c.list(4, 12, 10)
		c.epoch(cap, 60*time.Millisecond) // window 120 ms
		end := c.now
		c.list(4, 12, 0)
		c.h.idle(c.now)
		c.advance(10 * time.Millisecond)
		c.list(4, 12, 10)
		if held, until := c.plan(cap); !held || !until.Equal(end.Add(120*time.Millisecond)) {
			t.Fatalf("held %v until +%v, want +120ms after the last epoch ended", held, until.Sub(end))
		}
	})
	t.Run("an assignment change is not arrival", func(t *testing.T) {
		c := newHoldClock(t)
		c.list(4, 12, 10)
		c.epoch(cap, 100*time.Millisecond)
		c.h.listed(4, 12, PartitionOffsets{"t": {0: 1}}, PartitionOffsets{"t": {0: 500}}, false)
		if held, _ := c.plan(cap); held {
			t.Fatal("held after an assignment change")
		}
	})
}

// TestClusterHoldCap: the cap in force is the source option, else the
// session's setting, else the default; 0 turns it off, and
// minOffsetsPerTrigger (the operator's batching) and a hop's downstream
// (paced by its upstream) never hold.
func TestClusterHoldCap(t *testing.T) {
	cl := &Cluster{}
	for _, tc := range []struct {
		name string
		opt  string // clusterBatchHold ("": unset)
		conf string // arrowstream.cluster.batchHold ("": unset)
		min  int64
		hop  bool
		want time.Duration
	}{
		{name: "default", want: DefaultClusterBatchHold},
		{name: "option", opt: "100ms", want: 100 * time.Millisecond},
		{name: "option in ms", opt: "400", want: 400 * time.Millisecond},
		{name: "conf", conf: "1s", want: time.Second},
		{name: "option over conf", opt: "50ms", conf: "1s", want: 50 * time.Millisecond},
		{name: "option 0", opt: "0", conf: "1s", want: 0},
		{name: "conf 0", conf: "0ms", want: 0},
		{name: "minOffsetsPerTrigger", min: 1000, want: 0},
		{name: "hop downstream", hop: true, want: 0},
	} {
		opts := map[string]string{"kafka.bootstrap.servers": "127.0.0.1:9", "subscribe": "t"}
		if tc.opt != "" {
			opts["clusterBatchHold"] = tc.opt
		}
		o, err := ParseSourceOptions(opts)
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		o.MinOffsetsPerTrigger = tc.min
		s := &Source{opts: o, cluster: cl, hop: tc.hop}
		if tc.conf != "" {
			if err := s.SetClusterConf(map[string]string{"arrowstream.cluster.batchhold": tc.conf}); err != nil {
				t.Fatalf("%s: %v", tc.name, err)
			}
		}
		if got := s.maxHold(); got != tc.want {
			t.Errorf("%s: cap %v, want %v", tc.name, got, tc.want)
		}
	}
	for _, bad := range []string{"-1", "soon", "-5ms"} {
		if _, err := ParseSourceOptions(map[string]string{"kafka.bootstrap.servers": "x:1", "subscribe": "t", "clusterBatchHold": bad}); err == nil {
			t.Errorf("clusterBatchHold=%q accepted", bad)
		}
		s := &Source{cluster: cl}
		if err := s.SetClusterConf(map[string]string{ConfClusterBatchHold: bad}); err == nil {
			t.Errorf("%s = %q accepted", ConfClusterBatchHold, bad)
		}
	}
	// Outside cluster mode the setting is not read.
	s := &Source{}
	if err := s.SetClusterConf(map[string]string{ConfClusterBatchHold: "soon"}); err != nil {
		t.Errorf("a single-instance source read %s: %v", ConfClusterBatchHold, err)
	}
}
