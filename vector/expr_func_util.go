package vector

import (
	"context"
	"errors"
	"fmt"
	"math"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Shared plumbing of the function expressions (cast, string, time, hash):
// output buffers, validity handling, constant folding and dictionary
// evaluation. Kernels stay in the files of their functions.

// funcString renders a function call the way Spark names it: name(a, b).
func funcString(name string, args ...Expr) string {
	var b strings.Builder
	b.WriteString(name)
	b.WriteByte('(')
	for i, a := range args {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteString(a.String())
	}
	b.WriteByte(')')
	return b.String()
}

// sqlTypeName is the upper-case type name Spark prints in CAST(x AS INT).
func sqlTypeName(dt arrow.DataType) string {
	if dt != nil && dt.ID() == arrow.DURATION {
		return "INTERVAL DAY TO SECOND"
	}
	return strings.ToUpper(TypeName(dt))
}

// fnFixedBuf allocates a buffer of n values of T and returns it with its
// typed view.
func fnFixedBuf[T any](mem memory.Allocator, n int) (*memory.Buffer, []T) {
	var zero T
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(n * int(sizeOf(zero)))
	return buf, castSlice[T](buf.Bytes())[:n:n]
}

// fnNewArray builds an array from buffers it takes over (they are released
// here; nil entries are allowed).
func fnNewArray(dt arrow.DataType, n int, bufs []*memory.Buffer, children []arrow.ArrayData, nulls int) arrow.Array {
	data := array.NewData(dt, n, bufs, children, nulls, 0)
	for _, b := range bufs {
		if b != nil {
			b.Release()
		}
	}
	defer data.Release()
	return array.MakeFromData(data)
}

// validityOut is the validity of a result: it starts as the (shared,
// read-only) validity of the inputs and copies it on the first extra null,
// so that kernels that never add nulls never touch a bitmap.
type validityOut struct {
	mem    memory.Allocator
	n      int
	buf    *memory.Buffer // nil: every row is valid
	bits   []byte
	shared bool // buf belongs to an input: copy before writing
}

// newValidityOut combines the nulls of the inputs (a row is valid when it is
// valid in every input).
func newValidityOut(mem memory.Allocator, n int, inputs ...arrow.Array) *validityOut {
	v := &validityOut{mem: mem, n: n}
	for _, in := range inputs {
		if in == nil || in.NullN() == 0 {
			continue
		}
		bm, off := in.NullBitmapBytes(), in.Data().Offset()
		if bm == nil {
			// A NULL-typed column has no bitmap: every row is null.
			v.own()
			bitutil.SetBitsTo(v.bits, 0, int64(n), false)
			continue
		}
		switch {
		case v.buf == nil && off == 0:
			buf := in.Data().Buffers()[0]
			buf.Retain()
			v.buf, v.bits, v.shared = buf, buf.Bytes(), true
		case v.buf == nil:
			v.alloc()
			bitutil.CopyBitmap(bm, off, n, v.bits, 0)
		default:
			v.own()
			bitutil.BitmapAnd(v.bits, bm, 0, int64(off), v.bits, 0, int64(n))
		}
	}
	return v
}

func (v *validityOut) alloc() {
	v.buf = memory.NewResizableBuffer(v.mem)
	v.buf.Resize(int(bitutil.BytesForBits(int64(v.n))))
	v.bits = v.buf.Bytes()
	v.shared = false
}

// own makes the bitmap writable, materialising it as all-valid if needed.
func (v *validityOut) own() {
	switch {
	case v.buf == nil:
		v.alloc()
		bitutil.SetBitsTo(v.bits, 0, int64(v.n), true)
	case v.shared:
		old := v.buf
		v.alloc()
		bitutil.CopyBitmap(old.Bytes(), 0, v.n, v.bits, 0)
		old.Release()
	}
}

// hasNulls reports whether any row may be null so far.
func (v *validityOut) hasNulls() bool { return v.buf != nil }

// valid reports whether row i is valid so far.
func (v *validityOut) valid(i int) bool { return v.buf == nil || bitutil.BitIsSet(v.bits, i) }

// setNull marks row i null.
func (v *validityOut) setNull(i int) {
	if v.buf == nil || v.shared {
		v.own()
	}
	bitutil.ClearBit(v.bits, i)
}

// finish hands over the bitmap (nil when every row is valid) and the null
// count.
func (v *validityOut) finish() (*memory.Buffer, int) {
	if v.buf == nil {
		return nil, 0
	}
	nulls := v.n - bitutil.CountSetBits(v.bits, 0, v.n)
	if nulls == 0 {
		v.buf.Release()
		v.buf = nil
		return nil, 0
	}
	buf := v.buf
	v.buf = nil
	return buf, nulls
}

// release frees the bitmap on an error path.
func (v *validityOut) release() {
	if v.buf != nil {
		v.buf.Release()
		v.buf = nil
	}
}

// strOut writes a string (or binary) column of n values whose total size is
// not known in advance. Values are appended in row order; every row calls
// next (null rows append nothing).
type strOut struct {
	offBuf  *memory.Buffer
	dataBuf *memory.Buffer
	offs    []int32
	data    []byte // len: bytes written; cap: the buffer's capacity
	row     int
}

func newStrOut(mem memory.Allocator, n, sizeHint int) *strOut {
	s := &strOut{offBuf: memory.NewResizableBuffer(mem), dataBuf: memory.NewResizableBuffer(mem)}
	s.offBuf.Resize((n + 1) * 4)
	s.offs = castSlice[int32](s.offBuf.Bytes())[: n+1 : n+1]
	s.offs[0] = 0
	s.dataBuf.Reserve(max(sizeHint, 64))
	s.data = s.dataBuf.Buf()[:0]
	return s
}

// reserve makes room for k more bytes, so that appends up to k bytes stay
// inside the Arrow buffer.
func (s *strOut) reserve(k int) {
	if len(s.data)+k <= cap(s.data) {
		return
	}
	n := len(s.data)
	s.dataBuf.Reserve(max(2*cap(s.data), n+k))
	s.data = s.dataBuf.Buf()[:n]
}

// growTo makes the data buffer's capacity at least c bytes (exactly c
// when it grows), for a caller that checked the growth against the
// query's account (valueBudget.outputRoom).
func (s *strOut) growTo(c int) {
	if c <= cap(s.data) {
		return
	}
	n := len(s.data)
	s.dataBuf.Reserve(c)
	s.data = s.dataBuf.Buf()[:n]
}

func (s *strOut) appendBytes(b []byte) {
	s.reserve(len(b))
	s.data = append(s.data, b...)
}

func (s *strOut) appendString(str string) {
	s.reserve(len(str))
	s.data = append(s.data, str...)
}

// next ends the current row.
func (s *strOut) next() {
	s.row++
	s.offs[s.row] = int32(len(s.data))
}

// finish returns the offsets and data buffers. It fails when the column
// would exceed 2 GiB (int32 offsets).
func (s *strOut) finish() (offs, data *memory.Buffer, err error) {
	if len(s.data) > math.MaxInt32 {
		s.release()
		return nil, nil, fmt.Errorf("string column of %d bytes exceeds the 2 GiB limit of a batch", len(s.data))
	}
	if len(s.data) > 0 && &s.data[0] != &s.dataBuf.Buf()[0] {
		// An append outgrew a reservation (a bug); copy the bytes back.
		s.dataBuf.Reserve(len(s.data))
		copy(s.dataBuf.Buf(), s.data)
	}
	s.dataBuf.Resize(len(s.data))
	offs, data = s.offBuf, s.dataBuf
	s.offBuf, s.dataBuf = nil, nil
	return offs, data, nil
}

func (s *strOut) release() {
	if s.offBuf != nil {
		s.offBuf.Release()
		s.dataBuf.Release()
		s.offBuf, s.dataBuf = nil, nil
	}
}

// build finishes a string column of type dt with validity v.
func (s *strOut) build(dt arrow.DataType, v *validityOut) (arrow.Array, error) {
	offs, data, err := s.finish()
	if err != nil {
		v.release()
		return nil, err
	}
	bm, nulls := v.finish()
	return fnNewArray(dt, len(s.offs)-1, []*memory.Buffer{bm, offs, data}, nil, nulls), nil
}

// fnBinaryView returns the offsets (offset-adjusted, n+1 of them) and the whole
// data buffer of a string or binary array, so that value i is
// data[offs[i]:offs[i+1]].
func fnBinaryView(arr arrow.Array) (offs []int32, data []byte) {
	d := arr.Data()
	bufs := d.Buffers()
	if d.Len() == 0 || bufs[1] == nil {
		return make([]int32, d.Len()+1), nil
	}
	offs = arrow.Int32Traits.CastFromBytes(bufs[1].Bytes())[d.Offset() : d.Offset()+d.Len()+1]
	if bufs[2] != nil {
		data = bufs[2].Bytes()
	}
	return offs, data
}

// fnConstantArgs reports whether every evaluator is a constant.
func fnConstantArgs(args ...Evaluator) bool {
	for _, a := range args {
		if _, ok := a.(ConstantEvaluator); !ok {
			return false
		}
	}
	return true
}

// FoldValueBytes bounds the value a constant is folded into at bind time
// (as its array's bytes). A constant is held as a Go value (a list as
// []any, a boxed interface per element), on the Go heap outside any
// query's allocator: a 20M-element array folded that way took GBs no
// limit saw. A larger constant stays an evaluator, computed per batch on
// the query's allocator, under its context.
const FoldValueBytes = 1 << 20

// fnFoldConstant evaluates ev once when all of args are constants and returns
// it as a constant, so that kernels above see a literal (CAST('2026-01-01'
// AS TIMESTAMP) in a comparison stays a constant operand). A runtime error
// of the constant becomes a bind error of e. A value over FoldValueBytes
// is not folded.
func fnFoldConstant(e Expr, in *arrow.Schema, mem memory.Allocator, ev Evaluator, args ...Evaluator) (Evaluator, error) {
	if !fnConstantArgs(args...) || tooLargeToFold(ev) {
		return ev, nil
	}
	rec := array.NewRecord(arrow.NewSchema(nil, nil), nil, 1)
	defer rec.Release()
	arr, err := ev.Eval(context.Background(), rec)
	if err != nil {
		if e == nil {
			return nil, err
		}
		return nil, newBindError(e, in, err)
	}
	defer arr.Release()
	if SlicedDataBytes(arr.Data()) > FoldValueBytes {
		return ev, nil
	}
	return &constEval{dt: ev.DataType(), v: ValueAt(arr, 0), mem: mem}, nil
}

// fnConstValue returns the value of a constant evaluator, used at bind time for
// arguments that must be literals (formats, units, patterns).
func fnConstValue(ev Evaluator) (any, bool) {
	c, ok := ev.(ConstantEvaluator)
	if !ok {
		return nil, false
	}
	return c.Value(), true
}

// mapStrings applies a kernel for plain string (or binary) arrays to arr,
// which may be dictionary-encoded: then the kernel runs over the dictionary
// (when it is no larger than the batch) and the results are gathered by
// the indices, so each distinct value is computed once. The kernel must not
// fail on values the batch does not reference.
func mapStrings(mem memory.Allocator, arr arrow.Array, kernel func(arrow.Array) (arrow.Array, error)) (arrow.Array, error) {
	d, ok := arr.(*array.Dictionary)
	if !ok {
		return kernel(arr)
	}
	if d.Dictionary().Len() > d.Len() {
		plain, err := DecodeDictionary(mem, d)
		if err != nil {
			return nil, err
		}
		defer plain.Release()
		return kernel(plain)
	}
	res, err := kernel(d.Dictionary())
	var ee *EvalError
	if errors.As(err, &ee) {
		// An entry failed (an ANSI cast of '2026-01-01' to TINYINT): it
		// may be one no valid row refers to (under a null index, or
		// referred to only by rows a CASE or coalesce took away), and the
		// error names an entry, not a row. Row by row, only a valid row
		// fails, under its own number.
		plain, derr := DecodeDictionary(mem, d)
		if derr != nil {
			return nil, derr
		}
		defer plain.Release()
		return kernel(plain)
	}
	if err != nil {
		return nil, err
	}
	defer res.Release()
	idx, err := DictionaryIndices(d)
	if err != nil {
		return nil, err
	}
	return Take(mem, res, idx)
}

// isStringInput reports whether dt is string, or a dictionary of strings.
func isStringInput(dt arrow.DataType) bool { return IsStringLike(dt) }

// asStringArg makes ev usable as a string argument: strings (and
// dictionaries of strings) pass, atomic types are implicitly cast to string
// as Spark does for string functions; other types are a type error.
func asStringArg(ev Evaluator, mem memory.Allocator, what string) (Evaluator, error) {
	dt := ev.DataType()
	if isStringInput(dt) || dt.ID() == arrow.NULL {
		return ev, nil
	}
	k := castKernelFor(Unwrap(dt), String)
	if k == nil || dt.ID() == arrow.BINARY || isNestedID(Unwrap(dt).ID()) { // no implicit cast of ARRAY/MAP/STRUCT
		return nil, fmt.Errorf("%s must be a string, not %s: %w", what, TypeName(dt), ErrType)
	}
	return foldQuietly(&castEval{child: ev, from: dt, to: String, kern: k, mem: mem, expr: "CAST(" + what + " AS STRING)", operand: what}, mem, ev), nil
}

// foldQuietly folds ev to a constant when its inputs are constants, for
// implicit casts inserted at bind time; if the constant fails, ev is kept
// so that the error surfaces where it is evaluated.
func foldQuietly(ev Evaluator, mem memory.Allocator, args ...Evaluator) Evaluator {
	folded, err := fnFoldConstant(nil, nil, mem, ev, args...)
	if err != nil {
		return ev
	}
	return folded
}

// asIntArg checks that ev is an integer argument (int or bigint, or NULL).
func asIntArg(ev Evaluator, what string) error {
	dt := ev.DataType()
	if dt.ID() == arrow.NULL || IsIntegral(dt) {
		return nil
	}
	return fmt.Errorf("%s must be an integer, not %s: %w", what, TypeName(dt), ErrType)
}

// fnInt64sOf reads an integer column as int64 values (a copy for narrower
// types); nil for a NULL-typed column.
func fnInt64sOf(arr arrow.Array) []int64 {
	switch a := arr.(type) {
	case *array.Int64:
		return a.Int64Values()
	case *array.Int32:
		return fnWidenInts(a.Int32Values())
	case *array.Int16:
		return fnWidenInts(a.Int16Values())
	case *array.Int8:
		return fnWidenInts(a.Int8Values())
	}
	return make([]int64, arr.Len())
}

func fnWidenInts[T int8 | int16 | int32](src []T) []int64 {
	out := make([]int64, len(src))
	for i, v := range src {
		out[i] = int64(v)
	}
	return out
}

// fnConstInt64 returns the integer value of a constant evaluator, and false
// for NULL.
func fnConstInt64(v any) (int64, bool) {
	if v == nil {
		return 0, false
	}
	x, ok := toInt64(v)
	return x, ok
}

// fnEvalArgs evaluates the non-constant evaluators of args; constants yield a
// nil array. On error everything computed is released.
func fnEvalArgs(ctx context.Context, rec arrow.Record, args []Evaluator) ([]arrow.Array, error) {
	out := make([]arrow.Array, len(args))
	for i, a := range args {
		if a == nil {
			continue
		}
		if _, ok := a.(ConstantEvaluator); ok {
			continue
		}
		arr, err := a.Eval(ctx, rec)
		if err != nil {
			releaseArrays(out[:i])
			return nil, err
		}
		out[i] = arr
	}
	return out, nil
}

// fnStrArg is a string or binary argument of a function with several
// arguments: a constant, or a column decoded from any dictionary. Kernels
// read row i with at(i), so that a constant operand is never expanded into
// a column.
type fnStrArg struct {
	constant bool
	c        []byte
	offs     []int32
	data     []byte
	arr      arrow.Array // the plain column (owned), nil for a constant
}

// fnNewStrArg makes the argument of ev, whose value for the batch is arr (nil
// when ev is a constant). The caller releases it.
func fnNewStrArg(mem memory.Allocator, ev Evaluator, arr arrow.Array) (fnStrArg, error) {
	if v, ok := fnConstValue(ev); ok {
		a := fnStrArg{constant: true}
		switch x := v.(type) {
		case string:
			a.c = []byte(x)
		case []byte:
			a.c = x
		}
		return a, nil
	}
	plain, err := DecodeDictionary(mem, arr)
	if err != nil {
		return fnStrArg{}, err
	}
	a := fnStrArg{arr: plain}
	a.offs, a.data = fnBinaryView(plain)
	return a, nil
}

func (a *fnStrArg) at(i int) []byte {
	if a.constant {
		return a.c
	}
	return a.data[a.offs[i]:a.offs[i+1]]
}

// size is the number of bytes of n rows.
func (a *fnStrArg) size(n int) int {
	if a.constant {
		return n * len(a.c)
	}
	return int(a.offs[n] - a.offs[0])
}

// isASCII reports whether the n rows have only 7-bit bytes.
func (a *fnStrArg) isASCII(n int) bool {
	if a.constant {
		return fnIsASCII(a.c)
	}
	return fnIsASCII(a.data[a.offs[0]:a.offs[n]])
}

func (a *fnStrArg) release() {
	if a.arr != nil {
		a.arr.Release()
		a.arr = nil
	}
}
