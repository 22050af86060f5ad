package arrowstream

import (
	"context"
	"runtime/debug"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/memsink"
)

// The memory target counts what the session holds (the running queries'
// state and the memory-sink tables, HeldBytes) and keeps the runtime's
// soft limit at Base + Ratio·held or above, following each epoch and a
// dropped table; Stop restores the limit in force before. The limit is
// process-wide, so the test does not run in parallel.
func TestMemoryTargetFollowsHeldBytes(t *testing.T) {
	ctx := context.Background()
	mem := poisonmem.New()
	t.Cleanup(func() { mem.AssertSize(t, 0) })
	s := NewSession(SessionOptions{Allocator: mem, Conf: map[string]string{ConfShufflePartitions: "2"}})
	cat := memsink.NewCatalog()
	t.Cleanup(func() {
		for _, name := range cat.List() {
			if tb, ok := cat.Drop(name); ok {
				tb.Close()
			}
		}
	})
	memsink.Install(s, cat, memsink.Options{})
	src := NewMemoryStream(mem, eventSchema)
	defer src.Close()
	s.RegisterStream("events", src)

	prev := debug.SetMemoryLimit(-1)
	const ratio = 1.25
	mt, err := s.StartMemoryTarget(MemoryTargetOptions{Ratio: ratio, Interval: 5 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	defer mt.Stop()

	start := func(name, sql string) *StreamingQuery {
		t.Helper()
		res, err := s.SQL(ctx, "CREATE STREAMING TABLE "+name+" TBLPROPERTIES ('checkpointLocation' = '"+t.TempDir()+"', "+sql)
		if err != nil {
			t.Fatal(err)
		}
		res.Close()
		for _, a := range s.Streams().Active() {
			if a.Name() == name {
				return a
			}
		}
		t.Fatalf("no query %s", name)
		return nil
	}
	counts := start("counts", "'outputMode' = 'update', 'updateAsView' = 'true') AS SELECT key, count(*) AS n, sum(v) AS s FROM STREAM events GROUP BY key")
	raw := start("raw", "'outputMode' = 'append') AS SELECT * FROM STREAM events")

	// check waits until the target has measured what the session holds now
	// (the epoch's progress and the ticker both update it) and checks the
	// limit set for it.
	check := func(what string) int64 {
		t.Helper()
		state := counts.LastProgress().StateMemoryBytes()
		if p := raw.LastProgress(); p != nil && s.Streams().Get(raw.ID()) != nil {
			state += p.StateMemoryBytes()
		}
		want := state + cat.HeldBytes()
		if got := s.HeldBytes(); got != want {
			t.Fatalf("%s: HeldBytes %d, want state %d + tables %d", what, got, state, cat.HeldBytes())
		}
		deadline := time.Now().Add(30 * time.Second)
		for mt.Held() != want {
			if time.Now().After(deadline) {
				t.Fatalf("%s: target measured %d held bytes, want %d", what, mt.Held(), want)
			}
			time.Sleep(time.Millisecond)
		}
		lim := mt.Limit()
		if cur := debug.SetMemoryLimit(-1); cur != lim {
			t.Fatalf("%s: runtime limit %d, target set %d", what, cur, lim)
		}
		if floor := mt.Base() + int64(ratio*float64(want)); lim < floor {
			t.Fatalf("%s: limit %d under base %d + %v × held %d", what, lim, mt.Base(), ratio, want)
		}
		return want
	}

	var held int64
	for epoch := range 4 {
		rows := make([][3]int64, 3000)
		for i := range rows {
			rows[i] = [3]int64{int64(epoch*3000 + i), int64(i), 1}
		}
		addEvents(t, src, rows...)
		for _, q := range []*StreamingQuery{counts, raw} {
			if err := q.ProcessAllAvailable(ctx); err != nil {
				t.Fatal(err)
			}
		}
		h := check("after an epoch")
		if h <= held {
			t.Fatalf("epoch %d: held %d, not more than %d before: the new keys and rows are not counted", epoch, h, held)
		}
		held = h
	}
	if counts.LastProgress().StateMemoryBytes() <= 0 {
		t.Fatal("the aggregation reports no state bytes")
	}

	// Dropping the raw table lowers the held bytes on the next tick.
	rawBytes := func() int64 {
		tb, _ := cat.Lookup("raw")
		sz := tb.Size()
		return sz.Bytes + sz.Overhead
	}()
	if rawBytes <= 0 {
		t.Fatal("the raw table holds nothing")
	}
	raw.Stop()
	if tb, ok := cat.Drop("raw"); ok {
		tb.Close()
	}
	if after := check("after the drop"); after > held-rawBytes {
		t.Fatalf("after dropping %d bytes held %d, was %d", rawBytes, after, held)
	}

	mt.Stop()
	mt.Stop() // idempotent
	if cur := debug.SetMemoryLimit(-1); cur != prev {
		t.Fatalf("after Stop the limit is %d, want %d as before", cur, prev)
	}
}

// A ratio that is not positive, or a negative interval, is refused.
func TestMemoryTargetOptionsRefused(t *testing.T) {
	s := NewSession(SessionOptions{})
	for _, o := range []MemoryTargetOptions{{Ratio: 0}, {Ratio: -1}, {Ratio: 1, Interval: -time.Second}} {
		if mt, err := s.StartMemoryTarget(o); err == nil {
			mt.Stop()
			t.Fatalf("%+v accepted", o)
		}
	}
}
