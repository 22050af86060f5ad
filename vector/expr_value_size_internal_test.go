package vector

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

var errTestLimit = errors.New("test limit reached")

// limitedAlloc is a checked allocator with a reservation limit: the Go-heap
// reservations of MemoryReserver, refused past limit.
type limitedAlloc struct {
	*memory.CheckedAllocator
	limit, held, peak int64
}

func (a *limitedAlloc) Reserve(n int64) error {
	if n > 0 && a.held+n > a.limit {
		return fmt.Errorf("%d more bytes over %d: %w", n, a.limit, errTestLimit)
	}
	a.held += n
	a.peak = max(a.peak, a.held)
	return nil
}

// Models of the value-building functions (Spark's semantics, on runes).
func modelRepeat(s string, n int64) string {
	if n <= 0 {
		return ""
	}
	return strings.Repeat(s, int(n))
}

func modelPad(s string, n int64, pad string, left bool) string {
	r := []rune(s)
	if n <= 0 {
		return ""
	}
	if int64(len(r)) >= n {
		return string(r[:n])
	}
	if pad == "" {
		return s
	}
	var fill []rune
	for p := []rune(pad); int64(len(fill)+len(r)) < n; {
		fill = append(fill, p[len(fill)%len(p)])
	}
	if left {
		return string(fill) + s
	}
	return s + string(fill)
}

func randText(rng *rand.Rand, max int) string {
	alphabet := []rune("ab-é日")
	n := rng.IntN(max + 1)
	var b strings.Builder
	for range n {
		b.WriteRune(alphabet[rng.IntN(len(alphabet))])
	}
	return b.String()
}

// TestValueKernelsMatchModel: for random strings (multibyte ones too),
// counts and pads, with NULLs, repeat, lpad/rpad, concat and
// format_string on an accounting allocator give the models' values; their
// reservations are all returned and the checked allocator ends at zero.
// Under a limit too small for the batch they fail naming the function,
// with the limit's error in the chain, having reserved nothing past it,
// and still release everything.
func TestValueKernelsMatchModel(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 3))
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "s", Type: String, Nullable: true},
		{Name: "n", Type: Int64, Nullable: true},
		{Name: "p", Type: String, Nullable: true},
	}, nil)
	type call struct {
		name  string
		expr  Expr
		model func(s string, n int64, p string) string
	}
	calls := []call{
		{"repeat", mustFunc(t, "repeat", Col("s"), Col("n")), func(s string, n int64, _ string) string { return modelRepeat(s, n) }},
		{"lpad", mustFunc(t, "lpad", Col("s"), Col("n"), Col("p")), func(s string, n int64, p string) string { return modelPad(s, n, p, true) }},
		{"rpad", mustFunc(t, "rpad", Col("s"), Col("n"), Col("p")), func(s string, n int64, p string) string { return modelPad(s, n, p, false) }},
		{"concat", Concat(Col("s"), Col("p"), Col("s")), func(s string, _ int64, p string) string { return s + p + s }},
		{"replace", mustFunc(t, "replace", Col("s"), Col("p"), Lit("[日本語]")), func(s string, _ int64, p string) string {
			if p == "" {
				return s
			}
			return strings.ReplaceAll(s, p, "[日本語]")
		}},
		{"translate", mustFunc(t, "translate", Col("s"), Col("p"), Lit("€x")), modelTranslate},
		{"format_string", mustFunc(t, "format_string", Lit("%1$8s|%2$-3s"), Col("s"), Col("p")), func(s string, _ int64, p string) string {
			return fmt.Sprintf("%8s|%-3s", s, p)
		}},
	}
	for trial := range 300 {
		rows := 1 + rng.IntN(12)
		sv, nv, pv := make([]*string, rows), make([]*int64, rows), make([]*string, rows)
		for i := range rows {
			if rng.IntN(8) > 0 {
				s := randText(rng, 6)
				sv[i] = &s
			}
			if rng.IntN(8) > 0 {
				n := int64(rng.IntN(24) - 3)
				nv[i] = &n
			}
			if rng.IntN(8) > 0 {
				p := randText(rng, 3)
				pv[i] = &p
			}
		}
		for _, c := range calls {
			want := make([]*string, rows)
			wantBytes := 0
			for i := range rows {
				usesN := c.name != "concat" && c.name != "replace" && c.name != "translate"
				usesP := c.name != "repeat"
				if sv[i] == nil || usesP && pv[i] == nil || usesN && nv[i] == nil {
					continue
				}
				v := c.model(*sv[i], deref(nv[i]), derefS(pv[i]))
				want[i] = &v
				wantBytes += len(v)
			}
			if c.name == "format_string" {
				// format_string prints a NULL argument as "null".
				for i := range rows {
					s, p := "null", "null"
					if sv[i] != nil {
						s = *sv[i]
					}
					if pv[i] != nil {
						p = *pv[i]
					}
					v := fmt.Sprintf("%8s|%-3s", s, p)
					want[i] = &v
				}
			}
			mem := &limitedAlloc{CheckedAllocator: memory.NewCheckedAllocator(memory.NewGoAllocator()), limit: 1 << 30}
			got, err := evalOn(mem, schema, sv, nv, pv, c.expr)
			if err != nil {
				t.Fatalf("trial %d %s: %v", trial, c.name, err)
			}
			for i := range rows {
				if (want[i] == nil) != (got[i] == nil) || want[i] != nil && *want[i] != *got[i] {
					t.Fatalf("trial %d %s row %d (s=%v n=%v p=%v): got %v, want %v", trial, c.name, i, show(sv[i]), showInt(nv[i]), show(pv[i]), show(got[i]), show(want[i]))
				}
			}
			if mem.held != 0 {
				t.Fatalf("trial %d %s: %d bytes still reserved", trial, c.name, mem.held)
			}
			mem.AssertSize(t, 0)

			// A limit under the batch's output: refused naming the
			// function (a sized kernel refuses before building).
			if wantBytes < 16 || c.name == "format_string" {
				continue
			}
			small := &limitedAlloc{CheckedAllocator: memory.NewCheckedAllocator(memory.NewGoAllocator()), limit: int64(wantBytes / 2)}
			if _, err := evalOn(small, schema, sv, nv, pv, c.expr); err == nil {
				t.Fatalf("trial %d %s: %d bytes of values under a %d-byte limit were built", trial, c.name, wantBytes, small.limit)
			} else if !errors.Is(err, errTestLimit) || !strings.Contains(err.Error(), c.name) {
				t.Fatalf("trial %d %s: error %v, want the limit's, naming %s", trial, c.name, err, c.name)
			}
			if small.held != 0 || small.peak > small.limit {
				t.Fatalf("trial %d %s: held %d, peak %d over the limit %d", trial, c.name, small.held, small.peak, small.limit)
			}
			small.AssertSize(t, 0)
		}
	}
}

// modelTranslate is Spark's translate(s, from, "€x") on runes: a character
// of from is replaced by the character at its position in the replacement,
// or deleted past its end (the first occurrence in from counts).
func modelTranslate(s string, _ int64, from string) string {
	to := []rune("€x")
	var out []rune
	for _, r := range s {
		idx := -1
		for k, f := range []rune(from) {
			if f == r {
				idx = k
				break
			}
		}
		switch {
		case idx < 0:
			out = append(out, r)
		case idx < len(to):
			out = append(out, to[idx])
		}
	}
	return string(out)
}

func mustFunc(t *testing.T, name string, args ...Expr) Expr {
	t.Helper()
	e, err := LookupFunction(name, args)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func deref(p *int64) int64 {
	if p == nil {
		return 0
	}
	return *p
}

func derefS(p *string) string {
	if p == nil {
		return ""
	}
	return *p
}

func show(p *string) string {
	if p == nil {
		return "NULL"
	}
	return fmt.Sprintf("%q", *p)
}

func showInt(p *int64) string {
	if p == nil {
		return "NULL"
	}
	return fmt.Sprint(*p)
}

// evalOn binds e over a batch of the columns on mem and returns its
// values.
func evalOn(mem memory.Allocator, schema *arrow.Schema, sv []*string, nv []*int64, pv []*string, e Expr) ([]*string, error) {
	sb, nb, pb := array.NewStringBuilder(mem), array.NewInt64Builder(mem), array.NewStringBuilder(mem)
	defer sb.Release()
	defer nb.Release()
	defer pb.Release()
	for i := range sv {
		appendStr(sb, sv[i])
		if nv[i] == nil {
			nb.AppendNull()
		} else {
			nb.Append(*nv[i])
		}
		appendStr(pb, pv[i])
	}
	cols := []arrow.Array{sb.NewArray(), nb.NewArray(), pb.NewArray()}
	rec := array.NewRecord(schema, cols, int64(len(sv)))
	for _, c := range cols {
		c.Release()
	}
	defer rec.Release()
	ev, err := e.Bind(schema, mem)
	if err != nil {
		return nil, err
	}
	arr, err := ev.Eval(context.Background(), rec)
	if err != nil {
		return nil, err
	}
	defer arr.Release()
	out := make([]*string, arr.Len())
	for i := range out {
		if arr.IsValid(i) {
			v := string(arr.(*array.String).Value(i))
			out[i] = &v
		}
	}
	return out, nil
}

func appendStr(b *array.StringBuilder, p *string) {
	if p == nil {
		b.AppendNull()
		return
	}
	b.Append(*p)
}
