package server

import (
	"context"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/arrowstream/arrowstream/internal/testutil"
	"github.com/arrowstream/arrowstream/memsink"
)

// TestStopEndsMemReturner: a server stopped while its memory returner
// waits out the interval between two returns leaves no goroutine behind.
// Before, the returner slept out the rest of returnInterval after Stop
// returned, which the package's leak check caught whenever the last test
// to run had just released a large query (go test -run
// 'TestOperatorsMemoryLimit|TestOperatorsCancel' ./server).
func TestStopEndsMemReturner(t *testing.T) {
	before := goleak.IgnoreCurrent()
	s, err := New(Config{Addr: "127.0.0.1:0", Logger: testLogger, Sinks: memsink.NewCatalog()})
	if err != nil {
		t.Fatal(err)
	}
	if err := s.Start(context.Background()); err != nil {
		t.Fatal(err)
	}
	s.ret.free = func() {}
	s.ret.request() // the first return runs at once
	waitFor(t, time.Minute, "the first return", func() bool { return s.ret.returns.Load() == 1 && !s.ret.running.Load() })
	s.ret.request() // the next waits out returnInterval
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(time.Minute))
	defer cancel()
	if err := s.Stop(ctx); err != nil {
		t.Fatal(err)
	}
	if err := goleak.Find(before, goleak.IgnoreTopFunction("google.golang.org/grpc/internal/grpcsync.(*CallbackSerializer).run")); err != nil {
		t.Fatalf("goroutines left after Stop: %v", err)
	}
	if n := s.ret.returns.Load(); n != 1 {
		t.Errorf("%d returns, want 1: the stopped returner still returned", n)
	}
	s.ret.request() // ignored once stopped
	if s.ret.running.Load() {
		t.Error("a request after Stop started the returner")
	}
}
