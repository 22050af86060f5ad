package kafka

import (
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
)

// TestClusterOffsetRetryEncoding: a plan without a retry count encodes
// exactly as before the count existed (the offsets of existing
// checkpoints, and the names of their claims files, which hash them, are
// unchanged), an offset written before it decodes with no count, and a
// count survives the round trip without changing the ranges.
func TestClusterOffsetRetryEncoding(t *testing.T) {
	old := stream.Offset(`{"v":1,"from":{"ev":{"0":5,"11":7}},"end":{"ev":{"0":9,"11":8}}}`)
	o, err := decodeClusterOffset(old)
	if err != nil {
		t.Fatal(err)
	}
	if o.Retry != 0 {
		t.Fatalf("retry %d decoded from an offset without one", o.Retry)
	}
	if got := o.encode(); !got.Equal(old) {
		t.Fatalf("re-encoded as %s, want %s", got, old)
	}
	o.Retry = 2
	again := o.encode()
	if want := stream.Offset(`{"v":1,"from":{"ev":{"0":5,"11":7}},"end":{"ev":{"0":9,"11":8}},"retry":2}`); !again.Equal(want) {
		t.Fatalf("encoded as %s, want %s", again, want)
	}
	r, err := decodeClusterOffset(again)
	if err != nil {
		t.Fatal(err)
	}
	if r.Retry != 2 || !r.sameAs(o) {
		t.Fatalf("decoded %+v from %s", r, again)
	}
}
