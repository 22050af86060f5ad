package vector

import (
	"encoding/base64"
	"errors"
	"fmt"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Binary conversions with Spark's semantics: hex/unhex, base64/unbase64
// (Java's MIME coder: lines of 76 characters, characters outside the
// alphabet ignored when decoding), encode/decode with a charset, and
// to_binary(str, fmt).

// ErrInvalidFormat is a conversion of text that is not in its format
// (Spark's CONVERSION_INVALID_INPUT and Java's IllegalArgumentException).
var ErrInvalidFormat = errors.New("invalid input for the format")

const hexDigits = "0123456789ABCDEF"

// appendHex appends the upper-case hex digits of b.
func appendHex(dst, b []byte) []byte {
	for _, c := range b {
		dst = append(dst, hexDigits[c>>4], hexDigits[c&15])
	}
	return dst
}

// appendHexLong appends Java's Long.toHexString(v) in upper case (two's
// complement for negative values).
func appendHexLong(dst []byte, v int64) []byte {
	u := uint64(v)
	if u == 0 {
		return append(dst, '0')
	}
	var buf [16]byte
	k := len(buf)
	for u != 0 {
		k--
		buf[k] = hexDigits[u&15]
		u >>= 4
	}
	return append(dst, buf[k:]...)
}

func hexVal(c byte) (byte, bool) {
	switch {
	case c >= '0' && c <= '9':
		return c - '0', true
	case c >= 'a' && c <= 'f':
		return c - 'a' + 10, true
	case c >= 'A' && c <= 'F':
		return c - 'A' + 10, true
	}
	return 0, false
}

// appendUnhex decodes hex text (an odd length has an implicit leading 0);
// false when a character is not a hex digit.
func appendUnhex(dst, s []byte) ([]byte, bool) {
	if len(s)%2 == 1 {
		lo, ok := hexVal(s[0])
		if !ok {
			return dst, false
		}
		dst = append(dst, lo)
		s = s[1:]
	}
	for k := 0; k+1 < len(s); k += 2 {
		hi, ok1 := hexVal(s[k])
		lo, ok2 := hexVal(s[k+1])
		if !ok1 || !ok2 {
			return dst, false
		}
		dst = append(dst, hi<<4|lo)
	}
	return dst, true
}

// bindHex binds hex(x): the hex digits of an integer (as Java's
// Long.toHexString) or of the bytes of a string or binary value.
func bindHex(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	if dt := Unwrap(args[0].DataType()); IsIntegral(dt) {
		return bindRows(f, in, mem, args, []rowKind{rowInt}, String, rowKernels{
			str: func(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
				return appendHexLong(dst, a[0].int(i)), true, nil
			},
		})
	}
	return bindRows(f, in, mem, args, []rowKind{rowBytes}, String, rowKernels{
		str: func(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
			return appendHex(dst, a[0].str(i)), true, nil
		},
	})
}

// unhexKernel is unhex(str): the bytes of hex text, NULL when it is not hex.
func unhexKernel(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
	out, ok := appendUnhex(dst, a[0].str(i))
	return out, ok, nil
}

// base64Kernel is base64(bin) with Java's MIME encoder: lines of at most
// 76 characters separated by CRLF.
func base64Kernel(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
	b := a[0].str(i)
	for len(b) > 0 {
		chunk := b[:min(len(b), 57)] // 57 bytes encode to 76 characters
		dst = base64.StdEncoding.AppendEncode(dst, chunk)
		b = b[len(chunk):]
		if len(b) > 0 {
			dst = append(dst, '\r', '\n')
		}
	}
	return dst, true, nil
}

// appendUnbase64 decodes base64 as Java's MIME decoder: characters outside
// the alphabet are skipped, decoding stops at padding, and a last group of
// one character is an error.
func appendUnbase64(dst, s []byte) ([]byte, error) {
	clean := make([]byte, 0, len(s))
	for _, c := range s {
		if c == '=' {
			break
		}
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || c == '+' || c == '/' {
			clean = append(clean, c)
		}
	}
	if len(clean)%4 == 1 {
		return dst, fmt.Errorf("last unit does not have enough valid bits: %w", ErrInvalidFormat)
	}
	out, err := base64.RawStdEncoding.AppendDecode(dst, clean)
	if err != nil {
		return dst, fmt.Errorf("%v: %w", err, ErrInvalidFormat)
	}
	return out, nil
}

func unbase64Kernel(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
	out, err := appendUnbase64(dst, a[0].str(i))
	if err != nil {
		return nil, false, err
	}
	return out, true, nil
}

// charset is a character set of encode and decode.
type charset uint8

const (
	csUTF8 charset = iota
	csASCII
	csLatin1
	csUTF16BE
	csUTF16LE
	csUTF16 // big-endian with a byte-order mark when encoding
)

func parseCharset(name string) (charset, error) {
	switch strings.ToUpper(name) {
	case "UTF-8", "UTF8":
		return csUTF8, nil
	case "US-ASCII", "ASCII":
		return csASCII, nil
	case "ISO-8859-1", "LATIN1":
		return csLatin1, nil
	case "UTF-16BE":
		return csUTF16BE, nil
	case "UTF-16LE":
		return csUTF16LE, nil
	case "UTF-16":
		return csUTF16, nil
	}
	return 0, fmt.Errorf("[INVALID_PARAMETER_VALUE.CHARSET] unsupported charset %q (expects one of UTF-8, US-ASCII, ISO-8859-1, UTF-16BE, UTF-16LE, UTF-16): %w", name, ErrType)
}

// encodeAppend encodes UTF-8 text s in cs; characters cs cannot hold
// become '?', as Java's String.getBytes does.
func (cs charset) encodeAppend(dst, s []byte) []byte {
	switch cs {
	case csUTF8:
		return append(dst, s...)
	case csUTF16:
		dst = append(dst, 0xFE, 0xFF)
	}
	for len(s) > 0 {
		r, w := utf8.DecodeRune(s)
		s = s[w:]
		switch cs {
		case csASCII, csLatin1:
			limit := rune(0x7F)
			if cs == csLatin1 {
				limit = 0xFF
			}
			if r > limit {
				r = '?'
			}
			dst = append(dst, byte(r))
		default:
			if r >= 0x10000 {
				r1, r2 := utf16.EncodeRune(r)
				dst = cs.appendUnit(cs.appendUnit(dst, uint16(r1)), uint16(r2))
			} else {
				dst = cs.appendUnit(dst, uint16(r))
			}
		}
	}
	return dst
}

// appendUnit appends a UTF-16 code unit in the charset's byte order.
func (cs charset) appendUnit(dst []byte, u uint16) []byte {
	if cs == csUTF16LE {
		return append(dst, byte(u), byte(u>>8))
	}
	return append(dst, byte(u>>8), byte(u))
}

// decodeAppend decodes b from cs into UTF-8; invalid input becomes U+FFFD.
func (cs charset) decodeAppend(dst, b []byte) []byte {
	switch cs {
	case csUTF8:
		for len(b) > 0 {
			r, w := utf8.DecodeRune(b)
			dst = utf8.AppendRune(dst, r)
			b = b[w:]
		}
		return dst
	case csASCII, csLatin1:
		for _, c := range b {
			if cs == csASCII && c > 0x7F {
				dst = utf8.AppendRune(dst, utf8.RuneError)
				continue
			}
			dst = utf8.AppendRune(dst, rune(c))
		}
		return dst
	}
	le := cs == csUTF16LE
	if cs == csUTF16 && len(b) >= 2 {
		switch {
		case b[0] == 0xFE && b[1] == 0xFF:
			b = b[2:]
		case b[0] == 0xFF && b[1] == 0xFE:
			b, le = b[2:], true
		}
	}
	units := make([]uint16, 0, len(b)/2)
	for k := 0; k+1 < len(b); k += 2 {
		if le {
			units = append(units, uint16(b[k])|uint16(b[k+1])<<8)
		} else {
			units = append(units, uint16(b[k])<<8|uint16(b[k+1]))
		}
	}
	for _, r := range utf16.Decode(units) {
		dst = utf8.AppendRune(dst, r)
	}
	if len(b)%2 == 1 {
		dst = utf8.AppendRune(dst, utf8.RuneError)
	}
	return dst
}

// constCharset reads the constant charset argument k; a column charset is
// parsed per row.
func constCharset(args []Evaluator, k int) (*charset, error) {
	v, ok := fnConstValue(args[k])
	if !ok || v == nil {
		return nil, nil
	}
	s, ok := v.(string)
	if !ok {
		return nil, nil
	}
	cs, err := parseCharset(s)
	if err != nil {
		return nil, err
	}
	return &cs, nil
}

func charsetAt(fixed *charset, a []rowArg, k, i int) (charset, error) {
	if fixed != nil {
		return *fixed, nil
	}
	return parseCharset(string(a[k].str(i)))
}

// bindEncode binds encode(str, charset) → binary.
func bindEncode(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	fixed, err := constCharset(args, 1)
	if err != nil {
		return nil, err
	}
	return bindRows(f, in, mem, args, []rowKind{rowStr, rowStr}, Binary, rowKernels{
		str: func(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
			cs, err := charsetAt(fixed, a, 1, i)
			if err != nil {
				return nil, false, err
			}
			return cs.encodeAppend(dst, a[0].str(i)), true, nil
		},
	})
}

// bindDecodeCharset binds decode(bin, charset) → string.
func bindDecodeCharset(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	fixed, err := constCharset(args, 1)
	if err != nil {
		return nil, err
	}
	return bindRows(f, in, mem, args, []rowKind{rowBin, rowStr}, String, rowKernels{
		str: func(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
			cs, err := charsetAt(fixed, a, 1, i)
			if err != nil {
				return nil, false, err
			}
			return cs.decodeAppend(dst, a[0].str(i)), true, nil
		},
	})
}

// bindToBinary binds to_binary(str[, fmt]) (try: NULL for input not in
// the format): fmt is a constant 'hex' (the default), 'utf-8', 'utf8' or
// 'base64', any case; a NULL fmt gives NULL. try_to_binary also answers
// NULL, rather than refusing the query, for a fmt that is not a string
// literal or names no format: Spark's TryToBinary is ToBinary with
// nullOnInvalidFormat, whose type check lets any fmt through and whose
// replacement is a NULL literal for an invalid one.
func bindToBinary(try bool) func(*FuncExpr, *arrow.Schema, memory.Allocator, []Evaluator) (Evaluator, error) {
	return func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
		format := "hex"
		if len(args) == 2 {
			dt := args[1].DataType()
			v, ok := fnConstValue(args[1])
			if !ok || !(IsStringLike(dt) || dt.ID() == arrow.NULL) {
				if try {
					return fnNullResult(Binary, mem), nil
				}
				return nil, fmt.Errorf("[INVALID_PARAMETER_VALUE] the 'format' parameter of function 'to_binary' needs to be a string literal: %w", ErrType)
			}
			if v == nil {
				return fnNullResult(Binary, mem), nil
			}
			format = strings.ToLower(v.(string))
			args = args[:1]
		}
		var k func(a []rowArg, i int, dst []byte) ([]byte, bool, error)
		switch format {
		case "hex":
			k = func(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
				if len(a[0].str(i))%2 == 1 {
					// Spark versions disagree on an odd number of digits
					// (3.3 drops a byte, later versions pad): refused, by
					// try_to_binary too, whose NULL would be a wrong answer
					// (every Spark version answers a value).
					if try {
						if _, ok := appendUnhex(nil, append([]byte{'0'}, a[0].str(i)...)); !ok {
							return nil, false, nil // not hex at all: NULL in every Spark version
						}
						return nil, false, fmt.Errorf("try_to_binary('%s', 'hex'): an odd number of hex digits is not supported (Spark versions decode it differently): %w", a[0].str(i), ErrInvalidFormat)
					}
					return nil, false, fmt.Errorf("[CONVERSION_INVALID_INPUT] the value '%s' has an odd number of hex digits and cannot be converted to BINARY with the format 'hex': %w", a[0].str(i), ErrInvalidFormat)
				}
				out, ok := appendUnhex(dst, a[0].str(i))
				if !ok && !try {
					return nil, false, fmt.Errorf("[CONVERSION_INVALID_INPUT] the value '%s' cannot be converted to BINARY with the format 'hex': %w", a[0].str(i), ErrInvalidFormat)
				}
				return out, ok, nil
			}
		case "utf-8", "utf8":
			k = func(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
				return append(dst, a[0].str(i)...), true, nil
			}
		case "base64":
			k = func(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
				out, err := appendUnbase64(dst, a[0].str(i))
				if err != nil {
					if try {
						return nil, false, nil
					}
					return nil, false, err
				}
				return out, true, nil
			}
		default:
			if try {
				return fnNullResult(Binary, mem), nil
			}
			return nil, fmt.Errorf("[INVALID_PARAMETER_VALUE] invalid value for the 'format' parameter of function 'to_binary': %s; the value has to be a case-insensitive string literal of 'hex', 'utf-8', 'utf8', or 'base64': %w", format, ErrType)
		}
		return bindRows(f, in, mem, args, []rowKind{rowStr}, Binary, rowKernels{str: k})
	}
}
