package vector

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
)

// TestFormatNumberManyPlaces: format_number's places past a value's exact
// expansion are zeros appended without computing 10^d, and a value whose
// places pass the query's limit is refused before it is built. Before,
// format_number(1.5, 1000000000) raised 10 to the 10^9 and printed it:
// minutes of uncancellable CPU and gigabytes of unaccounted heap through
// the server.
func TestFormatNumberManyPlaces(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "s", Type: String, Nullable: true},
		{Name: "n", Type: Int64, Nullable: true},
		{Name: "p", Type: String, Nullable: true},
	}, nil)
	one := func(mem *peakAlloc, e Expr) (string, error) {
		s := "x"
		out, err := evalOn(mem, schema, []*string{&s}, []*int64{nil}, []*string{&s}, e)
		if err != nil {
			return "", err
		}
		return *out[0], nil
	}
	start := time.Now()
	mem := newPeakAlloc(4 << 20)
	_, err := one(mem, mustFunc(t, "format_number", Lit(1.5), Lit(int64(1_000_000_000))))
	if !errors.Is(err, errTestLimit) || !strings.Contains(err.Error(), "format_number") {
		t.Fatalf("1.5 to 10^9 places: %v, want the limit's error naming format_number", err)
	}
	if d := time.Since(start); d > time.Minute { // minutes of CPU before; not a timing assertion of the fix
		t.Fatalf("refusal took %v", d)
	}
	mem.AssertSize(t, 0)
	// Exact values: 0.1 as a double is 0.1000000000000000055511151231257827021181583404541015625.
	exact := "0.1000000000000000055511151231257827021181583404541015625"
	for _, c := range []struct {
		x      any
		places int64
		want   string
	}{
		{0.1, 55, exact},
		{0.1, 60, exact + "00000"},
		{0.1, 20, "0.10000000000000000555"},
		{1.5, 3000, "1.5" + strings.Repeat("0", 2999)},
		{-1234567.25, 2, "-1,234,567.25"},
		{-1234567.25, 40, "-1,234,567.25" + strings.Repeat("0", 38)},
		{int64(-9876543210), 30, "-9,876,543,210." + strings.Repeat("0", 30)},
	} {
		mem := newPeakAlloc(4 << 20)
		got, err := one(mem, mustFunc(t, "format_number", Lit(c.x), Lit(c.places)))
		if err != nil || got != c.want {
			t.Errorf("format_number(%v, %d) = %q, %v; want %q", c.x, c.places, got, err, c.want)
		}
		mem.AssertSize(t, 0)
	}
}
