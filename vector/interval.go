package vector

import (
	"context"
	"errors"
	"fmt"
	"math"
	"math/big"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Interval is the type of intervals without months (Spark's day-time
// interval, or a CalendarInterval whose months are zero): a duration in
// microseconds. Streaming needs no more: watermark delays, window lengths
// and ts ± INTERVAL arithmetic are all fixed-length.
var Interval arrow.DataType = &arrow.DurationType{Unit: arrow.Microsecond}

// ErrInterval is an interval string that does not parse or needs months.
var ErrInterval = errors.New("invalid interval")

// intervalUnits are the units ParseInterval accepts, in microseconds.
var intervalUnits = map[string]int64{
	"microsecond": 1,
	"millisecond": 1000,
	"second":      fnMicrosPerSecond,
	"minute":      60 * fnMicrosPerSecond,
	"hour":        3600 * fnMicrosPerSecond,
	"day":         fnMicrosPerDay,
	"week":        7 * fnMicrosPerDay,
}

// ParseInterval parses an interval such as '10 seconds', '1 minute',
// '1 hour 30 minutes', 'INTERVAL 10 SECONDS', "INTERVAL '10' SECOND" or
// "INTERVAL '1 day 2 hours'" into microseconds. Each part is a number
// (optionally signed, optionally with a fraction, truncated to whole
// microseconds) and a unit, singular or plural, in any case: microsecond,
// millisecond, second, minute, hour, day, week. Months and years are
// rejected because their length varies ("Intervals greater than a month
// is not supported"); the error wraps ErrInterval.
func ParseInterval(s string) (int64, error) {
	bad := func(format string, args ...any) (int64, error) {
		return 0, fmt.Errorf("%w '%s': %s", ErrInterval, s, fmt.Sprintf(format, args...))
	}
	words := strings.Fields(strings.ReplaceAll(s, "'", " "))
	if len(words) > 0 && strings.EqualFold(words[0], "interval") {
		words = words[1:]
	}
	if len(words) == 0 {
		return bad("empty interval")
	}
	if len(words)%2 != 0 {
		return bad("expected pairs of a number and a unit")
	}
	total := new(big.Rat)
	for k := 0; k < len(words); k += 2 {
		num, unitWord := words[k], strings.ToLower(words[k+1])
		unitName := strings.TrimSuffix(unitWord, "s")
		switch unitName {
		case "month", "year":
			return bad("Intervals greater than a month is not supported")
		}
		unit, ok := intervalUnits[unitName]
		if !ok {
			return bad("unknown unit '%s'", words[k+1])
		}
		v, ok := parseIntervalNumber(num)
		if !ok {
			return bad("'%s' is not a number", num)
		}
		total.Add(total, v.Mul(v, new(big.Rat).SetInt64(unit)))
	}
	// Truncate toward zero to whole microseconds.
	q := new(big.Int).Quo(total.Num(), total.Denom())
	if !q.IsInt64() {
		return bad("out of range")
	}
	return q.Int64(), nil
}

// parseIntervalNumber accepts [+-]digits[.digits] (at most 30 digits).
func parseIntervalNumber(s string) (*big.Rat, bool) {
	if len(s) == 0 || len(s) > 32 {
		return nil, false
	}
	body := strings.TrimLeft(s, "+-")
	if len(s)-len(body) > 1 || body == "" || body == "." {
		return nil, false
	}
	dot := false
	for _, c := range body {
		switch {
		case c >= '0' && c <= '9':
		case c == '.' && !dot:
			dot = true
		default:
			return nil, false
		}
	}
	r, ok := new(big.Rat).SetString(s)
	return r, ok
}

// FormatInterval renders microseconds as Spark prints a CalendarInterval:
// "1 days 2 hours 30 minutes 1.5 seconds", "0 seconds" for zero.
func FormatInterval(micros int64) string {
	if micros == 0 {
		return "0 seconds"
	}
	var parts []string
	sign := ""
	u := uint64(micros)
	if micros < 0 {
		sign = "-"
		u = uint64(-(micros + 1)) + 1
	}
	add := func(v uint64, unit string) {
		if v != 0 {
			parts = append(parts, fmt.Sprintf("%s%d %s", sign, v, unit))
		}
	}
	add(u/uint64(fnMicrosPerDay), "days")
	u %= uint64(fnMicrosPerDay)
	add(u/uint64(3600*fnMicrosPerSecond), "hours")
	u %= uint64(3600 * fnMicrosPerSecond)
	add(u/uint64(60*fnMicrosPerSecond), "minutes")
	u %= uint64(60 * fnMicrosPerSecond)
	if u != 0 {
		secs := fmt.Sprintf("%d.%06d", u/fnMicrosPerSecond, u%fnMicrosPerSecond)
		secs = strings.TrimRight(strings.TrimRight(secs, "0"), ".")
		parts = append(parts, sign+secs+" seconds")
	}
	return strings.Join(parts, " ")
}

// IntervalLiteral is an interval constant of type Interval.
type IntervalLiteral struct {
	Micros int64
}

// IntervalLit returns the interval constant of micros microseconds.
func IntervalLit(micros int64) *IntervalLiteral { return &IntervalLiteral{Micros: micros} }

func (l *IntervalLiteral) String() string { return "INTERVAL '" + FormatInterval(l.Micros) + "'" }

// Bind implements Expr.
func (l *IntervalLiteral) Bind(_ *arrow.Schema, mem memory.Allocator) (Evaluator, error) {
	return &intervalConst{micros: l.Micros, mem: mem}, nil
}

// intervalConst is the constant evaluator of an interval; its Value is an
// arrow.Duration.
type intervalConst struct {
	micros int64
	mem    memory.Allocator
}

func (c *intervalConst) DataType() arrow.DataType { return Interval }
func (c *intervalConst) Value() any               { return arrow.Duration(c.micros) }

func (c *intervalConst) Eval(_ context.Context, rec arrow.Record) (arrow.Array, error) {
	n := int(rec.NumRows())
	buf, vals := fnFixedBuf[int64](c.mem, n)
	for i := range vals {
		vals[i] = c.micros
	}
	return fnNewArray(Interval, n, []*memory.Buffer{nil, buf}, nil, 0), nil
}

// TimestampAddInterval is ts + micros (ts - INTERVAL ... is a negative
// micros). ts is a timestamp, or a date or string cast to one; overflow is
// an error.
func TimestampAddInterval(ts Expr, micros int64) Expr {
	return &TimestampAddIntervalExpr{TS: ts, Micros: micros}
}

// TimestampAddIntervalExpr is ts + INTERVAL.
type TimestampAddIntervalExpr struct {
	TS     Expr
	Micros int64
}

func (t *TimestampAddIntervalExpr) String() string {
	if t.Micros < 0 && t.Micros != math.MinInt64 {
		return "(" + t.TS.String() + " - " + IntervalLit(-t.Micros).String() + ")"
	}
	return "(" + t.TS.String() + " + " + IntervalLit(t.Micros).String() + ")"
}

// Bind implements Expr.
func (t *TimestampAddIntervalExpr) Bind(in *arrow.Schema, mem memory.Allocator) (Evaluator, error) {
	ts, err := t.TS.Bind(in, mem)
	if err != nil {
		return nil, err
	}
	dt := Unwrap(ts.DataType())
	// A TIMESTAMP_NTZ moves its wall clock by the interval's microseconds,
	// as an instant does (a day-time interval is a fixed length in Spark),
	// and stays a TIMESTAMP_NTZ.
	res := Timestamp
	switch dt.ID() {
	case arrow.NULL:
		return fnNullResult(Timestamp, mem), nil
	case arrow.TIMESTAMP:
		if IsTimestampNTZ(dt) {
			res = TimestampNTZ
		} else if !arrow.TypeEqual(dt, Timestamp) {
			return nil, newBindError(t, in, fmt.Errorf("cannot add an interval to %s: %w", TypeName(dt), ErrType))
		}
	case arrow.DATE32, arrow.STRING:
		ts = foldQuietly(&castEval{child: ts, from: ts.DataType(), to: Timestamp, kern: castKernelFor(dt, Timestamp), mem: mem, mode: ModeLegacy,
			expr: "CAST(" + t.TS.String() + " AS TIMESTAMP)", operand: t.TS.String()}, mem, ts)
	default:
		return nil, newBindError(t, in, fmt.Errorf("cannot add an interval to %s: %w", TypeName(dt), ErrType))
	}
	d := t.Micros
	k := func(c *castEval, arr arrow.Array) (arrow.Array, error) {
		src := fnRawValues[int64](arr)
		return castFixedResult(c, arr, func(dst []int64, _ *validityOut) error {
			ok := true
			for i, v := range src {
				s := v + d
				dst[i] = s
				// Overflow iff the operands share a sign the sum lacks.
				ok = ok && (v^s)&(d^s) >= 0
			}
			if ok {
				return nil
			}
			bad := func(i int) bool { s := src[i] + d; return (src[i]^s)&(d^s) < 0 }
			if i := castFirstBadRow(arr, bad); i >= 0 {
				return c.rowError(arr, i, errCastOverflow(res))
			}
			return nil
		})
	}
	ev := &castEval{child: ts, from: res, to: res, kern: k, mem: mem, expr: t.String(), operand: t.TS.String()}
	return fnFoldConstant(t, in, mem, ev, ts)
}
