package sql

import (
	"strings"
	"testing"
)

func TestParseSubscribe(t *testing.T) {
	cases := []struct {
		in, out string
		since   int64 // -2: no SINCE
	}{
		{"SUBSCRIBE t", "SUBSCRIBE TO t", -2},
		{"subscribe to t", "SUBSCRIBE TO t", -2},
		{"SUBSCRIBE db.t SINCE EPOCH 12", "SUBSCRIBE TO db.t SINCE EPOCH 12", 12},
		{"SUBSCRIBE `odd name` SINCE EPOCH -1", "SUBSCRIBE TO `odd name` SINCE EPOCH -1", -1},
		{"SUBSCRIBE to", "SUBSCRIBE TO to", -2}, // a table called to
		{"SUBSCRIBE TO since SINCE EPOCH 3", "SUBSCRIBE TO since SINCE EPOCH 3", 3},
		{"SUBSCRIBE subscribe;", "SUBSCRIBE TO subscribe", -2},
	}
	for _, c := range cases {
		st, err := Parse(c.in)
		if err != nil {
			t.Fatalf("%q: %v", c.in, err)
		}
		s, ok := st.(*Subscribe)
		if !ok {
			t.Fatalf("%q: got %T", c.in, st)
		}
		if got := Format(s); got != c.out {
			t.Errorf("%q formats as %q, want %q", c.in, got, c.out)
		}
		switch {
		case c.since == -2 && s.Since != nil:
			t.Errorf("%q: Since = %d, want none", c.in, *s.Since)
		case c.since != -2 && (s.Since == nil || *s.Since != c.since):
			t.Errorf("%q: Since = %v, want %d", c.in, s.Since, c.since)
		}
		again, err := Parse(c.out)
		if err != nil || Format(again) != c.out {
			t.Errorf("%q does not round-trip: %v", c.out, err)
		}
	}
}

func TestParseSubscribeErrors(t *testing.T) {
	cases := []struct{ in, want string }{
		{"SUBSCRIBE", "expected a table name after SUBSCRIBE, found end of input"},
		{"SUBSCRIBE t SINCE 3", "expected EPOCH after SINCE"},
		{"SUBSCRIBE t SINCE EPOCH", "expected an epoch number after SINCE EPOCH"},
		{"SUBSCRIBE t SINCE EPOCH 1.5", "SINCE EPOCH 1.5: not an epoch number"},
		{"SUBSCRIBE t SINCE EPOCH -2", "SINCE EPOCH -2: the epoch must be -1"},
		{"SUBSCRIBE t SINCE EPOCH 99999999999999999999", "not an epoch number"},
		{"SUBSCRIBE t WHERE x", "found 'WHERE'"},
	}
	for _, c := range cases {
		_, err := Parse(c.in)
		if err == nil || !strings.Contains(err.Error(), c.want) {
			t.Errorf("%q: got %v, want an error containing %q", c.in, err, c.want)
		}
	}
}
