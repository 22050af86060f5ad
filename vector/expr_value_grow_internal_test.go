package vector

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"regexp"
	"runtime"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// peakAlloc is a checked allocator that counts, as the server's query
// allocator does, its Arrow buffers and the Go-heap reservations
// (MemoryReserver) in one total: a reservation past limit is refused; an
// Arrow allocation is always granted (an allocator cannot refuse), so
// peak shows any buffer grown without a check first.
type peakAlloc struct {
	*memory.CheckedAllocator
	limit, inUse, peak, reserved int64
}

func newPeakAlloc(limit int64) *peakAlloc {
	return &peakAlloc{CheckedAllocator: memory.NewCheckedAllocator(memory.NewGoAllocator()), limit: limit}
}

func (a *peakAlloc) add(n int64) {
	a.inUse += n
	a.peak = max(a.peak, a.inUse)
}

func (a *peakAlloc) Allocate(n int) []byte {
	a.add(int64(n))
	return a.CheckedAllocator.Allocate(n)
}

func (a *peakAlloc) Reallocate(n int, b []byte) []byte {
	a.add(int64(n - len(b)))
	return a.CheckedAllocator.Reallocate(n, b)
}

func (a *peakAlloc) Free(b []byte) {
	a.add(-int64(len(b)))
	a.CheckedAllocator.Free(b)
}

// MemoryLimit bounds how far past their need buffers grow (growthStep).
func (a *peakAlloc) MemoryLimit() int64 { return a.limit }

func (a *peakAlloc) Reserve(n int64) error {
	if n > 0 && a.inUse+n > a.limit {
		return fmt.Errorf("%d more bytes over %d: %w", n, a.limit, errTestLimit)
	}
	a.add(n)
	a.reserved += n
	return nil
}

// heapAllocated is the bytes the Go heap has handed out so far.
func heapAllocated() uint64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.TotalAlloc
}

// TestHugeValuesRefusedAsBuilt: under a 4 MiB limit, regexp_replace and
// format_string making a value or a batch far past it (100–200 MB) are
// refused with the limit's error naming the function; neither the
// allocator's peak (Arrow buffers and reservations) nor the Go heap the
// evaluation takes goes far past the limit (the value is not built
// first), and everything is released. Under an ample limit the same
// kernels build the same shapes correctly.
func TestHugeValuesRefusedAsBuilt(t *testing.T) {
	const limit = 4 << 20
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "s", Type: String, Nullable: true},
		{Name: "n", Type: Int64, Nullable: true},
		{Name: "p", Type: String, Nullable: true},
	}, nil)
	rows := func(k int, s string) ([]*string, []*int64, []*string) {
		sv, nv, pv := make([]*string, k), make([]*int64, k), make([]*string, k)
		for i := range k {
			sv[i], pv[i] = &s, &s
		}
		return sv, nv, pv
	}
	wide := strings.Repeat("%1$1000000s", 100) // 100 conversions of 1 MB
	for _, c := range []struct {
		name, fn string
		expr     Expr
		rows     int
		s        string
		want     int // the bytes of each value
	}{
		// One value of 1 MB 'a', each replaced by 200 bytes: 200 MB.
		{"regexp_replace one value", "regexp_replace", mustFunc(t, "regexp_replace", Col("s"), Lit("a"), Lit(strings.Repeat("b", 200))), 1, strings.Repeat("a", 1<<20), 200 << 20},
		// The same through a group reference ($0).
		{"regexp_replace group", "regexp_replace", mustFunc(t, "regexp_replace", Col("s"), Lit("(a)"), Lit(strings.Repeat("$1", 100))), 1, strings.Repeat("a", 1<<20), 100 << 20},
		// 1,000 values of 100 KB: a 100 MB column of small values.
		{"regexp_replace column", "regexp_replace", mustFunc(t, "regexp_replace", Col("s"), Lit("a"), Lit(strings.Repeat("b", 100))), 1000, strings.Repeat("a", 1000), 100 * 1000},
		// One value of 100 conversions of 1 MB.
		{"format_string one value", "format_string", mustFunc(t, "format_string", Lit(wide), Col("s")), 1, "x", 100 * 1000000},
		// 200 values of 1 MB.
		{"format_string column", "format_string", mustFunc(t, "format_string", Lit("%1000000s"), Col("s")), 200, "x", 1000000},
	} {
		t.Run(c.name, func(t *testing.T) {
			sv, nv, pv := rows(c.rows, c.s)
			mem := newPeakAlloc(limit)
			before := heapAllocated()
			_, err := evalOn(mem, schema, sv, nv, pv, c.expr)
			took := heapAllocated() - before
			if err == nil {
				t.Fatalf("%d bytes of values under a %d-byte limit were built", c.rows*c.want, limit)
			}
			if !errors.Is(err, errTestLimit) || !strings.Contains(err.Error(), c.fn+": ") {
				t.Fatalf("error %v, want the limit's, naming %s", err, c.fn)
			}
			// The input's buffers count too; the growth checked before it
			// is made stays within the limit (but for the rounding of the
			// buffers allocated after their check, and offsets).
			if mem.peak > limit+64<<10 {
				t.Errorf("the allocator's peak is %d bytes, over the %d-byte limit", mem.peak, limit)
			}
			// The Go heap: buffers grown by doubling, then by a sixteenth
			// of the limit (growthStep), each reserved first, sum to about
			// 8.5 times the limit at most (main: 300 times).
			if !raceEnabled && took > 12*limit {
				t.Errorf("the evaluation took %d bytes of Go heap under a %d-byte limit: the value was built before it was refused", took, limit)
			}
			if mem.reserved != 0 {
				t.Errorf("%d bytes still reserved", mem.reserved)
			}
			mem.AssertSize(t, 0)
		})
	}
	// Ample: the same kernels give the models' sizes and values.
	sv, nv, pv := rows(3, strings.Repeat("ab", 5000))
	for _, c := range []struct {
		expr Expr
		want string
	}{
		{mustFunc(t, "regexp_replace", Col("s"), Lit("(a)(b)"), Lit(`$2\$$1`)), strings.Repeat("b$a", 5000)},
		{mustFunc(t, "format_string", Lit("%20000s|%1$s"), Col("s")), strings.Repeat(" ", 10000) + strings.Repeat("ab", 5000) + "|" + strings.Repeat("ab", 5000)},
	} {
		mem := newPeakAlloc(1 << 30)
		got, err := evalOn(mem, schema, sv, nv, pv, c.expr)
		if err != nil {
			t.Fatal(err)
		}
		for i, g := range got {
			if g == nil || *g != c.want {
				t.Fatalf("row %d: got %d bytes, want %q…", i, len(derefS(g)), c.want[:20])
			}
		}
		if mem.reserved != 0 {
			t.Fatalf("%d bytes still reserved", mem.reserved)
		}
		mem.AssertSize(t, 0)
	}
}

// TestRegexpReplaceMatchesModel: regexp_replace with group references and
// escapes, built in a growing buffer, gives Go's own expansion of the same
// template (the regexes here have no empty matches, where Java's walk
// differs), and a bad replacement is an error whenever it is used: a
// missing group, a $ without a digit, a trailing backslash.
func TestRegexpReplaceMatchesModel(t *testing.T) {
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "s", Type: String, Nullable: true},
		{Name: "n", Type: Int64, Nullable: true},
		{Name: "p", Type: String, Nullable: true},
	}, nil)
	rng := rand.New(rand.NewPCG(17, 9))
	// Java's $n and \c written in Go's template syntax ${n} and c.
	reps := [][2]string{
		{`<$1>`, `<${1}>`}, {`$2$1`, `${2}${1}`}, {`\$x\\`, `$$x\`}, {``, ``}, {`$0$0`, `${0}${0}`}, {`é$11`, `é${1}1`},
	}
	for trial := range 200 {
		k := 1 + rng.IntN(6)
		sv, nv, pv := make([]*string, k), make([]*int64, k), make([]*string, k)
		for i := range k {
			s := randText(rng, 40)
			sv[i] = &s
		}
		rep := reps[rng.IntN(len(reps))]
		re := `([ab])(-?)`
		e := mustFunc(t, "regexp_replace", Col("s"), Lit(re), Lit(rep[0]))
		mem := newPeakAlloc(1 << 30)
		got, err := evalOn(mem, schema, sv, nv, pv, e)
		if err != nil {
			t.Fatalf("trial %d: %v", trial, err)
		}
		model := regexp.MustCompile(re)
		for i := range k {
			want := model.ReplaceAllString(*sv[i], rep[1])
			if got[i] == nil || *got[i] != want {
				t.Fatalf("trial %d: regexp_replace(%q, %q, %q) = %v, want %q", trial, *sv[i], re, rep[0], show(got[i]), want)
			}
		}
		if mem.reserved != 0 {
			t.Fatalf("trial %d: %d bytes still reserved", trial, mem.reserved)
		}
		mem.AssertSize(t, 0)
	}
	for _, c := range []struct{ s, rep, want string }{
		{"abc", "$5", "no group 5"},
		{"abc", "$x", "illegal group reference"},
		{"abc", `x\`, "character to be escaped is missing"},
		{"zzz", "$5", ""}, // no match: the replacement is not used
	} {
		s := c.s
		mem := newPeakAlloc(1 << 30)
		_, err := evalOn(mem, schema, []*string{&s}, []*int64{nil}, []*string{nil}, mustFunc(t, "regexp_replace", Col("s"), Lit("b"), Lit(c.rep)))
		if c.want == "" && err != nil || c.want != "" && (err == nil || !strings.Contains(err.Error(), c.want)) {
			t.Errorf("regexp_replace(%q, 'b', %q): error %v, want %q", c.s, c.rep, err, c.want)
		}
		mem.AssertSize(t, 0)
	}
}

// TestTranslateSizeExact: translate's bound is its value's exact size, for
// random text with invalid bytes and multibyte characters, from and to of
// any width (repeated characters, to shorter or longer than from).
// So a value just under the limit is accepted: a limit of exactly the
// bytes the evaluation needs (the input, the value's scratch and the
// column: about the input and twice the value) succeeds, and 4 KiB less
// is refused (the checks are made before the buffers are allocated, so
// their rounding is left over).
func TestTranslateSizeExact(t *testing.T) {
	rng := rand.New(rand.NewPCG(17, 5))
	alphabet := []string{"a", "b", "-", "é", "日", "€", "𝄞", "\xff", "\xe2\x82"}
	text := func(n int) string {
		var b strings.Builder
		for range rng.IntN(n + 1) {
			b.WriteString(alphabet[rng.IntN(len(alphabet))])
		}
		return b.String()
	}
	for trial := range 3000 {
		s, from, to := text(30), text(5), text(5)
		a := []rowArg{constRowArg(s, rowStr), constRowArg(from, rowStr), constRowArg(to, rowStr)}
		out, _, err := translateKernel(a, 0, nil)
		if err != nil {
			t.Fatal(err)
		}
		if got := translateSize(a, 0); got != int64(len(out)) {
			t.Fatalf("trial %d: translateSize(%q, %q, %q) = %d, the value has %d bytes", trial, s, from, to, got, len(out))
		}
		if !utf8.Valid(out) {
			t.Fatalf("trial %d: translate(%q, %q, %q) = %q is not UTF-8", trial, s, from, to, out)
		}
	}

	// One row: 1 'a' made '€' (3 bytes) among 300K 'b': the old bound
	// (the length × 3) was about 3× the value.
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "s", Type: String, Nullable: true},
		{Name: "n", Type: Int64, Nullable: true},
		{Name: "p", Type: String, Nullable: true},
	}, nil)
	s := "a" + strings.Repeat("b", 300000)
	want := "€" + strings.Repeat("b", 300000)
	e := mustFunc(t, "translate", Col("s"), Lit("a"), Lit("€"))
	probe := newPeakAlloc(1 << 30)
	if _, err := evalOn(probe, schema, []*string{&s}, []*int64{nil}, []*string{nil}, e); err != nil {
		t.Fatal(err)
	}
	need := probe.peak
	// What the evaluation needs is the input (as the column s alone
	// takes), one value of scratch and the column: the input and about
	// twice the value.
	input := newPeakAlloc(1 << 30)
	if _, err := evalOn(input, schema, []*string{&s}, []*int64{nil}, []*string{nil}, Col("s")); err != nil {
		t.Fatal(err)
	}
	if limit := input.peak + int64(2*len(want)+64<<10); need > limit {
		t.Fatalf("translate of a %d-byte value needed %d bytes, over %d", len(want), need, limit)
	}
	for _, limit := range []int64{need, need - 4096} {
		mem := newPeakAlloc(limit)
		got, err := evalOn(mem, schema, []*string{&s}, []*int64{nil}, []*string{nil}, e)
		switch {
		case limit == need && err != nil:
			t.Fatalf("under a limit of exactly the %d bytes it needs: %v", need, err)
		case limit == need && (got[0] == nil || *got[0] != want):
			t.Fatalf("translate gave %d bytes, want %d", len(derefS(got[0])), len(want))
		case limit < need && (err == nil || !errors.Is(err, errTestLimit)):
			t.Fatalf("under a limit of %d, 4 KiB under what it needs: %v, want the limit's error", limit, err)
		}
		if mem.reserved != 0 {
			t.Fatalf("%d bytes still reserved", mem.reserved)
		}
		mem.AssertSize(t, 0)
	}
}
