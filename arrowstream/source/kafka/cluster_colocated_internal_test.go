package kafka

import "testing"

func TestColocatedCountsDistinctAddressesOfTheHost(t *testing.T) {
	ms := []Member{
		{Table: "a", Address: "10.0.0.1:1"}, {Table: "b", Address: "10.0.0.1:1"}, // self, in two groups
		{Table: "a", Address: "10.0.0.1:2"}, {Table: "b", Address: "10.0.0.1:2"},
		{Table: "a", Address: "10.0.0.2:1"},     // another host
		{Table: "a", Address: "host-a:3"},       // named otherwise: not counted
		{Table: "a", Address: ""},               // no address (a foreign member)
		{Table: "a", Address: "[::1]:1"},        // IPv6, another host
		{Table: "b", Address: "10.0.0.10:1"},    // a prefix of no host
		{Table: "b", Address: "10.0.0.1:65535"}, // the host's third
	}
	for _, tc := range []struct {
		self string
		want int
	}{
		{"10.0.0.1:1", 3},
		{"10.0.0.2:1", 1},
		{"[::1]:1", 1},
		{"10.0.0.9:1", 1}, // not listed yet: itself
		{"bad address", 1},
	} {
		if got := colocated(ms, tc.self); got != tc.want {
			t.Errorf("colocated(%s) = %d, want %d", tc.self, got, tc.want)
		}
	}
}

func TestSettledRefusesARebalancingGroup(t *testing.T) {
	ok := []Member{{Group: "g", MemberID: "a", Address: "h:1", Self: true}, {Group: "g", MemberID: "b", Address: "h:2"}}
	if err := settled([]string{"g"}, ok); err != nil {
		t.Fatalf("settled(%v) = %v", ok, err)
	}
	for _, ms := range [][]Member{
		{{Group: "g", MemberID: "a", Address: "h:1", Self: true}, {Group: "g", MemberID: "b"}},                 // b's metadata not there yet
		{{Group: "g", MemberID: "b", Address: "h:2"}},                                                          // this instance not in the group yet
		{{Group: "g", MemberID: "a", Address: "h:1", Self: true}, {Group: "h", MemberID: "b", Address: "h:2"}}, // one group settled, one not
		{{Group: "g", MemberID: "a", Address: "h:1", Self: true}},                                              // group h described no members
	} {
		if err := settled([]string{"g", "h"}, ms); err == nil {
			t.Errorf("settled(%v) = nil, want an error", ms)
		}
	}
}
