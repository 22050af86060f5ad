package access

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
)

// fakeResolver answers from a table that a test may change (a name that
// rebinds).
type fakeResolver struct {
	mu    sync.Mutex
	hosts map[string][]string
}

func (f *fakeResolver) set(host string, addrs ...string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.hosts[host] = addrs
}

func (f *fakeResolver) LookupHost(_ context.Context, host string) ([]string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if a, ok := f.hosts[strings.ToLower(host)]; ok {
		return a, nil
	}
	return nil, fmt.Errorf("lookup %s: no such host", host)
}

// TestEndpointHostNames: listed names are compared by the addresses they
// resolve to; an unlisted name passes only when all its addresses are
// allowed; the refusal names the endpoint and the flag.
func TestEndpointHostNames(t *testing.T) {
	r := &fakeResolver{hosts: map[string][]string{}}
	r.set("kafka.internal", "10.0.0.5", "10.0.0.6")
	r.set("alias.internal", "10.0.0.5")
	r.set("mixed.internal", "10.0.0.5", "10.9.9.9")
	r.set("evil.example", "10.9.9.9")
	p, err := New(Config{AllowConnect: []string{"kafka.internal:9092", "10.1.1.1:7000"}, Resolver: r})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		ep string
		ok bool
	}{
		{"kafka.internal:9092", true},
		{"KAFKA.internal:9092", true},
		{"10.0.0.6:9092", true},       // an address of the listed name
		{"10.0.0.5:9093", false},      // another port
		{"alias.internal:9092", true}, // every address allowed
		{"mixed.internal:9092", false},
		{"evil.example:9092", false},
		{"unknown.example:9092", false},
		{"10.1.1.1:7000", true},
		{"[::ffff:10.1.1.1]:7000", true},
		{"127.0.0.1:9092", false}, // no loopback in this policy
	} {
		err := p.CheckEndpoint("kafka.bootstrap.servers", tc.ep)
		if tc.ok != (err == nil) {
			t.Errorf("%s: %v, want allowed=%v", tc.ep, err, tc.ok)
		}
		if err != nil && (!errors.Is(err, ErrDenied) || !strings.Contains(err.Error(), FlagAllowConnect)) {
			t.Errorf("%s: refusal %v does not wrap ErrDenied and name the flag", tc.ep, err)
		}
	}
}

// TestControlRefusesRebinding: a name checked while it resolved to an
// allowed address is refused at connect time once it resolves elsewhere;
// the connection to the listed address succeeds through a real dialer.
func TestControlRefusesRebinding(t *testing.T) {
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer lis.Close()
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	_, port, _ := net.SplitHostPort(lis.Addr().String())
	r := &fakeResolver{hosts: map[string][]string{}}
	r.set("svc.test", "127.0.0.1")
	p, err := New(Config{AllowConnect: []string{"svc.test:" + port}, Resolver: r})
	if err != nil {
		t.Fatal(err)
	}
	if err := p.CheckEndpoint("host/port", "127.0.0.1:"+port); err != nil {
		t.Fatalf("the listed name's address: %v", err)
	}
	d := net.Dialer{Control: p.Control}
	c, err := d.DialContext(context.Background(), "tcp", lis.Addr().String())
	if err != nil {
		t.Fatalf("dial the listed name's address: %v", err)
	}
	c.Close()
	r.set("svc.test", "10.0.0.7") // the name moves
	_, err = d.DialContext(context.Background(), "tcp", lis.Addr().String())
	if !errors.Is(err, ErrDenied) || !strings.Contains(err.Error(), "refused") {
		t.Fatalf("dial after the name moved: %v, want a refusal", err)
	}
	var nilPolicy *Policy
	if err := nilPolicy.Control("tcp", "10.0.0.1:1", nil); err != nil {
		t.Fatalf("a nil policy refuses: %v", err)
	}
}
