package vector_test

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

const opsSec = int64(1_000_000)

var eventSchema = arrow.NewSchema([]arrow.Field{
	{Name: "t", Type: vector.Timestamp, Nullable: true},
	{Name: "v", Type: vector.String, Nullable: true},
}, nil)

func windowOf(width, slide, start int64) func(memory.Allocator, []vector.Operator) (vector.Operator, error) {
	return func(mem memory.Allocator, in []vector.Operator) (vector.Operator, error) {
		return vector.NewWindowAssign(mem, in[0], vector.Col("t"), width, slide, start, "window")
	}
}

// sparkWindows is Spark's window assignment written the way
// docs/semantics.md §4.1 states it, candidate by candidate, as the reference.
func sparkWindows(ts, width, slide, start int64) [][2]int64 {
	k := (width + slide - 1) / slide
	r := (ts - start) % slide
	if r < 0 {
		r += slide
	}
	last := ts - r
	var out [][2]int64
	for i := int64(0); i < k; i++ {
		s := last - i*slide
		e := s + width
		if width%slide != 0 && !(s <= ts && ts < e) {
			continue
		}
		out = append(out, [2]int64{s, e})
	}
	return out
}

func windowWant(rows []vt.Row, width, slide, start int64) []vt.Row {
	var want []vt.Row
	for _, r := range rows {
		if r[0] == nil {
			continue
		}
		for _, w := range sparkWindows(r[0].(int64), width, slide, start) {
			want = append(want, vt.Row{r[0], r[1], []any{w[0], w[1]}})
		}
	}
	return want
}

func TestWindowAssign(t *testing.T) {
	rows := []vt.Row{
		{25 * opsSec, "a"},
		{nil, "null"},
		{int64(-1), "b"},
		{-10 * opsSec, "c"},
		{int64(0), "d"},
		{12 * opsSec, "e"},
		{13 * opsSec, nil},
		{-13*opsSec - 7, "f"},
	}
	in := []vt.Input{{Schema: eventSchema, Rows: rows}}
	cases := []vt.OperatorCase{
		// Hand-checked: 10 s tumbling, 25 s → [20, 30); -1 µs → [-10, 0).
		{Name: "tumbling-literal", Inputs: []vt.Input{{Schema: eventSchema, Rows: rows[:3]}}, Build: windowOf(10*opsSec, 10*opsSec, 0), Ordered: true,
			Want: []vt.Row{
				{25 * opsSec, "a", []any{20 * opsSec, 30 * opsSec}},
				{-1, "b", []any{-10 * opsSec, 0}},
			},
			WantSchema: arrow.NewSchema(append(append([]arrow.Field{}, eventSchema.Fields()...),
				arrow.Field{Name: "window", Type: vector.WindowType, Nullable: true}), nil)},
		// Hand-checked: 10 s windows sliding by 3 s (3 does not divide 10),
		// 13 s: candidates [12,22) [9,19) [6,16) [3,13); the last excludes 13.
		{Name: "sliding-literal", Inputs: []vt.Input{{Schema: eventSchema, Rows: rows[6:7]}}, Build: windowOf(10*opsSec, 3*opsSec, 0), Ordered: true,
			Want: []vt.Row{
				{13 * opsSec, nil, []any{12 * opsSec, 22 * opsSec}},
				{13 * opsSec, nil, []any{9 * opsSec, 19 * opsSec}},
				{13 * opsSec, nil, []any{6 * opsSec, 16 * opsSec}},
			}},
		{Name: "tumbling", Inputs: in, Build: windowOf(10*opsSec, 10*opsSec, 0), Ordered: true, Want: windowWant(rows, 10*opsSec, 10*opsSec, 0)},
		{Name: "tumbling-start", Inputs: in, Build: windowOf(10*opsSec, 10*opsSec, 3*opsSec), Ordered: true, Want: windowWant(rows, 10*opsSec, 10*opsSec, 3*opsSec)},
		{Name: "tumbling-negative-start", Inputs: in, Build: windowOf(10*opsSec, 10*opsSec, -3*opsSec), Ordered: true, Want: windowWant(rows, 10*opsSec, 10*opsSec, -3*opsSec)},
		{Name: "sliding-divides", Inputs: in, Build: windowOf(10*opsSec, 5*opsSec, 0), Ordered: true, Want: windowWant(rows, 10*opsSec, 5*opsSec, 0)},
		{Name: "sliding-not-dividing", Inputs: in, Build: windowOf(10*opsSec, 3*opsSec, 0), Ordered: true, Want: windowWant(rows, 10*opsSec, 3*opsSec, 0)},
		{Name: "sliding-start", Inputs: in, Build: windowOf(10*opsSec, 3*opsSec, -2*opsSec-1), Ordered: true, Want: windowWant(rows, 10*opsSec, 3*opsSec, -2*opsSec-1)},
		{Name: "sliding-odd", Inputs: in, Build: windowOf(7, 2, 1), Ordered: true, Want: windowWant(rows, 7, 2, 1)},
		{Name: "all-null", Inputs: []vt.Input{{Schema: eventSchema, Rows: rows[1:2]}}, Build: windowOf(10, 3, 0)},
		{Name: "empty-input", Inputs: []vt.Input{{Schema: eventSchema}}, Build: windowOf(10, 10, 0)},
		{Name: "zero-width", Inputs: in, Build: windowOf(0, 10, 0),
			WantErr: "window(t, 0, 10, 0) over (t: timestamp, v: string): The window duration (0) must be greater than 0."},
		{Name: "negative-slide", Inputs: in, Build: windowOf(10, -1, 0),
			WantErr: "The slide duration (-1) must be greater than 0."},
		{Name: "slide-over-width", Inputs: in, Build: windowOf(10, 11, 0),
			WantErr: "window(t, 10, 11, 0) over (t: timestamp, v: string): The slide duration (11) must be less than or equal to the windowDuration (10)."},
		{Name: "start-too-large", Inputs: in, Build: windowOf(10, 5, 5),
			WantErr: "The absolute value of start time (5) must be less than the slideDuration (5)."},
		{Name: "start-too-small", Inputs: in, Build: windowOf(10, 5, -7),
			WantErr: "The absolute value of start time (-7) must be less than the slideDuration (5)."},
		{Name: "not-a-timestamp", Inputs: in, Build: func(mem memory.Allocator, in []vector.Operator) (vector.Operator, error) {
			return vector.NewWindowAssign(mem, in[0], vector.Col("v"), 10, 10, 0, "w")
		}, WantErr: "cannot bind v: the time column of window(v, 10, 10, 0) must be a timestamp, not string: type mismatch (available columns: t, v)"},
		{Name: "unknown-column", Inputs: in, Build: func(mem memory.Allocator, in []vector.Operator) (vector.Operator, error) {
			return vector.NewWindowAssign(mem, in[0], vector.Col("ts"), 10, 10, 0, "w")
		}, WantErr: "unknown column ts (available columns: t, v)"},
	}
	for _, c := range cases {
		vt.RunOperator(t, c)
	}
}

// TestWindowAssignRandom compares the operator with the reference over
// random times (negative ones included) and random window definitions.
func TestWindowAssignRandom(t *testing.T) {
	mem := vt.NewAllocator(t)
	r := rand.New(rand.NewSource(3))
	for iter := 0; iter < 200; iter++ {
		slide := 1 + r.Int63n(20)
		width := slide * (1 + r.Int63n(4))
		if r.Intn(2) == 0 {
			width += r.Int63n(slide)
		}
		start := r.Int63n(2*slide-1) - (slide - 1)
		rows := make([]vt.Row, 50)
		for i := range rows {
			rows[i] = vt.Row{r.Int63n(400) - 200, "x"}
			if r.Intn(10) == 0 {
				rows[i][0] = nil
			}
		}
		checkWindowAssign(t, mem, rows, width, slide, start, "")
	}
}

// TestWindowAssignMetadata checks that the window column carries the time
// column's metadata (the watermark marker) and that sliding output is cut
// into records of at most 64K rows.
func TestWindowAssignMetadata(t *testing.T) {
	mem := vt.NewAllocator(t)
	md := arrow.NewMetadata([]string{"spark.watermarkDelayMs"}, []string{"5000"})
	s := arrow.NewSchema([]arrow.Field{{Name: "t", Type: vector.Timestamp, Nullable: true, Metadata: md}}, nil)
	rows := make([]vt.Row, 40000)
	for i := range rows {
		rows[i] = vt.Row{int64(i)}
	}
	rec := vt.BuildRecord(mem, s, rows)
	w, err := vector.NewWindowAssign(mem, opsScan(t, rec), vector.Col("t"), 10, 5, 0, "window")
	rec.Release()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	if got := w.Schema().Field(1).Metadata; !got.Equal(md) {
		t.Errorf("window metadata %v, want %v", got, md)
	}
	out, err := vector.Drain(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	total := int64(0)
	for _, o := range out {
		if o.NumRows() > 1<<16 {
			t.Errorf("record of %d rows", o.NumRows())
		}
		total += o.NumRows()
		o.Release()
	}
	if total != 80000 || len(out) != 2 {
		t.Errorf("%d rows in %d records, want 80000 in 2", total, len(out))
	}
}

// TestWindowAssignManyWindows gives each row more windows than fit in one
// record (100000 windows sliding by 1 µs) and checks that the windows run
// on across records, in order, with nothing lost.
func TestWindowAssignManyWindows(t *testing.T) {
	mem := vt.NewAllocator(t)
	rows := []vt.Row{{int64(-5), "a"}, {nil, "b"}, {int64(7), "c"}}
	rec := vt.BuildRecord(mem, eventSchema, rows)
	w, err := vector.NewWindowAssign(mem, opsScan(t, rec), vector.Col("t"), 100_000, 1, 0, "window")
	rec.Release()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	out, err := vector.Drain(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	var sizes []int64
	for _, o := range out {
		sizes = append(sizes, o.NumRows())
	}
	if want := []int64{65536, 65536, 65536, 3392}; fmt.Sprint(sizes) != fmt.Sprint(want) {
		t.Errorf("record sizes %v, want %v", sizes, want)
	}
	if got, want := vt.RowsOf(out...), windowWant(rows, 100_000, 1, 0); !vt.RowsEqual(want, got) {
		t.Errorf("windows differ from the reference (%d rows, want %d)", len(got), len(want))
	}
	for _, o := range out {
		o.Release()
	}
}

// TestWindowAssignTumbleRuns checks the tumbling path's windows, computed
// once per run of rows in one window, against Spark's per-row assignment:
// times mostly in order (runs of one window) with stragglers behind the
// run, rows at a window's last and next instant, NULL times (the path
// over the valid rows), and times next to MinInt64 and MaxInt64 where the
// run's bound ls+slide overflows or a difference t-ls wraps around;
// batches longer than the probe of 256 rows take the run path (rows in
// order) or the per-row loop (out of order) for the rest.
func TestWindowAssignTumbleRuns(t *testing.T) {
	mem := vt.NewAllocator(t)
	r := rand.New(rand.NewSource(25))
	const maxT, minT = int64(math.MaxInt64), int64(math.MinInt64)
	for iter := 0; iter < 300; iter++ {
		slide := 1 + r.Int63n(20)
		start := r.Int63n(2*slide-1) - (slide - 1)
		if iter%10 == 0 {
			// A window starting at MaxInt64: ls = MaxInt64 and ls+slide wraps.
			slide, start = 10, 7
		}
		rows := make([]vt.Row, 1+r.Intn(700))
		cur := r.Int63n(400) - 200
		mixed := 20 // iter%3 == 0: rows in order but at window edges (the run path past the probe)
		if iter%3 == 0 {
			mixed = 12
		}
		for i := range rows {
			var ts int64
			switch k := r.Intn(mixed + 4); {
			case k >= mixed: // in order, at the next window's start
				cur += slide - ((cur-start)%slide+slide)%slide
				ts = cur
			case k < 12: // in order, often in the same window
				cur += r.Int63n(slide/2 + 1)
				ts = cur
			case k < 14: // a straggler behind the run
				ts = cur - r.Int63n(3*slide+1)
			case k < 16: // a window's last or next instant
				ls := cur - ((cur-start)%slide+slide)%slide
				ts = ls + slide - r.Int63n(2)
				if r.Intn(2) == 0 {
					ts = ls - r.Int63n(2)
				}
			case k < 18: // next to the extremes
				if r.Intn(2) == 0 {
					ts = maxT - r.Int63n(3*slide)
				} else {
					ts = minT + r.Int63n(3*slide)
				}
			default:
				ts = r.Int63n(400) - 200
			}
			rows[i] = vt.Row{ts, "x"}
			if iter%2 == 1 && r.Intn(8) == 0 {
				rows[i][0] = nil
			}
		}
		checkWindowAssign(t, mem, rows, slide, slide, start, fmt.Sprintf("iter %d ", iter))
	}
}

// checkWindowAssign runs rows (columns t, x) through a window assignment
// and compares its output with windowWant's, label naming the case.
func checkWindowAssign(t *testing.T, mem memory.Allocator, rows []vt.Row, width, slide, start int64, label string) {
	t.Helper()
	rec := vt.BuildRecord(mem, eventSchema, rows)
	w, err := vector.NewWindowAssign(mem, opsScan(t, rec), vector.Col("t"), width, slide, start, "window")
	rec.Release()
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	out, err := vector.Drain(context.Background(), w)
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		for _, o := range out {
			o.Release()
		}
	}()
	want := windowWant(rows, width, slide, start)
	if got := vt.RowsOf(out...); !vt.RowsEqual(want, got) {
		t.Fatalf("%swidth %d slide %d start %d:\nwant\n%sgot\n%s", label, width, slide, start, vt.FormatRows(want), vt.FormatRows(got))
	}
}
