package main

import (
	"context"
	"log/slog"
	"os"
	"runtime"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream/source/kafka"
)

// Several cluster instances on one machine share its cores. Each Go
// process schedules over GOMAXPROCS = all the cores by default, so k
// instances keep k times the cores' worth of Ps: a goroutine woken in one
// (a fetch response, a timer) may start another thread spinning for work
// on cores the other instances use, and the CPU per event grows with the
// number of instances (docs/cluster.md, "Current figures"). After each
// rebalance, serve counts the instances that advertise its host
// (kafka.Cluster.ColocatedInstances) and runs with its share of the
// cores: GOMAXPROCS = max(1, default / instances). An operator who sets
// GOMAXPROCS keeps it: serve changes nothing then.

// coreSharer sets the process's GOMAXPROCS to its share of the host's
// cores. Its functions are the runtime's and the membership's in serve,
// fakes in tests.
type coreSharer struct {
	base    int                                // GOMAXPROCS of a lone instance (the runtime's default)
	count   func(context.Context) (int, error) // instances on this host, this one included
	changed func() <-chan struct{}             // closed when the membership may have changed
	set     func(procs int)                    // applies GOMAXPROCS
	settle  time.Duration                      // wait after a change before counting (rebalances come in rounds)
	retry   time.Duration                      // wait after a count that failed (a group rebalancing)
	logger  *slog.Logger
	cur     int // GOMAXPROCS as last set (base at start)
}

// maxCoreCountTries bounds the counts after one change (a second apart:
// the group describes its members again once its rebalance is over).
const maxCoreCountTries = 30

// coreShare is the GOMAXPROCS of one of n instances sharing base cores.
func coreShare(base, n int) int {
	if n <= 1 {
		return base
	}
	return max(1, base/n)
}

// startCoreSharing starts sharing the cores among the cluster's
// instances on this host, unless GOMAXPROCS is set in the environment;
// the returned function stops it.
func startCoreSharing(c *kafka.Cluster, logger *slog.Logger) func() {
	if os.Getenv("GOMAXPROCS") != "" {
		logger.Info("cluster: GOMAXPROCS is set; the cores are not shared among the instances on this host", "gomaxprocs", runtime.GOMAXPROCS(0))
		return func() {}
	}
	base := runtime.GOMAXPROCS(0)
	s := &coreSharer{base: base, cur: base, count: c.ColocatedInstances, changed: c.Rebalanced,
		set: func(procs int) {
			if procs == base {
				runtime.SetDefaultGOMAXPROCS() // back to the runtime's own (it follows CPU limits)
				return
			}
			runtime.GOMAXPROCS(procs)
		},
		settle: time.Second, retry: time.Second, logger: logger}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		s.run(ctx)
	}()
	return func() {
		cancel()
		<-done
	}
}

// run adjusts GOMAXPROCS after every rebalance until ctx ends.
func (s *coreSharer) run(ctx context.Context) {
	for {
		changed := s.changed()
		select {
		case <-ctx.Done():
			return
		case <-changed:
		}
		// Rebalances come in rounds (revoke, then assign; a group per
		// table): count once they have settled.
		if !sleepCtx(ctx, s.settle) {
			return
		}
		n, err := s.count(ctx)
		for try := 1; err != nil && try < maxCoreCountTries; try++ {
			if !sleepCtx(ctx, s.retry) {
				return
			}
			n, err = s.count(ctx)
		}
		if err != nil {
			// Not a rebalance that lasts: leave GOMAXPROCS until the
			// next change rather than asking every second.
			s.logger.Warn("cluster: cannot count the instances on this host; GOMAXPROCS unchanged", "gomaxprocs", s.cur, "err", err)
			continue
		}
		procs := coreShare(s.base, n)
		if procs == s.cur {
			continue
		}
		s.set(procs)
		s.logger.Info("cluster: instances on this host share its cores", "instances", n, "gomaxprocs", procs, "was", s.cur)
		s.cur = procs
	}
}

// sleepCtx waits d or until ctx ends (false then).
func sleepCtx(ctx context.Context, d time.Duration) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
		return true
	}
}
