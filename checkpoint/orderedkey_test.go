package checkpoint

import (
	"bytes"
	"math"
	"testing"
)

func TestOrderedInt64(t *testing.T) {
	vals := []int64{math.MinInt64, -1 << 40, -2, -1, 0, 1, 2, 1 << 40, math.MaxInt64}
	for i := range vals {
		ki := AppendOrderedInt64(nil, vals[i])
		if got, ok := OrderedInt64(ki); !ok || got != vals[i] {
			t.Errorf("round trip of %d = %d %v", vals[i], got, ok)
		}
		for j := range vals {
			kj := AppendOrderedInt64(nil, vals[j])
			if c := bytes.Compare(ki, kj); (c < 0) != (vals[i] < vals[j]) || (c == 0) != (vals[i] == vals[j]) {
				t.Errorf("order of %d and %d: bytes.Compare = %d", vals[i], vals[j], c)
			}
		}
	}
	if _, ok := OrderedInt64([]byte{1, 2}); ok {
		t.Error("short input decoded")
	}
}

func TestOrderedBytesComposite(t *testing.T) {
	// (bytes, int64) pairs must sort by the bytes first, then the number,
	// even when one byte string is a prefix of the other or holds 0x00.
	tests := []struct {
		a, b []byte
	}{
		{[]byte("a"), []byte("ab")},
		{[]byte("a"), []byte("a\x00")},
		{[]byte("a\x00"), []byte("a\x00\x00")},
		{[]byte(""), []byte("\x00")},
		{[]byte("a\x00z"), []byte("a\x01")},
	}
	for _, tc := range tests {
		ka := AppendOrderedInt64(AppendOrderedBytes(nil, tc.a), math.MaxInt64)
		kb := AppendOrderedInt64(AppendOrderedBytes(nil, tc.b), math.MinInt64)
		if bytes.Compare(ka, kb) >= 0 {
			t.Errorf("(%q, max) sorts after (%q, min)", tc.a, tc.b)
		}
	}
}
