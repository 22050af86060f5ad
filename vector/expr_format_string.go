package vector

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"slices"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// format_string(fmt, args...) and printf: Java's Formatter over Spark's
// internal values of the arguments (a date is its day number, a
// timestamp its microseconds, as in Spark). The conversions %s %S %b %B
// %c %C %d %o %x %X %e %E %f %% %n with the flags - # + space 0 , ( ,
// width, precision and argument indexes (%2$s, %<s) are supported; a
// conversion that does not fit its argument (%d of a string) or another
// conversion raises, as Java's IllegalFormatException does in Spark. A
// NULL argument prints "null" (false for %b); a NULL format gives NULL.

// errFormat is a format string Java's Formatter would refuse.
var errFormat = errors.New("invalid format")

// fmtArg is one argument value in its Java class.
type fmtArg struct {
	kind byte // 0 null, 'b' Boolean, 'i' Byte/Short/Integer/Long (bits), 'f' Float/Double, 'D' Spark Decimal, 's' String
	bits int  // 8, 16, 32, 64 for integers
	i    int64
	f    float64
	s    string
	b    bool
}

// fmtArgAt reads row i of arr as Spark hands it to the Formatter.
func fmtArgAt(arr arrow.Array, i int) (fmtArg, error) {
	if arr.DataType().ID() == arrow.NULL || arr.IsNull(i) {
		return fmtArg{}, nil
	}
	switch a := arr.(type) {
	case *array.Boolean:
		return fmtArg{kind: 'b', b: a.Value(i)}, nil
	case *array.Int8:
		return fmtArg{kind: 'i', bits: 8, i: int64(a.Value(i))}, nil
	case *array.Int16:
		return fmtArg{kind: 'i', bits: 16, i: int64(a.Value(i))}, nil
	case *array.Int32:
		return fmtArg{kind: 'i', bits: 32, i: int64(a.Value(i))}, nil
	case *array.Date32:
		return fmtArg{kind: 'i', bits: 32, i: int64(a.Value(i))}, nil
	case *array.Int64:
		return fmtArg{kind: 'i', bits: 64, i: a.Value(i)}, nil
	case *array.Timestamp:
		return fmtArg{kind: 'i', bits: 64, i: int64(a.Value(i))}, nil
	case *array.Float32:
		return fmtArg{kind: 'f', bits: 32, f: float64(a.Value(i))}, nil
	case *array.Float64:
		return fmtArg{kind: 'f', bits: 64, f: a.Value(i)}, nil
	case *array.Decimal128:
		return fmtArg{kind: 'D', s: a.Value(i).ToString(a.DataType().(*arrow.Decimal128Type).Scale)}, nil
	case *array.String:
		return fmtArg{kind: 's', s: a.Value(i)}, nil
	}
	return fmtArg{}, fmt.Errorf("format_string does not format %s: %w", TypeName(arr.DataType()), ErrType)
}

// text is String.valueOf of the argument.
func (a fmtArg) text() string {
	switch a.kind {
	case 0:
		return "null"
	case 'b':
		return strconv.FormatBool(a.b)
	case 'i':
		return strconv.FormatInt(a.i, 10)
	case 'f':
		return string(appendJavaDouble(nil, a.f, a.bits))
	}
	return a.s
}

// fmtSpec is one parsed conversion.
type fmtSpec struct {
	index     int // 1-based argument index, 0: the next, -1: the previous (%<)
	flags     string
	width     int // -1 when absent
	precision int // -1 when absent
	conv      byte
}

// javaFormat formats args by format as java.util.Formatter.
//
// grow (nil: none) hears of dst's capacity each time a conversion grew it,
// so that a format of many wide conversions ('%1000000s' repeated) is
// refused over the query's limit after one conversion rather than after
// the whole value.
func javaFormat(dst []byte, format string, args []fmtArg, grow func(capBytes int) error) ([]byte, error) {
	next, last := 0, -1
	held := cap(dst)
	for i := 0; i < len(format); {
		if grow != nil && cap(dst) > held {
			held = cap(dst)
			if err := grow(held); err != nil {
				return nil, err
			}
		}
		c := format[i]
		if c != '%' {
			dst = append(dst, c)
			i++
			continue
		}
		spec, n, err := parseFmtSpec(format[i+1:])
		if err != nil {
			return nil, err
		}
		i += 1 + n
		switch spec.conv {
		case '%':
			dst = pad(dst, "%", spec)
			continue
		case 'n':
			dst = append(dst, '\n')
			continue
		}
		k := 0
		switch {
		case spec.index > 0:
			k = spec.index - 1
		case spec.index < 0:
			if last < 0 {
				return nil, fmt.Errorf("%w: %%< with no previous argument", errFormat)
			}
			k = last
		default:
			k = next
			next++
		}
		if k >= len(args) {
			return nil, fmt.Errorf("%w: missing argument for format specifier '%%%c'", errFormat, spec.conv)
		}
		last = k
		if grow != nil {
			if dst, held, err = preGrow(dst, held, spec, args[k], grow); err != nil {
				return nil, err
			}
		}
		if dst, err = formatOne(dst, spec, args[k]); err != nil {
			return nil, err
		}
	}
	if grow != nil && cap(dst) > held {
		if err := grow(cap(dst)); err != nil {
			return nil, err
		}
	}
	return dst, nil
}

// preGrow makes dst's capacity, before a conversion is formatted, cover
// a bound of what it appends (its width and precision, its argument's
// text, and room for a number's digits), reserving it through grow
// first: a wide conversion is refused over the limit before it is built.
// A bound that falls short only leaves the conversion to grow dst itself,
// which javaFormat reserves after it.
func preGrow(dst []byte, held int, sp fmtSpec, a fmtArg, grow func(capBytes int) error) ([]byte, int, error) {
	text := len(a.s)
	if sp.conv == 'S' {
		text *= 2 // upper case can widen a character (ɐ, 2 bytes, to Ɐ, 3)
	}
	need := len(dst) + max(sp.width, 0) + max(sp.precision, 0) + text + 512
	if need <= cap(dst) {
		return dst, held, nil
	}
	if err := grow(need); err != nil {
		return nil, 0, err
	}
	return slices.Grow(dst, need-len(dst)), need, nil
}

// checkFormat reports the errors javaFormat gives for format whatever
// the arguments' values (a bad conversion, flag, width or precision; %<
// first; a missing argument), without building the value: a constant
// format of wide conversions is checked at bind time in time and memory
// linear in its length.
func checkFormat(format string, nargs int) error {
	_, err := scanFormat(format, nargs)
	return err
}

// scanFormat is checkFormat that also returns the least size of the
// value (the literal text and every conversion's width).
func scanFormat(format string, nargs int) (int64, error) {
	next, last := 0, -1
	var least int64
	for i := 0; i < len(format); {
		if format[i] != '%' {
			i++
			least++
			continue
		}
		spec, n, err := parseFmtSpec(format[i+1:])
		if err != nil {
			return 0, err
		}
		i += 1 + n
		least += int64(max(spec.width, 0))
		if spec.conv == '%' || spec.conv == 'n' {
			continue
		}
		k := 0
		switch {
		case spec.index > 0:
			k = spec.index - 1
		case spec.index < 0:
			if last < 0 {
				return 0, fmt.Errorf("%w: %%< with no previous argument", errFormat)
			}
			k = last
		default:
			k = next
			next++
		}
		if k >= nargs {
			return 0, fmt.Errorf("%w: missing argument for format specifier '%%%c'", errFormat, spec.conv)
		}
		last = k
		if conv := spec.conv | 0x20; conv != 'e' && conv != 'f' && conv != 's' && conv != 'b' && spec.precision >= 0 {
			return 0, fmt.Errorf("%w: precision with %%%c", errFormat, spec.conv)
		}
	}
	return least, nil
}

// foldBytes implements foldSizer: a constant format's least size, so
// that one of many wide conversions is not folded (nor built) at bind
// time.
func (e *formatStringEval) foldBytes() int64 {
	v, ok := fnConstValue(e.args[0])
	if !ok {
		return 0
	}
	format, ok := v.(string)
	if !ok {
		return 0
	}
	least, _ := scanFormat(format, len(e.args)-1)
	return least
}

// parseFmtSpec parses %[index$][flags][width][.precision]conversion after
// the %; n is the bytes consumed.
func parseFmtSpec(s string) (fmtSpec, int, error) {
	sp := fmtSpec{width: -1, precision: -1}
	i := 0
	digits := func() int {
		j := i
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
		return j
	}
	if i < len(s) && s[i] == '<' {
		sp.index = -1
		i++
	} else {
		j := digits()
		if i < len(s) && s[i] == '$' && i > j {
			v, err := strconv.Atoi(s[j:i])
			if err != nil || v == 0 {
				return sp, 0, fmt.Errorf("%w: the argument index %s is not allowed", errFormat, s[j:i])
			}
			sp.index = v
			i++
		} else {
			i = j
		}
	}
	for i < len(s) && strings.IndexByte("-#+ 0,(", s[i]) >= 0 {
		if strings.IndexByte(sp.flags, s[i]) >= 0 {
			return sp, 0, fmt.Errorf("%w: duplicate flag %c", errFormat, s[i])
		}
		sp.flags += string(s[i])
		i++
	}
	if j := digits(); i > j {
		v, err := strconv.Atoi(s[j:i])
		if err != nil || v > 1<<20 {
			return sp, 0, fmt.Errorf("%w: width %s", errFormat, s[j:i])
		}
		sp.width = v
	}
	if i < len(s) && s[i] == '.' {
		i++
		j := digits()
		if i == j {
			return sp, 0, fmt.Errorf("%w: precision without digits", errFormat)
		}
		v, err := strconv.Atoi(s[j:i])
		if err != nil || v > 1<<20 {
			return sp, 0, fmt.Errorf("%w: precision %s", errFormat, s[j:i])
		}
		sp.precision = v
	}
	if i >= len(s) {
		return sp, 0, fmt.Errorf("%w: the format ends inside a conversion", errFormat)
	}
	sp.conv = s[i]
	if strings.IndexByte("sSbBcCdoxXeEf%n", sp.conv) < 0 {
		return sp, 0, fmt.Errorf("%w: conversion '%c' is not supported", errFormat, sp.conv)
	}
	if strings.Contains(sp.flags, "-") && sp.width < 0 || strings.Contains(sp.flags, "0") && sp.width < 0 {
		return sp, 0, fmt.Errorf("%w: the flag - or 0 needs a width", errFormat)
	}
	return sp, i + 1, nil
}

// pad applies the width: left-justified with '-', else right.
func pad(dst []byte, s string, sp fmtSpec) []byte {
	n := sp.width - len([]rune(s))
	if n <= 0 {
		return append(dst, s...)
	}
	// The spaces are appended in place: a wide conversion makes no
	// temporary string of its width.
	if strings.Contains(sp.flags, "-") {
		return appendSpaces(append(dst, s...), n)
	}
	return append(appendSpaces(dst, n), s...)
}

func appendSpaces(dst []byte, n int) []byte {
	dst = slices.Grow(dst, n)
	for range n {
		dst = append(dst, ' ')
	}
	return dst
}

// group inserts thousands separators into a run of digits.
func group(digits string) string {
	if len(digits) <= 3 {
		return digits
	}
	var b strings.Builder
	for i := 0; i < len(digits); i++ {
		if i > 0 && (len(digits)-i)%3 == 0 {
			b.WriteByte(',')
		}
		b.WriteByte(digits[i])
	}
	return b.String()
}

// signed lays out a number's magnitude text with the sign flags and
// zero padding of sp.
func signed(dst []byte, neg bool, mag string, sp fmtSpec) []byte {
	pre, post := "", ""
	switch {
	case neg && strings.Contains(sp.flags, "("):
		pre, post = "(", ")"
	case neg:
		pre = "-"
	case strings.Contains(sp.flags, "+"):
		pre = "+"
	case strings.Contains(sp.flags, " "):
		pre = " "
	}
	if strings.Contains(sp.flags, "0") {
		if n := sp.width - len(pre) - len(mag) - len(post); n > 0 {
			mag = strings.Repeat("0", n) + mag
		}
	}
	return pad(dst, pre+mag+post, sp)
}

func mismatch(sp fmtSpec, a fmtArg) error {
	cls := map[byte]string{'b': "java.lang.Boolean", 'i': "java.lang.Integer", 'f': "java.lang.Double", 'D': "org.apache.spark.sql.types.Decimal", 's': "org.apache.spark.unsafe.types.UTF8String"}[a.kind]
	return fmt.Errorf("%w: %c != %s", errFormat, sp.conv, cls)
}

// formatOne formats one argument.
func formatOne(dst []byte, sp fmtSpec, a fmtArg) ([]byte, error) {
	upper := sp.conv >= 'A' && sp.conv <= 'Z'
	conv := sp.conv | 0x20
	if conv != 'e' && conv != 'f' && conv != 's' && conv != 'b' && sp.precision >= 0 {
		return nil, fmt.Errorf("%w: precision with %%%c", errFormat, sp.conv)
	}
	out := func(s string) []byte {
		if upper {
			s = strings.ToUpper(s)
		}
		return pad(dst, s, sp)
	}
	if a.kind == 0 && conv != 'b' {
		return out("null"), nil
	}
	switch conv {
	case 's', 'b':
		s := a.text()
		if conv == 'b' {
			s = strconv.FormatBool(a.kind != 0 && (a.kind != 'b' || a.b))
		}
		if sp.precision >= 0 && len([]rune(s)) > sp.precision {
			s = string([]rune(s)[:sp.precision])
		}
		return out(s), nil
	case 'c':
		if a.kind != 'i' || a.bits == 64 {
			return nil, mismatch(sp, a)
		}
		if a.i < 0 || a.i > 0x10FFFF || a.i >= 0xD800 && a.i < 0xE000 {
			return nil, fmt.Errorf("%w: code point %d", errFormat, a.i)
		}
		return out(string(rune(a.i))), nil
	case 'd':
		if a.kind != 'i' {
			return nil, mismatch(sp, a)
		}
		mag := strconv.FormatUint(uint64(a.i), 10)
		if a.i < 0 {
			mag = strconv.FormatUint(uint64(-a.i), 10)
		}
		if strings.Contains(sp.flags, ",") {
			mag = group(mag)
		}
		return signed(dst, a.i < 0, mag, sp), nil
	case 'o', 'x':
		if a.kind != 'i' {
			return nil, mismatch(sp, a)
		}
		u := uint64(a.i)
		if a.bits < 64 {
			u &= 1<<a.bits - 1
		}
		base, prefix := 8, "0"
		if conv == 'x' {
			base, prefix = 16, "0x"
		}
		s := strconv.FormatUint(u, base)
		if !strings.Contains(sp.flags, "#") {
			prefix = ""
		}
		if strings.Contains(sp.flags, "0") {
			if n := sp.width - len(prefix) - len(s); n > 0 {
				s = strings.Repeat("0", n) + s
			}
		}
		return out(prefix + s), nil
	case 'e', 'f':
		var r *big.Rat
		neg := false
		switch a.kind {
		case 'f':
			v := a.f
			if math.IsNaN(v) || math.IsInf(v, 0) {
				s := "NaN"
				if math.IsInf(v, 1) {
					s = "Infinity"
				} else if math.IsInf(v, -1) {
					s = "-Infinity"
				}
				return out(s), nil
			}
			neg = math.Signbit(v)
			r, _ = new(big.Rat).SetString(strconv.FormatFloat(math.Abs(v), 'g', -1, 64))
		default:
			return nil, mismatch(sp, a)
		}
		prec := sp.precision
		if prec < 0 {
			prec = 6
		}
		var mag string
		if conv == 'f' {
			mag = fixedHalfUp(r, prec)
			if strings.Contains(sp.flags, ",") {
				whole, frac, ok := strings.Cut(mag, ".")
				mag = group(whole)
				if ok {
					mag += "." + frac
				}
			}
		} else {
			mag = sciHalfUp(r, prec)
		}
		if upper {
			mag = strings.ToUpper(mag)
		}
		return signed(dst, neg, mag, sp), nil
	}
	return nil, fmt.Errorf("%w: conversion '%c'", errFormat, sp.conv)
}

// fixedHalfUp renders r (non-negative) with prec places, rounded HALF_UP.
func fixedHalfUp(r *big.Rat, prec int) string {
	p := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(prec)), nil)
	q, rem := new(big.Int).QuoRem(new(big.Int).Mul(r.Num(), p), r.Denom(), new(big.Int))
	if rem.Lsh(rem, 1).Cmp(r.Denom()) >= 0 {
		q.Add(q, big.NewInt(1))
	}
	s := q.String()
	if prec == 0 {
		return s
	}
	for len(s) <= prec {
		s = "0" + s
	}
	return s[:len(s)-prec] + "." + s[len(s)-prec:]
}

// sciHalfUp renders r (non-negative) as d.ddd...e±xx with prec fraction
// digits, rounded HALF_UP.
func sciHalfUp(r *big.Rat, prec int) string {
	exp := 0
	if r.Sign() != 0 {
		ten := big.NewRat(10, 1)
		one := big.NewRat(1, 1)
		x := new(big.Rat).Set(r)
		for x.Cmp(ten) >= 0 {
			x.Quo(x, ten)
			exp++
		}
		for x.Cmp(one) < 0 {
			x.Mul(x, ten)
			exp--
		}
		m := fixedHalfUp(x, prec)
		if strings.HasPrefix(m, "10") {
			// Rounding carried into a new digit: 9.99 -> 10.0.
			x.Quo(x, ten)
			exp++
			m = fixedHalfUp(x, prec)
		}
		r = x
		sign := "+"
		if exp < 0 {
			sign, exp = "-", -exp
		}
		return fmt.Sprintf("%se%s%02d", m, sign, exp)
	}
	return fixedHalfUp(r, prec) + "e+00"
}

// formatStringEval evaluates format_string over whole columns.
type formatStringEval struct {
	f    *FuncExpr
	args []Evaluator
	mem  memory.Allocator
}

func (e *formatStringEval) DataType() arrow.DataType { return String }

func (e *formatStringEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	arrs, err := evalAll(ctx, e.args, rec)
	if err != nil {
		return nil, err
	}
	defer releaseArrays(arrs)
	for k, a := range arrs {
		plain, err := DecodeDictionary(e.mem, a)
		if err != nil {
			return nil, err
		}
		a.Release()
		arrs[k] = plain
	}
	n := int(rec.NumRows())
	b := array.NewStringBuilder(e.mem)
	defer b.Release()
	b.Reserve(n)
	vals := make([]fmtArg, len(arrs)-1)
	var buf []byte
	// The value is built on the Go heap: its scratch is reserved on the
	// query's account as it grows, and capped as repeat's is.
	budget := newValueBudget(e.mem, e.f.Name)
	defer budget.release()
	grow := func(c int) error {
		if c > maxValueBytes {
			return fmt.Errorf("%s: a value over the limit of %d bytes: %w", e.f.Name, maxValueBytes, ErrOverflow)
		}
		return budget.scratch(int64(c))
	}
	for i := 0; i < n; i++ {
		if arrs[0].IsNull(i) {
			b.AppendNull()
			continue
		}
		for k, a := range arrs[1:] {
			if vals[k], err = fmtArgAt(a, i); err != nil {
				return nil, err
			}
		}
		format := arrs[0].(*array.String).Value(i)
		if buf, err = javaFormat(buf[:0], format, vals, grow); err != nil {
			return nil, &EvalError{Expr: e.f.String(), Row: i, Err: err, Values: "format=" + FormatValue(format, String)}
		}
		// The result column grows only after its growth is checked
		// against the query's account (else a batch of wide values
		// would be built past the limit, then refused).
		if used := b.DataLen(); used+len(buf) > b.DataCap() {
			c, err := budget.outputRoom(used, b.DataCap(), len(buf))
			if err != nil {
				return nil, &EvalError{Expr: e.f.String(), Row: i, Err: err, Values: "format=" + FormatValue(format, String)}
			}
			b.ReserveData(c - used)
		}
		b.BinaryBuilder.Append(buf)
	}
	return b.NewArray(), nil
}

func bindFormatString(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	format, err := asStringArg(args[0], mem, f.Args[0].String())
	if err != nil {
		return nil, err
	}
	conv := append([]Evaluator{format}, args[1:]...)
	for k, a := range args[1:] {
		switch Unwrap(a.DataType()).ID() {
		case arrow.NULL, arrow.BOOL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.FLOAT32, arrow.FLOAT64,
			arrow.DATE32, arrow.TIMESTAMP, arrow.DECIMAL128, arrow.STRING:
		default:
			return nil, fmt.Errorf("argument %d of %s: %s is not supported: %w", k+2, f.Name, TypeName(a.DataType()), ErrType)
		}
	}
	if isNullConst(format) || format.DataType().ID() == arrow.NULL {
		return fnNullResult(String, mem), nil
	}
	if v, ok := fnConstValue(format); ok {
		// A constant format is checked once, at bind time.
		if s, isStr := v.(string); isStr {
			if err := checkFormat(s, len(args)-1); err != nil && !strings.Contains(err.Error(), "missing argument") {
				return nil, err
			}
		}
	}
	return fnFoldConstant(f, in, mem, &formatStringEval{f: f, args: conv, mem: mem}, conv...)
}

func init() {
	for _, name := range []string{"format_string", "printf"} {
		functions[name] = funcSpec{1, -1, rowBinder(name, bindFormatString)}
	}
}
