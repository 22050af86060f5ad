package kafka

import (
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

func TestClaimHistoryRoundTripAndBound(t *testing.T) {
	h := claimHistory{}.with("a", 10).with("b", 20).with("a", 30)
	got := parseClaimHistory(h.encode())
	if len(got) != 2 || got["a"] != 30 || got["b"] != 20 {
		t.Fatalf("round trip: %v", got)
	}
	for _, foreign := range []string{"", "some tool's metadata", claimHistoryPrefix + "x=notanumber,=5,y"} {
		if h := parseClaimHistory(foreign); len(h) != 0 {
			t.Fatalf("parseClaimHistory(%q) = %v, want empty", foreign, h)
		}
	}
	big := claimHistory{}
	for i := range 100 {
		big = big.with(strings.Repeat("x", 15)+string(rune('A'+i%26))+string(rune('a'+i/26)), int64(i))
	}
	enc := big.encode()
	kept := parseClaimHistory(enc)
	if len(kept) != maxClaimHistory || len(enc) > 4096 {
		t.Fatalf("bounded history: %d entries, %d bytes", len(kept), len(enc))
	}
	for _, off := range kept {
		if off < 100-maxClaimHistory {
			t.Fatalf("the history kept an old claim (%d) over newer ones", off)
		}
	}
}

func TestAddressBalancerWrapsMetadata(t *testing.T) {
	b := &addressBalancer{inner: kgo.CooperativeStickyBalancer(), addr: "10.0.0.7:31337"}
	meta := b.JoinGroupMetadata([]string{"ev"}, map[string][]int32{"ev": {1, 2}}, 3)
	if addr, ok := MemberAddress(meta); !ok || addr != "10.0.0.7:31337" {
		t.Fatalf("MemberAddress = %q, %v", addr, ok)
	}
	other := &addressBalancer{inner: kgo.CooperativeStickyBalancer(), addr: "10.0.0.8:31337"}
	members := []kmsg.JoinGroupResponseMember{
		{MemberID: "m1", ProtocolMetadata: meta},
		{MemberID: "m2", ProtocolMetadata: other.JoinGroupMetadata([]string{"ev"}, nil, 3)},
	}
	mb, topics, err := b.MemberBalancer(members)
	if err != nil {
		t.Fatal(err)
	}
	if _, ok := topics["ev"]; !ok {
		t.Fatalf("topics %v", topics)
	}
	// kgo calls BalanceOrError when a balancer has it (the sticky one's
	// Balance panics).
	into, err := mb.(interface {
		BalanceOrError(map[string]int32) (kgo.IntoSyncAssignment, error)
	}).BalanceOrError(map[string]int32{"ev": 12})
	if err != nil {
		t.Fatal(err)
	}
	plan := into.IntoSyncAssignment()
	n := 0
	for _, a := range plan {
		parts, err := b.ParseSyncAssignment(a.MemberAssignment)
		if err != nil {
			t.Fatal(err)
		}
		n += len(parts["ev"])
	}
	if n != 12 {
		t.Fatalf("balanced %d of 12 partitions", n)
	}
	// A consumer that does not carry an address cannot be balanced with.
	plain := kgo.CooperativeStickyBalancer().JoinGroupMetadata([]string{"ev"}, nil, 3)
	if _, _, err := b.MemberBalancer([]kmsg.JoinGroupResponseMember{{MemberID: "x", ProtocolMetadata: plain}}); err == nil || !strings.Contains(err.Error(), "x") {
		t.Fatalf("foreign member: err %v", err)
	}
}

// FuzzClusterDecoders: the decoders of what other processes write (group
// offset metadata, join metadata, offsets in a checkpoint) never panic,
// and what they accept encodes back to itself.
func FuzzClusterDecoders(f *testing.F) {
	f.Add([]byte(claimHistoryPrefix + "a=1,b=2"))
	f.Add(wrapAddress("127.0.0.1:1", []byte{1, 2}))
	f.Add([]byte(`{"v":1,"from":{"t":{"0":1}},"end":{"t":{"0":5}}}`))
	f.Fuzz(func(t *testing.T, b []byte) {
		h := parseClaimHistory(string(b))
		if len(h) <= maxClaimHistory {
			if again := parseClaimHistory(h.encode()); len(again) != len(h) {
				t.Fatalf("history %v re-encoded to %v", h, again)
			}
		}
		if addr, inner, ok := unwrapAddress(b); ok {
			if string(wrapAddress(addr, inner)) != string(b) {
				t.Fatalf("address %q: not the bytes it came from", addr)
			}
		}
		MemberAddress(b)
		if o, err := decodeClusterOffset(b); err == nil {
			if _, err := decodeClusterOffset(o.encode()); err != nil {
				t.Fatalf("re-encoded offset does not decode: %v", err)
			}
		}
	})
}
