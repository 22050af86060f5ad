package plan

import (
	"errors"
	"math"
	"math/big"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/decimal128"

	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// windowOnly are the functions that exist only as window functions.
var windowOnly = map[string]vector.WindowFunc{
	"row_number": vector.WinRowNumber, "rank": vector.WinRank, "dense_rank": vector.WinDenseRank,
	"percent_rank": vector.WinPercentRank, "cume_dist": vector.WinCumeDist, "ntile": vector.WinNtile,
	"lag": vector.WinLag, "lead": vector.WinLead, "nth_value": vector.WinNthValue,
}

// nullTreatment lists the functions that take IGNORE NULLS / RESPECT NULLS.
var nullTreatment = map[string]bool{
	"lag": true, "lead": true, "nth_value": true,
	"first": true, "first_value": true, "last": true, "last_value": true, "any_value": true,
}

// winCollector holds a select block's named windows (WINDOW clause) and
// records whether a window function was resolved.
type winCollector struct {
	named map[string]*sql.WindowSpec
	found bool
}

func newWinCollector(named []*sql.NamedWindow) (*winCollector, error) {
	c := &winCollector{named: map[string]*sql.WindowSpec{}}
	for _, w := range named {
		k := strings.ToLower(w.Name.Name)
		if _, dup := c.named[k]; dup {
			return nil, errorAt(w.Pos, ErrUnsupported, "The definition of window %s is repetitive.", backquote(w.Name.Name))
		}
		c.named[k] = w.Spec
	}
	return c, nil
}

// resolveSpec expands references to named windows: OVER w is w's
// specification; OVER (w ORDER BY ...) refines w.
func (c *winCollector) resolveSpec(w *sql.WindowSpec, depth int) (*sql.WindowSpec, error) {
	if w.Name == nil {
		return w, nil
	}
	if depth > 32 {
		return nil, errorAt(w.Pos, ErrUnsupported, "The window definitions refer to each other in a cycle (at %s).", backquote(w.Name.Name))
	}
	base, ok := c.named[strings.ToLower(w.Name.Name)]
	if !ok {
		return nil, errorAt(w.Name.Pos, ErrUnresolved, "Window specification %s is not defined in the WINDOW clause.", w.Name.Name)
	}
	base, err := c.resolveSpec(base, depth+1)
	if err != nil {
		return nil, err
	}
	if w.Bare {
		return base, nil
	}
	m := *base
	m.Name = nil
	if len(w.PartitionBy) > 0 {
		if len(base.PartitionBy) > 0 {
			return nil, errorAt(w.Pos, ErrUnsupported, "A window that refines window %s cannot have its own PARTITION BY.", backquote(w.Name.Name))
		}
		m.PartitionBy = w.PartitionBy
	}
	if len(w.OrderBy) > 0 {
		if len(base.OrderBy) > 0 {
			return nil, errorAt(w.Pos, ErrUnsupported, "A window that refines window %s cannot have its own ORDER BY: %s already has one.", backquote(w.Name.Name), backquote(w.Name.Name))
		}
		m.OrderBy = w.OrderBy
	}
	if w.Frame != nil {
		if base.Frame != nil {
			return nil, errorAt(w.Pos, ErrUnsupported, "A window that refines window %s cannot have its own frame: %s already has one.", backquote(w.Name.Name), backquote(w.Name.Name))
		}
		m.Frame = w.Frame
	}
	return &m, nil
}

// windowCall resolves f OVER (...), and refuses a window-only function
// without OVER. It returns (nil, nil) for a call that is not a window
// function after all (first(x) IGNORE NULLS).
func (r *resolver) windowCall(f *sql.FuncCall, name string) (Expr, error) {
	_, isAgg := aggFuncs[name]
	wf, isWin := windowOnly[name]
	if f.Nulls != sql.NullsUnspecified && !nullTreatment[name] {
		return nil, errorAt(f.Pos, ErrUnsupported, "Function %s does not support %s.", backquote(f.Name.Name), map[sql.NullTreatment]string{sql.IgnoreNulls: "IGNORE NULLS", sql.RespectNulls: "RESPECT NULLS"}[f.Nulls])
	}
	if f.Over == nil {
		if isWin {
			return nil, errorAt(f.Pos, ErrAggregate, "Window function %s requires an OVER clause.", strings.ToLower(f.Name.Name)+"()")
		}
		return nil, nil
	}
	if !isWin && !isAgg {
		if sparkBuiltins[name] {
			return nil, errorAt(f.Name.Pos, ErrUnsupported, "The Spark SQL function %s is not supported by this engine.", backquote(f.Name.Name))
		}
		if !knownScalar(name) {
			return nil, errorAt(f.Name.Pos, ErrUnresolved, "Undefined function: %s.", backquote(f.Name.Name))
		}
		return nil, errorAt(f.Pos, ErrAggregate, "%s is not a window function or an aggregate function and cannot be used with OVER.", backquote(f.Name.Name))
	}
	switch {
	case r.inAgg:
		return nil, errorAt(f.Pos, ErrAggregate, "It is not allowed to use a window function inside an aggregate function. Please use the inner window function in a sub-query.")
	case r.inWindow:
		return nil, errorAt(f.Pos, ErrAggregate, "It is not allowed to use a window function inside another window function. Please use the inner window function in a sub-query.")
	case r.wins == nil:
		return nil, errorAt(f.Pos, ErrAggregate, "It is not allowed to use window functions inside %s clause.", r.clauseName())
	}
	spec, err := r.wins.resolveSpec(f.Over, 0)
	if err != nil {
		return nil, err
	}
	if err := percentileWindowCheck(f, name, spec); err != nil {
		return nil, err
	}
	sub := *r
	sub.inWindow = true
	p := &winPlaceholder{}
	if p.part, err = sub.exprs(spec.PartitionBy); err != nil {
		return nil, err
	}
	for _, o := range spec.OrderBy {
		e, err := sub.expr(o.Expr)
		if err != nil {
			return nil, err
		}
		p.order = append(p.order, SortKey{Expr: e, Desc: o.Desc, Nulls: nullOrder(o.Nulls)})
	}
	for _, k := range append(append([]Expr(nil), p.part...), orderExprs(p.order)...) {
		if err := checkWindowKey(f, k); err != nil {
			return nil, err
		}
	}
	if isAgg {
		if f.Distinct {
			return nil, errorAt(f.Pos, ErrUnsupported, "DISTINCT window functions are not supported: %s.", sql.Format(f))
		}
		if f.Filter != nil {
			return nil, errorAt(f.Filter.Position(), ErrUnsupported, "FILTER (WHERE ...) is not supported with window functions: %s.", sql.Format(f))
		}
		a, err := sub.aggregateExpr(f, name, false)
		if err != nil {
			return nil, err
		}
		p.fn = WindowExpr{Func: vector.WinAggregate, Agg: a, Type: a.Type}
	} else {
		if f.Distinct || f.Filter != nil {
			return nil, errorAt(f.Pos, ErrUnsupported, "DISTINCT and FILTER are not allowed with the window function %s.", name)
		}
		if err := sub.rankingCall(f, name, wf, p); err != nil {
			return nil, err
		}
	}
	if err := windowFrame(f, name, spec, p); err != nil {
		return nil, err
	}
	p.fn.Name = AutoName(p)
	r.wins.found = true
	return p, nil
}

func orderExprs(keys []SortKey) []Expr {
	out := make([]Expr, len(keys))
	for i, k := range keys {
		out[i] = k.Expr
	}
	return out
}

// checkWindowKey refuses partition and order keys of types the window
// operator cannot sort.
func checkWindowKey(f *sql.FuncCall, k Expr) error {
	if !windowKeyType(k.DataType()) {
		return errorAt(f.Pos, ErrType, "Cannot partition or order a window by %s of type %s.", k, typeOrNil(k))
	}
	return nil
}

// rankingCall resolves the arguments of a window-only function.
func (r *resolver) rankingCall(f *sql.FuncCall, name string, wf vector.WindowFunc, p *winPlaceholder) error {
	p.fn.Func = wf
	args, err := r.exprs(f.Args)
	if err != nil {
		return err
	}
	arity := func(lo, hi int) error {
		if len(args) < lo || len(args) > hi {
			if lo == hi {
				return errorAt(f.Pos, ErrType, "%s() takes %d arguments, got %d.", name, lo, len(args))
			}
			return errorAt(f.Pos, ErrType, "%s() takes %d to %d arguments, got %d.", name, lo, hi, len(args))
		}
		return nil
	}
	switch wf {
	case vector.WinRowNumber, vector.WinRank, vector.WinDenseRank, vector.WinPercentRank, vector.WinCumeDist:
		if err := arity(0, 0); err != nil {
			return err
		}
		p.fn.Type = vector.Int32
		if wf == vector.WinPercentRank || wf == vector.WinCumeDist {
			p.fn.Type = vector.Float64
		}
	case vector.WinNtile:
		if err := arity(1, 1); err != nil {
			return err
		}
		n, err := constantInt(f.Args[0], args[0], "The bucket count of ntile()")
		if err != nil {
			return err
		}
		if n <= 0 {
			return errorAt(f.Args[0].Position(), ErrType, "Buckets expression must be positive, but got: %d.", n)
		}
		p.fn.N, p.fn.Type = n, vector.Int32
	case vector.WinLag, vector.WinLead:
		if err := arity(1, 3); err != nil {
			return err
		}
		p.fn.N = 1
		if len(args) > 1 {
			n, err := constantInt(f.Args[1], args[1], "The offset of "+name+"()")
			if err != nil {
				return err
			}
			p.fn.N = n
		}
		v := args[0]
		p.fn.Args = []Expr{v}
		if len(args) > 2 {
			d := args[2]
			if d.DataType().ID() != arrow.NULL {
				t, ok := commonType([]arrow.DataType{v.DataType(), d.DataType()})
				if !ok {
					return errorAt(f.Args[2].Position(), ErrType, "The default of %s() is %s, which does not match the value's type %s.", name, typeOrNil(d), typeOrNil(v))
				}
				v, d = castTo(v, t), castTo(d, t)
				p.fn.Args = []Expr{v, d}
			}
		}
		p.fn.Type = v.DataType()
	case vector.WinNthValue:
		if err := arity(2, 2); err != nil {
			return err
		}
		n, err := constantInt(f.Args[1], args[1], "The position of nth_value()")
		if err != nil {
			return err
		}
		if n <= 0 {
			return errorAt(f.Args[1].Position(), ErrType, "The 'offset' argument of nth_value must be greater than zero but it is %d.", n)
		}
		p.fn.Args, p.fn.N, p.fn.Type = args[:1], n, args[0].DataType()
	}
	p.fn.IgnoreNulls = f.Nulls == sql.IgnoreNulls
	if p.fn.Type.ID() == arrow.NULL && (wf == vector.WinLag || wf == vector.WinLead || wf == vector.WinNthValue) {
		return errorAt(f.Args[0].Position(), ErrType, "The value of %s() cannot be an untyped NULL.", name)
	}
	return nil
}

// constantInt folds a constant integer argument.
func constantInt(src sql.Expr, e Expr, what string) (int64, error) {
	if !isConstant(e) || !vector.IsIntegral(e.DataType()) {
		return 0, errorAt(src.Position(), ErrType, "%s must be a constant integer, not %s.", what, sql.Format(src))
	}
	l, err := foldConstant(castTo(e, vector.Int64))
	if err != nil {
		return 0, errorAt(src.Position(), ErrType, "%s: %v.", what, err)
	}
	v, ok := l.Value.(int64)
	if !ok {
		return 0, errorAt(src.Position(), ErrType, "%s must not be NULL.", what)
	}
	return v, nil
}

// windowFrame checks the call against its window's ordering and frame
// and sets the frame (Spark's defaults where none is given).
func windowFrame(f *sql.FuncCall, name string, spec *sql.WindowSpec, p *winPlaceholder) error {
	fn := &p.fn
	if fn.Func != vector.WinAggregate {
		if len(spec.OrderBy) == 0 {
			return errorAt(f.Pos, ErrAggregate, "Window function %s() requires window to be ordered, please add ORDER BY clause. For example SELECT %s(value_expr) OVER (PARTITION BY window_partition ORDER BY window_ordering) from table.", name, name)
		}
		if fn.Func != vector.WinNthValue {
			if spec.Frame != nil {
				return errorAt(spec.Frame.Pos, ErrAggregate, "Cannot specify window frame for %s function.", name)
			}
			fn.Frame = vector.WindowFrame{Start: vector.FrameBound{Kind: vector.FrameUnboundedPreceding}, End: vector.FrameBound{Kind: vector.FrameCurrentRow}}
			return nil
		}
	}
	if spec.Frame == nil {
		if len(spec.OrderBy) > 0 {
			fn.Frame = vector.WindowFrame{Range: true, Start: vector.FrameBound{Kind: vector.FrameUnboundedPreceding}, End: vector.FrameBound{Kind: vector.FrameCurrentRow}}
		} else {
			fn.Frame = vector.WindowFrame{Start: vector.FrameBound{Kind: vector.FrameUnboundedPreceding}, End: vector.FrameBound{Kind: vector.FrameUnboundedFollowing}}
		}
		return nil
	}
	fr := spec.Frame
	end := fr.End
	if end == nil {
		end = &sql.FrameBound{Pos: fr.Pos, Kind: sql.CurrentRow}
	}
	fn.Frame.Range = fr.Unit == sql.FrameRange
	offsets := fr.Start.Offset != nil || end.Offset != nil
	var keyType arrow.DataType
	if fn.Frame.Range && offsets {
		if len(p.order) != 1 {
			return errorAt(fr.Pos, ErrAggregate, "A range window frame with value boundaries cannot be used in a window specification with multiple order by expressions: %d.", len(p.order))
		}
		keyType = p.order[0].Expr.DataType()
		if _, ok := vectorRangeKey(keyType); !ok {
			return errorAt(fr.Pos, ErrType, "A range window frame with value boundaries cannot order by %s of type %s.", p.order[0].Expr, typeOrNil(p.order[0].Expr))
		}
	}
	var err error
	if fn.Frame.Start, err = frameBound(fr.Start, fn.Frame.Range, keyType); err != nil {
		return err
	}
	if fn.Frame.End, err = frameBound(end, fn.Frame.Range, keyType); err != nil {
		return err
	}
	if fn.Frame.Start.Kind == vector.FrameUnboundedFollowing {
		return errorAt(fr.Start.Pos, ErrAggregate, "The lower bound of a window frame cannot be UNBOUNDED FOLLOWING.")
	}
	if fn.Frame.End.Kind == vector.FrameUnboundedPreceding {
		return errorAt(end.Pos, ErrAggregate, "The upper bound of a window frame cannot be UNBOUNDED PRECEDING.")
	}
	// Months and a fixed distance cannot be ordered (a month has no fixed
	// length): only bounds of one kind are compared.
	if (fn.Frame.Start.Months != 0) == (fn.Frame.End.Months != 0) && boundPosition(fn.Frame.Start) > boundPosition(fn.Frame.End) {
		return errorAt(fr.Pos, ErrAggregate, "The lower bound of a window frame must be less than or equal to the upper bound: %s.", sparkFrame(fn.Frame))
	}
	return nil
}

func vectorRangeKey(dt arrow.DataType) (bool, bool) {
	switch dt.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.DATE32, arrow.TIMESTAMP:
		return false, true
	case arrow.FLOAT32, arrow.FLOAT64:
		return true, true
	case arrow.DECIMAL128:
		return false, dt.(*arrow.Decimal128Type).Precision <= 18
	}
	return false, false
}

// boundPosition orders frame bounds relative to the current row.
func boundPosition(b vector.FrameBound) float64 {
	switch b.Kind {
	case vector.FrameUnboundedPreceding:
		return math.Inf(-1)
	case vector.FrameUnboundedFollowing:
		return math.Inf(1)
	case vector.FramePreceding:
		return -b.FloatOffset - float64(b.Months)
	case vector.FrameFollowing:
		return b.FloatOffset + float64(b.Months)
	}
	return 0
}

// frameBound converts a frame bound; offsets must be constants: integers
// for ROWS, for RANGE numbers (numeric keys), integers (dates, in days) or
// intervals (timestamps).
func frameBound(b *sql.FrameBound, ranged bool, keyType arrow.DataType) (vector.FrameBound, error) {
	out := vector.FrameBound{}
	switch b.Kind {
	case sql.UnboundedPreceding:
		out.Kind = vector.FrameUnboundedPreceding
		return out, nil
	case sql.UnboundedFollowing:
		out.Kind = vector.FrameUnboundedFollowing
		return out, nil
	case sql.CurrentRow:
		out.Kind = vector.FrameCurrentRow
		return out, nil
	case sql.OffsetPreceding:
		out.Kind = vector.FramePreceding
	default:
		out.Kind = vector.FrameFollowing
	}
	r := &resolver{sc: &scope{node: &Values{schema: arrow.NewSchema(nil, nil)}}, clause: "the window frame"}
	e, err := r.expr(b.Offset)
	if err != nil {
		return out, err
	}
	if !isConstant(e) {
		return out, errorAt(b.Offset.Position(), ErrType, "Frame bound value must be a constant, not %s.", sql.Format(b.Offset))
	}
	l, err := foldConstant(e)
	if err != nil {
		return out, errorAt(b.Offset.Position(), ErrType, "Invalid frame bound %s: %v.", sql.Format(b.Offset), err)
	}
	bad := func(want string) (vector.FrameBound, error) {
		return out, errorAt(b.Offset.Position(), ErrType, "The data type of the frame bound %s is %s; the frame needs %s.", sql.Format(b.Offset), typeOrNil(l), want)
	}
	if l.Value == nil {
		return out, errorAt(b.Offset.Position(), ErrType, "The frame bound %s must not be NULL.", sql.Format(b.Offset))
	}
	if !ranged || keyType == nil {
		if !vector.IsIntegral(l.Type) {
			return bad("an integer")
		}
		if !ranged && l.Type.ID() != arrow.INT32 {
			// Spark's ROWS frame takes an int offset, not a wider one
			// (2147483648 FOLLOWING is a bigint and refused).
			return bad("an int")
		}
		v, _ := foldConstant(castTo(l, vector.Int64))
		out.Offset = v.Value.(int64)
		out.FloatOffset = float64(out.Offset)
		return out, nil
	}
	if m, ok := l.Value.(arrow.MonthInterval); ok && (keyType.ID() == arrow.TIMESTAMP || keyType.ID() == arrow.DATE32) {
		// A year-month interval moves a date or timestamp key by calendar
		// months, no fixed distance (Spark's key + INTERVAL 'y-m' YEAR TO
		// MONTH); the window operator adds them row by row.
		out.Months = int64(m)
		return out, nil
	}
	switch keyType.ID() {
	case arrow.TIMESTAMP:
		d, ok := l.Value.(arrow.Duration)
		if !ok {
			return bad("an interval")
		}
		out.Offset, out.FloatOffset = int64(d), float64(d)
	case arrow.DATE32:
		if !vector.IsIntegral(l.Type) {
			return bad("an integer number of days")
		}
		v, _ := foldConstant(castTo(l, vector.Int64))
		out.Offset = v.Value.(int64)
		out.FloatOffset = float64(out.Offset)
	case arrow.DECIMAL128:
		// The key's unscaled values are compared: the offset counts units
		// of its scale, floor(offset * 10^scale) (a DECIMAL(10,0) key
		// moves by 1 for 1.5 FOLLOWING, as Spark's k <= c + 1.5 means).
		ks := keyType.(*arrow.Decimal128Type).Scale
		var v *big.Rat
		switch x := l.Value.(type) {
		case decimal128.Num:
			v = new(big.Rat).SetFrac(x.BigInt(), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(l.Type.(*arrow.Decimal128Type).Scale)), nil))
		default:
			if !vector.IsIntegral(l.Type) {
				return bad("a number")
			}
			i, err := foldConstant(castTo(l, vector.Int64))
			if err != nil || i.Value == nil {
				return bad("a number")
			}
			v = new(big.Rat).SetInt64(i.Value.(int64))
		}
		v.Mul(v, new(big.Rat).SetInt(new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(ks)), nil)))
		units := new(big.Int).Div(v.Num(), v.Denom()) // floor: the denominator is positive
		if !units.IsInt64() {
			return bad("an offset within the range of the order key")
		}
		out.Offset = units.Int64()
		out.FloatOffset = float64(out.Offset)
	case arrow.FLOAT32, arrow.FLOAT64:
		if !vector.IsNumeric(l.Type) && !isString(l.Type) {
			return bad("a number")
		}
		// A string ('inf') is cast to the key's type, as Spark coerces
		// the bound; NaN, which Spark orders above every number, is not
		// taken as an offset.
		v, err := foldConstant(castTo(l, vector.Float64))
		if err != nil || v.Value == nil {
			return bad("a number")
		}
		if math.IsNaN(v.Value.(float64)) {
			return out, errorAt(b.Offset.Position(), ErrUnsupported, "A NaN frame bound (%s) is not supported.", sql.Format(b.Offset))
		}
		out.FloatOffset = v.Value.(float64)
		if keyType.ID() == arrow.FLOAT32 {
			// Spark casts the offset to the key's type: a FLOAT key
			// moves by the float nearest the offset (1.1 is 1.1f).
			out.FloatOffset = float64(float32(out.FloatOffset))
		}
		out.Offset = int64(out.FloatOffset)
	default:
		if !vector.IsNumeric(l.Type) {
			return bad("a number")
		}
		if dec, ok := l.Value.(decimal128.Num); ok {
			// The frame holds the rows whose integer key k has k - c
			// within the decimal offset: for FOLLOWING d, k <= c + d,
			// and for PRECEDING d, k >= c - d, both of which mean the
			// offset floor(d) for integers (1.1 FOLLOWING is 1
			// FOLLOWING), as Spark's comparison of k with c + 1.1 gives.
			sc := l.Type.(*arrow.Decimal128Type).Scale
			f := dec.ToFloat64(sc)
			if math.Abs(f) > 1<<53 {
				return bad("an integer (the order key is an integer)")
			}
			out.Offset = int64(math.Floor(f))
			out.FloatOffset = float64(out.Offset)
			return out, nil
		}
		if !vector.IsIntegral(l.Type) {
			return bad("an integer (the order key is an integer)")
		}
		v, err := foldConstant(castTo(l, vector.Int64))
		if err != nil {
			return bad("an integer")
		}
		out.Offset = v.Value.(int64)
		out.FloatOffset = float64(out.Offset)
	}
	return out, nil
}

// knownScalar reports whether name is a scalar function of the engine.
func knownScalar(name string) bool {
	if _, err := vector.LookupFunction(name, nil); !errors.Is(err, vector.ErrUnknownFunction) {
		return true
	}
	for _, n := range specialFuncs {
		if n == name {
			return true
		}
	}
	return false
}
