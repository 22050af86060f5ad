package vector_test

import (
	"context"
	"errors"
	"math/big"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
)

// toNumberOne evaluates to_number or try_to_number of one string s with
// format on mem; bindErr is a format error.
func toNumberOne(t *testing.T, mem memory.Allocator, s, format string, try bool) (out arrow.Array, bindErr, evalErr error) {
	t.Helper()
	schema := schemaOf("s", vector.String)
	b := array.NewStringBuilder(mem)
	b.Append(s)
	col := b.NewArray()
	b.Release()
	rec := array.NewRecord(schema, []arrow.Array{col}, 1)
	col.Release()
	defer rec.Release()
	e := vector.ToNumber(vector.Col("s"), vector.Lit(format))
	if try {
		e = vector.TryToNumber(vector.Col("s"), vector.Lit(format))
	}
	ev, err := e.Bind(schema, mem)
	if err != nil {
		return nil, err, nil
	}
	out, err = ev.Eval(context.Background(), rec)
	return out, nil, err
}

// numberModel is the expected absolute value and sign of a string that a
// format matched: the input's digits before its '.' and after it (padded
// to the scale), negative when the input has an odd number of '-' and '<'.
func numberModel(s string, scale int32) *big.Int {
	before, after, _ := strings.Cut(s, ".")
	digits := func(x string) string {
		var b strings.Builder
		for _, c := range x {
			if c >= '0' && c <= '9' {
				b.WriteRune(c)
			}
		}
		return b.String()
	}
	text := digits(before) + digits(after) + strings.Repeat("0", int(scale)-len(digits(after)))
	v, _ := new(big.Int).SetString("0"+text, 10)
	if (strings.Count(s, "-")+strings.Count(s, "<"))%2 == 1 {
		v.Neg(v)
	}
	return v
}

// FuzzToNumber feeds arbitrary formats and strings to to_number and
// try_to_number: an invalid format is a type error at bind time in both;
// to_number raises exactly where try_to_number is NULL; a value equals the
// model of numberModel; nothing panics or leaks.
func FuzzToNumber(f *testing.F) {
	for _, c := range [][2]string{{"454", "000"}, {"454.2", "000.0"}, {"12,454", "00,000"}, {"$78.12", "$00.00"},
		{"+454", "S000"}, {"12,454.8-", "00,000.9MI"}, {"<00,454.8>", "00,000.9PR"}, {"1,23", "9,999"}, {"", "9.99"},
		{"", "999"}, {" 4 5", "999"}, {"12", ".99"}, {"1", "9,,9"}, {"1", "9S9"}, {"-", "S9"}, {"1\u2003", "9"}} {
		f.Add(c[0], c[1])
	}
	f.Fuzz(func(t *testing.T, s, format string) {
		mem := poisonmem.New()
		defer mem.AssertSize(t, 0)
		out, bindErr, evalErr := toNumberOne(t, mem, s, format, false)
		tryOut, tryBindErr, tryEvalErr := toNumberOne(t, mem, s, format, true)
		if (bindErr == nil) != (tryBindErr == nil) {
			t.Fatalf("format %q: to_number bind %v, try_to_number bind %v", format, bindErr, tryBindErr)
		}
		if bindErr != nil {
			if !errors.Is(bindErr, vector.ErrType) {
				t.Fatalf("format %q: bind error %v does not wrap ErrType", format, bindErr)
			}
			return
		}
		if out != nil {
			defer out.Release()
		}
		if tryOut != nil {
			defer tryOut.Release()
		}
		if tryEvalErr != nil {
			// Only digits that match but do not fit raise in try_to_number.
			if !errors.Is(tryEvalErr, vector.ErrOverflow) || !errors.Is(evalErr, vector.ErrOverflow) {
				t.Fatalf("%q with %q: try_to_number %v, to_number %v", s, format, tryEvalErr, evalErr)
			}
			return
		}
		if tryOut.IsNull(0) {
			if !errors.Is(evalErr, vector.ErrInvalidInput) {
				t.Fatalf("%q with %q: try_to_number NULL but to_number %v", s, format, evalErr)
			}
			return
		}
		if evalErr != nil {
			t.Fatalf("%q with %q: try_to_number %s but to_number %v", s, format, vector.FormatValue(vector.ValueAt(tryOut, 0), tryOut.DataType()), evalErr)
		}
		dt := tryOut.DataType().(*arrow.Decimal128Type)
		got := tryOut.(*array.Decimal128).Value(0)
		if got != out.(*array.Decimal128).Value(0) {
			t.Fatalf("%q with %q: to_number and try_to_number differ", s, format)
		}
		if want := numberModel(s, dt.Scale); got.BigInt().Cmp(want) != 0 {
			t.Fatalf("%q with %q: got %s, model %s (scale %d)", s, format, got.BigInt(), want, dt.Scale)
		}
		if !got.FitsInPrecision(dt.Precision) {
			t.Fatalf("%q with %q: %s does not fit %s", s, format, got.BigInt(), vector.TypeName(dt))
		}
	})
}

func TestToNumberTypes(t *testing.T) {
	for _, c := range []struct {
		format     string
		prec, scal int32
	}{{"999", 3, 0}, {"$99,999.99S", 7, 2}, {"0.9", 2, 1}, {"<PR", 0, 0}, {"9d99", 3, 2}, {"9,999MI", 4, 0}} {
		mem := poisonmem.New()
		out, bindErr, evalErr := toNumberOne(t, mem, "1", c.format, true)
		if c.prec == 0 {
			if bindErr == nil {
				out.Release()
				t.Fatalf("format %q: no error", c.format)
			}
			continue
		}
		if bindErr != nil || evalErr != nil {
			t.Fatalf("format %q: %v %v", c.format, bindErr, evalErr)
		}
		if want := vector.Decimal(c.prec, c.scal); !arrow.TypeEqual(out.DataType(), want) {
			t.Errorf("format %q: type %s, want %s", c.format, out.DataType(), want)
		}
		out.Release()
		mem.AssertSize(t, 0)
	}
}

// BenchmarkToNumber parses a column of grouped, signed decimals.
func BenchmarkToNumber(b *testing.B) {
	const rows = 64 * 1024
	rec := benchRecord(b, vector.String, rows, func(i int) any {
		return "-" + strings.Repeat("1,234,", i%3) + "567.89"
	})
	defer rec.Release()
	ev, err := vector.TryToNumber(vector.Col("x"), vector.Lit("S999,999,999.99")).Bind(rec.Schema(), memory.NewGoAllocator())
	if err != nil {
		b.Fatal(err)
	}
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		out, err := ev.Eval(context.Background(), rec)
		if err != nil {
			b.Fatal(err)
		}
		out.Release()
	}
	b.SetBytes(rows)
}
