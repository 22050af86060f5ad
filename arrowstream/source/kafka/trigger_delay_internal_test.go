package kafka

import (
	"math/rand/v2"
	"testing"
	"time"
)

// TestTriggerDelayMatchesSpark checks the hold decision against Spark's
// rule over random histories, written as what must hold at each call
// rather than as the code's steps: the first call is let through; a
// call with at least min offsets waiting is let through; a call whose
// delay since the last let-through has passed is let through; any other
// call is held; and no data waits longer than maxDelay after a
// let-through.
func TestTriggerDelayMatchesSpark(t *testing.T) {
	rng := rand.New(rand.NewPCG(23, 1))
	for h := range 300 {
		minOffs := int64(1 + rng.IntN(100))
		maxDelay := time.Duration(1+rng.IntN(50)) * time.Millisecond
		d := triggerDelay{min: minOffs, maxDelay: maxDelay}
		now := time.Unix(1000, 0)
		var lastThrough time.Time
		from := PartitionOffsets{}
		until := PartitionOffsets{}
		for step := range 200 {
			now = now.Add(time.Duration(rng.IntN(20)) * time.Millisecond)
			// Data arrives in random partitions; an epoch let through
			// reads all of it (from moves to until).
			for range rng.IntN(3) {
				p := int32(rng.IntN(4))
				end, _ := until.get("t", p)
				until.set("t", p, end+int64(rng.IntN(40)))
			}
			waiting := int64(0)
			for p, end := range until["t"] {
				begin, _ := from.get("t", p)
				waiting += end - begin
			}
			held := d.hold(now, from, until)
			want := !(lastThrough.IsZero() || waiting >= minOffs || now.Sub(lastThrough) >= maxDelay)
			if held != want {
				t.Fatalf("history %d step %d: min %d, delay %v, %d waiting, %v since the last let-through: held %v, want %v",
					h, step, minOffs, maxDelay, waiting, now.Sub(lastThrough), held, want)
			}
			if !held {
				lastThrough = now
				from = until.clone()
			}
			if got := d.deadline(); !got.Equal(lastThrough.Add(maxDelay)) {
				t.Fatalf("history %d step %d: deadline %v, want %v", h, step, got, lastThrough.Add(maxDelay))
			}
		}
	}
}

// TestTriggerDelayOff: without a minimum nothing is held.
func TestTriggerDelayOff(t *testing.T) {
	d := triggerDelay{maxDelay: time.Hour}
	now := time.Unix(1000, 0)
	for i := range 10 {
		if d.hold(now.Add(time.Duration(i)*time.Millisecond), PartitionOffsets{}, PartitionOffsets{"t": {0: 1}}) {
			t.Fatal("held without minOffsetsPerTrigger")
		}
	}
}

// TestIdleBackoffWhileHeld: while the source holds an epoch the listing
// waits idleBackoffMax (not past the hold's deadline) even though each
// listing finds new data; a release lists at the next poll again.
func TestIdleBackoffWhileHeld(t *testing.T) {
	var b idleBackoff
	t0 := time.Unix(1000, 0)
	b.listed(t0, 1, PartitionOffsets{"t": {0: 10}})
	b.holding(t0.Add(time.Hour))
	if _, ok := b.cached(t0.Add(idleBackoffMax-time.Millisecond), 1); !ok {
		t.Fatal("a held source listed again before idleBackoffMax")
	}
	if _, ok := b.cached(t0.Add(idleBackoffMax-time.Millisecond), 2); ok {
		t.Fatal("an assignment change did not list at once")
	}
	if _, ok := b.cached(t0.Add(idleBackoffMax), 1); ok {
		t.Fatal("a held source did not list after idleBackoffMax")
	}
	t1 := t0.Add(idleBackoffMax)
	b.listed(t1, 1, PartitionOffsets{"t": {0: 20}}) // more data, still held
	if _, ok := b.cached(t1.Add(time.Millisecond), 1); !ok {
		t.Fatal("new data while held reset the wait")
	}
	// The hold's deadline bounds the wait.
	b.holding(t1.Add(5 * time.Millisecond))
	if _, ok := b.cached(t1.Add(4*time.Millisecond), 1); !ok {
		t.Fatal("a held source listed again before its deadline")
	}
	if _, ok := b.cached(t1.Add(5*time.Millisecond), 1); ok {
		t.Fatal("a hold's listing wait passed its deadline")
	}
	b.holding(t1.Add(time.Hour))
	b.released()
	if _, ok := b.cached(t1.Add(time.Millisecond), 1); ok {
		t.Fatal("a released source did not list at the next poll")
	}
	b.listed(t1.Add(time.Millisecond), 1, PartitionOffsets{"t": {0: 30}})
	if _, ok := b.cached(t1.Add(2*time.Millisecond), 1); ok {
		t.Fatal("new data after a release did not list at the next poll")
	}
}
