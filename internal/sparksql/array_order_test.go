package sparksql

import "testing"

func TestSameUpToArrayOrder(t *testing.T) {
	cases := []struct {
		got, want string
		same      bool
	}{
		{"1\t[1,2,3]", "1\t[3,1,2]", true},
		{"1\t[1,2]\n2\t[4,3]", "2\t[3,4]\n1\t[2,1]", true},
		{"[[1,2],[3]]", "[[2,1],[3]]", true},
		{"1\t[1,2,3]", "1\t[1,2,4]", false},
		{"1\t[1,2]", "1\t[1,2,2]", false},
		{"1\t[1,2]", "2\t[1,2]", false},
		{"[a,b]\tx", "[b,a]\ty", false},
	}
	for _, c := range cases {
		if got := sameUpToArrayOrder(c.got, c.want); got != c.same {
			t.Errorf("sameUpToArrayOrder(%q, %q) = %v, want %v", c.got, c.want, got, c.same)
		}
	}
}
