package socket_test

import (
	"context"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/arrowstream/access"
	"github.com/arrowstream/arrowstream/arrowstream/source/socket"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/memsink"
)

// movingResolver resolves one name to an address a test can change.
type movingResolver struct {
	mu   sync.Mutex
	name string
	addr string
}

func (r *movingResolver) LookupHost(_ context.Context, host string) ([]string, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if strings.EqualFold(host, r.name) {
		return []string{r.addr}, nil
	}
	return nil, fmt.Errorf("lookup %s: no such host", host)
}

// TestSocketDialVettedByPolicy: under a policy that allows only the name
// svc.test, a socket table on the name's address is accepted and reads;
// once the name resolves elsewhere, a new query's connection is refused
// by the session's dial control (DNS rebinding), naming the flag.
func TestSocketDialVettedByPolicy(t *testing.T) {
	port, send := lineServer(t)
	r := &movingResolver{name: "svc.test", addr: "127.0.0.1"}
	pol, err := access.New(access.Config{AllowConnect: []string{"svc.test:" + strconv.Itoa(port)}, Resolver: r})
	if err != nil {
		t.Fatal(err)
	}
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	s := arrowstream.NewSession(arrowstream.SessionOptions{Allocator: mem, CheckpointRoot: t.TempDir(), NoSync: true, Access: pol})
	socket.Install(s)
	sinks := memsink.NewCatalog()
	memsink.Install(s, sinks, memsink.Options{})
	defer func() {
		s.Streams().StopAll()
		for _, name := range sinks.List() {
			if tbl, ok := sinks.Drop(name); ok {
				tbl.Close()
			}
		}
	}()
	if err := s.RegisterSource("lines", "socket", nil, map[string]string{"host": "127.0.0.1", "port": strconv.Itoa(port)}); err != nil {
		t.Fatalf("the listed name's address: %v", err)
	}
	if err := s.RegisterSource("other", "socket", nil, map[string]string{"host": "127.0.0.2", "port": strconv.Itoa(port)}); err == nil {
		t.Fatal("an address outside the policy was accepted")
	}
	start := func(name string) *arrowstream.StreamingQuery {
		q, err := s.ReadStream("lines").WriteStream().Format("memory").QueryName(name).
			Trigger(arrowstream.ProcessingTime(5 * time.Millisecond)).Start(context.Background())
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	q := start("a")
	send(lines("x", 3))
	if err := q.ProcessAllAvailable(context.Background()); err != nil {
		t.Fatalf("reading through the allowed connection: %v", err)
	}
	q.Stop()
	r.mu.Lock()
	r.addr = "10.0.0.7"
	r.mu.Unlock()
	q = start("b")
	defer q.Stop()
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	err = q.AwaitTermination(ctx)
	if err == nil || !strings.Contains(err.Error(), "refused") || !strings.Contains(err.Error(), access.FlagAllowConnect) {
		t.Fatalf("query after the name moved ended with %v, want the dial refused", err)
	}
}
