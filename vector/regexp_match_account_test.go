package vector

import (
	"context"
	"errors"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// TestContextRegexMatchesAccounted: a regex with \b or ^ has all its
// matches found at once; over a value with a word boundary every other
// byte (8 MB: about 8M matches, hundreds of MB of positions) under a 16 MiB
// limit, regexp_replace, regexp_count and regexp_extract_all are refused
// with the limit's error naming the function before the positions are
// held (the Go heap taken stays a few times the limit), and everything is
// released. With an ample limit the same calls give Go's own answers, and
// small values keep working under the small limit.
func TestContextRegexMatchesAccounted(t *testing.T) {
	const limit = 16 << 20
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "s", Type: String, Nullable: true},
		{Name: "n", Type: Int64, Nullable: true},
		{Name: "p", Type: String, Nullable: true},
	}, nil)
	big := strings.Repeat("a ", 4<<20) // 8 MB, 8M word boundaries
	small := "ab cd ef"
	cases := []struct {
		fn   string
		expr Expr
	}{
		{"regexp_replace", mustFunc(t, "regexp_replace", Col("s"), Lit(`\ba`), Lit("x"))},
		{"regexp_count", mustFunc(t, "regexp_count", Col("s"), Lit(`\ba`))},
		{"regexp_extract_all", mustFunc(t, "regexp_extract_all", Col("s"), Lit(`\b(a)`), Lit(int64(1)))},
	}
	for _, c := range cases {
		t.Run(c.fn, func(t *testing.T) {
			mem := newPeakAlloc(limit)
			before := heapAllocated()
			_, err := evalText(mem, schema, big, c.expr)
			took := heapAllocated() - before
			if err == nil {
				t.Fatalf("the positions of 4M matches were held under a %d-byte limit", limit)
			}
			if !errors.Is(err, errTestLimit) || !strings.Contains(err.Error(), c.fn+": ") {
				t.Fatalf("error %v, want the limit's, naming %s", err, c.fn)
			}
			// Rounds double up to the limit: their positions sum to about
			// twice the last round's, which the limit bounds.
			if !raceEnabled && took > 8*limit {
				t.Errorf("the evaluation took %d bytes of Go heap under a %d-byte limit: the positions were held before they were counted", took, limit)
			}
			if mem.reserved != 0 {
				t.Errorf("%d bytes still reserved", mem.reserved)
			}
			mem.AssertSize(t, 0)

			// A small value under the same limit, and a medium one
			// (more than one round) under an ample one: Go's answers.
			for _, v := range []struct {
				s     string
				limit int64
			}{{small, limit}, {strings.Repeat("ab ", 3000), 1 << 30}} {
				mem := newPeakAlloc(v.limit)
				got, err := evalText(mem, schema, v.s, c.expr)
				if err != nil {
					t.Fatalf("%d bytes: %v", len(v.s), err)
				}
				n := len(regexp.MustCompile(`\ba`).FindAllStringIndex(v.s, -1))
				want := map[string]string{
					"regexp_replace":     regexp.MustCompile(`\ba`).ReplaceAllString(v.s, "x"),
					"regexp_count":       strconv.Itoa(n),
					"regexp_extract_all": strings.Repeat("a,", n),
				}[c.fn]
				if got != want {
					t.Fatalf("%d bytes: got %.60q, want %.60q", len(v.s), got, want)
				}
				if mem.reserved != 0 {
					t.Fatalf("%d bytes still reserved", mem.reserved)
				}
				mem.AssertSize(t, 0)
			}
		})
	}
}

// evalText evaluates e over one row (s, NULL, s) of schema and renders
// its value: a string as it is, an integer in decimal, a list of strings
// as its elements each followed by a comma.
func evalText(mem memory.Allocator, schema *arrow.Schema, s string, e Expr) (string, error) {
	sb, nb, pb := array.NewStringBuilder(mem), array.NewInt64Builder(mem), array.NewStringBuilder(mem)
	defer sb.Release()
	defer nb.Release()
	defer pb.Release()
	sb.Append(s)
	nb.AppendNull()
	pb.Append(s)
	cols := []arrow.Array{sb.NewArray(), nb.NewArray(), pb.NewArray()}
	rec := array.NewRecord(schema, cols, 1)
	for _, c := range cols {
		c.Release()
	}
	defer rec.Release()
	ev, err := e.Bind(schema, mem)
	if err != nil {
		return "", err
	}
	arr, err := ev.Eval(context.Background(), rec)
	if err != nil {
		return "", err
	}
	defer arr.Release()
	switch a := arr.(type) {
	case *array.String:
		return a.Value(0), nil
	case *array.Int32:
		return strconv.Itoa(int(a.Value(0))), nil
	case *array.List:
		vals := a.ListValues().(*array.String)
		start, end := a.ValueOffsets(0)
		var b strings.Builder
		for i := start; i < end; i++ {
			b.WriteString(vals.Value(int(i)) + ",")
		}
		return b.String(), nil
	}
	return "", errors.New("unexpected result type " + arr.DataType().String())
}
