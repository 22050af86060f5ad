package plan

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// BuildOperator builds the vector operator of one node over the operators
// already built for its children (in Children order), which it owns on
// success (on error the caller keeps and closes them). The result's schema
// equals node.Schema() (a dictionary column may stay dictionary-encoded).
//
// Every node is built with batch semantics: an Aggregate is a hash
// aggregation of its input, a Deduplicate keeps the first row per key, an
// EventTimeWatermark passes rows through, a Limit limits this input. The
// streaming engine composes BuildOperator for the stateless nodes of an
// epoch's plan and builds the stateful ones itself (streaming aggregation,
// dedup, stream-stream join, watermark statistics, flatMapGroupsWithState,
// session windows). A streaming Scan has no batch operator: the engine
// supplies the epoch's data (see BuildScanOn).
func BuildOperator(ctx context.Context, mem memory.Allocator, node Node, children []vector.Operator, env *Env) (vector.Operator, error) {
	if len(children) != len(node.Children()) {
		return nil, fmt.Errorf("plan: %s needs %d input operators, got %d", node, len(node.Children()), len(children))
	}
	op, err := buildOne(ctx, vector.ForOperator(mem, operatorName(node)), node, children, env)
	var re *ReadError
	if errors.As(err, &re) {
		return nil, err // complete for the user: no operator internals
	}
	if err != nil {
		return nil, fmt.Errorf("building %s: %w", node, err)
	}
	return relabel(op, node.Schema()), nil
}

// operatorName names a node's operator in memory-limit errors.
func operatorName(node Node) string {
	switch n := node.(type) {
	case *Aggregate:
		return "HashAggregate"
	case *Join:
		if len(n.Children()) == 2 && n.Cond == nil {
			return "HashJoin (cross join)"
		}
		return "HashJoin"
	case *Sort:
		return "Sort"
	case *Deduplicate:
		return "Deduplicate (DISTINCT)"
	case *WindowAssign:
		return "WindowAssign"
	}
	return strings.TrimPrefix(fmt.Sprintf("%T", node), "*plan.")
}

func buildOne(ctx context.Context, mem memory.Allocator, node Node, children []vector.Operator, env *Env) (vector.Operator, error) {
	switch n := node.(type) {
	case *Scan:
		return buildScan(ctx, mem, n, env)
	case *Values:
		return buildValues(mem, n)
	case *Range:
		return newRangeOp(mem, n), nil
	case *SubqueryAlias, *EventTimeWatermark:
		return children[0], nil
	case *Project:
		exprs, err := namedVector(n.Exprs, env)
		if err != nil {
			return nil, err
		}
		return vector.NewProject(mem, children[0], exprs)
	case *Filter:
		c, err := ToVectorExpr(n.Cond, env)
		if err != nil {
			return nil, err
		}
		return vector.NewFilter(mem, children[0], c)
	case *Aggregate:
		spec, err := AggregateSpecFor(n, env)
		if err != nil {
			return nil, err
		}
		return vector.NewHashAggregate(mem, children[0], spec)
	case *Join:
		spec, err := JoinSpecFor(n, env)
		if err != nil {
			return nil, err
		}
		return vector.NewHashJoin(mem, children[0], children[1], spec)
	case *Union:
		return vector.NewUnion(mem, children...)
	case *Limit:
		return vector.NewLimitOffset(mem, children[0], n.N, n.Offset)
	case *Sort:
		keys, err := sortKeys(n.Keys, env)
		if err != nil {
			return nil, err
		}
		return vector.NewSort(mem, children[0], keys)
	case *Deduplicate:
		return buildDedup(mem, n, children[0])
	case *WindowAssign:
		t, err := ToVectorExpr(n.Time, env)
		if err != nil {
			return nil, err
		}
		return vector.NewWindowAssign(mem, children[0], t, n.Width, n.Slide, n.Start, n.Name)
	case *Explode:
		x, err := ToVectorExpr(n.Expr, env)
		if err != nil {
			return nil, err
		}
		if n.Outer {
			return vector.NewExplodeOuter(mem, children[0], x, n.Name, nil)
		}
		return vector.NewExplode(mem, children[0], x, n.Name, nil)
	case *Window:
		spec, err := windowSpecFor(n, env)
		if err != nil {
			return nil, err
		}
		return vector.NewWindowOp(mem, children[0], spec)
	case *joinInput:
		return nil, fmt.Errorf("plan: join input pseudo node")
	}
	// What is left (session windows, flatMapGroupsWithState) is planned by
	// the streaming engine's stateful planner only.
	return nil, fmt.Errorf("%s is supported only in a streaming query (the streaming engine plans it): %w", node, ErrUnsupported)
}

func namedVector(es []NamedExpr, env *Env) ([]vector.NamedExpr, error) {
	out := make([]vector.NamedExpr, len(es))
	for i, e := range es {
		v, err := ToVectorExpr(e.Expr, env)
		if err != nil {
			return nil, err
		}
		out[i] = vector.NamedExpr{Name: e.Name, Expr: v}
	}
	return out, nil
}

func sortKeys(keys []SortKey, env *Env) ([]vector.SortKey, error) {
	out := make([]vector.SortKey, len(keys))
	for i, k := range keys {
		v, err := ToVectorExpr(k.Expr, env)
		if err != nil {
			return nil, err
		}
		out[i] = vector.SortKey{Expr: v, Descending: k.Desc, Nulls: k.Nulls}
	}
	return out, nil
}

// AggregateSpecFor returns the vector hash-aggregation spec of an
// Aggregate (in AggComplete mode; the streaming engine sets the mode it
// needs). Key and aggregate names are the node's output names.
func AggregateSpecFor(a *Aggregate, env *Env) (vector.AggregateSpec, error) {
	keys, err := namedVector(a.GroupBy, env)
	if err != nil {
		return vector.AggregateSpec{}, err
	}
	calls := make([]vector.AggregateCall, len(a.Aggs))
	for i, g := range a.Aggs {
		args := make([]vector.Expr, len(g.Args))
		for j, x := range g.Args {
			if args[j], err = ToVectorExpr(x, env); err != nil {
				return vector.AggregateSpec{}, err
			}
		}
		calls[i] = vector.AggregateCall{Func: g.Func, Args: args, Distinct: g.Distinct, IgnoreNulls: g.IgnoreNulls, Name: g.Name}
	}
	return vector.AggregateSpec{GroupBy: keys, Aggregates: calls, Mode: vector.AggComplete}, nil
}

// JoinSpecFor splits a Join's condition into equi-join keys (conjuncts
// l = r or l <=> r with one side over each input) and a residual over the
// joined columns, as vector's hash join takes them. Keys of different
// numeric types are cast to their common type.
func JoinSpecFor(j *Join, env *Env) (vector.JoinSpec, error) {
	lk, rk, nullSafe, residual := EquiJoinKeys(j)
	spec := vector.JoinSpec{Type: vector.JoinType(j.Type), NullSafe: nullSafe}
	for i := range lk {
		l, r := lk[i], rk[i]
		lt, rt := vector.Unwrap(l.DataType()), vector.Unwrap(r.DataType())
		if !arrow.TypeEqual(lt, rt) {
			switch {
			case vector.IsIntegral(lt) && vector.IsIntegral(rt):
				// The hash join matches int and bigint keys as they are,
				// but not tinyint or smallint (columns of files): widen
				// those, exactly.
				if narrowInt(lt) || narrowInt(rt) {
					t := vector.Int32
					if lt.ID() == arrow.INT64 || rt.ID() == arrow.INT64 {
						t = vector.Int64
					}
					l, r = castTo(l, t), castTo(r, t)
				}
			default:
				if t, ok := vector.CommonType(lt, rt); ok {
					l, r = castTo(l, t), castTo(r, t)
				}
			}
		}
		lv, err := ToVectorExpr(l, env)
		if err != nil {
			return spec, err
		}
		rv, err := ToVectorExpr(r, env)
		if err != nil {
			return spec, err
		}
		spec.LeftKeys = append(spec.LeftKeys, lv)
		spec.RightKeys = append(spec.RightKeys, rv)
	}
	if residual != nil {
		r, err := ToVectorExpr(residual, env)
		if err != nil {
			return spec, err
		}
		spec.Residual = r
	}
	return spec, nil
}

func narrowInt(t arrow.DataType) bool { return t.ID() == arrow.INT8 || t.ID() == arrow.INT16 }

// EquiJoinKeys extracts a join's equi-join keys: left keys over the left
// input, right keys over the right input (ordinals relative to it),
// null-safe flags, and the rest of the condition over left ++ right (nil
// when nothing is left).
func EquiJoinKeys(j *Join) (left, right []Expr, nullSafe []bool, residual Expr) {
	nl := j.Left.Schema().NumFields()
	var rest []Expr
	for _, c := range splitConjuncts(j.Cond) {
		call, ok := c.(*Call)
		if ok && (call.Func == "=" || call.Func == "<=>") {
			a, b := call.Args[0], call.Args[1]
			sa, sb := side(a, nl), side(b, nl)
			if sa == 1 && sb == 2 || sa == 2 && sb == 1 {
				if sa == 2 {
					a, b = b, a
				}
				left = append(left, a)
				right = append(right, shiftColumns(b, -nl))
				nullSafe = append(nullSafe, call.Func == "<=>")
				continue
			}
		}
		rest = append(rest, c)
	}
	residual = conjoin(rest)
	return left, right, nullSafe, residual
}

// side reports which join input e reads: 1 left only, 2 right only, 0
// none, 3 both.
func side(e Expr, nl int) int {
	s := 0
	for _, c := range Columns(e) {
		if c < nl {
			s |= 1
		} else {
			s |= 2
		}
	}
	return s
}

// shiftColumns moves every column reference of e by delta.
func shiftColumns(e Expr, delta int) Expr {
	out, _ := Transform(e, func(x Expr) (Expr, error) {
		if c, ok := x.(*ColumnRef); ok {
			return shift(c, delta), nil
		}
		return x, nil
	})
	return out
}

// conjoin ANDs expressions together (nil for none).
func conjoin(es []Expr) Expr {
	var out Expr
	for _, e := range es {
		if out == nil {
			out = e
		} else {
			out = mustCall("and", out, e)
		}
	}
	return out
}

// BuildScanOn applies what the optimizer pushed into a scan (filters,
// column selection) to raw, the operator that reads the scan's table or
// an epoch of its source. It takes ownership of raw: on error raw is
// closed.
func BuildScanOn(mem memory.Allocator, s *Scan, raw vector.Operator, env *Env) (vector.Operator, error) {
	in := raw.Schema()
	for _, c := range s.Columns {
		if c < 0 || c >= in.NumFields() {
			raw.Close()
			return nil, fmt.Errorf("plan: scan column %d out of %d", c, in.NumFields())
		}
	}
	op := raw
	if len(s.Filters) > 0 {
		c, err := ToVectorExpr(conjoin(s.Filters), env)
		if err != nil {
			raw.Close()
			return nil, err
		}
		f, err := vector.NewFilter(mem, op, c)
		if err != nil {
			raw.Close()
			return nil, err
		}
		op = f
	}
	if s.Columns != nil {
		exprs := make([]vector.NamedExpr, len(s.Columns))
		for i, c := range s.Columns {
			exprs[i] = vector.NamedExpr{Name: in.Field(c).Name, Expr: &vector.ColumnAt{Index: c, Name: in.Field(c).Name}}
		}
		p, err := vector.NewProject(mem, op, exprs)
		if err != nil {
			op.Close()
			return nil, err
		}
		op = p
	}
	return op, nil
}

func buildScan(ctx context.Context, mem memory.Allocator, s *Scan, env *Env) (vector.Operator, error) {
	if s.Streaming {
		return nil, fmt.Errorf("the streaming scan of %s is supplied by the streaming engine: %w", vector.QuoteIdent(s.Name), ErrUnsupported)
	}
	var raw vector.Operator
	var err error
	switch s.Read {
	case ReadVersion:
		t, ok := s.Table.(VersionedTable)
		if !ok {
			return nil, fmt.Errorf("table %s does not support VERSION AS OF: %w", vector.QuoteIdent(s.Name), ErrUnsupported)
		}
		raw, err = t.ScanVersion(ctx, mem, s.Version)
	case ReadChanges:
		t, ok := s.Table.(ChangesTable)
		if !ok {
			return nil, fmt.Errorf("table %s does not support table_changes: %w", vector.QuoteIdent(s.Name), ErrUnsupported)
		}
		raw, err = t.ScanChanges(ctx, mem, s.From, s.To)
	default:
		t, ok := s.Table.(BatchTable)
		if !ok {
			return nil, fmt.Errorf("table %s cannot be read as a batch: %w", vector.QuoteIdent(s.Name), ErrUnsupported)
		}
		raw, err = t.Scan(ctx, mem)
	}
	if err != nil {
		return nil, &ReadError{Table: s.Name, Err: err}
	}
	// A batch query's allocator may borrow the table's records for the
	// length of the query (vector/borrow.go), so that no operator's
	// unwinding leaves one retained.
	return BuildScanOn(mem, s, vector.BorrowScan(mem, raw), env)
}

func buildValues(mem memory.Allocator, v *Values) (vector.Operator, error) {
	s := v.Schema()
	if len(v.Rows) == 0 {
		return vector.NewScan(s)
	}
	cols := make([]arrow.Array, s.NumFields())
	defer func() {
		for _, c := range cols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for c, f := range s.Fields() {
		b := array.NewBuilder(mem, f.Type)
		for _, r := range v.Rows {
			if err := vector.AppendValue(b, r[c]); err != nil {
				b.Release()
				return nil, err
			}
		}
		cols[c] = b.NewArray()
		b.Release()
	}
	rec := array.NewRecord(s, cols, int64(len(v.Rows)))
	defer rec.Release()
	return vector.NewScan(s, rec)
}

// buildDedup keeps the first row of each key (batch dropDuplicates) as a
// hash aggregation: the keys, and first() of every other column, put back
// in input order.
func buildDedup(mem memory.Allocator, d *Deduplicate, child vector.Operator) (vector.Operator, error) {
	in := d.Input.Schema()
	isKey := make([]bool, in.NumFields())
	keys := d.Keys
	if len(keys) == 0 {
		keys = make([]int, in.NumFields())
		for i := range keys {
			keys[i] = i
		}
	}
	var spec vector.AggregateSpec
	pos := make([]int, in.NumFields())
	for _, k := range keys {
		if isKey[k] {
			continue
		}
		isKey[k] = true
		pos[k] = len(spec.GroupBy)
		spec.GroupBy = append(spec.GroupBy, vector.NamedExpr{Name: in.Field(k).Name, Expr: &vector.ColumnAt{Index: k, Name: in.Field(k).Name}})
	}
	for i, f := range in.Fields() {
		if isKey[i] {
			continue
		}
		pos[i] = -1 - len(spec.Aggregates)
		spec.Aggregates = append(spec.Aggregates, vector.AggregateCall{Func: vector.AggFirst,
			Args: []vector.Expr{&vector.ColumnAt{Index: i, Name: f.Name}}, Name: fmt.Sprintf("_c%d", i)})
	}
	agg, err := vector.NewHashAggregate(mem, child, spec)
	if err != nil {
		return nil, err
	}
	nk := len(spec.GroupBy)
	exprs := make([]vector.NamedExpr, in.NumFields())
	for i, f := range in.Fields() {
		idx := pos[i]
		if idx < 0 {
			idx = nk + (-1 - idx)
		}
		exprs[i] = vector.NamedExpr{Name: f.Name, Expr: &vector.ColumnAt{Index: idx, Name: f.Name}}
	}
	p, err := vector.NewProject(mem, agg, exprs)
	if err != nil {
		agg.Close()
		return nil, err
	}
	return p, nil
}

// Execute runs a batch plan: it builds the operator tree bottom-up with
// BuildOperator (fusing ORDER BY + LIMIT into a top-N) and returns the
// root, which the caller pulls and closes. A plan that reads a stream is
// rejected (CheckBatch). env may be nil; current_timestamp() is then the
// time of the call.
func Execute(ctx context.Context, mem memory.Allocator, node Node, env *Env) (vector.Operator, error) {
	if err := CheckBatch(node); err != nil {
		return nil, err
	}
	if env == nil || env.BatchTimestamp.IsZero() {
		e := Env{}
		if env != nil {
			e = *env
		}
		e.BatchTimestamp = nowFunc()
		env = &e
	}
	return BuildTree(ctx, mem, node, env, nil)
}

// LeafFunc supplies the operator of a Scan (the epoch's data of a
// streaming source, say); returning (nil, nil) builds the scan as a batch
// read of its table.
type LeafFunc func(s *Scan) (vector.Operator, error)

// BuildTree builds the operator tree of node bottom-up with BuildOperator,
// taking the operators of scans from leaf (when not nil) and fusing ORDER
// BY + LIMIT into a top-N. Pushed scan filters and column selections are
// applied to what leaf returns (BuildScanOn). On error everything built so
// far is closed.
func BuildTree(ctx context.Context, mem memory.Allocator, node Node, env *Env, leaf LeafFunc) (vector.Operator, error) {
	if s, ok := node.(*Scan); ok && leaf != nil {
		raw, err := leaf(s)
		if err != nil {
			return nil, err
		}
		if raw != nil {
			op, err := BuildScanOn(mem, s, raw, env)
			if err != nil {
				return nil, err
			}
			return relabel(op, s.Schema()), nil
		}
	}
	if l, ok := node.(*Limit); ok && l.Offset == 0 {
		if s, ok := l.Input.(*Sort); ok {
			child, err := BuildTree(ctx, mem, s.Input, env, leaf)
			if err != nil {
				return nil, err
			}
			keys, err := sortKeys(s.Keys, env)
			if err == nil {
				var op vector.Operator
				if op, err = vector.NewTopN(vector.ForOperator(mem, "Sort (top-N)"), child, keys, l.N); err == nil {
					return relabel(op, node.Schema()), nil
				}
			}
			child.Close()
			return nil, fmt.Errorf("building %s: %w", node, err)
		}
	}
	kids := node.Children()
	built := make([]vector.Operator, 0, len(kids))
	for _, k := range kids {
		op, err := BuildTree(ctx, mem, k, env, leaf)
		if err != nil {
			closeAll(built)
			return nil, err
		}
		built = append(built, op)
	}
	op, err := BuildOperator(ctx, mem, node, built, env)
	if err != nil {
		closeAll(built)
		return nil, err
	}
	return op, nil
}

func closeAll(ops []vector.Operator) {
	for _, op := range ops {
		op.Close()
	}
}

// relabel gives op's records the logical schema s (names, nullability,
// metadata) when the types agree, so that what BuildOperator returns
// matches the plan; otherwise op is returned unchanged.
func relabel(op vector.Operator, s *arrow.Schema) vector.Operator {
	have := op.Schema()
	if schemasEqual(have, s) {
		return op
	}
	if have.NumFields() != s.NumFields() {
		return op
	}
	for i := range s.Fields() {
		if !arrow.TypeEqual(have.Field(i).Type, s.Field(i).Type) {
			return op
		}
	}
	if r, ok := op.(*relabeled); ok {
		op = r.input
	}
	return &relabeled{input: op, schema: s}
}

// SchemasEqual reports whether a and b are equal as arrow's Schema.Equal
// says (names, types, nullability, metadata), without allocating for
// parameterless types: the streaming engine compares an epoch's input
// with the schema its compiled operators were bound to.
func SchemasEqual(a, b *arrow.Schema) bool { return schemasEqual(a, b) }

// schemasEqual is arrow's Schema.Equal (every field's name, type,
// nullability and metadata; the endianness) without its cost for the
// common case: relabel runs for every node of every streaming epoch, and
// arrow.TypeEqual compares even an int64 with reflect.DeepEqual
// (allocating). A type without parameters is equal to another of its
// ID; the others are left to arrow.TypeEqual.
func schemasEqual(a, b *arrow.Schema) bool {
	if a == b {
		return true
	}
	if a.NumFields() != b.NumFields() || a.Endianness() != b.Endianness() {
		return false
	}
	for i := range a.NumFields() {
		fa, fb := a.Field(i), b.Field(i)
		if fa.Name != fb.Name || fa.Nullable != fb.Nullable || !metadataEqual(fa.Metadata, fb.Metadata) {
			return false
		}
		if fa.Type == nil || fb.Type == nil || fa.Type.ID() != fb.Type.ID() {
			return false
		}
		if !vector.ParameterlessType(fa.Type.ID()) && !arrow.TypeEqual(fa.Type, fb.Type, arrow.CheckMetadata()) {
			return false
		}
	}
	return true
}

// metadataEqual is Metadata.Equal, which sorts (allocating) even when
// both are empty.
func metadataEqual(a, b arrow.Metadata) bool {
	if a.Len() == 0 && b.Len() == 0 {
		return true
	}
	return a.Equal(b)
}

// relabeled re-labels records with another schema of the same types.
type relabeled struct {
	input  vector.Operator
	schema *arrow.Schema
}

func (r *relabeled) Schema() *arrow.Schema { return r.schema }

func (r *relabeled) Next(ctx context.Context) (arrow.Record, error) {
	rec, err := r.input.Next(ctx)
	if err != nil {
		return nil, err
	}
	defer rec.Release()
	return array.NewRecord(r.schema, rec.Columns(), rec.NumRows()), nil
}

func (r *relabeled) Close() error { return r.input.Close() }

// Rerun implements vector.Rerunner.
func (r *relabeled) Rerun() error { return vector.Rerun(r.input) }

// DrainAndClose reads every record of op into memory and closes op (also
// on error).
func DrainAndClose(ctx context.Context, op vector.Operator) ([]arrow.Record, error) {
	defer op.Close()
	return vector.Drain(ctx, op)
}

// ExecuteSQL parses, analyzes, optimizes and executes one SELECT over cat
// (the memory sink's ad-hoc queries, Flight SQL). env may be nil.
func ExecuteSQL(ctx context.Context, mem memory.Allocator, cat Catalog, text string, env *Env) (vector.Operator, error) {
	n, err := AnalyzeSQL(text, cat)
	if err != nil {
		return nil, err
	}
	if n, err = Optimize(n); err != nil {
		return nil, err
	}
	return Execute(ctx, mem, n, env)
}
