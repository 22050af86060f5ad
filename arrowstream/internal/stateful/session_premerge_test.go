package stateful

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
)

// TestSessionPremergeMatchesModel checks premerge against a brute-force
// sessionization of one epoch's rows: every key's overlapping or
// touching sessions become one row with their count, and nothing else
// changes. It also checks that the rows shrink (the merge ran), and that
// rows are passed on as they came when the aggregates are order-sensitive
// (first) or when nearly every row has its own key.
func TestSessionPremergeMatchesModel(t *testing.T) {
	const gap = 2_000_000 // µs
	ctx := context.Background()
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	spec := func(aggs ...vector.AggregateCall) vector.AggregateSpec {
		return vector.AggregateSpec{
			GroupBy:    []vector.NamedExpr{vector.As(vector.Col("k"), "k"), vector.As(vector.Col("session"), "session")},
			Aggregates: aggs,
		}
	}
	count := spec(vector.AggregateCall{Func: vector.AggCountStar, Name: "n"})
	newOp := func(spec vector.AggregateSpec) *statefulSessionWindow {
		op, err := newStatefulSessionWindow(mem, 0, sessionInSchema, spec, 1, 1, true, stream.Append)
		if err != nil {
			t.Fatal(err)
		}
		return op
	}
	// run premerges rows (in records of at most 7 rows) and returns the
	// rows it passed on as "k start end n", sorted, and their count.
	run := func(op *statefulSessionWindow, rows [][2]int64) ([]string, int) {
		var recs []arrow.Record
		for lo := 0; lo < len(rows); lo += 7 {
			recs = append(recs, sessionRecord(mem, rows[lo:min(lo+7, len(rows))], gap))
		}
		partials, err := op.partials(ctx, sessionInSchema, recs)
		if err != nil {
			t.Fatal(err)
		}
		out, err := op.premerge(ctx, partials)
		if err != nil {
			t.Fatal(err)
		}
		defer releaseRecords(out)
		var got []string
		for _, r := range out {
			ks := r.Column(0).(*array.Int64)
			st, en := sessionBounds(r, 1)
			ns := r.Column(2).(*array.Int64)
			for i := 0; i < int(r.NumRows()); i++ {
				got = append(got, fmt.Sprint(ks.Value(i), " ", int64(st[i]), " ", int64(en[i]), " ", ns.Value(i)))
			}
		}
		slices.Sort(got)
		return got, len(got)
	}
	rng := rand.New(rand.NewPCG(19, 11))
	for trial := 0; trial < 50; trial++ {
		keys := 1 + rng.Int64N(8)
		rows := make([][2]int64, 1+rng.IntN(60))
		for i := range rows {
			rows[i] = [2]int64{rng.Int64N(keys), rng.Int64N(20) * 1_000_000}
		}
		// The model: each key's sessions sorted by start, merged when
		// they overlap or touch.
		byKey := map[int64][][3]int64{}
		for _, r := range rows {
			byKey[r[0]] = append(byKey[r[0]], [3]int64{r[1], r[1] + gap, 1})
		}
		var want []string
		for k, ss := range byKey {
			sort.Slice(ss, func(i, j int) bool { return ss[i][0] < ss[j][0] })
			cur := ss[0]
			for _, s := range ss[1:] {
				if s[0] <= cur[1] {
					cur[1] = max(cur[1], s[1])
					cur[2]++
					continue
				}
				want = append(want, fmt.Sprint(k, " ", cur[0], " ", cur[1], " ", cur[2]))
				cur = s
			}
			want = append(want, fmt.Sprint(k, " ", cur[0], " ", cur[1], " ", cur[2]))
		}
		slices.Sort(want)
		got, n := run(newOp(count), rows)
		if !slices.Equal(got, want) {
			t.Fatalf("trial %d: rows %v\ngot  %v\nwant %v", trial, rows, got, want)
		}
		if len(rows) >= 30 && n >= len(rows) {
			t.Fatalf("trial %d: %d rows of %d keys passed on as %d rows: not merged", trial, len(rows), keys, n)
		}
	}

	// Order-sensitive aggregates: the rows go on as they came (one per row).
	rows := [][2]int64{{1, 0}, {1, 1_000_000}, {1, 2_000_000}, {2, 0}}
	first := spec(vector.AggregateCall{Func: vector.AggCountStar, Name: "n"}, vector.AggregateCall{Func: vector.AggFirst, Args: []vector.Expr{vector.Col("k")}, Name: "f"})
	if op := newOp(first); op.premergeable {
		t.Fatal("first() is premergeable")
	} else if _, n := run(op, rows); n != len(rows) {
		t.Fatalf("with first(): %d rows passed on, want the %d rows as they came", n, len(rows))
	}
	// Nearly one key per row: nothing to gain, the rows go on.
	distinct := [][2]int64{{1, 0}, {2, 0}, {3, 0}, {4, 0}, {4, 1_000_000}}
	if _, n := run(newOp(count), distinct); n != len(distinct) {
		t.Fatalf("distinct keys: %d rows passed on, want %d", n, len(distinct))
	}
}

// TestSessionMergeGroups checks the grouping of partitions for the merge
// on random partitionings: at most the limit of groups (and no more than
// the partitions with rows), every partition with rows in exactly one
// group with all its records in order, groups of consecutive partitions
// in partition order, and no group over its share of the rows by more
// than one partition's rows.
func TestSessionMergeGroups(t *testing.T) {
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	rng := rand.New(rand.NewPCG(19, 12))
	for trial := 0; trial < 300; trial++ {
		byPart := make([][]arrow.Record, 1+rng.IntN(40))
		var total, most int64
		active := 0
		for p := range byPart {
			if rng.IntN(3) == 0 {
				continue
			}
			active++
			var n int64
			for range 1 + rng.IntN(3) {
				rows := make([][2]int64, 1+rng.IntN(20))
				byPart[p] = append(byPart[p], sessionRecord(mem, rows, 1))
				n += int64(len(rows))
			}
			total += n
			most = max(most, n)
		}
		limit := 1 + rng.IntN(6)
		groups := sessionMergeGroups(byPart, limit)
		if len(groups) > limit || len(groups) > active || (active > 0 && len(groups) == 0) {
			t.Fatalf("trial %d: %d groups for %d active partitions, limit %d", trial, len(groups), active, limit)
		}
		var recs []arrow.Record
		var parts []int32
		for g, grp := range groups {
			var rows int64
			for i, r := range grp.recs {
				rows += r.NumRows()
				if i > 0 && grp.parts[i] < grp.parts[i-1] {
					t.Fatalf("trial %d: group %d not in partition order: %v", trial, g, grp.parts)
				}
			}
			if len(groups) > 1 && rows > total/int64(len(groups))+most {
				t.Fatalf("trial %d: group %d has %d of %d rows in %d groups (largest partition %d)", trial, g, rows, total, len(groups), most)
			}
			recs = append(recs, grp.recs...)
			parts = append(parts, grp.parts...)
		}
		var want []arrow.Record
		var wantParts []int32
		for p, rs := range byPart {
			for _, r := range rs {
				want = append(want, r)
				wantParts = append(wantParts, int32(p))
			}
		}
		if !slices.Equal(recs, want) || !slices.Equal(parts, wantParts) {
			t.Fatalf("trial %d: groups hold partitions %v, want %v", trial, parts, wantParts)
		}
		for _, rs := range byPart {
			releaseRecords(rs)
		}
	}
}
