package server

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc/codes"

	"github.com/arrowstream/arrowstream/internal/testutil"
	"github.com/arrowstream/arrowstream/memsink"
)

func TestServeStopsWithItsContext(t *testing.T) {
	s, err := New(Config{Addr: "127.0.0.1:0", Sinks: memsink.NewCatalog(), Logger: testLogger})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Serve(ctx, time.Second) }()
	waitFor(t, 5*time.Second, "the server to listen", func() bool { return s.Addr() != nil })
	c := flightClient(t, s)
	if _, err := c.ListActions(context.Background(), nil); err != nil {
		t.Fatal(err)
	}
	cancel()
	select {
	case err := <-done:
		if err != nil {
			t.Fatal(err)
		}
	case <-time.After(testutil.Scaled(time.Minute)):
		t.Fatal("Serve did not return")
	}
	if err := s.Start(context.Background()); err == nil {
		t.Fatal("a stopped server started again")
	}
}

func TestPreparedStoreBoundsAndExpiry(t *testing.T) {
	now := time.Unix(0, 0)
	st := newPreparedStore(2, time.Minute)
	st.now = func() time.Time { return now }
	a, b := &prepared{user: "u"}, &prepared{user: "u"}
	if st.add(a) != nil || st.add(b) != nil {
		t.Fatal("add")
	}
	wantCode(t, st.add(&prepared{user: "u"}), codes.ResourceExhausted)
	if _, err := st.get([]byte(a.handle), "other"); err == nil {
		t.Fatal("another user's handle served")
	}
	now = now.Add(30 * time.Second)
	if _, err := st.get([]byte(a.handle), "u"); err != nil { // a is used, b idles
		t.Fatal(err)
	}
	now = now.Add(45 * time.Second)
	if err := st.add(&prepared{user: "u"}); err != nil {
		t.Fatalf("idle statement not expired: %v", err)
	}
	if _, err := st.get([]byte(b.handle), "u"); err == nil {
		t.Fatal("expired handle served")
	}
	if err := st.remove([]byte(a.handle), "u"); err != nil || st.len() != 1 {
		t.Fatalf("remove: %v, %d left", err, st.len())
	}
}
