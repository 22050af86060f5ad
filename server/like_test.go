package server

import (
	"strings"
	"testing"
)

func TestLikeMatch(t *testing.T) {
	for _, tc := range []struct {
		p, s string
		fold bool
		want bool
	}{
		{"%", "", false, true},
		{"%", "abc", false, true},
		{"", "", false, true},
		{"", "a", false, false},
		{"abc", "abc", false, true},
		{"abc", "ABC", false, false},
		{"abc", "ABC", true, true},
		{"a_c", "abc", false, true},
		{"a_c", "ac", false, false},
		{"a%c", "abbbc", false, true},
		{"a%c", "abbbd", false, false},
		{"%b%", "abc", false, true},
		{"a\\_c", "a_c", false, true},
		{"a\\_c", "abc", false, false},
		{"a\\%", "a%", false, true},
		{"a\\%", "ab", false, false},
		{"tr\\", "tr\\", false, true},
		{"%%%a", "bba", false, true},
		{"é_", "éx", false, true},
		{"_", "é", false, true},
		{"sys%", "SYSTEM", true, true},
	} {
		if got := likeMatch(tc.p, tc.s, tc.fold); got != tc.want {
			t.Errorf("likeMatch(%q, %q, %v) = %v", tc.p, tc.s, tc.fold, got)
		}
	}
	// A hostile pattern stays polynomial.
	if likeMatch(strings.Repeat("%a", 200)+"b", strings.Repeat("a", 5000), false) {
		t.Error("matched")
	}
}
