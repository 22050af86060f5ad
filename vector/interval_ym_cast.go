package vector

import (
	"math"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// CAST(string AS INTERVAL YEAR | MONTH | YEAR TO MONTH), as Spark's
// castStringToYMInterval: the text, trimmed, is one of
//
//	[+|-]y-m                                  (YEAR TO MONTH)
//	INTERVAL [+|-]'[+|-]y-m' YEAR TO MONTH    (YEAR TO MONTH)
//	[+|-]n                                    (YEAR: n years; MONTH: n months)
//	INTERVAL [+|-]'[+|-]n' YEAR|MONTH         (the unit of the target)
//
// case-insensitively, with years at most 178956970 and months 0 to 11 in
// the y-m forms; anything else, or a result beyond an int of months, is an
// error (also with ANSI off, as in Spark), NULL under TRY_CAST.

// ParseYMCast reads s as a cast to the year-month interval of fields f;
// false when Spark's cast would fail.
func ParseYMCast(s string, f YMFields) (int32, bool) {
	t := strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	sign := func(b byte) bool { return b == '+' || b == '-' || b == '|' }
	neg := false
	lit := len(t) > 8 && strings.EqualFold(t[:8], "INTERVAL") && t[8] <= ' '
	unit := ""
	if lit {
		rest := strings.TrimLeft(t[8:], " \t\n\r\f\v")
		if rest != "" && sign(rest[0]) {
			neg, rest = rest[0] == '-', rest[1:]
		}
		if !strings.HasPrefix(rest, "'") {
			return 0, false
		}
		end := strings.IndexByte(rest[1:], '\'')
		if end < 0 {
			return 0, false
		}
		t = rest[1 : end+1]
		unit = strings.ToUpper(strings.Join(strings.Fields(rest[end+2:]), " "))
		if end+2 < len(rest) && rest[end+2] > ' ' {
			return 0, false // the unit must follow whitespace
		}
	}
	if t != "" && sign(t[0]) {
		neg, t = neg != (t[0] == '-'), t[1:]
	}
	digits := func(s string) (int64, bool) {
		if s == "" || len(s) > 18 {
			return 0, false
		}
		v := int64(0)
		for i := 0; i < len(s); i++ {
			if s[i] < '0' || s[i] > '9' {
				return 0, false
			}
			v = v*10 + int64(s[i]-'0')
		}
		return v, true
	}
	var months int64
	if ys, ms, ok := strings.Cut(t, "-"); ok {
		if f != YMYearToMonth || lit && unit != "YEAR TO MONTH" {
			return 0, false
		}
		y, ok1 := digits(ys)
		m, ok2 := digits(ms)
		if !ok1 || !ok2 || y > math.MaxInt32/12 || m > 11 {
			return 0, false
		}
		months = y*12 + m
	} else {
		n, ok := digits(t)
		if !ok {
			return 0, false
		}
		switch {
		case lit && unit == "YEAR" && f == YMYear, !lit && f == YMYear:
			months = n * 12
		case lit && unit == "MONTH" && f == YMMonth, !lit && f == YMMonth:
			months = n
		default:
			return 0, false
		}
	}
	if neg {
		months = -months
	}
	if months > math.MaxInt32 || months < math.MinInt32 {
		return 0, false
	}
	return int32(months), true
}

// stringToYMKernel is the cast kernel of strings to the year-month
// interval of fields f.
func stringToYMKernel(f YMFields) castKernel {
	return func(c *castEval, arr arrow.Array) (arrow.Array, error) {
		n := arr.Len()
		offs, data := fnBinaryView(arr)
		buf, dst := fnFixedBuf[int32](c.mem, n)
		v := newValidityOut(c.mem, n, arr)
		inputNulls := v.hasNulls()
		for i := 0; i < n; i++ {
			if inputNulls && !v.valid(i) {
				dst[i] = 0
				continue
			}
			m, ok := ParseYMCast(unsafeString(data[offs[i]:offs[i+1]]), f)
			if !ok {
				if c.mode != ModeTry {
					buf.Release()
					v.release()
					return nil, c.invalidError(arr, i)
				}
				v.setNull(i)
			}
			dst[i] = m
		}
		bm, nulls := v.finish()
		return fnNewArray(c.to, n, []*memory.Buffer{bm, buf}, nil, nulls), nil
	}
}
