package vector

import (
	"testing"
	"time"
)

// TestDatetimePatternBeforeEpoch: a pattern parses times before 1970 (the
// overflow guard of the fraction once refused every one of them), checked
// against Go's proleptic Gregorian calendar, and still refuses the time
// just past the largest timestamp.
func TestDatetimePatternBeforeEpoch(t *testing.T) {
	for _, c := range []struct {
		text, pattern string
		want          time.Time
	}{
		{"0001", "yyyy", time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"1", "y", time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"001", "yyy", time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"000001", "yyyyyy", time.Date(1, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"0999-12-31 23:59:59.5", "yyyy-MM-dd HH:mm:ss.S", time.Date(999, 12, 31, 23, 59, 59, 500_000_000, time.UTC)},
		{"1969-12-31 23:59:59.999999", "yyyy-MM-dd HH:mm:ss.SSSSSS", time.Date(1969, 12, 31, 23, 59, 59, 999_999_000, time.UTC)},
		{"1000", "yyyy", time.Date(1000, 1, 1, 0, 0, 0, 0, time.UTC)},
		{"2001", "yyyy", time.Date(2001, 1, 1, 0, 0, 0, 0, time.UTC)},
	} {
		p, err := compileDatetimePattern(c.pattern)
		if err != nil {
			t.Fatalf("%s: %v", c.pattern, err)
		}
		pt, ok := p.parse([]byte(c.text))
		got := pt.wall
		if want := c.want.UnixMicro(); !ok || got != want {
			t.Errorf("parse(%q, %q) = %d, %v; want %d", c.text, c.pattern, got, ok, want)
		}
	}
	p, err := compileDatetimePattern("yyyyyy-MM-dd HH:mm:ss.SSSSSS")
	if err != nil {
		t.Fatal(err)
	}
	if got, ok := p.parse([]byte("294247-01-10 04:00:54.775808")); ok {
		t.Errorf("one microsecond past the largest timestamp parsed as %d", got.wall)
	}
	if _, ok := p.parse([]byte("294247-01-10 04:00:54.775807")); !ok {
		t.Errorf("the largest timestamp does not parse")
	}
}
