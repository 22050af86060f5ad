package vector

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// JoinType is the kind of a join.
type JoinType int

// The join types. Semi and anti joins output the left columns only.
const (
	InnerJoin      JoinType = iota // matching pairs
	LeftOuterJoin                  // matching pairs, plus unmatched left rows with nulls on the right
	RightOuterJoin                 // matching pairs, plus unmatched right rows with nulls on the left
	FullOuterJoin                  // matching pairs, plus unmatched rows of both sides
	LeftSemiJoin                   // left rows with at least one match, once each
	LeftAntiJoin                   // left rows without a match
)

func (t JoinType) String() string {
	switch t {
	case InnerJoin:
		return "INNER"
	case LeftOuterJoin:
		return "LEFT OUTER"
	case RightOuterJoin:
		return "RIGHT OUTER"
	case FullOuterJoin:
		return "FULL OUTER"
	case LeftSemiJoin:
		return "LEFT SEMI"
	case LeftAntiJoin:
		return "LEFT ANTI"
	}
	return fmt.Sprintf("JoinType(%d)", int(t))
}

// JoinSpec describes a hash join.
type JoinSpec struct {
	Type JoinType
	// LeftKeys and RightKeys are the equi-join keys, bound to the left and
	// right input schemas; LeftKeys[i] = RightKeys[i]. Their types must be
	// equal after dictionary decoding, or int and bigint (widened to bigint).
	// With no keys every left row meets every right row (a nested-loop join,
	// filtered by Residual).
	LeftKeys, RightKeys []Expr
	// NullSafe, when set, has one flag per key: true compares with <=>
	// (null matches null). By default a null key never matches.
	NullSafe []bool
	// Residual is an optional extra condition, bound to the left columns
	// followed by the right columns; a pair for which it is not true does not
	// match (so it counts as unmatched for outer, semi and anti joins).
	Residual Expr
}

// joinBatchRows caps the rows of an output record.
const joinBatchRows = 64 << 10

// HashJoin joins two inputs on equal keys. The right input is the build
// side: it is read completely on the first Next, concatenated into one
// array per column and indexed by key. The left input is then streamed
// batch by batch: each batch is looked up as a whole, its matching (left
// row, right row) pairs are gathered with Take into output records of at
// most 64K rows. For right and full outer joins the build rows that never
// matched are emitted after the left input ends.
//
// The output has the left columns followed by the right columns (the left
// ones only for semi and anti joins); the columns of a side that an outer
// join pads with nulls are nullable. Rows come out in left order, then the
// unmatched right rows.
type HashJoin struct {
	mem         memory.Allocator
	left, right Operator
	typ         JoinType
	schema      *arrow.Schema // output
	joined      *arrow.Schema // left ++ right: what Residual sees

	leftKeys, rightKeys   []Evaluator
	widenLeft, widenRight []bool // int32 key columns to widen to int64
	nullSafe              []bool
	anyNullSafe           bool
	residual              Evaluator // nil: none
	neverMatch            bool      // Residual is constantly false or null
	probeEnc              *KeyEncoder
	probeDict             joinDictCache // dictionary-encoded probe keys

	built        bool
	buildCols    []arrow.Array
	buildN       int
	table        joinTable
	allA, allN   int32  // the single run of every build row (no keys)
	buildMatched []bool // right and full outer joins

	probe        arrow.Record // current left batch, or nil
	probeN       int
	pos, posK    int // resume point: row pos, its posK-th match
	matchA       []int32
	matchN       []int32
	exclude      []bool
	pending      []int32 // probe scratch
	allOne       bool    // every row of the batch has exactly one match
	probeMatched []bool  // left, full, semi and anti joins

	candL, candR []int32
	outL, outR   []int32

	probeDone bool
	tailPos   int
	err       error // sticky, including io.EOF
	closed    bool
	heap      heapAccount // the build side's table, keys and flags
}

// NewHashJoin returns a hash join of left and right as spec describes.
// On success the join owns both inputs (Close closes them); on error the
// caller keeps them.
func NewHashJoin(mem memory.Allocator, left, right Operator, spec JoinSpec) (*HashJoin, error) {
	if spec.Type < InnerJoin || spec.Type > LeftAntiJoin {
		return nil, fmt.Errorf("vector: hash join: unknown join type %d", int(spec.Type))
	}
	if len(spec.LeftKeys) != len(spec.RightKeys) {
		return nil, fmt.Errorf("vector: hash join has %d left keys (%s) but %d right keys (%s)",
			len(spec.LeftKeys), exprList(spec.LeftKeys), len(spec.RightKeys), exprList(spec.RightKeys))
	}
	if spec.NullSafe != nil && len(spec.NullSafe) != len(spec.LeftKeys) {
		return nil, fmt.Errorf("vector: hash join has %d keys but %d null-safe flags", len(spec.LeftKeys), len(spec.NullSafe))
	}
	ls, rs := left.Schema(), right.Schema()
	j := &HashJoin{mem: mem, left: left, right: right, typ: spec.Type, heap: newHeapAccount(mem, "hash join build side")}
	j.table.big = newBigMem(mem)
	j.joined, j.schema = joinSchemas(ls, rs, spec.Type)
	var err error
	if j.leftKeys, err = bindAll(ls, mem, spec.LeftKeys); err != nil {
		return nil, err
	}
	if j.rightKeys, err = bindAll(rs, mem, spec.RightKeys); err != nil {
		return nil, err
	}
	nk := len(spec.LeftKeys)
	j.widenLeft, j.widenRight = make([]bool, nk), make([]bool, nk)
	j.nullSafe = make([]bool, nk)
	ltypes, rtypes := make([]arrow.DataType, nk), make([]arrow.DataType, nk)
	for i := range nk {
		lt, rt := j.leftKeys[i].DataType(), j.rightKeys[i].DataType()
		ltypes[i], rtypes[i] = lt, rt
		switch {
		case keyTypesEqual(lt, rt):
		case lt.ID() == arrow.INT32 && rt.ID() == arrow.INT64:
			j.widenLeft[i], ltypes[i] = true, Int64
		case lt.ID() == arrow.INT64 && rt.ID() == arrow.INT32:
			j.widenRight[i], rtypes[i] = true, Int64
		default:
			return nil, j.keyError(spec, i, fmt.Errorf("join key types differ: %s is %s, %s is %s: %w",
				spec.LeftKeys[i], TypeName(lt), spec.RightKeys[i], TypeName(rt), ErrType))
		}
		if err := checkKeyType(Unwrap(ltypes[i])); err != nil {
			return nil, j.keyError(spec, i, err)
		}
		j.nullSafe[i] = spec.NullSafe != nil && spec.NullSafe[i]
		j.anyNullSafe = j.anyNullSafe || j.nullSafe[i]
	}
	if nk > 0 {
		if j.probeEnc, err = NewKeyEncoder(mem, ltypes); err != nil {
			return nil, err
		}
		enc, err := NewKeyEncoder(mem, rtypes)
		if err != nil {
			return nil, err
		}
		j.table.enc = enc
	}
	if spec.Residual != nil {
		if err := j.bindResidual(spec.Residual); err != nil {
			return nil, err
		}
	}
	return j, nil
}

func (j *HashJoin) keyError(spec JoinSpec, i int, err error) error {
	return &BindError{
		Expr:      fmt.Sprintf("%s = %s", spec.LeftKeys[i], spec.RightKeys[i]),
		Available: columnNames(j.joined),
		Err:       err,
	}
}

func (j *HashJoin) bindResidual(e Expr) error {
	ev, err := e.Bind(j.joined, j.mem)
	if err != nil {
		return err
	}
	if ev.DataType().ID() != arrow.BOOL {
		return newBindError(e, j.joined, fmt.Errorf("join condition must be boolean, not %s: %w", TypeName(ev.DataType()), ErrType))
	}
	// A constant condition decides every pair at once.
	if c, ok := ev.(ConstantEvaluator); ok {
		j.neverMatch = c.Value() != true
		return nil
	}
	j.residual = ev
	return nil
}

// joinSchemas returns left ++ right with the outer-padded side nullable,
// and the output schema (the left schema for semi and anti joins).
func joinSchemas(ls, rs *arrow.Schema, typ JoinType) (joined, out *arrow.Schema) {
	fields := make([]arrow.Field, 0, ls.NumFields()+rs.NumFields())
	for _, f := range ls.Fields() {
		f.Nullable = f.Nullable || typ == RightOuterJoin || typ == FullOuterJoin
		fields = append(fields, f)
	}
	for _, f := range rs.Fields() {
		f.Nullable = f.Nullable || typ == LeftOuterJoin || typ == FullOuterJoin
		fields = append(fields, f)
	}
	joined = arrow.NewSchema(fields, nil)
	if typ == LeftSemiJoin || typ == LeftAntiJoin {
		return joined, ls
	}
	return joined, joined
}

// keyTypesEqual compares key types as the key encoder sees them:
// dictionaries as their values, nullability ignored.
func keyTypesEqual(a, b arrow.DataType) bool {
	a, b = Unwrap(a), Unwrap(b)
	sa, ok1 := a.(*arrow.StructType)
	sb, ok2 := b.(*arrow.StructType)
	if !ok1 || !ok2 {
		return arrow.TypeEqual(a, b)
	}
	if sa.NumFields() != sb.NumFields() {
		return false
	}
	for i := range sa.NumFields() {
		fa, fb := sa.Field(i), sb.Field(i)
		if !strings.EqualFold(fa.Name, fb.Name) || !keyTypesEqual(fa.Type, fb.Type) {
			return false
		}
	}
	return true
}

func exprList(es []Expr) string {
	parts := make([]string, len(es))
	for i, e := range es {
		parts[i] = e.String()
	}
	return strings.Join(parts, ", ")
}

func columnNames(s *arrow.Schema) []string {
	names := make([]string, s.NumFields())
	for i, f := range s.Fields() {
		names[i] = f.Name
	}
	return names
}

// Schema implements Operator.
func (j *HashJoin) Schema() *arrow.Schema { return j.schema }

// Next implements Operator.
func (j *HashJoin) Next(ctx context.Context) (arrow.Record, error) {
	if j.err != nil {
		return nil, j.err
	}
	if err := ctx.Err(); err != nil {
		return nil, err
	}
	rec, err := j.next(ctx)
	if err != nil {
		j.err = err
		j.releaseProbe()
	}
	return rec, err
}

func (j *HashJoin) next(ctx context.Context) (arrow.Record, error) {
	if !j.built {
		if err := j.buildSide(ctx); err != nil {
			return nil, err
		}
	}
	for {
		if j.probe != nil {
			if j.pos < j.probeN {
				rec, err := j.chunk(ctx)
				if err != nil || rec != nil {
					return rec, err
				}
				continue
			}
			j.releaseProbe()
		}
		if !j.probeDone {
			rec, err := j.left.Next(ctx)
			if errors.Is(err, io.EOF) {
				j.probeDone = true
				continue
			}
			if err != nil {
				return nil, err
			}
			if rec.NumRows() == 0 {
				rec.Release() // an empty probe batch matches nothing
				continue
			}
			if err := j.startProbeReleasing(ctx, rec); err != nil {
				return nil, err
			}
			continue
		}
		return j.tail()
	}
}

func (j *HashJoin) releaseProbe() {
	if j.probe != nil {
		j.probe.Release()
		j.probe = nil
	}
}

// buildSide reads the right input, concatenates it and builds the table.
func (j *HashJoin) buildSide(ctx context.Context) error {
	recs, err := Drain(ctx, j.right)
	if err != nil {
		return err
	}
	recs = dropEmpty(recs)
	defer func() {
		for _, r := range recs {
			r.Release()
		}
	}()
	j.buildCols, err = concatColumns(ctx, j.mem, j.right.Schema(), recs)
	if err != nil {
		return err
	}
	j.built = true
	for _, r := range recs {
		j.buildN += int(r.NumRows())
	}
	if err := j.heap.set(int64(j.buildN) + 4*int64(j.buildN)); err != nil {
		return err
	}
	if j.typ == RightOuterJoin || j.typ == FullOuterJoin {
		if j.buildMatched, err = bigAlloc[bool](ctx, &j.table.big, j.buildN); err != nil {
			return err
		}
	}
	// Without a match possible, inner, semi and right joins need nothing
	// from the left input.
	if j.buildN == 0 || j.neverMatch {
		if j.typ == InnerJoin || j.typ == LeftSemiJoin || j.typ == RightOuterJoin {
			j.probeDone = true
		}
		return nil
	}
	if len(j.rightKeys) == 0 {
		j.allA, j.allN, err = j.table.allRows(ctx, j.buildN)
		return err
	}
	rec := array.NewRecord(j.right.Schema(), j.buildCols, int64(j.buildN))
	defer rec.Release()
	keys, err := j.evalKeys(ctx, j.rightKeys, j.widenRight, rec)
	if err != nil {
		return err
	}
	defer releaseArrays(keys)
	enc := j.table.enc
	// Reserve the encoded keys (hash and word or bytes per row) and the
	// table before making them.
	if err := j.heap.set(int64(j.buildN) + 24*int64(j.buildN) + buildBytes(j.buildN)); err != nil {
		return err
	}
	if err := enc.EncodeContext(ctx, keys); err != nil {
		return err
	}
	var exclude []bool
	if enc.AnyNull() {
		// The whole build side's flags: a large buffer, freed after the
		// build (keyExclusion fills it).
		if exclude, err = bigAlloc[bool](ctx, &j.table.big, j.buildN); err != nil {
			return err
		}
		defer bigFree(&j.table.big, exclude)
	}
	exclude = j.keyExclusion(keys, enc, exclude)
	if err := j.table.build(ctx, enc, exclude, j.anyNullSafe); err != nil {
		return err
	}
	return j.heap.set(sliceBytes(j.buildMatched) + enc.heapBytes() + j.table.heapBytes())
}

// concatColumns concatenates the records column by column (ConcatRecords;
// a single record's columns are shared rather than copied) and returns the
// columns, owned by the caller.
func concatColumns(ctx context.Context, mem memory.Allocator, schema *arrow.Schema, recs []arrow.Record) ([]arrow.Array, error) {
	all, err := ConcatRecordsContext(ctx, mem, schema, recs)
	if err != nil {
		return nil, fmt.Errorf("vector: hash join build side: %w", err)
	}
	defer all.Release()
	cols := make([]arrow.Array, all.NumCols())
	for i, c := range all.Columns() {
		c.Retain()
		cols[i] = c
	}
	return cols, nil
}

// evalKeys evaluates key expressions over rec, widening int32 keys that
// meet int64 ones.
func (j *HashJoin) evalKeys(ctx context.Context, evs []Evaluator, widen []bool, rec arrow.Record) ([]arrow.Array, error) {
	keys, err := evalAll(ctx, evs, rec)
	if err != nil {
		return nil, err
	}
	for i, a := range keys {
		if widen[i] {
			w, err := widenInt32(ctx, j.mem, a.(*array.Int32))
			a.Release()
			keys[i] = w
			if err != nil {
				releaseArrays(keys)
				return nil, err
			}
		}
	}
	return keys, nil
}

// widenInt32 converts an int32 key column to int64, keeping its nulls; the
// values under nulls are copied too (the key encoder ignores them). On a
// build side of millions of rows the buffers are made interruptibly and
// filled cancelCheckRows rows at a time, checking ctx between.
func widenInt32(ctx context.Context, mem memory.Allocator, a *array.Int32) (arrow.Array, error) {
	n := a.Len()
	vals, err := newBufferContext(ctx, mem, n*8)
	if err != nil {
		return nil, err
	}
	defer vals.Release()
	valid, nulls, err := concatValidity(ctx, mem, []arrow.Array{a}, n)
	if err != nil {
		return nil, err
	}
	if valid != nil {
		defer valid.Release()
	}
	out, in := castSlice[int64](vals.Bytes())[:n], a.Int32Values()
	for lo := 0; lo < n; lo += cancelCheckRows {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		hi := min(lo+cancelCheckRows, n)
		for i, v := range in[lo:hi] {
			out[lo+i] = int64(v)
		}
	}
	data := array.NewData(Int64, n, []*memory.Buffer{valid, vals}, nil, nulls, 0)
	defer data.Release()
	return array.MakeFromData(data), nil
}

// keyExclusion returns, per row, whether a key that is not null-safe is
// null (such a row never matches), or nil when no row is excluded.
func (j *HashJoin) keyExclusion(keys []arrow.Array, enc *KeyEncoder, buf []bool) []bool {
	if !enc.AnyNull() {
		return nil
	}
	n := enc.Len()
	buf = grow(buf, n)
	if !j.anyNullSafe {
		for i := range buf {
			buf[i] = enc.HasNull(i)
		}
		return buf
	}
	clear(buf)
	for i, k := range keys {
		if !j.nullSafe[i] {
			markNulls(buf, k)
		}
	}
	return buf
}

// dropEmpty releases the zero-row records of recs, which may lack buffers
// (Arrow allows that; concatenation does not), and returns the others.
func dropEmpty(recs []arrow.Record) []arrow.Record {
	out := recs[:0]
	for _, r := range recs {
		if r.NumRows() == 0 {
			r.Release()
			continue
		}
		out = append(out, r)
	}
	return out
}
