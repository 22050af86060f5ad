package vector

import (
	"context"
	"fmt"
	"math"
	"unicode"
	"unicode/utf8"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// String functions with Spark's semantics: lengths and positions count
// characters (UTF-8 code points), not bytes; any NULL argument gives NULL.
// Non-string atomic arguments are cast to string implicitly, as Spark does.
// Dictionary-encoded inputs are processed once per distinct value.

// Lower is lower(x): x in lower case.
func Lower(x Expr) Expr {
	return &FuncExpr{Name: "lower", Args: []Expr{x}, bind: bindCaseMap(unicode.ToLower, 'A', 'Z', 'a'-'A')}
}

// Upper is upper(x): x in upper case (0xe0 adds -32 modulo 256).
func Upper(x Expr) Expr {
	return &FuncExpr{Name: "upper", Args: []Expr{x}, bind: bindCaseMap(unicode.ToUpper, 'a', 'z', 0xe0)}
}

// Length is length(x): the number of characters of a string, or of bytes
// of a binary value, as an int.
func Length(x Expr) Expr { return &FuncExpr{Name: "length", Args: []Expr{x}, bind: bindLength} }

// Substring is substring(str, pos[, len]) with Spark's 1-based positions:
// pos > 0 counts from the start, pos < 0 from the end, pos = 0 is the
// start; len (nil: to the end) counts characters, or bytes for binary.
func Substring(str, pos, length Expr) Expr {
	args := []Expr{str, pos}
	if length != nil {
		args = append(args, length)
	}
	return &FuncExpr{Name: "substring", Args: args, bind: bindSubstring}
}

// Concat is concat(args...): the arguments joined, NULL if any is NULL.
// All-binary arguments give binary; otherwise a string.
func Concat(args ...Expr) Expr { return &FuncExpr{Name: "concat", Args: args, bind: bindConcat} }

// unaryStringEval applies a string kernel to one argument.
type unaryStringEval struct {
	x    Evaluator
	dt   arrow.DataType
	mem  memory.Allocator
	kern func(mem memory.Allocator, arr arrow.Array) (arrow.Array, error)
}

func (u *unaryStringEval) DataType() arrow.DataType { return u.dt }

func (u *unaryStringEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	arr, err := u.x.Eval(ctx, rec)
	if err != nil {
		return nil, err
	}
	defer arr.Release()
	return mapStrings(u.mem, arr, func(a arrow.Array) (arrow.Array, error) { return u.kern(u.mem, a) })
}

// fnNullResult is the constant NULL of dt, for calls with a NULL argument.
func fnNullResult(dt arrow.DataType, mem memory.Allocator) Evaluator {
	return &constEval{dt: dt, mem: mem}
}

func bindCaseMap(mapRune func(rune) rune, lo, hi byte, delta byte) func(*FuncExpr, *arrow.Schema, memory.Allocator, []Evaluator) (Evaluator, error) {
	return func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
		x, err := asStringArg(args[0], mem, f.Args[0].String())
		if err != nil {
			return nil, err
		}
		if x.DataType().ID() == arrow.NULL {
			return fnNullResult(String, mem), nil
		}
		kern := func(mem memory.Allocator, arr arrow.Array) (arrow.Array, error) {
			return caseMapColumn(mem, arr, mapRune, lo, hi, delta)
		}
		return fnFoldConstant(f, in, mem, &unaryStringEval{x: x, dt: String, mem: mem, kern: kern}, x)
	}
}

// fnIsASCII reports whether b has only 7-bit bytes, eight bytes at a time.
func fnIsASCII(b []byte) bool {
	i := 0
	for ; i+8 <= len(b); i += 8 {
		w := uint64(b[i]) | uint64(b[i+1])<<8 | uint64(b[i+2])<<16 | uint64(b[i+3])<<24 |
			uint64(b[i+4])<<32 | uint64(b[i+5])<<40 | uint64(b[i+6])<<48 | uint64(b[i+7])<<56
		if w&0x8080808080808080 != 0 {
			return false
		}
	}
	for ; i < len(b); i++ {
		if b[i] >= 0x80 {
			return false
		}
	}
	return true
}

// caseMapColumn maps the case of every string. An all-ASCII column (the
// usual case) is mapped byte by byte into a buffer of the same size.
func caseMapColumn(mem memory.Allocator, arr arrow.Array, mapRune func(rune) rune, lo, hi, delta byte) (arrow.Array, error) {
	n := arr.Len()
	offs, data := fnBinaryView(arr)
	s := newStrOut(mem, n, int(offs[n]-offs[0]))
	if src := data[offs[0]:offs[n]]; fnIsASCII(src) {
		s.reserve(len(src))
		s.data = s.data[:len(src)]
		for k, c := range src {
			if c >= lo && c <= hi {
				c += delta
			}
			s.data[k] = c
		}
		for i := 1; i <= n; i++ {
			s.offs[i] = offs[i] - offs[0]
		}
		s.row = n
	} else {
		for i := 0; i < n; i++ {
			v := data[offs[i]:offs[i+1]]
			s.reserve(len(v) + 8)
			for len(v) > 0 {
				r, w := utf8.DecodeRune(v)
				if r == utf8.RuneError && w == 1 {
					s.reserve(1)
					s.data = append(s.data, v[0])
				} else {
					s.reserve(utf8.UTFMax)
					s.data = utf8.AppendRune(s.data, mapRune(r))
				}
				v = v[w:]
			}
			s.next()
		}
	}
	return s.build(String, newValidityOut(mem, n, arr))
}

func bindLength(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	x := args[0]
	binary := x.DataType().ID() == arrow.BINARY
	if !binary {
		var err error
		if x, err = asStringArg(x, mem, f.Args[0].String()); err != nil {
			return nil, err
		}
	}
	if x.DataType().ID() == arrow.NULL {
		return fnNullResult(Int32, mem), nil
	}
	kern := func(mem memory.Allocator, arr arrow.Array) (arrow.Array, error) {
		n := arr.Len()
		offs, data := fnBinaryView(arr)
		buf, dst := fnFixedBuf[int32](mem, n)
		ascii := binary || fnIsASCII(data[offs[0]:offs[n]])
		for i := 0; i < n; i++ {
			if ascii {
				dst[i] = offs[i+1] - offs[i]
			} else {
				dst[i] = int32(utf8.RuneCount(data[offs[i]:offs[i+1]]))
			}
		}
		bm, nulls := newValidityOut(mem, n, arr).finish()
		return fnNewArray(Int32, n, []*memory.Buffer{bm, buf}, nil, nulls), nil
	}
	return fnFoldConstant(f, in, mem, &unaryStringEval{x: x, dt: Int32, mem: mem, kern: kern}, x)
}

func bindSubstring(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	str := args[0]
	dt := String
	if str.DataType().ID() == arrow.BINARY {
		dt = Binary
	} else {
		var err error
		if str, err = asStringArg(str, mem, f.Args[0].String()); err != nil {
			return nil, err
		}
	}
	for k, a := range args[1:] {
		if err := asIntArg(a, f.Args[k+1].String()); err != nil {
			return nil, err
		}
	}
	for _, a := range args {
		if a.DataType().ID() == arrow.NULL {
			return fnNullResult(dt, mem), nil
		}
		if v, ok := fnConstValue(a); ok && v == nil {
			return fnNullResult(dt, mem), nil
		}
	}
	ev := &substringEval{str: str, pos: args[1], dt: dt, mem: mem}
	if len(args) == 3 {
		ev.length = args[2]
	}
	return fnFoldConstant(f, in, mem, ev, args...)
}

type substringEval struct {
	str, pos, length Evaluator // length may be nil
	dt               arrow.DataType
	mem              memory.Allocator
}

func (s *substringEval) DataType() arrow.DataType { return s.dt }

// fnIntArg is an integer argument: a constant or a column of int64 values.
type fnIntArg struct {
	constant bool
	c        int64
	vals     []int64
	arr      arrow.Array
}

func (a *fnIntArg) at(i int) int64 {
	if a.constant {
		return a.c
	}
	return a.vals[i]
}

func fnNewIntArg(ev Evaluator, arr arrow.Array, def int64) fnIntArg {
	if ev == nil {
		return fnIntArg{constant: true, c: def}
	}
	if v, ok := fnConstValue(ev); ok {
		x, _ := fnConstInt64(v)
		return fnIntArg{constant: true, c: x}
	}
	return fnIntArg{vals: fnInt64sOf(arr), arr: arr}
}

func (s *substringEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	arrs, err := fnEvalArgs(ctx, rec, []Evaluator{s.str, s.pos, s.length})
	if err != nil {
		return nil, err
	}
	defer releaseArrays(arrs)
	// The string may be a constant when a position is a column.
	str, err := fnNewStrArg(s.mem, s.str, arrs[0])
	if err != nil {
		return nil, err
	}
	defer str.release()
	pos := fnNewIntArg(s.pos, arrs[1], 0)
	length := fnNewIntArg(s.length, arrs[2], math.MaxInt32)
	n := int(rec.NumRows())
	out := newStrOut(s.mem, n, str.size(n))
	v := newValidityOut(s.mem, n, str.arr, arrs[1], arrs[2])
	byBytes := s.dt.ID() == arrow.BINARY || str.isASCII(n)
	for i := 0; i < n; i++ {
		if v.valid(i) {
			out.appendBytes(substringOf(str.at(i), pos.at(i), length.at(i), byBytes))
		}
		out.next()
	}
	return out.build(s.dt, v)
}

// substringOf is Spark's substringSQL on characters (or bytes).
func substringOf(v []byte, pos, length int64, byBytes bool) []byte {
	var count int64
	if byBytes {
		count = int64(len(v))
	} else if pos < 0 {
		count = int64(utf8.RuneCount(v))
	}
	var start int64
	switch {
	case pos > 0:
		start = pos - 1
	case pos < 0:
		start = count + pos
	}
	end := start + length
	switch { // saturate instead of wrapping
	case length > 0 && end < start:
		end = math.MaxInt64
	case length < 0 && end > start:
		end = math.MinInt64
	}
	start = max(start, 0)
	if start >= end {
		return nil
	}
	if byBytes {
		if start >= count {
			return nil
		}
		return v[start:min(end, count)]
	}
	// Walk the characters to find the byte offsets of [start, end).
	b, ch := 0, int64(0)
	for ch < start && b < len(v) {
		_, w := utf8.DecodeRune(v[b:])
		b += w
		ch++
	}
	e := b
	for ch < end && e < len(v) {
		_, w := utf8.DecodeRune(v[e:])
		e += w
		ch++
	}
	return v[b:e]
}

func bindConcat(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	allBinary := len(args) > 0
	for _, a := range args {
		if a.DataType().ID() != arrow.BINARY {
			allBinary = false
		}
	}
	dt := String
	if allBinary {
		dt = Binary
	}
	conv := make([]Evaluator, len(args))
	for k, a := range args {
		// The argument's text (its whole subtree) is rendered only for a
		// cast or an error: a chain a || b || … binds in linear time.
		if dt := a.DataType(); !allBinary && dt.ID() == arrow.BINARY {
			// Binaries next to strings are text (Spark's ConcatCoercion
			// casts every child to string unless all are binary).
			what := f.Args[k].String()
			a = foldQuietly(&castEval{child: a, from: dt, to: String, kern: castKernelFor(dt, String), mem: mem,
				expr: "CAST(" + what + " AS STRING)", operand: what}, mem, a)
		} else if !allBinary && !isStringInput(dt) && dt.ID() != arrow.NULL {
			var err error
			if a, err = asStringArg(a, mem, f.Args[k].String()); err != nil {
				return nil, err
			}
		}
		if a.DataType().ID() == arrow.NULL {
			return fnNullResult(dt, mem), nil
		}
		if v, ok := fnConstValue(a); ok && v == nil {
			return fnNullResult(dt, mem), nil
		}
		conv[k] = a
	}
	return fnFoldConstant(f, in, mem, &concatEval{args: conv, dt: dt, mem: mem}, conv...)
}

type concatEval struct {
	args []Evaluator
	dt   arrow.DataType
	mem  memory.Allocator
}

func (c *concatEval) DataType() arrow.DataType { return c.dt }

// foldBytes implements foldSizer: the sum of the constants' sizes.
func (c *concatEval) foldBytes() int64 {
	var n int64
	for _, a := range c.args {
		switch x, _ := fnConstValue(a); x := x.(type) {
		case string:
			n += int64(len(x))
		case []byte:
			n += int64(len(x))
		}
	}
	return n
}

func (c *concatEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	arrs, err := fnEvalArgs(ctx, rec, c.args)
	if err != nil {
		return nil, err
	}
	defer releaseArrays(arrs)
	n := int(rec.NumRows())
	type piece struct {
		constant []byte
		offs     []int32
		data     []byte
	}
	pieces := make([]piece, len(c.args))
	cols := make([]arrow.Array, 0, len(c.args))
	size := 0
	for k, a := range c.args {
		if v, ok := fnConstValue(a); ok {
			switch x := v.(type) {
			case string:
				pieces[k].constant = []byte(x)
			case []byte:
				pieces[k].constant = x
			}
			size += n * len(pieces[k].constant)
			continue
		}
		plain, err := DecodeDictionary(c.mem, arrs[k])
		if err != nil {
			return nil, err
		}
		arrs[k].Release()
		arrs[k] = plain
		cols = append(cols, plain)
		pieces[k].offs, pieces[k].data = fnBinaryView(plain)
		size += int(pieces[k].offs[n] - pieces[k].offs[0])
	}
	// The result's size is known before it is built: refuse it over the
	// query's limit, or past a batch's 2 GiB, without allocating it.
	budget := newValueBudget(c.mem, "concat")
	if err := budget.output(int64(size)); err != nil {
		return nil, err
	}
	if size > math.MaxInt32 {
		return nil, fmt.Errorf("concat: the result column of %d bytes exceeds the 2 GiB limit of a batch: %w", size, ErrOverflow)
	}
	out := newStrOut(c.mem, n, size)
	v := newValidityOut(c.mem, n, cols...)
	for i := 0; i < n; i++ {
		if v.valid(i) {
			for _, p := range pieces {
				if p.offs == nil {
					out.appendBytes(p.constant)
				} else {
					out.appendBytes(p.data[p.offs[i]:p.offs[i+1]])
				}
			}
		}
		out.next()
	}
	return out.build(c.dt, v)
}

// fnErrArgType formats an argument type error.
func fnErrArgType(what string, dt arrow.DataType, want string) error {
	return fmt.Errorf("%s must be %s, not %s: %w", what, want, TypeName(dt), ErrType)
}
