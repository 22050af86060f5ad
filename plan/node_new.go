package plan

import (
	"errors"
	"fmt"
	"strconv"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
)

// WatermarkDelayKey is the field metadata key that marks a column as the
// event time and carries its watermark delay in milliseconds, as Spark's
// EventTimeWatermark.delayKey.
const WatermarkDelayKey = "spark.watermarkDelayMs"

// WatermarkDelay returns the watermark delay (ms) a field carries, if any.
func WatermarkDelay(f arrow.Field) (int64, bool) {
	if !f.HasMetadata() {
		return 0, false
	}
	i := f.Metadata.FindKey(WatermarkDelayKey)
	if i < 0 {
		return 0, false
	}
	d, err := strconv.ParseInt(f.Metadata.Values()[i], 10, 64)
	return d, err == nil
}

// EventTimeColumns lists the columns of s that carry a watermark delay.
func EventTimeColumns(s *arrow.Schema) []int {
	var out []int
	for i := 0; i < s.NumFields(); i++ {
		if _, ok := WatermarkDelay(s.Field(i)); ok {
			out = append(out, i)
		}
	}
	return out
}

// errNilInput reports a constructor called without an input node.
var errNilInput = errors.New("plan: nil input node")

// NewScan returns a Scan of table t. It checks that a streaming read is
// of a streaming table and a batch read of a batch-readable one.
func NewScan(name string, t Table, streaming bool) (*Scan, error) {
	if t == nil || t.Schema() == nil {
		return nil, fmt.Errorf("plan: table %s has no schema", vector.QuoteIdent(name))
	}
	if streaming && !t.Streaming() {
		return nil, fmt.Errorf("table %s is not a streaming source and cannot be read with STREAM: %w", backquote(name), ErrUnsupported)
	}
	if !streaming {
		if _, ok := t.(BatchTable); !ok {
			return nil, fmt.Errorf("table %s is a streaming source: read it with STREAM %s: %w", backquote(name), backquote(name), ErrUnsupported)
		}
	}
	return &Scan{Name: name, Table: t, Streaming: streaming, schema: t.Schema()}, nil
}

// Schema implements Node.
func (n *Scan) Schema() *arrow.Schema {
	if n.schema != nil {
		return n.schema
	}
	return scanSchema(n)
}

// scanSchema computes a Scan's output: the table (or table_changes)
// schema, restricted to Columns when set.
func scanSchema(n *Scan) *arrow.Schema {
	base := n.Table.Schema()
	if n.Read == ReadChanges {
		base = ChangesSchema(base)
	}
	if n.Columns == nil {
		return base
	}
	fields := make([]arrow.Field, len(n.Columns))
	for i, c := range n.Columns {
		fields[i] = base.Field(c)
	}
	md := base.Metadata()
	return arrow.NewSchema(fields, &md)
}

// tableSchema is the schema a Scan's Filters are over: the table's (or
// table_changes') columns before Columns.
func (n *Scan) tableSchema() *arrow.Schema {
	base := n.Table.Schema()
	if n.Read == ReadChanges {
		base = ChangesSchema(base)
	}
	return base
}

// withSchema returns n with its cached schema recomputed (after a change
// to Read, Columns or Filters).
func (n *Scan) withSchema() *Scan {
	n.schema = nil
	n.schema = scanSchema(n)
	return n
}

// NewValues returns a Values node of rows with the given schema; every
// row must have one value per field.
func NewValues(schema *arrow.Schema, rows [][]any) (*Values, error) {
	for i, r := range rows {
		if len(r) != schema.NumFields() {
			return nil, fmt.Errorf("plan: values row %d has %d values, want %d", i, len(r), schema.NumFields())
		}
	}
	return &Values{Rows: rows, schema: schema}, nil
}

// Schema implements Node.
func (n *Values) Schema() *arrow.Schema { return n.schema }

// Schema implements Node.
func (n *SubqueryAlias) Schema() *arrow.Schema { return n.Input.Schema() }

// NewProject returns a Project of exprs over input.
func NewProject(input Node, exprs []NamedExpr) (*Project, error) {
	if input == nil {
		return nil, errNilInput
	}
	p := &Project{Input: input, Exprs: exprs}
	s, err := projectSchema(input.Schema(), input, exprs)
	if err != nil {
		return nil, err
	}
	p.schema = s
	return p, nil
}

// projectSchema is the schema of exprs over in. With input (the node
// whose schema in is) set, a column derived from an event-time column by
// an order-keeping shift carries WatermarkShiftKey (watermark_derived.go);
// without it (aggregation keys: an aggregation emits rows long after
// their input arrived) no column does.
func projectSchema(in *arrow.Schema, input Node, exprs []NamedExpr) (*arrow.Schema, error) {
	fields := make([]arrow.Field, len(exprs))
	for i, ne := range exprs {
		if ne.Expr == nil {
			return nil, fmt.Errorf("plan: project: expression %d (%s) is nil", i, ne.Name)
		}
		fields[i] = arrow.Field{Name: ne.Name, Type: ne.Expr.DataType(), Nullable: ne.Expr.Nullable()}
		// A bare column keeps its metadata (the watermark marker), as
		// Spark's Alias of an attribute does.
		c, isCol := ne.Expr.(*ColumnRef)
		switch {
		case isCol && c.Index >= 0 && c.Index < in.NumFields():
			fields[i].Metadata = in.Field(c.Index).Metadata
			if input == nil {
				fields[i].Metadata = withoutKey(fields[i].Metadata, WatermarkShiftKey)
			}
			if c.dt != dtFieldsOfField(in.Field(c.Index)) {
				// A union's input widened to the union's fields (or a
				// reference built without them: unknown).
				fields[i].Metadata = withDTFields(fields[i].Metadata, c.dt)
			}
		case !isCol && input != nil:
			fields[i].Metadata = derivedMetadata(input, ne.Expr)
		}
		if d, ok := windowTimeDelay(in, ne.Expr); ok {
			fields[i].Metadata = arrow.NewMetadata([]string{WatermarkDelayKey}, []string{strconv.FormatInt(d, 10)})
		}
		if !isCol {
			fields[i].Metadata = withDTFields(fields[i].Metadata, dtFieldsOf(ne.Expr))
		}
	}
	return arrow.NewSchema(fields, nil), nil
}

// Schema implements Node.
func (n *Project) Schema() *arrow.Schema {
	if n.schema == nil {
		n.schema, _ = projectSchema(n.Input.Schema(), n.Input, n.Exprs)
	}
	return n.schema
}

// NewFilter returns a Filter of input by cond, which must be boolean.
func NewFilter(input Node, cond Expr) (*Filter, error) {
	if input == nil {
		return nil, errNilInput
	}
	if cond == nil || cond.DataType().ID() != arrow.BOOL && cond.DataType().ID() != arrow.NULL {
		return nil, fmt.Errorf("filter expression %s of type %s is not a boolean: %w", exprOrNil(cond), typeOrNil(cond), ErrType)
	}
	return &Filter{Input: input, Cond: cond}, nil
}

// Schema implements Node.
func (n *Filter) Schema() *arrow.Schema { return n.Input.Schema() }

// NewAggregate returns an Aggregate of input.
func NewAggregate(input Node, groupBy []NamedExpr, aggs []AggregateExpr) (*Aggregate, error) {
	if input == nil {
		return nil, errNilInput
	}
	a := &Aggregate{Input: input, GroupBy: groupBy, Aggs: aggs}
	s, err := aggregateSchema(input.Schema(), groupBy, aggs)
	if err != nil {
		return nil, err
	}
	a.schema = s
	return a, nil
}

func aggregateSchema(in *arrow.Schema, groupBy []NamedExpr, aggs []AggregateExpr) (*arrow.Schema, error) {
	keys, err := projectSchema(in, nil, groupBy)
	if err != nil {
		return nil, err
	}
	fields := keys.Fields()
	for i := range fields {
		// The hash aggregate outputs dictionary-encoded keys decoded (it
		// groups by value), so the plan must not promise a dictionary.
		fields[i].Type = vector.Unwrap(fields[i].Type)
	}
	for i, a := range aggs {
		if a.Type == nil {
			return nil, fmt.Errorf("plan: aggregate %d (%s) has no type", i, a.Name)
		}
		null := a.Func != vector.AggCount && a.Func != vector.AggCountStar && a.Func != vector.AggApproxCountDistinct
		fields = append(fields, arrow.Field{Name: a.Name, Type: a.Type, Nullable: null})
	}
	return arrow.NewSchema(fields, nil), nil
}

// Schema implements Node.
func (n *Aggregate) Schema() *arrow.Schema {
	if n.schema == nil {
		n.schema, _ = aggregateSchema(n.Input.Schema(), n.GroupBy, n.Aggs)
	}
	return n.schema
}

// NewJoin returns a Join; cond (nil for none) must be boolean over the
// left columns followed by the right ones.
func NewJoin(left, right Node, typ JoinType, cond Expr) (*Join, error) {
	if left == nil || right == nil {
		return nil, errNilInput
	}
	if typ < InnerJoin || typ > LeftAntiJoin {
		return nil, fmt.Errorf("plan: unknown join type %d", int(typ))
	}
	if cond != nil && cond.DataType().ID() != arrow.BOOL && cond.DataType().ID() != arrow.NULL {
		return nil, fmt.Errorf("join condition %s of type %s is not a boolean: %w", cond, vector.TypeName(cond.DataType()), ErrType)
	}
	j := &Join{Left: left, Right: right, Type: typ, Cond: cond}
	j.schema = joinSchema(left.Schema(), right.Schema(), typ)
	return j, nil
}

func joinSchema(l, r *arrow.Schema, typ JoinType) *arrow.Schema {
	if typ == LeftSemiJoin || typ == LeftAntiJoin {
		return l
	}
	fields := make([]arrow.Field, 0, l.NumFields()+r.NumFields())
	for _, f := range l.Fields() {
		f.Nullable = f.Nullable || typ == RightOuterJoin || typ == FullOuterJoin
		fields = append(fields, f)
	}
	for _, f := range r.Fields() {
		f.Nullable = f.Nullable || typ == LeftOuterJoin || typ == FullOuterJoin
		fields = append(fields, f)
	}
	return arrow.NewSchema(fields, nil)
}

// joinedSchema is what a join condition sees: left ++ right.
func joinedSchema(l, r *arrow.Schema) *arrow.Schema {
	return arrow.NewSchema(append(append([]arrow.Field(nil), l.Fields()...), r.Fields()...), nil)
}

// Schema implements Node.
func (n *Join) Schema() *arrow.Schema {
	if n.schema == nil {
		n.schema = joinSchema(n.Left.Schema(), n.Right.Schema(), n.Type)
	}
	return n.schema
}

// NewUnion returns the Union of inputs, which must have the same number
// of columns and equal types (the analyzer inserts casts first).
func NewUnion(inputs ...Node) (*Union, error) {
	if len(inputs) == 0 {
		return nil, errors.New("plan: union of nothing")
	}
	for _, in := range inputs {
		if in == nil {
			return nil, errNilInput
		}
	}
	s, err := unionSchema(inputs)
	if err != nil {
		return nil, err
	}
	return &Union{Inputs: inputs, schema: s}, nil
}

func unionSchema(inputs []Node) (*arrow.Schema, error) {
	first := inputs[0].Schema()
	fields := append([]arrow.Field(nil), first.Fields()...)
	for i, in := range inputs[1:] {
		s := in.Schema()
		if s.NumFields() != len(fields) {
			return nil, fmt.Errorf("Union can only be performed on tables with the same number of columns, but the first table has %d columns and the %s table has %d columns: %w",
				len(fields), ordinalWord(i+2), s.NumFields(), ErrType)
		}
		for c, f := range s.Fields() {
			if !arrow.TypeEqual(vector.Unwrap(f.Type), vector.Unwrap(fields[c].Type)) {
				return nil, fmt.Errorf("Union can only be performed on tables with compatible column types: column %d (%s) of the %s table is %s, not %s: %w",
					c+1, vector.QuoteIdent(fields[c].Name), ordinalWord(i+2), vector.TypeName(f.Type), vector.TypeName(fields[c].Type), ErrType)
			}
			fields[c].Nullable = fields[c].Nullable || f.Nullable
			// Spark widens a day-time interval column of the union to
			// span every input's fields; keep the fields only where all
			// inputs agree (else they are unknown).
			if dtFieldsOfField(fields[c]) != dtFieldsOfField(f) {
				fields[c].Metadata = withDTFields(fields[c].Metadata, 0)
			}
		}
	}
	return arrow.NewSchema(fields, nil), nil
}

func ordinalWord(i int) string {
	switch i {
	case 1:
		return "first"
	case 2:
		return "second"
	case 3:
		return "third"
	}
	return fmt.Sprintf("%dth", i)
}

// Schema implements Node.
func (n *Union) Schema() *arrow.Schema {
	if n.schema == nil {
		n.schema, _ = unionSchema(n.Inputs)
	}
	return n.schema
}

// Schema implements Node.
func (n *Limit) Schema() *arrow.Schema { return n.Input.Schema() }

// Schema implements Node.
func (n *Sort) Schema() *arrow.Schema { return n.Input.Schema() }

// Schema implements Node.
func (n *Deduplicate) Schema() *arrow.Schema { return n.Input.Schema() }

// NewEventTimeWatermark returns the watermark node on column col of
// input, which must be a timestamp (or a window struct); delayMs must not
// be negative.
func NewEventTimeWatermark(input Node, col int, delayMs int64) (*EventTimeWatermark, error) {
	if input == nil {
		return nil, errNilInput
	}
	in := input.Schema()
	if col < 0 || col >= in.NumFields() {
		return nil, fmt.Errorf("plan: watermark column %d out of %d columns", col, in.NumFields())
	}
	f := in.Field(col)
	if !isEventTimeType(f.Type) {
		return nil, fmt.Errorf("Event time must be defined on a window or a timestamp, but %s is of type %s: %w", backquote(f.Name), vector.TypeName(f.Type), ErrType)
	}
	if delayMs < 0 {
		return nil, fmt.Errorf("delay threshold (%d ms) for watermark on %s should not be negative: %w", delayMs, vector.QuoteIdent(f.Name), ErrType)
	}
	w := &EventTimeWatermark{Input: input, Column: col, DelayMs: delayMs}
	w.schema = watermarkSchema(in, col, delayMs)
	return w, nil
}

func isEventTimeType(dt arrow.DataType) bool {
	return arrow.TypeEqual(dt, vector.Timestamp) || arrow.TypeEqual(dt, vector.WindowType)
}

func watermarkSchema(in *arrow.Schema, col int, delayMs int64) *arrow.Schema {
	fields := append([]arrow.Field(nil), in.Fields()...)
	for i := range fields {
		f := &fields[i]
		_, has := WatermarkBound(*f)
		if i != col && !has {
			continue
		}
		var keys, vals []string
		if f.HasMetadata() {
			for k, key := range f.Metadata.Keys() {
				if key != WatermarkDelayKey && key != WatermarkShiftKey {
					keys = append(keys, key)
					vals = append(vals, f.Metadata.Values()[k])
				}
			}
		}
		if i == col {
			keys = append(keys, WatermarkDelayKey)
			vals = append(vals, strconv.FormatInt(delayMs, 10))
		}
		f.Metadata = arrow.NewMetadata(keys, vals)
	}
	md := in.Metadata()
	return arrow.NewSchema(fields, &md)
}

// Schema implements Node.
func (n *EventTimeWatermark) Schema() *arrow.Schema {
	if n.schema == nil {
		n.schema = watermarkSchema(n.Input.Schema(), n.Column, n.DelayMs)
	}
	return n.schema
}

// NewWindowAssign returns a WindowAssign over input, checking the
// durations as Spark does.
func NewWindowAssign(input Node, timeExpr Expr, width, slide, start int64, name string) (*WindowAssign, error) {
	if input == nil {
		return nil, errNilInput
	}
	if timeExpr == nil || !arrow.TypeEqual(timeExpr.DataType(), vector.Timestamp) {
		return nil, fmt.Errorf("the time column of window(%s) must be a timestamp, not %s: %w", exprOrNil(timeExpr), typeOrNil(timeExpr), ErrType)
	}
	if msg := vector.WindowSpecError(width, slide, start); msg != "" {
		return nil, fmt.Errorf("%s: %w", msg, ErrType)
	}
	w := &WindowAssign{Input: input, Time: timeExpr, Width: width, Slide: slide, Start: start, Name: name}
	w.schema = appendSchema(input.Schema(), timeExpr, name, vector.WindowType)
	return w, nil
}

// appendSchema is in plus a struct column name of type dt that carries the
// metadata of timeExpr when it is a bare column (the watermark marker),
// as vector's WindowAssign does.
func appendSchema(in *arrow.Schema, timeExpr Expr, name string, dt arrow.DataType) *arrow.Schema {
	f := arrow.Field{Name: name, Type: dt, Nullable: true}
	if c, ok := timeExpr.(*ColumnRef); ok && c.Index >= 0 && c.Index < in.NumFields() {
		f.Metadata = in.Field(c.Index).Metadata
	}
	if c, ok := timeExpr.(*Call); ok && c.Func == "window_time" && len(c.Args) == 1 {
		if r, ok := c.Args[0].(*ColumnRef); ok && r.Index >= 0 && r.Index < in.NumFields() {
			f.Metadata = in.Field(r.Index).Metadata
		}
	}
	md := in.Metadata()
	return arrow.NewSchema(append(append([]arrow.Field(nil), in.Fields()...), f), &md)
}

// Schema implements Node.
func (n *WindowAssign) Schema() *arrow.Schema {
	if n.schema == nil {
		n.schema = appendSchema(n.Input.Schema(), n.Time, n.Name, vector.WindowType)
	}
	return n.schema
}

// NewSessionWindow returns a SessionWindow over input; gap (µs) must be
// positive.
func NewSessionWindow(input Node, timeExpr Expr, gap int64, name string) (*SessionWindow, error) {
	if input == nil {
		return nil, errNilInput
	}
	if timeExpr == nil || !arrow.TypeEqual(timeExpr.DataType(), vector.Timestamp) {
		return nil, fmt.Errorf("the time column of session_window(%s) must be a timestamp, not %s: %w", exprOrNil(timeExpr), typeOrNil(timeExpr), ErrType)
	}
	if gap <= 0 {
		return nil, fmt.Errorf("The session window gap duration (%d) must be greater than 0: %w", gap, ErrType)
	}
	s := &SessionWindow{Input: input, Time: timeExpr, Gap: gap, Name: name}
	s.schema = appendSchema(input.Schema(), timeExpr, name, vector.WindowType)
	return s, nil
}

// NewSessionWindowExpr returns a SessionWindow over input whose gap is
// the row's value of gap, an interval or string expression (dynamic gap
// duration).
func NewSessionWindowExpr(input Node, timeExpr, gap Expr, name string) (*SessionWindow, error) {
	if input == nil {
		return nil, errNilInput
	}
	if timeExpr == nil || !arrow.TypeEqual(timeExpr.DataType(), vector.Timestamp) {
		return nil, fmt.Errorf("the time column of session_window(%s) must be a timestamp, not %s: %w", exprOrNil(timeExpr), typeOrNil(timeExpr), ErrType)
	}
	if gap == nil || !isInterval(gap) && !isString(gap.DataType()) {
		return nil, fmt.Errorf("the gap duration of session_window(%s, %s) must be an interval or a string, not %s: %w", exprOrNil(timeExpr), exprOrNil(gap), typeOrNil(gap), ErrType)
	}
	s := &SessionWindow{Input: input, Time: timeExpr, GapExpr: gap, Name: name}
	s.schema = appendSchema(input.Schema(), timeExpr, name, vector.WindowType)
	return s, nil
}

// Schema implements Node.
func (n *SessionWindow) Schema() *arrow.Schema {
	if n.schema == nil {
		n.schema = appendSchema(n.Input.Schema(), n.Time, n.Name, vector.WindowType)
	}
	return n.schema
}

// NewExplode returns an Explode of the array expr over input.
func NewExplode(input Node, expr Expr, name string, outer bool) (*Explode, error) {
	if input == nil {
		return nil, errNilInput
	}
	lt, ok := typeOrNilType(expr).(*arrow.ListType)
	if !ok {
		return nil, fmt.Errorf("explode(%s) needs an array, not %s: %w", exprOrNil(expr), typeOrNil(expr), ErrType)
	}
	e := &Explode{Input: input, Expr: expr, Name: name, Outer: outer}
	e.schema = explodeSchema(input.Schema(), name, lt)
	return e, nil
}

func explodeSchema(in *arrow.Schema, name string, lt *arrow.ListType) *arrow.Schema {
	f := arrow.Field{Name: name, Type: lt.Elem(), Nullable: true}
	return arrow.NewSchema(append(append([]arrow.Field(nil), in.Fields()...), f), nil)
}

// Schema implements Node.
func (n *Explode) Schema() *arrow.Schema {
	if n.schema == nil {
		if lt, ok := typeOrNilType(n.Expr).(*arrow.ListType); ok {
			n.schema = explodeSchema(n.Input.Schema(), n.Name, lt)
		}
	}
	return n.schema
}

// Schema implements Node.
func (n *FlatMapGroupsWithState) Schema() *arrow.Schema { return n.OutputSchema }

func exprOrNil(e Expr) string {
	if e == nil {
		return "<nil>"
	}
	return e.String()
}

func typeOrNilType(e Expr) arrow.DataType {
	if e == nil {
		return arrow.Null
	}
	return e.DataType()
}

func typeOrNil(e Expr) string { return vector.TypeName(typeOrNilType(e)) }

// windowTimeDelay reports the watermark delay of window_time(w) over an
// event-time window column w of in: Spark's ResolveWindowTime gives the
// window_time column the window's metadata (minus the window marker), so
// it is an event-time column itself; a deduplication keyed by it (after a
// windowed aggregation) evicts by it. A window not marked: none.
func windowTimeDelay(in *arrow.Schema, e Expr) (int64, bool) {
	c, ok := e.(*Call)
	if !ok || c.Func != "window_time" || len(c.Args) != 1 {
		return 0, false
	}
	ref, ok := c.Args[0].(*ColumnRef)
	if !ok || ref.Index < 0 || ref.Index >= in.NumFields() {
		return 0, false
	}
	return WatermarkDelay(in.Field(ref.Index))
}
