package vector

import (
	"context"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// WindowAssign assigns rows to time windows (Spark's window(timeColumn,
// windowDuration, slideDuration, startTime)) and appends a struct column
// {start, end} (WindowType, end exclusive). Durations are microseconds.
//
// With ts the row's time, the latest window start at or before ts is
// lastStart = ts - ((ts - start) mod slide), the modulus taken towards
// negative infinity so that times before the epoch land in the right
// window. Candidate windows start at lastStart - i*slide for i = 0 ..
// ceil(width/slide)-1, in that order, and a candidate is kept when it
// contains ts (start <= ts < end); when slide divides width every candidate
// does. A tumbling window (slide == width) gives each row exactly one window;
// a sliding window up to ceil(width/slide) copies of the row. Rows whose time
// is null are dropped.
type WindowAssign struct {
	mem    memory.Allocator
	input  Operator
	expr   Expr
	time   Evaluator
	spec   windowSpec
	schema *arrow.Schema

	// Sliding windows expand a batch over several output records.
	rec     arrow.Record // pending input batch (owned), or nil
	ts      []int64      // its time values
	valid   []int32      // its rows with a non-null time
	next    int          // next position in valid to expand
	nextWin int64        // windows of that row already produced
	tsArr   arrow.Array  // the time array ts points into (owned)
	sel     []int32      // scratch: the valid rows
	rep     []int32      // scratch: input row of each output row
	starts  []int64      // scratch: latest window start per valid row

	err    error
	closed bool
}

// windowSpec is a validated window definition.
type windowSpec struct {
	width, slide, start int64
	// k is the number of candidate windows per row, ceil(width/slide).
	k int64
	// full is the remainder bound below which a row gets all k candidates:
	// candidate k-1 contains ts iff (ts - lastStart) < width - (k-1)*slide.
	full int64
}

func (w windowSpec) tumbling() bool { return w.width == w.slide }

// NewWindowAssign returns a WindowAssign over input. timeExpr must be a
// timestamp; width (windowDuration), slide (slideDuration) and start
// (startTime) are microseconds, checked as Spark checks them: width > 0,
// slide > 0, slide <= width and |start| < slide. The output is the input's
// columns followed by the window column named outName, which carries the
// metadata of the time column (its watermark marker) when timeExpr is a
// bare column. On success the WindowAssign owns input.
func NewWindowAssign(mem memory.Allocator, input Operator, timeExpr Expr, width, slide, start int64, outName string) (*WindowAssign, error) {
	in := input.Schema()
	name := fmt.Sprintf("window(%s, %d, %d, %d)", timeExpr, width, slide, start)
	if msg := WindowSpecError(width, slide, start); msg != "" {
		return nil, fmt.Errorf("vector: %s over %s: %s", name, sqlSchema(in), msg)
	}
	ev, err := timeExpr.Bind(in, mem)
	if err != nil {
		return nil, err
	}
	if ts, ok := ev.DataType().(*arrow.TimestampType); !ok || ts.Unit != arrow.Microsecond {
		return nil, newBindError(timeExpr, in,
			fmt.Errorf("the time column of %s must be a timestamp, not %s: %w", name, TypeName(ev.DataType()), ErrType))
	}
	k := width / slide // ceil(width/slide), without overflow near MaxInt64
	if width%slide != 0 {
		k++
	}
	out := arrow.Field{Name: outName, Type: WindowType, Nullable: true}
	if cr, ok := ev.(bareColumn); ok {
		if col, top := cr.Column(); top {
			out.Metadata = in.Field(col).Metadata
		}
	}
	md := in.Metadata()
	return &WindowAssign{
		mem: mem, input: input, expr: timeExpr, time: ev,
		spec:   windowSpec{width: width, slide: slide, start: start, k: k, full: width - (k-1)*slide},
		schema: arrow.NewSchema(append(append([]arrow.Field(nil), in.Fields()...), out), &md),
	}, nil
}

// Schema implements Operator.
func (w *WindowAssign) Schema() *arrow.Schema { return w.schema }

// Next implements Operator.
func (w *WindowAssign) Next(ctx context.Context) (arrow.Record, error) {
	for w.err == nil {
		if w.rec == nil {
			if err := w.pull(ctx); err != nil {
				w.err = err
				break
			}
			if w.rec == nil {
				continue
			}
		}
		var out arrow.Record
		var err error
		if w.spec.tumbling() {
			out, err = w.tumble()
		} else {
			out, err = w.slideNext()
		}
		if err != nil {
			w.err = err
			break
		}
		return out, nil
	}
	return nil, w.err
}

// pull reads the next input batch and evaluates its time. A batch without a
// non-null time is dropped, leaving w.rec nil.
func (w *WindowAssign) pull(ctx context.Context) error {
	rec, err := w.input.Next(ctx)
	if err != nil {
		return err
	}
	if rec.NumRows() == 0 {
		rec.Release() // an empty batch is dropped like one without times
		return nil
	}
	arr, err := w.time.Eval(ctx, rec)
	if err != nil {
		rec.Release()
		return err
	}
	ts, ok := arr.(*array.Timestamp)
	if !ok || ts.Len() != int(rec.NumRows()) {
		rec.Release()
		arr.Release()
		return fmt.Errorf("vector: window: %s returned %d values of %s for %d rows", w.expr, arr.Len(), TypeName(arr.DataType()), rec.NumRows())
	}
	w.ts = castSlice[int64](arrow.TimestampTraits.CastToBytes(ts.TimestampValues()))
	if ts.NullN() > 0 {
		w.sel = selectValid(w.sel, ts)
		if len(w.sel) == 0 {
			rec.Release()
			arr.Release()
			return nil
		}
		w.valid = w.sel
	} else {
		w.valid = nil
	}
	w.rec, w.tsArr, w.next, w.nextWin = rec, arr, 0, 0
	if !w.spec.tumbling() {
		// Latest window start of every valid row, once per batch.
		n := w.numValid()
		if cap(w.starts) < n {
			w.starts = make([]int64, n)
		}
		w.starts = w.starts[:n]
		for o := range w.starts {
			t := w.ts[w.row(o)]
			w.starts[o] = t - floorModSlide(t-w.spec.start, w.spec.slide)
		}
	}
	return nil
}

func (w *WindowAssign) dropBatch() {
	w.rec.Release()
	w.tsArr.Release()
	w.rec, w.tsArr, w.ts = nil, nil, nil
}

// floorModSlide returns the modulus of x by a positive m rounded towards
// negative infinity. Go's % truncates towards zero (as Java's does), so a
// negative remainder is moved up by m, branch-free.
func floorModSlide(x, m int64) int64 {
	r := x % m
	return r + m&(r>>63)
}

// tumble produces the whole pending batch: one window per valid row, the
// struct's start and end computed straight into their buffers.
func (w *WindowAssign) tumble() (arrow.Record, error) {
	defer w.dropBatch()
	var in arrow.Record
	if w.valid == nil {
		w.rec.Retain()
		in = w.rec
	} else {
		var err error
		if in, err = gatherRecord(w.mem, w.rec, w.valid); err != nil {
			return nil, err
		}
	}
	defer in.Release()
	n := int(in.NumRows())
	win, sv, ev := w.newWindowArray(n)
	defer win.Release()
	if w.valid == nil {
		tumbleRuns(w.spec, w.ts[:n], sv, ev)
	} else {
		tumbleRows(w.spec, w.ts, w.valid, sv, ev)
	}
	cols := make([]arrow.Array, 0, in.NumCols()+1)
	cols = append(cols, in.Columns()...)
	cols = append(cols, win)
	return array.NewRecord(w.schema, cols, int64(n)), nil
}

// tumbleRuns writes the tumbling window (start in sv, end in ev) of every
// time in ts. Rows come mostly in time order, so consecutive rows share
// their window: the start is computed (a 64-bit division) only for a row
// outside the previous row's window [ls, ls+slide), and the run's rows
// take it with two comparisons. Near the int64 extremes (beyond about
// 146,000 years from 1970), where t-start wraps and the formula is not
// constant over a window, every row is computed afresh. Rows out of order
// make the comparisons cost more than they save (measured: about twice
// the per-row loop's CPU over random times), so a batch whose first
// tumbleProbe rows start more than tumbleProbe/8 runs takes the per-row
// loop for the rest.
func tumbleRuns(s windowSpec, ts, sv, ev []int64) {
	tumbleRows(s, ts, nil, sv, ev)
}

// runSafe bounds the windows taken by runs: for ls in [-runSafe, runSafe]
// and slide <= runSafe/2, t-start cannot overflow for any t of the
// window, so every row of it gets the start its own formula gives.
const runSafe = int64(1) << 62

// tumbleProbe is how many rows of a batch decide between the run path
// and the per-row loop.
const tumbleProbe = 256

// tumbleRows is tumbleRuns over the rows of ts listed in rows (the rows
// with a time; nil: every row), writing the o-th row's window at sv[o],
// ev[o].
func tumbleRows(s windowSpec, ts []int64, rows []int32, sv, ev []int64) {
	width, slide, start := s.width, s.slide, s.start
	n := len(sv)
	at := func(o int) int64 {
		if rows == nil {
			return ts[o]
		}
		return ts[rows[o]]
	}
	ls, hi := int64(1), int64(0) // empty: the first row is computed
	runs, o := 0, 0
	for ; o < n; o++ {
		if o == tumbleProbe && runs > tumbleProbe/8 {
			break // out of order: the per-row loop below
		}
		t := at(o)
		if t < ls || t >= hi {
			ls = t - floorModSlide(t-start, slide)
			hi = ls + slide
			if ls < -runSafe || ls > runSafe || slide > runSafe/2 {
				hi = ls // near the extremes t-start may wrap: row by row, as the formula does
			}
			runs++
		}
		sv[o] = ls
		ev[o] = ls + width
	}
	for ; o < n; o++ {
		t := at(o)
		ls := t - floorModSlide(t-start, slide)
		sv[o] = ls
		ev[o] = ls + width
	}
}

// slideNext produces the next output record of the pending sliding-window
// batch: every valid row repeated once per window containing it, in records
// of outputBatchRows rows (a row's windows may continue in the next record).
func (w *WindowAssign) slideNext() (arrow.Record, error) {
	s := w.spec
	n := w.numValid()
	// The first pass finds where this record ends, the second writes it.
	total := int64(0)
	r, j := w.next, w.nextWin
	for r < n && total < outputBatchRows {
		cnt := w.windowsOf(r)
		take := min(cnt-j, outputBatchRows-total)
		total += take
		j += take
		if j == cnt {
			r, j = r+1, 0
		}
	}
	if int64(cap(w.rep)) < total {
		w.rep = make([]int32, total)
	}
	rep := w.rep[:total]
	win, sv, ev := w.newWindowArray(int(total))
	o := 0
	for pr, pj := w.next, w.nextWin; o < len(rep); pr, pj = pr+1, 0 {
		row, cnt := w.row(pr), w.windowsOf(pr)
		ls := w.starts[pr] - pj*s.slide
		for ; pj < cnt && o < len(rep); pj++ {
			rep[o] = row
			sv[o] = ls
			ev[o] = ls + s.width
			ls -= s.slide
			o++
		}
	}
	w.next, w.nextWin = r, j
	cols := make([]arrow.Array, 0, w.rec.NumCols()+1)
	var err error
	for _, c := range w.rec.Columns() {
		var a arrow.Array
		if a, err = gather(w.mem, c, rep); err != nil {
			break
		}
		cols = append(cols, a)
	}
	if w.next == n {
		w.dropBatch()
	}
	if err != nil {
		win.Release()
		releaseArrays(cols)
		return nil, err
	}
	cols = append(cols, win)
	out := array.NewRecord(w.schema, cols, int64(len(rep)))
	releaseArrays(cols)
	return out, nil
}

// windowsOf is the number of windows of valid row i: k, or k-1 when the row
// lies past the end of the earliest candidate (possible only when slide
// does not divide width).
func (w *WindowAssign) windowsOf(i int) int64 {
	if w.ts[w.row(i)]-w.starts[i] >= w.spec.full {
		return w.spec.k - 1
	}
	return w.spec.k
}

// numValid is the number of rows of the pending batch with a time.
func (w *WindowAssign) numValid() int {
	if w.valid == nil {
		return len(w.ts)
	}
	return len(w.valid)
}

// row maps a position among the valid rows to the row of the batch.
func (w *WindowAssign) row(i int) int32 {
	if w.valid == nil {
		return int32(i)
	}
	return w.valid[i]
}

// newWindowArray allocates a {start, end} struct array of n windows and
// returns it with its start and end values to fill in.
func (w *WindowAssign) newWindowArray(n int) (arrow.Array, []int64, []int64) {
	sb := memory.NewResizableBuffer(w.mem)
	sb.Resize(n * 8)
	eb := memory.NewResizableBuffer(w.mem)
	eb.Resize(n * 8)
	sv := castSlice[int64](sb.Bytes())[:n:n]
	ev := castSlice[int64](eb.Bytes())[:n:n]
	sd := array.NewData(Timestamp, n, []*memory.Buffer{nil, sb}, nil, 0, 0)
	ed := array.NewData(Timestamp, n, []*memory.Buffer{nil, eb}, nil, 0, 0)
	sb.Release()
	eb.Release()
	st := array.NewData(WindowType, n, []*memory.Buffer{nil}, []arrow.ArrayData{sd, ed}, 0, 0)
	sd.Release()
	ed.Release()
	defer st.Release()
	return array.MakeFromData(st), sv, ev
}

// Rerun implements Rerunner: a batch left pending by a consumer that
// stopped early is released, the run's end or error forgotten (the bound
// time expression and the scratch are kept), and the input reruns.
func (w *WindowAssign) Rerun() error {
	if w.closed {
		return fmt.Errorf("vector: window: %w", ErrCannotRerun)
	}
	if w.rec != nil {
		w.dropBatch()
	}
	w.valid, w.next, w.nextWin = nil, 0, 0
	w.err = nil
	return Rerun(w.input)
}

// Close implements Operator; it releases the pending batch and closes the
// input.
func (w *WindowAssign) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	if w.err == nil {
		w.err = errOpClosed
	}
	if w.rec != nil {
		w.dropBatch()
	}
	return w.input.Close()
}

// WindowSpecError checks window(ts, width, slide, start) durations (in
// microseconds) as Spark does and returns Spark's message for the first
// violation, or "" when they are valid.
func WindowSpecError(width, slide, start int64) string {
	switch {
	case width <= 0:
		return fmt.Sprintf("The window duration (%d) must be greater than 0.", width)
	case slide <= 0:
		return fmt.Sprintf("The slide duration (%d) must be greater than 0.", slide)
	case slide > width:
		return fmt.Sprintf("The slide duration (%d) must be less than or equal to the windowDuration (%d).", slide, width)
	case start >= slide || start <= -slide:
		return fmt.Sprintf("The absolute value of start time (%d) must be less than the slideDuration (%d).", start, slide)
	}
	return ""
}
