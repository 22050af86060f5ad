package sql

import (
	"fmt"
	"testing"
)

// TestDayTimeRangeRoundTrip writes random day-time values in each range's
// form and checks they read back as the microseconds they were written
// from (a brute-force model of the patterns).
func TestDayTimeRangeRoundTrip(t *testing.T) {
	for d := int64(0); d < 400; d += 37 {
		for h := int64(0); h < 24; h += 5 {
			for m := int64(0); m < 60; m += 13 {
				for _, us := range []int64{0, 1, 500_000, 999_999} {
					s := int64(m % 60)
					want := d*86_400_000_000 + h*3_600_000_000 + m*60_000_000 + s*1_000_000 + us
					cases := map[string]string{
						"DAY TO SECOND":  fmt.Sprintf("%d %d:%d:%d.%06d", d, h, m, s, us),
						"HOUR TO SECOND": fmt.Sprintf("%d:%d:%d.%06d", d*24+h, m, s, us),
					}
					for unit, text := range cases {
						for _, neg := range []bool{false, true} {
							got, err := dayTimeRange(neg, text, unit)
							w := want
							if neg {
								w = -w
							}
							if err != nil || got != w {
								t.Fatalf("%s '%s' (neg %v): %d, %v; want %d", unit, text, neg, got, err, w)
							}
						}
					}
				}
			}
		}
	}
}

// FuzzDayTimeRange checks that no text panics the day-time literal
// reader and that a '-' before the string negates what it reads.
func FuzzDayTimeRange(f *testing.F) {
	for _, s := range []string{"1 2:3:4.001", "-106751991 04:00:54.775808", "20 15", "15:40", "|1 2", " \t1 2:3\n", "99999999999:59"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for unit := range dtRangePatterns {
			pos, errPos := dayTimeRange(false, s, unit)
			neg, errNeg := dayTimeRange(true, s, unit)
			if errPos == nil && errNeg == nil && pos != -neg {
				t.Fatalf("%s '%s': %d, negated %d", unit, s, pos, neg)
			}
		}
	})
}
