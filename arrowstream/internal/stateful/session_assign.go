package stateful

import (
	"context"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// sessionAssign appends the initial session window [t, t+gap) of every row
// (plan.SessionWindow); rows with a null time are dropped, and with a
// per-row gap (gapExpr) so are rows whose gap is null, not a valid
// interval string or not positive (Spark's SessionWindowing keeps only
// sessions with end > start). The sessions are merged by the
// statefulSessionWindow above it.
type sessionAssign struct {
	mem     memory.Allocator
	input   vector.Operator
	time    vector.Evaluator
	gap     int64            // µs, without gapExpr
	gapExpr vector.Evaluator // the row's gap (interval or string), or nil
	schema  *arrow.Schema
}

func NewSessionAssign(mem memory.Allocator, n *plan.SessionWindow, input vector.Operator, env *plan.Env) (vector.Operator, error) {
	return newSessionAssign(mem, n, input, env, nil)
}

// newSessionAssign is NewSessionAssign with its output schema from
// schemas (nil: a new one).
func newSessionAssign(mem memory.Allocator, n *plan.SessionWindow, input vector.Operator, env *plan.Env, schemas *assignSchemas) (vector.Operator, error) {
	x, err := plan.ToVectorExpr(n.Time, env)
	if err != nil {
		input.Close()
		return nil, err
	}
	in := input.Schema()
	ev, err := x.Bind(in, mem)
	if err != nil {
		input.Close()
		return nil, err
	}
	if ts, ok := ev.DataType().(*arrow.TimestampType); !ok || ts.Unit != arrow.Microsecond {
		input.Close()
		return nil, fmt.Errorf("arrowstream: the time column of session_window(%s) must be a timestamp, not %s", x, vector.TypeName(ev.DataType()))
	}
	ps := n.Schema()
	out := ps.Field(ps.NumFields() - 1)
	out.Type = vector.WindowType
	sa := &sessionAssign{mem: mem, input: input, time: ev, gap: n.Gap, schema: schemas.schema(in, out)}
	if n.GapExpr != nil {
		gx, err := plan.ToVectorExpr(n.GapExpr, env)
		if err != nil {
			input.Close()
			return nil, err
		}
		if sa.gapExpr, err = gx.Bind(in, mem); err != nil {
			input.Close()
			return nil, fmt.Errorf("arrowstream: the gap of session_window(%s, %s): %w", x, gx, err)
		}
	}
	return sa, nil
}

func (s *sessionAssign) Schema() *arrow.Schema { return s.schema }
func (s *sessionAssign) Close() error          { return s.input.Close() }

func (s *sessionAssign) Next(ctx context.Context) (arrow.Record, error) {
	for {
		rec, err := s.input.Next(ctx)
		if err != nil {
			return nil, err
		}
		out, err := s.assign(ctx, rec)
		rec.Release()
		if err != nil {
			return nil, err
		}
		if out != nil {
			return out, nil
		}
	}
}

func (s *sessionAssign) assign(ctx context.Context, rec arrow.Record) (arrow.Record, error) {
	arr, err := s.time.Eval(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer arr.Release()
	ts, ok := arr.(*array.Timestamp)
	if !ok || ts.Len() != int(rec.NumRows()) {
		return nil, fmt.Errorf("arrowstream: session_window: the time expression returned %d values of %s for %d rows", arr.Len(), vector.TypeName(arr.DataType()), rec.NumRows())
	}
	var gaps []int64 // per row, with gapExpr (≤ 0: dropped)
	if s.gapExpr != nil {
		if gaps, err = s.rowGaps(ctx, rec); err != nil {
			return nil, err
		}
	}
	var sel []int32
	if ts.NullN() > 0 || gaps != nil {
		for i := 0; i < ts.Len(); i++ {
			if ts.IsValid(i) && (gaps == nil || gaps[i] > 0) {
				sel = append(sel, int32(i))
			}
		}
		if len(sel) == 0 {
			return nil, nil
		}
		if len(sel) == ts.Len() {
			sel = nil
		}
	}
	// The bounds are computed as whole columns, straight into the window
	// column's buffers (no builder call per row).
	vals := ts.TimestampValues()
	n := len(vals)
	if sel != nil {
		n = len(sel)
	}
	startBuf, starts := newTimestampBuffer(s.mem, n)
	defer startBuf.Release()
	endBuf, ends := newTimestampBuffer(s.mem, n)
	defer endBuf.Release()
	if sel != nil {
		for j, i := range sel {
			starts[j] = vals[i]
		}
	} else {
		copy(starts, vals)
	}
	switch {
	case gaps == nil:
		gap := arrow.Timestamp(s.gap)
		for j, t := range starts {
			ends[j] = t + gap
		}
	case sel == nil:
		for j, t := range starts {
			ends[j] = t + arrow.Timestamp(gaps[j])
		}
	default:
		for j, i := range sel {
			ends[j] = starts[j] + arrow.Timestamp(gaps[i])
		}
	}
	base := rec
	if sel != nil {
		if base, err = vector.TakeRecord(s.mem, rec, sel); err != nil {
			return nil, err
		}
		defer base.Release()
	}
	win := windowFromBuffers(n, startBuf, endBuf)
	defer win.Release()
	cols := append(append([]arrow.Array(nil), base.Columns()...), win)
	return array.NewRecord(s.schema, cols, int64(win.Len())), nil
}

// newTimestampBuffer allocates n timestamps in mem (the caller releases
// the buffer) and returns them as a slice to fill.
func newTimestampBuffer(mem memory.Allocator, n int) (*memory.Buffer, []arrow.Timestamp) {
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(arrow.TimestampTraits.BytesRequired(n))
	return buf, arrow.TimestampTraits.CastFromBytes(buf.Bytes())[:n]
}

// windowFromBuffers makes a window column (no nulls) of n rows whose
// bounds are in starts and ends (retained by the column).
func windowFromBuffers(n int, starts, ends *memory.Buffer) arrow.Array {
	fields := make([]arrow.ArrayData, 2)
	for i, buf := range []*memory.Buffer{starts, ends} {
		fields[i] = array.NewData(vector.WindowType.Field(i).Type, n, []*memory.Buffer{nil, buf}, nil, 0, 0)
	}
	d := array.NewData(vector.WindowType, n, []*memory.Buffer{nil}, fields, 0, 0)
	for _, f := range fields {
		f.Release()
	}
	defer d.Release()
	return array.MakeFromData(d)
}

// rowGaps evaluates the per-row gap of rec's rows in µs; a null or
// invalid gap is 0 (the row is dropped).
func (s *sessionAssign) rowGaps(ctx context.Context, rec arrow.Record) ([]int64, error) {
	arr, err := s.gapExpr.Eval(ctx, rec)
	if err != nil {
		return nil, fmt.Errorf("arrowstream: session_window gap: %w", err)
	}
	defer arr.Release()
	if arr.Len() != int(rec.NumRows()) {
		return nil, fmt.Errorf("arrowstream: session_window: the gap expression returned %d values for %d rows", arr.Len(), rec.NumRows())
	}
	gaps := make([]int64, arr.Len())
	parse := func(n int, valid func(int) bool, str func(int) string) {
		last, lastGap := "", int64(0)
		for i := 0; i < n; i++ {
			if !valid(i) {
				continue
			}
			v := str(i)
			if v != last || i == 0 {
				lastGap, err = vector.ParseInterval(v)
				if err != nil {
					lastGap = 0 // as Spark's cast of an invalid string: null
				}
				last = v
			}
			gaps[i] = lastGap
		}
	}
	switch a := arr.(type) {
	case *array.Duration:
		for i := range gaps {
			if a.IsValid(i) {
				gaps[i] = int64(a.Value(i))
			}
		}
	case *array.String:
		parse(a.Len(), a.IsValid, a.Value)
	case *array.LargeString:
		parse(a.Len(), a.IsValid, a.Value)
	default:
		return nil, fmt.Errorf("arrowstream: session_window: the gap expression is %s, want an interval or a string", vector.TypeName(arr.DataType()))
	}
	return gaps, nil
}

// partials turns the epoch's input rows (owned; consumed) into partial
// rows for the merge with the stored sessions. Each row is its own
// partial row (vector.PartialRows): every row has its own session
// [t, t+gap), so grouping them first would merge only rows of one key at
// one instant, and the merge regroups them anyway. A spec that
// PartialRows declines is aggregated partially.
func (s *statefulSessionWindow) partials(ctx context.Context, schema *arrow.Schema, recs []arrow.Record) ([]arrow.Record, error) {
	out := make([]arrow.Record, 0, len(recs))
	for i, rec := range recs {
		p, ok, err := vector.PartialRows(ctx, s.mem, rec, s.spec)
		if err != nil {
			releaseRecords(out)
			releaseRecords(recs[i:])
			return nil, err
		}
		if !ok { // the rest, partially aggregated, joins the rows made so far
			rest, err := partialAggregate(ctx, s.mem, vector.NewOwnedScan(schema, recs[i:]), s.spec)
			if err != nil {
				releaseRecords(out)
				return nil, err
			}
			return append(out, rest...), nil
		}
		out = append(out, p)
		rec.Release()
		recs[i] = nil
	}
	return out, nil
}
