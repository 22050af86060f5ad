package vector

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// FromUnixTime is from_unixtime(seconds[, fmt]): the instant seconds
// after the epoch as text in the session time zone, formatted by the Spark
// datetime pattern fmt (a constant; default yyyy-MM-dd HH:mm:ss).
func FromUnixTime(x, fmt Expr) Expr {
	return &FuncExpr{Name: "from_unixtime", Args: withOptional([]Expr{x}, fmt), bind: bindFromUnixTime}
}

// checkFormattable refuses the pattern letters formatting does not
// implement (zones and offsets need the zone's names and rules).
func (p *datetimePattern) checkFormattable() error {
	return checkFormattable(p.src, p.items, false)
}

// checkFormattableOffsets refuses the zone letters formatting does not
// implement where the offset is known (formatZoned): zone names and ids
// (z, VV), whose text is Java's locale data.
func (p *datetimePattern) checkFormattableOffsets() error {
	return checkFormattable(p.src, p.items, true)
}

func checkFormattable(src string, items []dtItem, offsets bool) error {
	for _, it := range items {
		switch it.kind {
		case dtOffset, dtZoneID:
			if it.kind == dtOffset && offsets {
				continue
			}
			return errPattern(src, "formatting with the zone letter '%c' is not supported", it.letter)
		case dtOptional:
			if err := checkFormattable(src, it.sub, offsets); err != nil {
				return err
			}
		}
	}
	return nil
}

var quarterNames = []string{"1st quarter", "2nd quarter", "3rd quarter", "4th quarter"}

// Java's offset patterns (DateTimeFormatterBuilder.OffsetIdPrinterParser)
// by their index: an odd index has no colons; minutes are printed from
// index 3 on, or from 1 when not zero; seconds from 7 on, or from 5 when
// not zero.
const (
	offHHmm     = 1 // +HHmm
	offHHMM     = 3 // +HHMM
	offHHcMM    = 4 // +HH:MM
	offHHMMss   = 5 // +HHMMss
	offHHcMMcss = 6 // +HH:MM:ss
)

// appendOffsetLetter prints offset (seconds east of UTC) as the offset
// letters of it do in Java: X and x with 1-5 letters (+HHmm, +HHMM,
// +HH:MM, +HHMMss, +HH:MM:ss; X prints Z for zero, x +00, +0000 or
// +00:00), Z with 1-3 letters +HHMM, 4 GMT+HH:MM[:ss], 5 +HH:MM:ss (Z for
// zero), O GMT+H[:MM[:ss]] and OOOO GMT+HH:MM[:ss].
func appendOffsetLetter(dst []byte, it dtItem, offset int) []byte {
	kinds := [...]int{0, offHHmm, offHHMM, offHHcMM, offHHMMss, offHHcMMcss}
	switch it.letter {
	case 'X':
		return appendOffsetPattern(dst, offset, kinds[it.count], "Z")
	case 'x':
		zero := "+00:00"
		switch {
		case it.count == 1:
			zero = "+00"
		case it.count%2 == 0:
			zero = "+0000"
		}
		return appendOffsetPattern(dst, offset, kinds[it.count], zero)
	case 'Z':
		switch it.count {
		case 4:
			return appendLocalizedOffset(dst, offset, true)
		case 5:
			return appendOffsetPattern(dst, offset, offHHcMMcss, "Z")
		}
		return appendOffsetPattern(dst, offset, offHHMM, "+0000")
	}
	return appendLocalizedOffset(dst, offset, it.count == 4)
}

// appendOffsetPattern prints offset in Java's offset pattern kind, or
// zero where nothing but zeros would be printed.
func appendOffsetPattern(dst []byte, offset, kind int, zero string) []byte {
	start := len(dst)
	abs := offset
	sign := byte('+')
	if offset < 0 {
		abs, sign = -offset, '-'
	}
	h, m, s := abs/3600, abs/60%60, abs%60
	sep := kind%2 == 0
	dst = append(dst, sign)
	dst = appendPadded(dst, int64(h), 2)
	printed := h
	if kind >= 3 || kind >= 1 && m > 0 {
		if sep {
			dst = append(dst, ':')
		}
		dst = appendPadded(dst, int64(m), 2)
		printed += m
		if kind >= 7 || kind >= 5 && s > 0 {
			if sep {
				dst = append(dst, ':')
			}
			dst = appendPadded(dst, int64(s), 2)
			printed += s
		}
	}
	if printed == 0 {
		return append(dst[:start], zero...)
	}
	return dst
}

// appendLocalizedOffset prints Java's localized offset: GMT for zero,
// else GMT and the signed hours, then minutes and seconds when not zero
// (short: H[:mm[:ss]]) or always minutes (full: HH:mm[:ss]).
func appendLocalizedOffset(dst []byte, offset int, full bool) []byte {
	dst = append(dst, "GMT"...)
	if offset == 0 {
		return dst
	}
	abs := offset
	sign := byte('+')
	if offset < 0 {
		abs, sign = -offset, '-'
	}
	h, m, s := abs/3600, abs/60%60, abs%60
	dst = append(dst, sign)
	if full {
		dst = appendPadded(dst, int64(h), 2)
		dst = append(dst, ':')
		dst = appendPadded(dst, int64(m), 2)
	} else {
		dst = appendPadded(dst, int64(h), 1)
		if m > 0 || s > 0 {
			dst = append(dst, ':')
			dst = appendPadded(dst, int64(m), 2)
		}
	}
	if s > 0 {
		dst = append(dst, ':')
		dst = appendPadded(dst, int64(s), 2)
	}
	return dst
}

var shortDayNames = []string{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"}
var fullMonthNames = []string{"January", "February", "March", "April", "May", "June", "July",
	"August", "September", "October", "November", "December"}
var fullDayNames = []string{"Monday", "Tuesday", "Wednesday", "Thursday", "Friday", "Saturday", "Sunday"}

// format appends the wall-clock time wall (microseconds, as if UTC) as
// Java's DateTimeFormatter prints it; false for a year the pattern cannot
// print as Java would (before year 1 or past 9999, where Java switches to
// era and sign rules).
func (p *datetimePattern) format(dst []byte, wall int64) ([]byte, bool) {
	return p.formatZoned(dst, wall, 0, false)
}

// formatZoned is format for a wall time whose zone offset (seconds east
// of UTC) is known, which the offset letters (X, x, Z, O) print.
func (p *datetimePattern) formatZoned(dst []byte, wall int64, offset int, hasOffset bool) ([]byte, bool) {
	days := fnFloorDiv(wall, fnMicrosPerDay)
	tod := wall - days*fnMicrosPerDay
	y, m, d := civilFromDays(days)
	if y < 1 || y > 9999 {
		return dst, false
	}
	h := tod / (3600 * fnMicrosPerSecond)
	mi := tod / (60 * fnMicrosPerSecond) % 60
	s := tod / fnMicrosPerSecond % 60
	us := tod % fnMicrosPerSecond
	return formatItems(dst, p.items, wallFields{days, y, m, d, h, mi, s, us, offset, hasOffset})
}

// wallFields are the fields of a wall-clock time that patterns print.
type wallFields struct {
	days         int64
	y            int64
	m, d         int
	h, mi, s, us int64
	offset       int // seconds east of UTC, when hasOffset
	hasOffset    bool
}

// formatItems appends items as Java prints them. An optional section is
// printed whole: every field it can hold (no zone: checkFormattable
// refuses those) is known for a timestamp.
func formatItems(dst []byte, items []dtItem, w wallFields) ([]byte, bool) {
	days, y, m, d, h, mi, s, us := w.days, w.y, w.m, w.d, w.h, w.mi, w.s, w.us
	for _, it := range items {
		switch it.kind {
		case dtOptional:
			var ok bool
			if dst, ok = formatItems(dst, it.sub, w); !ok {
				return dst, false
			}
		case dtEra:
			// Years before 1 are refused above: always the common era.
			switch it.count {
			case 4:
				dst = append(dst, "Anno Domini"...)
			default:
				dst = append(dst, "AD"...)
			}
		case dtQuarter:
			q := (m-1)/3 + 1
			switch it.count {
			case 1, 2:
				dst = appendPadded(dst, int64(q), it.count)
			case 3:
				dst = append(dst, 'Q', byte('0'+q))
			default:
				dst = append(dst, quarterNames[q-1]...)
			}
		case dtAlignedDOW:
			dst = appendPadded(dst, int64((d-1)%7+1), 1)
		case dtOffset:
			if !w.hasOffset {
				return dst, false
			}
			dst = appendOffsetLetter(dst, it, w.offset)
		case dtLiteral:
			dst = append(dst, it.lit...)
		case dtYear:
			if it.count == 2 {
				dst = appendPadded(dst, y%100, 2)
			} else {
				dst = appendPadded(dst, y, it.count)
			}
		case dtMonth:
			dst = appendPadded(dst, int64(m), it.count)
		case dtMonthText:
			name := fullMonthNames[m-1]
			if it.count == 3 {
				name = name[:3]
			}
			dst = append(dst, name...)
		case dtDay:
			dst = appendPadded(dst, int64(d), it.count)
		case dtDayOfYear:
			dst = appendPadded(dst, days-daysFromCivil(y, 1, 1)+1, it.count)
		case dtHour:
			dst = appendPadded(dst, h, it.count)
		case dtHourK1:
			k := h
			if k == 0 {
				k = 24
			}
			dst = appendPadded(dst, k, it.count)
		case dtHour12:
			k := h % 12
			if k == 0 {
				k = 12
			}
			dst = appendPadded(dst, k, it.count)
		case dtHourK0:
			dst = appendPadded(dst, h%12, it.count)
		case dtMinute:
			dst = appendPadded(dst, mi, it.count)
		case dtSecond:
			dst = appendPadded(dst, s, it.count)
		case dtFraction:
			// The first count digits of the fraction (nanoseconds).
			frac := appendPadded(nil, us*1000, 9)
			dst = append(dst, frac[:it.count]...)
		case dtAmPm:
			if h < 12 {
				dst = append(dst, "AM"...)
			} else {
				dst = append(dst, "PM"...)
			}
		case dtDayName:
			// 1970-01-01 was a Thursday (index 3 from Monday).
			wd := fnFloorMod(days+3, 7)
			if it.count == 4 {
				dst = append(dst, fullDayNames[wd]...)
			} else {
				dst = append(dst, shortDayNames[wd]...)
			}
		default:
			return dst, false
		}
	}
	return dst, true
}

func bindFromUnixTime(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	pattern := DefaultTimestampFormat
	if len(args) == 2 {
		if v, ok := fnConstValue(args[0]); ok && v == nil || args[0].DataType().ID() == arrow.NULL {
			// NULL seconds are NULL whatever the format, a column's
			// included (Spark's from_unixtime is null-intolerant).
			return fnNullResult(String, mem), nil
		}
		v, ok := fnConstValue(args[1])
		if !ok && IsStringLike(args[1].DataType()) {
			return bindFromUnixTimeRows(f, in, mem, args)
		}
		if !ok || args[1].DataType().ID() != arrow.STRING && args[1].DataType().ID() != arrow.NULL {
			return nil, fmt.Errorf("the format %s must be a constant string: %w", f.Args[1], ErrType)
		}
		if v == nil {
			return fnNullResult(String, mem), nil
		}
		pattern = v.(string)
	}
	p, err := compileDatetimePattern(pattern)
	if err != nil {
		return nil, err
	}
	if err := p.checkFormattable(); err != nil {
		return nil, err
	}
	x := args[0]
	dt := Unwrap(x.DataType())
	switch {
	case dt.ID() == arrow.NULL:
		return fnNullResult(String, mem), nil
	case IsIntegral(dt):
		if x, err = numericWiden(x, Int64, mem, textOf(f), textOf(f.Args[0])); err != nil {
			return nil, err
		}
	default:
		return nil, fnErrArgType(f.Args[0].String(), x.DataType(), "a bigint number of seconds")
	}
	k := func(c *castEval, arr arrow.Array) (arrow.Array, error) {
		src := fnRawValues[int64](arr)
		s := newStrOut(c.mem, len(src), len(src)*19)
		mayNull := arr.NullN() != 0
		var z zoneCache
		for i, v := range src {
			if !mayNull || arr.IsValid(i) {
				if v > maxNTZSeconds || v < -maxNTZSeconds {
					s.release()
					return nil, c.rowError(arr, i, errCastOverflow(Timestamp))
				}
				s.reserve(64 + len(pattern)*4)
				var ok bool
				if s.data, ok = p.format(s.data, toWall(&z, c.loc, v*fnMicrosPerSecond)); !ok {
					s.release()
					return nil, c.rowError(arr, i, fmt.Errorf("%w: the year is outside 1-9999, which the pattern '%s' does not print here", ErrOverflow, p.src))
				}
			}
			s.next()
		}
		return stringResult(c, arr, s)
	}
	ev := &castEval{child: x, from: Int64, to: String, kern: k, mem: mem, loc: f.Loc, expr: f.String(), operand: f.Args[0].String()}
	return fnFoldConstant(f, in, mem, ev, x)
}

// bindFromUnixTimeRows binds from_unixtime(seconds, fmt) whose format is a
// column: each row's pattern is compiled for that row (no cache shared
// between rows, as an evaluator may run on several batches at once).
func bindFromUnixTimeRows(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	if dt := Unwrap(args[0].DataType()); !IsIntegral(dt) {
		return nil, fnErrArgType(f.Args[0].String(), args[0].DataType(), "a bigint number of seconds")
	}
	loc := f.Loc
	return bindRows(f, in, mem, args, []rowKind{rowInt, rowStr}, String, rowKernels{
		str: func(a []rowArg, i int, dst []byte) ([]byte, bool, error) {
			v := a[0].int(i)
			p, err := compileDatetimePattern(string(a[1].str(i)))
			if err == nil {
				err = p.checkFormattable()
			}
			if err != nil {
				return nil, false, err
			}
			if v > maxNTZSeconds || v < -maxNTZSeconds {
				return nil, false, errCastOverflow(Timestamp)
			}
			var z zoneCache
			out, ok := p.format(dst, toWall(&z, loc, v*fnMicrosPerSecond))
			if !ok {
				return nil, false, fmt.Errorf("%w: the year is outside 1-9999, which the pattern '%s' does not print here", ErrOverflow, p.src)
			}
			return out, true, nil
		},
	})
}
