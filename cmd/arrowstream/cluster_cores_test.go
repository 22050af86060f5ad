package main

import (
	"context"
	"errors"
	"io"
	"log/slog"
	"runtime"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/arrowstream/source/kafka"
	"github.com/arrowstream/arrowstream/internal/testutil"
)

func TestCoreShare(t *testing.T) {
	for _, tc := range []struct{ base, n, want int }{
		{2, 1, 2}, {2, 2, 1}, {2, 3, 1}, {8, 3, 2}, {8, 4, 2}, {16, 3, 5}, {4, 0, 4}, {1, 5, 1},
	} {
		if got := coreShare(tc.base, tc.n); got != tc.want {
			t.Errorf("coreShare(%d, %d) = %d, want %d", tc.base, tc.n, got, tc.want)
		}
	}
}

// fakeMembership drives a coreSharer: each change closes the current
// channel; count answers from a script.
type fakeMembership struct {
	mu      sync.Mutex
	ch      chan struct{}
	answers []fakeCount
	set     chan int
}

type fakeCount struct {
	n   int
	err error
}

func (f *fakeMembership) changed() <-chan struct{} {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ch == nil {
		f.ch = make(chan struct{})
	}
	return f.ch
}

func (f *fakeMembership) change() {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.ch != nil {
		close(f.ch)
		f.ch = nil
	}
}

func (f *fakeMembership) count(context.Context) (int, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	a := f.answers[0]
	if len(f.answers) > 1 {
		f.answers = f.answers[1:]
	}
	return a.n, a.err
}

// TestCoreSharerFollowsTheMembership: GOMAXPROCS follows the number of
// instances on the host after each change (counts that fail while a
// group rebalances are retried), is set only when it changes, and goes
// back to the lone instance's when the others leave.
func TestCoreSharerFollowsTheMembership(t *testing.T) {
	f := &fakeMembership{set: make(chan int, 10)}
	s := &coreSharer{base: 4, cur: 4, count: f.count, changed: f.changed, set: func(p int) { f.set <- p },
		settle: time.Millisecond, retry: time.Millisecond, logger: slog.New(slog.NewTextHandler(io.Discard, nil))}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.run(ctx)
	}()
	expect := func(want int) {
		t.Helper()
		select {
		case got := <-f.set:
			if got != want {
				t.Fatalf("GOMAXPROCS set to %d, want %d", got, want)
			}
		case <-time.After(testutil.Scaled(time.Minute)):
			t.Fatalf("GOMAXPROCS not set (want %d)", want)
		}
	}
	step := func(answers ...fakeCount) {
		f.mu.Lock()
		f.answers = answers
		f.mu.Unlock()
		// The sharer may not wait on the channel yet: change until it
		// has counted (the script's last answer stays).
		deadline := time.Now().Add(testutil.Scaled(time.Minute))
		for {
			f.change()
			time.Sleep(5 * time.Millisecond)
			f.mu.Lock()
			left := len(f.answers)
			f.mu.Unlock()
			if left == 1 {
				return
			}
			if time.Now().After(deadline) {
				t.Fatal("the sharer did not count after a change")
			}
		}
	}
	rebalancing := errors.New("group rebalancing")
	step(fakeCount{err: rebalancing}, fakeCount{err: rebalancing}, fakeCount{n: 3})
	expect(1) // 4 cores among 3
	step(fakeCount{n: 2})
	expect(2)
	step(fakeCount{n: 2}) // unchanged: nothing set
	step(fakeCount{n: 1})
	expect(4)
	cancel()
	<-done
	select {
	case p := <-f.set:
		t.Fatalf("GOMAXPROCS set to %d with the count unchanged", p)
	default:
	}
}

// TestClusterEnginePinsShufflePartitions: in cluster mode the default of
// spark.sql.shuffle.partitions (GOMAXPROCS) is taken when serve starts,
// so a table created after the cores are shared (GOMAXPROCS lowered) has
// as many hop and state partitions as one created before on a peer.
func TestClusterEnginePinsShufflePartitions(t *testing.T) {
	c, err := kafka.NewCluster(kafka.ClusterOptions{Name: "c1", Brokers: []string{"127.0.0.1:1"}, Address: "127.0.0.1:2"})
	if err != nil {
		t.Fatal(err)
	}
	e := newEngine(engineOptions{checkpointRoot: t.TempDir(), cluster: c})
	defer e.stop(time.Minute)
	v, ok := e.session.Conf(arrowstream.ConfShufflePartitions)
	if want := strconv.Itoa(runtime.GOMAXPROCS(0)); !ok || v != want {
		t.Fatalf("cluster mode: %s = %q (set: %v), want %s pinned at the start", arrowstream.ConfShufflePartitions, v, ok, want)
	}
}
