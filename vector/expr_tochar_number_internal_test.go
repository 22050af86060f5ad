package vector

import (
	"bytes"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/decimal128"
)

// TestToCharRoundTrip: to_number reads back what to_char writes (spaces
// removed) for random values that fit the format, over formats with
// every kind of token; and a value with more digits than the format
// shows only '#' in its digit positions.
func TestToCharRoundTrip(t *testing.T) {
	r := rand.New(rand.NewPCG(1, 2))
	formats := []string{"999", "0999", "9G999", "99,999.99", "S9999.999", "9999.99MI", "$999D99", "MI0,000.0", "9999.999S", "999999999999999999999999999999.99"}
	for _, format := range formats {
		cf, err := compileCharFormat(format)
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		nf, err := compileNumberFormat(format)
		if err != nil {
			t.Fatalf("%s: %v", format, err)
		}
		var sc tcScratch
		ns := nfScratch{groups: make([]int, 0, nf.maxGroups+1)}
		scale := int32(nf.scale)
		for range 2000 {
			// A value with at most the format's digits, at its scale.
			digits := 1 + r.IntN(nf.precision)
			var b strings.Builder
			for range digits {
				b.WriteByte(byte('0' + r.IntN(10)))
			}
			v, err := decimal128.FromString(b.String(), int32(nf.precision), 0)
			if err != nil {
				t.Fatal(err)
			}
			if r.IntN(2) == 0 {
				v = v.Negate()
			}
			if !strings.Contains(format, "S") && !strings.Contains(format, "MI") && v.Sign() < 0 {
				v = v.Negate()
			}
			out := cf.format(&sc, v, scale)
			text := bytes.ReplaceAll(out, []byte(" "), nil) // Spark pads inside too: "$  0.71"
			if bytes.ContainsRune(text, '#') {
				t.Fatalf("%s: %s written as %q: it fits the format", format, v.ToString(scale), out)
			}
			if len(text) == 0 || string(text) == "+" {
				// Zero without a zero-padded run is blank in Spark's
				// format (a sign S keeps "+").
				if v != (decimal128.Num{}) {
					t.Fatalf("%s: %s written as %q", format, v.ToString(scale), out)
				}
				continue
			}
			got, res := nf.parse(text, &ns)
			if res != nfOK || got != v {
				t.Fatalf("%s: %s written as %q reads back as %s (result %d)", format, v.ToString(scale), out, got.ToString(scale), res)
			}
		}
		// One digit too many before the point: '#' in every digit place.
		big, _ := decimal128.FromString("1"+strings.Repeat("0", nf.precision-nf.scale), 38, 0)
		out := string(cf.format(&sc, big.Mul(decimal128.FromI64(1)).Mul(pow10(scale)), scale))
		if strings.ContainsAny(out, "0123456789") || strings.Count(out, "#") != nf.precision {
			t.Fatalf("%s: an overflowing value written as %q", format, out)
		}
	}
}

func pow10(n int32) decimal128.Num {
	v := decimal128.FromI64(1)
	for range n {
		v = v.Mul(decimal128.FromI64(10))
	}
	return v
}
