package vector

import (
	"fmt"
	"math/big"
	"strconv"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/decimal128"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// This file is to_char(number, fmt) (to_varchar, try_to_char): a number
// written with Spark's number format, the format of to_number read the
// other way (Spark's ToNumberParser.format). The format is validated by
// compileNumberFormat, so a format to_number refuses is refused here with
// the same message; it is then tokenized left to right once, and each
// value is written into a reused buffer.

// tcKind is the kind of a to_char format token.
type tcKind uint8

const (
	tcDigits tcKind = iota // a run of 0/9
	tcSep                  // , or G
	tcPoint                // . or D
	tcDollar               // $
	tcSign                 // S: - or +
	tcMinus                // MI: - or a space
	tcOpen                 // PR's <, first
	tcClose                // PR's >, last
)

type tcToken struct {
	kind tcKind
	n    int  // digits of a tcDigits run
	zero bool // a run starting with 0 before the point: pads with zeros
}

// charFormat is a compiled to_char number format.
type charFormat struct {
	tokens        []tcToken
	before, after int // digits of the format before and after the point
}

// compileCharFormat compiles a number format for to_char; the errors are
// compileNumberFormat's (Spark checks the format the same way for both).
func compileCharFormat(format string) (*charFormat, error) {
	nf, err := compileNumberFormat(format)
	if err != nil {
		return nil, err
	}
	s := nf.src
	cf := &charFormat{}
	point := false
	for i := 0; i < len(s); {
		switch c := s[i]; {
		case c == '0' || c == '9':
			j := i + 1
			for j < len(s) && (s[j] == '0' || s[j] == '9') {
				j++
			}
			cf.tokens = append(cf.tokens, tcToken{kind: tcDigits, n: j - i, zero: c == '0' && !point})
			if point {
				cf.after += j - i
			} else {
				cf.before += j - i
			}
			i = j
		case c == '.' || c == 'D':
			cf.tokens = append(cf.tokens, tcToken{kind: tcPoint})
			point = true
			i++
		case c == ',' || c == 'G':
			cf.tokens = append(cf.tokens, tcToken{kind: tcSep})
			i++
		case c == '$':
			cf.tokens = append(cf.tokens, tcToken{kind: tcDollar})
			i++
		case c == 'S':
			cf.tokens = append(cf.tokens, tcToken{kind: tcSign})
			i++
		case c == 'M': // MI: validated above
			cf.tokens = append(cf.tokens, tcToken{kind: tcMinus})
			i += 2
		case c == 'P': // PR: wraps the whole number
			cf.tokens = append(append([]tcToken{{kind: tcOpen}}, cf.tokens...), tcToken{kind: tcClose})
			i += 2
		default:
			return nil, fmt.Errorf("%w: unexpected character %q in the number format '%s'", ErrType, c, s)
		}
	}
	return cf, nil
}

// tcScratch is the per-batch memory of formatting.
type tcScratch struct {
	digits, before, after, out []byte
	big                        big.Int
}

// format appends v (a decimal of scale) written with the format to dst.
func (cf *charFormat) format(sc *tcScratch, v decimal128.Num, scale int32) []byte {
	neg := v.Sign() < 0
	// The digits of |v|, then split at the scale.
	sc.digits = sc.digits[:0]
	abs := v.Abs()
	if abs.HighBits() == 0 {
		sc.digits = strconv.AppendUint(sc.digits, abs.LowBits(), 10)
	} else {
		sc.digits = abs.BigInt().Append(sc.digits, 10)
	}
	// At least one digit before the point: 0.05 is "005" at scale 2.
	if n, pad := len(sc.digits), int(scale)+1-len(sc.digits); pad > 0 {
		sc.digits = append(sc.digits, make([]byte, pad)...)
		copy(sc.digits[pad:], sc.digits[:n])
		for i := range pad {
			sc.digits[i] = '0'
		}
	}
	intPart, frac := sc.digits[:int32(len(sc.digits))-scale], sc.digits[int32(len(sc.digits))-scale:]
	for len(intPart) > 0 && intPart[0] == '0' {
		intPart = intPart[1:]
	}
	for len(frac) > 0 && frac[len(frac)-1] == '0' {
		frac = frac[:len(frac)-1]
	}
	// Pad to the format's digits: spaces before the integer part, zeros
	// after the fraction. A value with more digits than the format shows
	// as '#' in every digit position.
	sc.before, sc.after = sc.before[:0], sc.after[:0]
	if len(intPart) > cf.before || len(frac) > cf.after {
		for range cf.before {
			sc.before = append(sc.before, '#')
		}
		for range cf.after {
			sc.after = append(sc.after, '#')
		}
	} else {
		for range cf.before - len(intPart) {
			sc.before = append(sc.before, ' ')
		}
		sc.before = append(sc.before, intPart...)
		sc.after = append(sc.after, frac...)
		for range cf.after - len(frac) {
			sc.after = append(sc.after, '0')
		}
	}
	r := sc.out[:0]
	bi, ai := 0, 0
	point := false
	for _, t := range cf.tokens {
		switch t.kind {
		case tcDigits:
			for range t.n {
				if point {
					r = append(r, sc.after[ai])
					ai++
					continue
				}
				switch c := sc.before[bi]; {
				case c == ' ' && t.zero:
					r = append(r, '0')
				case c == ' ':
					r = appendSpaceBeforeSign(r)
				default:
					r = append(r, c)
				}
				bi++
			}
		case tcSep:
			if n := len(r); n > 0 && r[n-1] >= '0' && r[n-1] <= '9' {
				r = append(r, ',')
			} else {
				r = appendSpaceBeforeSign(r)
			}
		case tcPoint:
			// No integer digits: the last space becomes the 0 of 0.x.
			if n := len(r); n > 0 && r[n-1] == ' ' {
				r[n-1] = '0'
			}
			r = append(r, '.')
			point = true
		case tcDollar:
			r = append(r, '$')
		case tcSign:
			blankLonePoint(r)
			if neg {
				r = appendSignAfterSpaces(r, '-')
			} else {
				r = appendSignAfterSpaces(r, '+')
			}
		case tcMinus:
			if neg {
				blankLonePoint(r)
				r = appendSignAfterSpaces(r, '-')
			} else {
				r = append(r, ' ')
			}
		case tcOpen:
			if neg {
				r = append(r, '<')
			}
		case tcClose:
			blankLonePoint(r)
			if neg {
				r = appendSignAfterSpaces(r, '>')
			} else {
				r = append(r, ' ', ' ')
			}
		}
	}
	blankLonePoint(r)
	sc.out = r
	if len(r) == 0 || (len(r) == 1 && (r[0] == '+' || r[0] == '-')) {
		return append(r[:0], '0')
	}
	return r
}

// appendSpaceBeforeSign appends a space, moved before any sign or '<'
// that ends r, so that the sign stays next to the digits that follow.
func appendSpaceBeforeSign(r []byte) []byte {
	r = append(r, ' ')
	for i := len(r) - 1; i >= 1 && r[i] == ' ' && (r[i-1] == '+' || r[i-1] == '-' || r[i-1] == '<'); i-- {
		r[i], r[i-1] = r[i-1], ' '
	}
	return r
}

// appendSignAfterSpaces appends c, moved before the spaces that end r, so
// that a trailing sign touches the last digit.
func appendSignAfterSpaces(r []byte, c byte) []byte {
	r = append(r, c)
	for i := len(r) - 1; i >= 1 && r[i] == c && r[i-1] == ' '; i-- {
		r[i], r[i-1] = ' ', c
	}
	return r
}

// blankLonePoint turns a decimal point that ends the number (last, or
// followed by a space) into a space.
func blankLonePoint(r []byte) {
	for i, c := range r {
		if c == '.' {
			if i == len(r)-1 || r[i+1] == ' ' {
				r[i] = ' '
			}
			return
		}
	}
}

// bindToCharNumber binds to_char(number, fmt): integers are read as
// decimals of scale 0, as Spark casts them implicitly; floating point is
// refused (Spark's ANSI mode does not cast it to DECIMAL implicitly).
func bindToCharNumber(f *FuncExpr, mem memory.Allocator, args []Evaluator, fmtValue any) (Evaluator, error) {
	if fmtValue == nil {
		return fnNullResult(String, mem), nil
	}
	cf, err := compileCharFormat(fmtValue.(string))
	if err != nil {
		return nil, err
	}
	x := args[0]
	dt := Unwrap(x.DataType())
	switch {
	case dt.ID() == arrow.DECIMAL128:
	case IsIntegral(dt):
		to := Decimal(20, 0)
		k := castKernelFor(dt, to)
		if k == nil {
			return nil, fmt.Errorf("%s: cannot read %s as a DECIMAL: %w", f.Name, TypeName(dt), ErrType)
		}
		x = &castEval{child: x, from: x.DataType(), to: to, kern: k, mem: mem, expr: "CAST(" + f.Args[0].String() + " AS DECIMAL(20,0))", operand: f.Args[0].String()}
	default:
		return nil, fmt.Errorf("[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] %s needs a DECIMAL or an integer (or a date or timestamp), not %s: cast a floating-point value to DECIMAL first: %w", f.Name, TypeName(dt), ErrType)
	}
	scale := Unwrap(x.DataType()).(*arrow.Decimal128Type).Scale
	return fnFoldConstant(f, nil, mem, unaryKernelEval(f, x, String, toCharKernel(cf, scale), mem), x)
}

// toCharKernel formats a decimal column.
func toCharKernel(cf *charFormat, scale int32) castKernel {
	return func(c *castEval, arr arrow.Array) (arrow.Array, error) {
		d, ok := arr.(*array.Decimal128)
		if !ok {
			return nil, fmt.Errorf("to_char: input %s is not a decimal column: %w", arr.DataType(), ErrType)
		}
		b := array.NewStringBuilder(c.mem)
		defer b.Release()
		n := d.Len()
		b.Reserve(n)
		var sc tcScratch
		for i := 0; i < n; i++ {
			if d.IsNull(i) {
				b.AppendNull()
				continue
			}
			b.BinaryBuilder.Append(cf.format(&sc, d.Value(i), scale))
		}
		return b.NewArray(), nil
	}
}
