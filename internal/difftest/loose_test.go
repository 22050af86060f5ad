package difftest

import "testing"

func TestLooseCell(t *testing.T) {
	for _, c := range []struct{ in, want string }{
		{"dec:1.5", "1.5"},
		{"1.5", "1.5"},
		{"dec:2", "2"},
		{"2", "2"},
		{"dec:1.3333333333333333333", "1.33333333"},
		{"1.3333333333333333", "1.33333333"},
		{"9223372036854775807", "9223372036854775807"},
		{"dec:-9999999999999999999999999999.9999999999", "-1e+28"},
		{"NaN", "NaN"},
		{"NULL", "NULL"},
		{`"1.5"`, `"1.5"`},
		{"2020-01-01", "2020-01-01"},
		{"2020-01-01 00:00:00", "2020-01-01 00:00:00"},
		{"-1", "-1"},
		{"true", "true"},
	} {
		if got := LooseCell(c.in); got != c.want {
			t.Errorf("LooseCell(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}
