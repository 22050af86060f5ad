package vector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// WindowFunc is a window (analytic) function of a WindowOp.
type WindowFunc int

// The window functions, with Spark's semantics.
const (
	// WinAggregate is an aggregate (WindowCall.Agg) over the row's frame.
	WinAggregate WindowFunc = iota
	// WinRowNumber numbers the rows of a partition from 1 (int).
	WinRowNumber
	// WinRank is 1 + the number of rows before the row's peer group (int).
	WinRank
	// WinDenseRank is the number of peer groups up to the row's (int).
	WinDenseRank
	// WinPercentRank is (rank - 1) / (rows - 1), 0 for a single row (double).
	WinPercentRank
	// WinCumeDist is the fraction of rows up to the end of the row's peer
	// group (double).
	WinCumeDist
	// WinNtile splits a partition into N buckets numbered from 1 (int).
	WinNtile
	// WinLag is the value N rows before (Args: value[, default]).
	WinLag
	// WinLead is the value N rows after (Args: value[, default]).
	WinLead
	// WinNthValue is the N-th value of the frame (Args: value).
	WinNthValue
)

var windowFuncNames = [...]string{"aggregate", "row_number", "rank", "dense_rank", "percent_rank", "cume_dist", "ntile", "lag", "lead", "nth_value"}

func (f WindowFunc) String() string {
	if f < 0 || int(f) >= len(windowFuncNames) {
		return fmt.Sprintf("WindowFunc(%d)", int(f))
	}
	return windowFuncNames[f]
}

// FrameBoundKind is the kind of one end of a window frame.
type FrameBoundKind int8

// The frame bound kinds.
const (
	FrameUnboundedPreceding FrameBoundKind = iota
	FramePreceding
	FrameCurrentRow
	FrameFollowing
	FrameUnboundedFollowing
)

// FrameBound is one end of a frame. For ROWS frames Offset counts rows;
// for RANGE frames it is a distance in the order key's units (integers,
// days for dates, microseconds for timestamps), FloatOffset for floating
// point keys. Months, when not zero, is a RANGE frame's year-month
// interval over a DATE or TIMESTAMP key: the bound is the key moved by
// that many calendar months (the day clamped to the month's end), which
// no fixed Offset can say.
type FrameBound struct {
	Kind        FrameBoundKind
	Offset      int64
	FloatOffset float64
	Months      int64
}

func (b FrameBound) String() string {
	switch b.Kind {
	case FrameUnboundedPreceding:
		return "UNBOUNDED PRECEDING"
	case FrameUnboundedFollowing:
		return "UNBOUNDED FOLLOWING"
	case FrameCurrentRow:
		return "CURRENT ROW"
	case FramePreceding:
		if b.Months != 0 {
			return fmt.Sprintf("%d MONTHS PRECEDING", b.Months)
		}
		return fmt.Sprintf("%d PRECEDING", b.Offset)
	}
	if b.Months != 0 {
		return fmt.Sprintf("%d MONTHS FOLLOWING", b.Months)
	}
	return fmt.Sprintf("%d FOLLOWING", b.Offset)
}

// WindowFrame is ROWS or (Range) RANGE BETWEEN Start AND End.
type WindowFrame struct {
	Range      bool
	Start, End FrameBound
	// Loc is the session time zone a bound's Months move a TIMESTAMP key's
	// wall clock in (nil is UTC; a TIMESTAMP_NTZ key ignores it), as
	// Spark's timestamp + year-month interval does.
	Loc *time.Location
}

func (f WindowFrame) String() string {
	u := "ROWS"
	if f.Range {
		u = "RANGE"
	}
	return u + " BETWEEN " + f.Start.String() + " AND " + f.End.String()
}

// wholePartition reports whether the frame is every row of the partition.
func (f WindowFrame) wholePartition() bool {
	return f.Start.Kind == FrameUnboundedPreceding && f.End.Kind == FrameUnboundedFollowing
}

// WindowCall is one window function of a WindowOp.
type WindowCall struct {
	Func WindowFunc
	// Agg is the aggregate of WinAggregate; its arguments are over the
	// input.
	Agg AggregateCall
	// Args are the arguments of lag, lead (value[, default]; the default
	// has the value's type) and nth_value (value).
	Args []Expr
	// N is lag's and lead's offset, ntile's bucket count and nth_value's
	// position.
	N int64
	// IgnoreNulls makes lag, lead and nth_value skip nulls (first and
	// last take it from Agg).
	IgnoreNulls bool
	Frame       WindowFrame
	// Name is the output column's name.
	Name string
}

func (c WindowCall) String() string {
	var b strings.Builder
	if c.Func == WinAggregate {
		b.WriteString(c.Agg.String())
	} else {
		b.WriteString(c.Func.String())
		b.WriteByte('(')
		for i, a := range c.Args {
			if i > 0 {
				b.WriteString(", ")
			}
			b.WriteString(a.String())
		}
		b.WriteByte(')')
	}
	b.WriteString(" OVER (")
	b.WriteString(c.Frame.String())
	b.WriteByte(')')
	return b.String()
}

// WindowOpSpec is what a WindowOp computes: the rows are grouped into
// partitions by PartitionBy, ordered within each by OrderBy, and each call
// adds one column.
type WindowOpSpec struct {
	PartitionBy []Expr
	OrderBy     []SortKey
	Calls       []WindowCall
}

// WindowOp evaluates window functions (Spark's Window operator). It is a
// blocking operator: the first Next reads the whole input, sorts it once by
// (partition keys, order keys), finds the partition and peer-group
// boundaries, and computes each call over whole columns: ranking functions
// from the boundaries, lag/lead/first/last/nth_value as gathers, count,
// sum and avg over growing frames as running totals, min and max over any
// frame with a monotonic deque, and other aggregates through the hash
// aggregation's accumulators (once per partition for whole-partition frames,
// per frame otherwise). Its output is the input's columns, in partition and
// order-key order, followed by one column per call, in records of at most
// 64K rows.
type WindowOp struct {
	mem   memory.Allocator
	input Operator
	spec  WindowOpSpec
	sch   *arrow.Schema
	sort  *Sort // binds the sort keys; its input is not used
	nPart int
	calls []*boundWindowCall

	done    bool
	data    arrow.Record // the sorted input
	results []arrow.Array
	pos     int64
	err     error
	closed  bool
	heap    heapAccount
}

// boundWindowCall is a call bound to the input schema.
type boundWindowCall struct {
	call  WindowCall
	args  []Evaluator // lag/lead/nth_value arguments
	agg   *boundAgg   // WinAggregate
	field arrow.Field
}

// NewWindowOp returns a WindowOp over input. Partition and order keys must
// be of a sortable type (see NewSort). On success it owns input.
func NewWindowOp(mem memory.Allocator, input Operator, spec WindowOpSpec) (*WindowOp, error) {
	in := input.Schema()
	w := &WindowOp{mem: mem, input: input, spec: spec, nPart: len(spec.PartitionBy), heap: newHeapAccount(mem, "window")}
	keys := make([]SortKey, 0, len(spec.PartitionBy)+len(spec.OrderBy))
	for _, p := range spec.PartitionBy {
		keys = append(keys, SortKey{Expr: p})
	}
	keys = append(keys, spec.OrderBy...)
	if len(keys) > 0 {
		s, err := newSort(mem, input, keys, -1)
		if err != nil {
			return nil, err
		}
		w.sort = s
	}
	fields := append([]arrow.Field(nil), in.Fields()...)
	for _, c := range spec.Calls {
		b, err := bindWindowCall(in, mem, c, spec)
		if err != nil {
			return nil, err
		}
		w.calls = append(w.calls, b)
		fields = append(fields, b.field)
	}
	md := in.Metadata()
	w.sch = arrow.NewSchema(fields, &md)
	return w, nil
}

func bindWindowCall(in *arrow.Schema, mem memory.Allocator, c WindowCall, spec WindowOpSpec) (*boundWindowCall, error) {
	b := &boundWindowCall{call: c}
	name := c.Name
	if name == "" {
		name = c.String()
	}
	fail := func(format string, args ...any) (*boundWindowCall, error) {
		return nil, fmt.Errorf("vector: window function %s: %s: %w", c, fmt.Sprintf(format, args...), ErrType)
	}
	if c.Frame.Range && (c.Frame.Start.Kind == FramePreceding || c.Frame.Start.Kind == FrameFollowing ||
		c.Frame.End.Kind == FramePreceding || c.Frame.End.Kind == FrameFollowing) {
		if len(spec.OrderBy) != 1 {
			return fail("a RANGE frame with an offset needs exactly one ORDER BY key, got %d", len(spec.OrderBy))
		}
		ev, err := spec.OrderBy[0].Expr.Bind(in, mem)
		if err != nil {
			return nil, err
		}
		if _, ok := rangeKeyKind(Unwrap(ev.DataType())); !ok {
			return fail("a RANGE frame with an offset cannot order by %s", TypeName(ev.DataType()))
		}
		if id := Unwrap(ev.DataType()).ID(); (c.Frame.Start.Months != 0 || c.Frame.End.Months != 0) && id != arrow.DATE32 && id != arrow.TIMESTAMP {
			return fail("a RANGE frame with a year-month interval cannot order by %s", TypeName(ev.DataType()))
		}
	}
	switch c.Func {
	case WinAggregate:
		a, err := bindAggregate(in, mem, c.Agg, AggComplete)
		if err != nil {
			return nil, err
		}
		for i := range a.args {
			a.args[i] = Plain(a.args[i], mem)
		}
		if s, ok := a.acc.(*statAcc); ok {
			s.window, s.split = true, false // Spark evaluates a window's buffer unmerged
		}
		if s, ok := a.acc.(interface{ setWindow() }); ok {
			s.setWindow() // Spark's window buffer is filled row by row, never merged
		}
		b.agg = a
		b.field = arrow.Field{Name: name, Type: a.result.Type, Nullable: true}
		if (c.Agg.Func == AggMin || c.Agg.Func == AggMax) && len(c.Agg.Args) == 1 {
			// min and max pick input values (frameExtreme): over the
			// argument as it is, not as the accumulators widen it
			// (TINYINT, SMALLINT, FLOAT), so the type is the argument's.
			raw, err := c.Agg.Args[0].Bind(in, mem)
			if err != nil {
				return nil, err
			}
			b.args = []Evaluator{Plain(raw, mem)}
			b.field.Type = b.args[0].DataType()
		}
		return b, nil
	case WinRowNumber, WinRank, WinDenseRank, WinNtile:
		b.field = arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Int32, Nullable: c.Func == WinNtile}
		if c.Func == WinNtile && c.N <= 0 {
			return fail("the number of buckets must be positive, got %d", c.N)
		}
		return b, nil
	case WinPercentRank, WinCumeDist:
		b.field = arrow.Field{Name: name, Type: arrow.PrimitiveTypes.Float64}
		return b, nil
	case WinLag, WinLead, WinNthValue:
		want := 1
		if c.Func != WinNthValue && len(c.Args) == 2 {
			want = 2
		}
		if len(c.Args) != want {
			return fail("wrong number of arguments %d", len(c.Args))
		}
		if c.Func == WinNthValue && c.N <= 0 {
			return fail("the position must be positive, got %d", c.N)
		}
		for _, a := range c.Args {
			ev, err := a.Bind(in, mem)
			if err != nil {
				return nil, err
			}
			b.args = append(b.args, Plain(ev, mem))
		}
		t := b.args[0].DataType()
		if len(b.args) == 2 && !arrow.TypeEqual(t, b.args[1].DataType()) {
			return fail("the default is %s, not the value's type %s", TypeName(b.args[1].DataType()), TypeName(t))
		}
		b.field = arrow.Field{Name: name, Type: t, Nullable: true}
		return b, nil
	}
	return fail("unknown window function")
}

// Schema implements Operator: the input's columns, then one per call.
func (w *WindowOp) Schema() *arrow.Schema { return w.sch }

// Next implements Operator.
func (w *WindowOp) Next(ctx context.Context) (arrow.Record, error) {
	if w.err != nil {
		return nil, w.err
	}
	if !w.done {
		w.done = true
		if err := w.materialize(ctx); err != nil {
			w.release()
			w.err = err
			return nil, err
		}
	}
	if w.data == nil || w.pos >= w.data.NumRows() {
		w.release()
		w.err = io.EOF
		return nil, io.EOF
	}
	end := min(w.pos+outputBatchRows, w.data.NumRows())
	cols := make([]arrow.Array, 0, w.sch.NumFields())
	for _, c := range w.data.Columns() {
		cols = append(cols, array.NewSlice(c, w.pos, end))
	}
	for _, r := range w.results {
		cols = append(cols, array.NewSlice(r, w.pos, end))
	}
	out := array.NewRecord(w.sch, cols, end-w.pos)
	releaseArrays(cols)
	w.pos = end
	return out, nil
}

// materialize reads and sorts the input and computes every call.
func (w *WindowOp) materialize(ctx context.Context) error {
	var recs []arrow.Record
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	for {
		rec, err := w.input.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		if rec.NumRows() == 0 {
			rec.Release()
			continue
		}
		recs = append(recs, rec)
	}
	if len(recs) == 0 {
		return nil
	}
	data, err := ConcatRecordsContext(ctx, w.mem, w.input.Schema(), recs)
	if err != nil {
		return fmt.Errorf("vector: window: %w", err)
	}
	for _, r := range recs {
		r.Release()
	}
	recs = nil
	if w.sort != nil {
		perm, err := w.sortPerm(ctx, data)
		if err != nil {
			data.Release()
			return err
		}
		sorted, err := gatherRowsContext(ctx, w.mem, data, perm)
		data.Release()
		w.sort.heap.release()
		if err != nil {
			return err
		}
		data = sorted
	}
	w.data = data
	if err := ctx.Err(); err != nil {
		return err
	}
	b, err := w.boundaries(ctx, data)
	if err != nil {
		return err
	}
	defer b.release()
	for _, c := range w.calls {
		if err := ctx.Err(); err != nil {
			return err
		}
		r, err := c.eval(ctx, w.mem, data, b, w.spec)
		if err != nil {
			return err
		}
		w.results = append(w.results, r)
	}
	return w.heap.set(0)
}

func (w *WindowOp) release() {
	if w.data != nil {
		w.data.Release()
		w.data = nil
	}
	releaseArrays(w.results)
	w.results = nil
	w.heap.release()
}

// Close implements Operator; it releases what the WindowOp holds and closes
// the input.
func (w *WindowOp) Close() error {
	if w.closed {
		return nil
	}
	w.closed = true
	if w.err == nil {
		w.err = errOpClosed
	}
	w.release()
	return w.input.Close()
}
