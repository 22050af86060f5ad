package kafka

import (
	"testing"
	"time"
)

// TestTxnTimeoutGrows: a transaction fenced after its timeout doubles
// the timeout (up to maxTxnTimeout); one fenced sooner (another producer)
// leaves it; a refused one steps back, never below the initial one.
func TestTxnTimeoutGrows(t *testing.T) {
	tt := newTxnTimeout(ClusterOptions{SessionTimeout: 6 * time.Second})
	if got := tt.cur; got != 10*time.Second {
		t.Fatalf("initial timeout %v, want 10s", got)
	}
	if tt.fenced(9 * time.Second) {
		t.Fatal("a fence before the timeout counted as a timeout")
	}
	if !tt.fenced(10*time.Second) || tt.cur != 20*time.Second {
		t.Fatalf("after a timeout: %v, want 20s", tt.cur)
	}
	for i := 0; i < 10; i++ {
		tt.fenced(tt.cur)
	}
	if tt.cur != 15*time.Minute {
		t.Fatalf("grown to %v, want the cap 15m", tt.cur)
	}
	if !tt.refused() || tt.cur != 7*time.Minute+30*time.Second {
		t.Fatalf("after a refusal: %v", tt.cur)
	}
	for tt.refused() {
	}
	if tt.cur != 10*time.Second {
		t.Fatalf("stepped back to %v, want the initial 10s", tt.cur)
	}
	if got := newTxnTimeout(ClusterOptions{SessionTimeout: 30 * time.Second}).cur; got != 30*time.Second {
		t.Fatalf("initial timeout with a 30s session: %v", got)
	}
}
