package vector_test

import (
	"math"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

func TestFormatDayTime(t *testing.T) {
	cases := []struct {
		us         int64
		start, end vector.DTField
		want       string
	}{
		{3*86_400_000_000 + 1_000_000, vector.DTDay, vector.DTSecond, "INTERVAL '3 00:00:01' DAY TO SECOND"},
		{93_784_500_000, vector.DTDay, vector.DTSecond, "INTERVAL '1 02:03:04.5' DAY TO SECOND"},
		{10_800_000_000, vector.DTHour, vector.DTHour, "INTERVAL '03' HOUR"},
		{360_000_000_000, vector.DTHour, vector.DTMinute, "INTERVAL '100:00' HOUR TO MINUTE"},
		{1_500_000, vector.DTSecond, vector.DTSecond, "INTERVAL '01.5' SECOND"},
		{75_000_000, vector.DTSecond, vector.DTSecond, "INTERVAL '75' SECOND"},
		{0, vector.DTDay, vector.DTSecond, "INTERVAL '0 00:00:00' DAY TO SECOND"},
		{-1, vector.DTMinute, vector.DTSecond, "INTERVAL '-00:00.000001' MINUTE TO SECOND"},
		{90_061_000_000, vector.DTDay, vector.DTHour, "INTERVAL '1 01' DAY TO HOUR"}, // minutes dropped
		{math.MinInt64, vector.DTDay, vector.DTSecond, "INTERVAL '-106751991 04:00:54.775808' DAY TO SECOND"},
		{math.MinInt64, vector.DTHour, vector.DTMinute, "INTERVAL '-2562047788:00' HOUR TO MINUTE"},
		{math.MinInt64, vector.DTSecond, vector.DTSecond, "INTERVAL '-9223372036854.775808' SECOND"},
		{math.MaxInt64, vector.DTDay, vector.DTSecond, "INTERVAL '106751991 04:00:54.775807' DAY TO SECOND"},
	}
	for _, c := range cases {
		if got := vector.FormatDayTime(c.us, c.start, c.end); got != c.want {
			t.Errorf("FormatDayTime(%d, %v, %v) = %q, want %q", c.us, c.start, c.end, got, c.want)
		}
	}
}

// TestFormatDayTimeRoundTrip reads the text of types ending in SECOND
// (which lose nothing) back with the SQL parser's interval reader: the
// same microseconds come back.
func TestFormatDayTimeRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	values := []int64{0, 1, -1, math.MaxInt64, math.MinInt64 + 1, 999_999, 10_000_000, -9_999_999}
	for range 2000 {
		v := r.Int64() >> r.IntN(64)
		if r.IntN(2) == 0 {
			v = -v
		}
		values = append(values, v)
	}
	for _, us := range values {
		for _, start := range []vector.DTField{vector.DTDay, vector.DTHour, vector.DTMinute, vector.DTSecond} {
			text := vector.FormatDayTime(us, start, vector.DTSecond)
			body, unit, ok := strings.Cut(strings.TrimPrefix(text, "INTERVAL '"), "' ")
			if !ok {
				t.Fatalf("%d: unexpected text %q", us, text)
			}
			lit := &sql.IntervalLit{Parts: []sql.IntervalPart{{Value: body, Quoted: true, Unit: unit}}}
			iv, err := lit.Value()
			if err != nil {
				t.Fatalf("%d as %s: %q does not parse: %v", us, unit, text, err)
			}
			got, err := iv.Fixed()
			if err != nil || got != us {
				t.Fatalf("%d as %s: %q reads back as %d (%v)", us, unit, text, got, err)
			}
		}
	}
}
