package plan_test

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// TestJoinMaxBoundFor: the max bound is found where its preconditions
// hold (Nexmark q7's shape, sides swapped, strict bounds, window.start),
// with the window ends a row can join, and not where one fails.
func TestJoinMaxBoundFor(t *testing.T) {
	cat := testCatalog(t)
	f := func(name string, dt arrow.DataType) arrow.Field {
		return arrow.Field{Name: name, Type: dt, Nullable: true}
	}
	bidSchema := arrow.NewSchema([]arrow.Field{f("a", vector.Int64), f("price", vector.Int64), f("fprice", vector.Float64), f("ts", vector.Timestamp)}, nil)
	cat.Register("bids", &plan.SourceTable{TableSchema: bidSchema})
	cat.Register("bids2", &plan.SourceTable{TableSchema: bidSchema})
	const wm = " WATERMARK ts DELAY OF INTERVAL 0 SECONDS"
	const sec = int64(1_000_000)
	q7 := func(rows, maxSide, agg, cond string) string {
		return "SELECT B.a, B.price, B.ts FROM STREAM " + rows + wm + " AS B JOIN (" + maxSide + ") M ON " + cond
	}
	maxOf := func(agg, src, groupBy string) string {
		return "SELECT " + agg + " AS m, window.end - INTERVAL 1 MILLISECOND AS rt FROM STREAM " + src + wm + " GROUP BY " + groupBy
	}
	std := maxOf("max(price)", "bids", "window(ts, '10 seconds')")
	between := "B.price = M.m AND B.ts BETWEEN M.rt - INTERVAL 10 SECONDS AND M.rt"
	type want struct{ lo, hi int64 }
	for _, c := range []struct {
		name string
		sql  string
		want *want // nil: must not fire
		side int
	}{
		{"q7", q7("bids", std, "", between), &want{1000, 10*sec + 1000}, 0},
		{"swapped", "SELECT M.m, B.ts FROM (" + std + ") M JOIN STREAM bids" + wm + " AS B ON M.m = B.price AND B.ts BETWEEN M.rt - INTERVAL 10 SECONDS AND M.rt", &want{1000, 10*sec + 1000}, 1},
		{"strict", q7("bids", std, "", "B.price = M.m AND B.ts > M.rt - INTERVAL 10 SECONDS AND M.rt > B.ts"), &want{1000, 10*sec + 1000}, 0},
		{"start", q7("bids", "SELECT max(price) AS m, window.start AS rt FROM STREAM bids"+wm+" GROUP BY window(ts, '10 seconds')", "", "B.price = M.m AND B.ts BETWEEN M.rt AND M.rt + INTERVAL 10 SECONDS"), &want{0, 10 * sec}, 0},
		{"filtered-rows", q7("bids", std, "", between+" AND B.a > 3"), &want{1000, 10*sec + 1000}, 0},
		{"left-outer", "SELECT B.a FROM STREAM bids" + wm + " AS B LEFT JOIN (" + std + ") M ON " + between, nil, 0},
		{"min", q7("bids", maxOf("min(price)", "bids", "window(ts, '10 seconds')"), "", between), nil, 0},
		{"other-stream", q7("bids", maxOf("max(price)", "bids2", "window(ts, '10 seconds')"), "", between), nil, 0},
		{"filtered-max-side", q7("bids", "SELECT max(price) AS m, window.end - INTERVAL 1 MILLISECOND AS rt FROM STREAM bids"+wm+" WHERE a > 3 GROUP BY window(ts, '10 seconds')", "", between), nil, 0},
		{"more-keys", q7("bids", "SELECT max(price) AS m, window.end - INTERVAL 1 MILLISECOND AS rt FROM STREAM bids"+wm+" GROUP BY a, window(ts, '10 seconds')", "", between), nil, 0},
		{"max-expression", q7("bids", maxOf("max(price) + 0", "bids", "window(ts, '10 seconds')"), "", between), nil, 0},
		{"max-other-column", q7("bids", maxOf("max(a)", "bids", "window(ts, '10 seconds')"), "", between), nil, 0},
		{"float", q7("bids", maxOf("max(fprice)", "bids", "window(ts, '10 seconds')"), "", "B.fprice = M.m AND B.ts BETWEEN M.rt - INTERVAL 10 SECONDS AND M.rt"), nil, 0},
		{"no-upper-bound", q7("bids", std, "", "B.price = M.m AND B.ts >= M.rt - INTERVAL 10 SECONDS"), nil, 0},
		{"null-safe", q7("bids", std, "", "B.price <=> M.m AND B.ts BETWEEN M.rt - INTERVAL 10 SECONDS AND M.rt"), nil, 0},
		{"too-many-windows", q7("bids", std, "", "B.price = M.m AND B.ts BETWEEN M.rt - INTERVAL 1000 SECONDS AND M.rt"), nil, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			n := analyzeT(t, cat, c.sql)
			opt, err := plan.Optimize(n)
			if err != nil {
				t.Fatal(err)
			}
			j := findJoin(opt)
			if j == nil {
				t.Fatalf("no join in\n%s", plan.Explain(opt))
			}
			b, ok := plan.JoinMaxBoundFor(j)
			if c.want == nil {
				if ok {
					t.Fatalf("fired (%+v) on\n%s", b, plan.Explain(opt))
				}
				return
			}
			if !ok {
				t.Fatalf("did not fire on\n%s", plan.Explain(opt))
			}
			if b.Lo != c.want.lo || b.Hi != c.want.hi || b.Side != c.side || b.Width != 10*sec || b.Slide != 10*sec {
				t.Fatalf("bound %+v, want side %d ends [t%+d, t%+d]", b, c.side, c.want.lo, c.want.hi)
			}
			rows := j.Left
			if b.Side == 1 {
				rows = j.Right
			}
			if name := rows.Schema().Field(b.ValueCol).Name; name != "price" {
				t.Errorf("value column %s", name)
			}
			if name := rows.Schema().Field(b.RangeCol).Name; name != "ts" {
				t.Errorf("range column %s", name)
			}
		})
	}
}

func findJoin(n plan.Node) *plan.Join {
	if j, ok := n.(*plan.Join); ok {
		return j
	}
	for _, c := range n.Children() {
		if j := findJoin(c); j != nil {
			return j
		}
	}
	return nil
}
