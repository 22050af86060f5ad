package vector

import (
	"bytes"
	"context"
	"crypto/rand"
	"errors"
	"fmt"
	"unicode/utf8"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// String and binary functions of Spark beyond the first set (issue #20):
// predicates (contains, startswith, endswith), positions (locate,
// position, instr), pieces (left, right, split_part), padding and
// trimming, replace, translate-like edits. Positions and lengths count
// characters (UTF-8 code points) of strings and bytes of binary values;
// any NULL argument gives NULL unless a function says otherwise.

// ErrInvalidIndex is an index of 0 where SQL indices start at 1 (Spark's
// INVALID_INDEX_OF_ZERO).
var ErrInvalidIndex = errors.New("[INVALID_INDEX_OF_ZERO] The index 0 is invalid. An index shall be either < 0 or > 0 (the first element has index 1)")

// runePrefix returns the bytes of the first n characters of s (all of s
// when it has fewer).
func runePrefix(s []byte, n int64) []byte {
	if n <= 0 {
		return s[:0]
	}
	if n >= int64(len(s)) {
		return s
	}
	k := 0
	for ; n > 0 && k < len(s); n-- {
		if s[k] < utf8.RuneSelf {
			k++
			continue
		}
		_, w := utf8.DecodeRune(s[k:])
		k += w
	}
	return s[:k]
}

// runeSuffix returns the bytes of the last n characters of s.
func runeSuffix(s []byte, n int64) []byte {
	if n <= 0 {
		return s[len(s):]
	}
	if n >= int64(len(s)) {
		return s
	}
	k := len(s)
	for ; n > 0 && k > 0; n-- {
		_, w := utf8.DecodeLastRune(s[:k])
		k -= w
	}
	return s[k:]
}

// charCount is the length of s in characters (bytes when binary).
func charCount(s []byte, binary bool) int64 {
	if binary {
		return int64(len(s))
	}
	return int64(utf8.RuneCount(s))
}

// bytesPredicate binds contains/startswith/endswith: string or binary
// operands (other atomic types as strings), a boolean result.
func bytesPredicate(name string, pred func(s, sub []byte) bool) func(args []Expr) Expr {
	return rowsFunc(name, []rowKind{rowBytes, rowBytes}, Boolean, rowKernels{
		bool: func(a []rowArg, i int) (bool, bool, error) { return pred(a[0].str(i), a[1].str(i)), true, nil },
	})
}

// resultBytesType is binary when every listed argument is binary, else
// string (Spark casts a binary operand to string when another is a string).
func resultBytesType(args []Evaluator) arrow.DataType {
	for _, a := range args {
		if a != nil && Unwrap(a.DataType()).ID() != arrow.BINARY {
			return String
		}
	}
	return Binary
}

func bytesKind(dt arrow.DataType) rowKind {
	if dt.ID() == arrow.BINARY {
		return rowBin
	}
	return rowStr
}

// bindLeftRight binds left(str, len) and right(str, len): the first or
// last len characters; len <= 0 gives the empty string.
func bindLeftRight(right bool) func(*FuncExpr, *arrow.Schema, memory.Allocator, []Evaluator) (Evaluator, error) {
	return func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
		dt := resultBytesType(args[:1])
		bin := dt.ID() == arrow.BINARY
		return bindRows(f, in, mem, args, []rowKind{bytesKind(dt), rowInt}, dt, rowKernels{
			str: func(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
				s, n := a[0].str(i), a[1].int(i)
				if bin {
					n = min(max(n, 0), int64(len(s)))
					if right {
						return append(dst, s[int64(len(s))-n:]...), true, nil
					}
					return append(dst, s[:n]...), true, nil
				}
				if right {
					return append(dst, runeSuffix(s, n)...), true, nil
				}
				return append(dst, runePrefix(s, n)...), true, nil
			},
		})
	}
}

// bindPad binds lpad/rpad(str, len[, pad]): str padded with repetitions
// of pad (a space, or a zero byte for binary) to len characters, or cut to
// len; binary only when str and pad are binary.
func bindPad(left bool) func(*FuncExpr, *arrow.Schema, memory.Allocator, []Evaluator) (Evaluator, error) {
	return func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
		dt := resultBytesType([]Evaluator{args[0], arg3(args)})
		bin := dt.ID() == arrow.BINARY
		if len(args) == 2 {
			pad := Lit(" ")
			if bin {
				pad = TypedLit(Binary, []byte{0})
			}
			ev, err := pad.Bind(in, mem)
			if err != nil {
				return nil, err
			}
			args = append(args, ev)
			f = &FuncExpr{Name: f.Name, Args: append(append([]Expr(nil), f.Args...), pad), Loc: f.Loc, Mode: f.Mode, bind: f.bind}
		}
		kind := bytesKind(dt)
		return bindRows(f, in, mem, args, []rowKind{kind, rowInt, kind}, dt, rowKernels{
			size: func(a []rowArg, i int) int64 { return padSize(a[0].str(i), a[1].int(i), a[2].str(i), bin) },
			str: func(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
				s, n, pad := a[0].str(i), a[1].int(i), a[2].str(i)
				if n > maxValueBytes {
					return nil, false, fmt.Errorf("the padded length %d exceeds the limit of %d: %w", n, maxValueBytes, ErrOverflow)
				}
				have := charCount(s, bin)
				if n <= have {
					if bin {
						return append(dst, s[:max(n, 0)]...), true, nil
					}
					return append(dst, runePrefix(s, n)...), true, nil
				}
				if len(pad) == 0 {
					return append(dst, s...), true, nil
				}
				if !left {
					dst = append(dst, s...)
				}
				padLen := charCount(pad, bin)
				for need := n - have; need > 0; need -= padLen {
					if need >= padLen {
						dst = append(dst, pad...)
					} else if bin {
						dst = append(dst, pad[:need]...)
					} else {
						dst = append(dst, runePrefix(pad, need)...)
					}
				}
				if left {
					dst = append(dst, s...)
				}
				return dst, true, nil
			},
		})
	}
}

// padSize bounds the bytes of lpad/rpad(s, n, pad) without building it:
// s cut to n characters, or s and the pad characters it lacks (whole
// copies of pad, the last one possibly cut).
func padSize(s []byte, n int64, pad []byte, bin bool) int64 {
	if n > maxValueBytes {
		return 1 << 62 // the kernel refuses it
	}
	have := charCount(s, bin)
	if n <= have || len(pad) == 0 {
		return int64(len(s))
	}
	padLen := charCount(pad, bin)
	copies := (n - have + padLen - 1) / padLen
	return satAdd(int64(len(s)), satMul(copies, int64(len(pad))))
}

func arg3(args []Evaluator) Evaluator {
	if len(args) > 2 {
		return args[2]
	}
	return nil
}

// trimSet is the characters a trim removes.
type trimSet struct {
	ascii [4]uint32 // bitmap of the ASCII characters
	other []rune
}

func newTrimSet(chars []byte) *trimSet {
	t := &trimSet{}
	for len(chars) > 0 {
		r, w := utf8.DecodeRune(chars)
		if r < utf8.RuneSelf {
			t.ascii[r>>5] |= 1 << (r & 31)
		} else {
			t.other = append(t.other, r)
		}
		chars = chars[w:]
	}
	return t
}

func (t *trimSet) has(r rune) bool {
	if r < utf8.RuneSelf {
		return t.ascii[r>>5]&(1<<(r&31)) != 0
	}
	for _, o := range t.other {
		if o == r {
			return true
		}
	}
	return false
}

func (t *trimSet) trim(s []byte, leading, trailing bool) []byte {
	if leading {
		for len(s) > 0 {
			r, w := utf8.DecodeRune(s)
			if !t.has(r) {
				break
			}
			s = s[w:]
		}
	}
	if trailing {
		for len(s) > 0 {
			r, w := utf8.DecodeLastRune(s)
			if !t.has(r) {
				break
			}
			s = s[:len(s)-w]
		}
	}
	return s
}

var spaceTrim = newTrimSet([]byte(" "))

// Trim is trim/ltrim/rtrim/btrim(str[, chars]): str without the leading
// and/or trailing characters found in chars (a space by default). Binary
// operands are read as strings, as Spark does.
func trimFunc(name string, leading, trailing bool) func(args []Expr) Expr {
	return rowBinder(name, func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
		var fixed *trimSet
		if len(args) == 1 {
			fixed = spaceTrim
		} else if v, ok := fnConstValue(args[1]); ok && v != nil {
			switch x := v.(type) {
			case string:
				fixed = newTrimSet([]byte(x))
			case []byte:
				fixed = newTrimSet(x)
			}
		}
		return bindRows(f, in, mem, args, []rowKind{rowStr, rowStr}, String, rowKernels{
			str: func(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
				t := fixed
				if t == nil {
					t = newTrimSet(a[1].str(i))
				}
				return append(dst, t.trim(a[0].str(i), leading, trailing)...), true, nil
			},
		})
	})
}

// locateKernel is locate(substr, str, pos): the 1-based character
// position of substr in str at or after pos, 0 when absent or pos < 1.
func locateKernel(a []rowArg, i int, sub, str, pos int) (int64, bool, error) {
	start := int64(1)
	if pos >= 0 {
		if !a[pos].valid(i) {
			return 0, true, nil
		}
		start = a[pos].int(i)
	}
	if !a[sub].valid(i) || !a[str].valid(i) {
		return 0, false, nil
	}
	if start < 1 {
		return 0, true, nil
	}
	s, p := a[str].str(i), a[sub].str(i)
	from := runePrefix(s, start-1)
	if int64(utf8.RuneCount(from)) < start-1 {
		return 0, true, nil
	}
	k := bytes.Index(s[len(from):], p)
	if k < 0 {
		return 0, true, nil
	}
	return int64(utf8.RuneCount(s[:len(from)+k])) + 1, true, nil
}

// bindLocate binds locate(substr, str[, pos]) and position(...): a NULL
// pos gives 0 (Hive's rule, which Spark keeps).
func bindLocate(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	pos := -1
	if len(args) == 3 {
		pos = 2
		if args[2].DataType().ID() == arrow.NULL || isNullConst(args[2]) {
			return fnFoldConstant(f, in, mem, newConst(Int32, int32(0), mem))
		}
	}
	return bindRowsLenient(f, in, mem, args, []rowKind{rowStr, rowStr, rowInt}, Int32, rowKernels{
		num: func(a []rowArg, i int) (int64, bool, error) { return locateKernel(a, i, 0, 1, pos) },
	}, 1<<2)
}

// splitPartKernel is split_part(str, delim, part): the part-th piece of
// str split by the literal delim (counted from the end when negative),
// the empty string when there is no such piece; part 0 is an error.
func splitPartKernel(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
	s, d, part := a[0].str(i), a[1].str(i), a[2].int(i)
	if part == 0 {
		return nil, false, ErrInvalidIndex
	}
	if len(d) == 0 {
		if part == 1 || part == -1 {
			return append(dst, s...), true, nil
		}
		return dst, true, nil
	}
	pieces := int64(bytes.Count(s, d)) + 1
	if part < 0 {
		part += pieces + 1
	}
	if part < 1 || part > pieces {
		return dst, true, nil
	}
	for k := int64(1); k < part; k++ {
		s = s[bytes.Index(s, d)+len(d):]
	}
	if j := bytes.Index(s, d); j >= 0 {
		s = s[:j]
	}
	return append(dst, s...), true, nil
}

// replaceSize bounds replace(str, search[, replace]) before it is built:
// the string's length when the replacement is no longer than the search
// (nothing to count), else its exact size, len + matches × growth (the
// matches counted left to right without overlap, as the kernel finds them).
func replaceSize(a []rowArg, i int) int64 {
	s, old := a[0].str(i), a[1].str(i)
	var repl []byte
	if len(a) > 2 {
		repl = a[2].str(i)
	}
	if len(old) == 0 || len(repl) <= len(old) {
		return int64(len(s))
	}
	return satAdd(int64(len(s)), satMul(int64(bytes.Count(s, old)), int64(len(repl)-len(old))))
}

// replaceKernel is replace(str, search[, replace]): every occurrence of
// search replaced (an empty search changes nothing).
func replaceKernel(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
	s, old := a[0].str(i), a[1].str(i)
	var repl []byte
	if len(a) > 2 {
		repl = a[2].str(i)
	}
	if len(old) == 0 {
		return append(dst, s...), true, nil
	}
	for {
		k := bytes.Index(s, old)
		if k < 0 {
			return append(dst, s...), true, nil
		}
		dst = append(append(dst, s[:k]...), repl...)
		s = s[k+len(old):]
	}
}

// repeatKernel is repeat(str, n): str n times (empty for n <= 0).
// repeatSize is the exact size of repeat(str, n).
func repeatSize(a []rowArg, i int) int64 {
	return satMul(int64(len(a[0].str(i))), a[1].int(i))
}

func repeatKernel(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
	s, n := a[0].str(i), a[1].int(i)
	if n <= 0 || len(s) == 0 {
		return dst, true, nil
	}
	if repeatSize(a, i) > maxValueBytes { // saturating: a huge n does not wrap
		return nil, false, fmt.Errorf("repeat of %d bytes %d times exceeds the limit of %d bytes: %w", len(s), n, maxValueBytes, ErrOverflow)
	}
	for ; n > 0; n-- {
		dst = append(dst, s...)
	}
	return dst, true, nil
}

// reverseKernel is reverse(str): the characters in reverse order.
func reverseKernel(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
	s := a[0].str(i)
	for len(s) > 0 {
		_, w := utf8.DecodeLastRune(s)
		dst = append(dst, s[len(s)-w:]...)
		s = s[:len(s)-w]
	}
	return dst, true, nil
}

// Uuid is uuid(): a random (version 4) UUID per row, as a string.
func Uuid() Expr {
	return &FuncExpr{Name: "uuid", bind: func(f *FuncExpr, _ *arrow.Schema, mem memory.Allocator, _ []Evaluator) (Evaluator, error) {
		return &uuidEval{mem: mem}, nil
	}}
}

type uuidEval struct{ mem memory.Allocator }

func (u *uuidEval) DataType() arrow.DataType { return String }

func (u *uuidEval) Eval(_ context.Context, rec arrow.Record) (arrow.Array, error) {
	n := int(rec.NumRows())
	raw := make([]byte, 16*n)
	if _, err := rand.Read(raw); err != nil {
		return nil, fmt.Errorf("uuid: reading random bytes: %w", err)
	}
	out := newStrOut(u.mem, n, 36*n)
	for i := 0; i < n; i++ {
		b := raw[16*i : 16*i+16]
		b[6] = b[6]&0x0f | 0x40 // version 4
		b[8] = b[8]&0x3f | 0x80 // RFC 4122 variant
		out.reserve(36)
		for k, c := range b {
			if k == 4 || k == 6 || k == 8 || k == 10 {
				out.data = append(out.data, '-')
			}
			out.data = append(out.data, "0123456789abcdef"[c>>4], "0123456789abcdef"[c&15])
		}
		out.next()
	}
	return out.build(String, newValidityOut(u.mem, n))
}
