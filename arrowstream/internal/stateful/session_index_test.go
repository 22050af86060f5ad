package stateful

import (
	"context"
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sort"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
)

var sessionInSchema = arrow.NewSchema([]arrow.Field{
	{Name: "k", Type: vector.Int64},
	{Name: "session", Type: vector.WindowType},
}, nil)

// sessionRecord builds rows of (k, [t, t+gap)).
func sessionRecord(mem memory.Allocator, rows [][2]int64, gap int64) arrow.Record {
	kb := array.NewInt64Builder(mem)
	defer kb.Release()
	sb := array.NewStructBuilder(mem, vector.WindowType)
	defer sb.Release()
	starts := sb.FieldBuilder(0).(*array.TimestampBuilder)
	ends := sb.FieldBuilder(1).(*array.TimestampBuilder)
	for _, r := range rows {
		kb.Append(r[0])
		sb.Append(true)
		starts.Append(arrow.Timestamp(r[1]))
		ends.Append(arrow.Timestamp(r[1] + gap))
	}
	k, s := kb.NewArray(), sb.NewArray()
	defer k.Release()
	defer s.Release()
	return array.NewRecord(sessionInSchema, []arrow.Array{k, s}, int64(len(rows)))
}

// sessionModel is the brute-force answer of count(*) GROUP BY k,
// session_window in Append mode: a row's session [t, t+gap) merges with
// every session it overlaps or touches; rows whose session ends at or
// below the late watermark are dropped; sessions that end at or below the
// watermark are emitted and removed.
type sessionModel struct {
	sessions map[int64][][3]int64 // key → (start, end, count), by start
}

func (m *sessionModel) epoch(rows [][2]int64, gap, wmMs, lateMs int64) []string {
	add := map[int64][][3]int64{}
	for _, r := range rows {
		if r[1]+gap <= lateMs*1000 {
			continue
		}
		add[r[0]] = append(add[r[0]], [3]int64{r[1], r[1] + gap, 1})
	}
	for k, ss := range add {
		all := append(append([][3]int64(nil), m.sessions[k]...), ss...)
		sort.Slice(all, func(i, j int) bool { return all[i][0] < all[j][0] })
		var merged [][3]int64
		for _, s := range all {
			if n := len(merged); n > 0 && s[0] <= merged[n-1][1] {
				merged[n-1][1] = max(merged[n-1][1], s[1])
				merged[n-1][2] += s[2]
				continue
			}
			merged = append(merged, s)
		}
		m.sessions[k] = merged
	}
	var out []string
	for k, ss := range m.sessions {
		var keep [][3]int64
		for _, s := range ss {
			if s[1] <= wmMs*1000 {
				out = append(out, fmt.Sprint(k, " ", s[0], " ", s[1], " ", s[2]))
			} else {
				keep = append(keep, s)
			}
		}
		if len(keep) == 0 {
			delete(m.sessions, k)
		} else {
			m.sessions[k] = keep
		}
	}
	slices.Sort(out)
	return out
}

func (m *sessionModel) count() int64 {
	var n int64
	for _, ss := range m.sessions {
		n += int64(len(ss))
	}
	return n
}

// TestSessionIndexAbortRestart runs session windows in Append mode over
// random epochs with aborted, replayed and restarted epochs, and checks
// every committed epoch's output and numRowsTotal against the brute-force
// model: eviction from the end-time index must find every due session,
// and the index must be rebuilt after an abort or a restart. With 16
// partitions and GOMAXPROCS 1 and 3, the partitions are merged in one
// and in three groups (sessionMergeGroups).
func TestSessionIndexAbortRestart(t *testing.T) {
	const gap = 2_000_000 // µs
	for _, c := range []struct{ parts, procs int }{{1, 0}, {3, 0}, {16, 1}, {16, 3}} {
		parts := c.parts
		t.Run(fmt.Sprintf("%d/procs=%d", parts, c.procs), func(t *testing.T) {
			if c.procs > 0 {
				defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(c.procs))
			}
			mem := poisonmem.New()
			defer mem.AssertSize(t, 0)
			ctx := context.Background()
			dir := t.TempDir()
			stores := newTestStores(t, mem, dir, parts)
			defer stores.close()
			spec := vector.AggregateSpec{
				GroupBy: []vector.NamedExpr{vector.As(vector.Col("k"), "k"), vector.As(vector.Col("session"), "session")},
				Aggregates: []vector.AggregateCall{
					{Func: vector.AggCountStar, Name: "n"},
				},
			}
			newOp := func() *statefulSessionWindow {
				op, err := newStatefulSessionWindow(mem, 0, sessionInSchema, spec, 1, 1, true, stream.Append)
				if err != nil {
					t.Fatal(err)
				}
				return op
			}
			op := newOp()
			model := &sessionModel{sessions: map[int64][][3]int64{}}
			rng := rand.New(rand.NewPCG(9, uint64(parts)))
			lateMs := int64(0)
			for id := int64(0); id < 40; id++ {
				wmMs := max(0, (id-4)*1000)
				var rows [][2]int64
				for i := 0; i < 12*parts; i++ {
					rows = append(rows, [2]int64{rng.Int64N(int64(5 * parts)), (max(0, id-6)*1000 + rng.Int64N(7000)) * 1000})
				}
				want := model.epoch(rows, gap, wmMs, lateMs)
				ep := Epoch{EpochInfo: stream.EpochInfo{ID: id, WatermarkMs: wmMs, LateWatermarkMs: lateMs, HasWatermark: true, CheckpointDir: dir, NumPartitions: parts}}
				run := func() []string {
					rec := sessionRecord(mem, rows, gap)
					scan, err := vector.NewScan(sessionInSchema, rec)
					rec.Release()
					if err != nil {
						t.Fatal(err)
					}
					ep.State = stores.begin(id)
					out, err := op.Execute(ctx, ep, scan)
					if err != nil {
						t.Fatalf("epoch %d: %v", id, err)
					}
					recs, err := vector.Drain(ctx, out)
					out.Close()
					if err != nil {
						t.Fatal(err)
					}
					var got []string
					for _, r := range recs {
						ks := r.Column(0).(*array.Int64)
						sess := r.Column(1).(*array.Struct)
						st, en := sess.Field(0).(*array.Timestamp), sess.Field(1).(*array.Timestamp)
						ns := r.Column(2).(*array.Int64)
						for i := 0; i < int(r.NumRows()); i++ {
							got = append(got, fmt.Sprint(ks.Value(i), " ", int64(st.Value(i)), " ", int64(en.Value(i)), " ", ns.Value(i)))
						}
						r.Release()
					}
					slices.Sort(got)
					return got
				}
				for rng.IntN(4) == 0 {
					run()
					stores.abort()
					op.Abort()
				}
				got := run()
				op.Committed(stores.commit(ctx))
				if !slices.Equal(got, want) {
					t.Fatalf("epoch %d: got\n%v\nwant\n%v", id, got, want)
				}
				if p := op.Report(); p.NumRowsTotal != model.count() {
					t.Fatalf("epoch %d: numRowsTotal %d, want %d", id, p.NumRowsTotal, model.count())
				}
				if rng.IntN(5) == 0 {
					op = newOp()
				}
				lateMs = wmMs
			}
		})
	}
}
