package vector

import "testing"

// TestLegacyMayParse checks the model of Spark 2's parser (SimpleDateFormat,
// not lenient) on text java.time refuses: Spark 3.3's answers are NULL
// where the model says false and SparkUpgradeException where it says true
// (datetime-parsing-invalid.sql, timestamp.sql).
func TestLegacyMayParse(t *testing.T) {
	for _, tc := range []struct {
		pattern, text string
		want          bool
	}{
		{"yy", "1", true},    // any number of digits
		{"yy", "123", true},  // the year 123
		{"yyy", "1", true},   // (before 1583: Julian, unmodelled)
		{"yy", "-12", false}, // no negative year
		{"D", "366", false},  // 1970 has 365 days
		{"DD", "9", true},    // one digit is enough
		{"DDD", "99", true},  // two are too
		{"dd-DDD", "30-365", false},
		{"MM-DDD", "11-365", false},
		{"MM-DDD", "12-365", true},
		{"yyyy-DDD", "2019-366", false},
		{"yyyy-DDD", "2020-366", true},
		{"MM-dd", "02-29", false},
		{"yyyy-MM-dd", "2020-2-29", true},
		{"yyyy-MM-dd", "2021-02-29", false},
		{"yyyy-MM-dd HH:mm:ss.SSS", "2020-01-27T20:06:11.847", false},
		{"yyyy-MM-dd HH:mm:ss.SSS", "Unparseable", false},
		{"yyyy-MM-dd", "2020-01-27 trailing text", true},
		{"yyyy-MM-dd", "2020-01- 7", true}, // spaces before a field
		{"ss.SSSSyyyy-MM-dd'S'HH:mm", "12.1232019-10-06S10:11", false},
		{"HH:mm", "24:00", false},
		{"kk:mm", "24:00", true},
		{"hh:mm a", "13:00 PM", false},
		{"hh:mm a", "12:00 PM", true},
		{"yyyy-MM-dd EEE", "2020-01-01 Mon", true},     // day names: unmodelled
		{"EEE, dd MMM yyyy", "Tue 05 Jan 2026", false}, // the comma is missing
		{"yyyyMMdd", "2020011", true},                  // abutting fields: unmodelled
		{"yyyy-MM-dd", "2020-1E1-01", true},            // DecimalFormat's exponent
	} {
		p, err := compileDatetimePattern(tc.pattern)
		if err != nil {
			t.Fatalf("%s: %v", tc.pattern, err)
		}
		if got := p.legacyMayParse([]byte(tc.text)); got != tc.want {
			t.Errorf("legacyMayParse(%q, %q) = %v, want %v", tc.pattern, tc.text, got, tc.want)
		}
	}
}
