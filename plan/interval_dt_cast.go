package plan

import (
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// Day-time intervals are one Arrow type (microseconds), but Spark's
// DayTimeIntervalType carries a start and an end field (DAY TO SECOND,
// HOUR, ...) that only its text shows: CAST(INTERVAL 3 DAYS 1 SECOND AS
// STRING) is INTERVAL '3 00:00:01' DAY TO SECOND. The planner knows the
// fields of literals and of the expressions Spark types by rule, and
// refuses the cast where it does not (a column, an aggregate) rather than
// guess them.

// dtFields is a day-time interval type's fields, DTFields(start, end)+1;
// 0 is unknown.
type dtFields int32

func knownDT(start, end vector.DTField) dtFields { return dtFields(vector.DTFields(start, end) + 1) }

func (f dtFields) fields() (start, end vector.DTField) {
	v := int32(f) - 1
	return vector.DTField(v / 4), vector.DTField(v % 4)
}

// dtUnitField maps a canonical unit of a day-time literal to its field
// (Spark's constructMultiUnitsIntervalLiteral: a week is days,
// milliseconds and microseconds are seconds).
var dtUnitField = map[string]vector.DTField{
	"WEEK": vector.DTDay, "DAY": vector.DTDay, "HOUR": vector.DTHour, "MINUTE": vector.DTMinute,
	"SECOND": vector.DTSecond, "MILLISECOND": vector.DTSecond, "MICROSECOND": vector.DTSecond,
}

// dtLiteralFields is the type of a day-time interval literal: a field
// range's own fields, else from the least to the greatest unit named.
func dtLiteralFields(x *sql.IntervalLit) dtFields {
	var start, end vector.DTField
	n := 0
	for _, u := range x.Units() {
		from, to, isRange := strings.Cut(u, " TO ")
		if !isRange {
			to = from
		}
		fs, ok1 := dtUnitField[from]
		fe, ok2 := dtUnitField[to]
		if !ok1 || !ok2 {
			return 0
		}
		if n == 0 || fs < start {
			start = fs
		}
		if n == 0 || fe > end {
			end = fe
		}
		n++
	}
	if n == 0 {
		return 0
	}
	return knownDT(start, end)
}

// dtFieldsOf is the type's fields of a day-time interval expression, where
// the planner can tell them: literals keep theirs; unary minus and abs keep
// their operand's; a sum or difference of two intervals spans both; a
// date difference is DAY; timestamp differences, products, quotients and
// make_dt_interval are DAY TO SECOND (Spark's dataType of each).
func dtFieldsOf(e Expr) dtFields {
	if !isInterval(e) {
		return 0
	}
	switch x := e.(type) {
	case *Literal:
		return x.dtFields
	case *ColumnRef:
		return x.dt
	case *Call:
		switch x.Func {
		case "negative", "abs":
			if len(x.Args) == 1 {
				return dtFieldsOf(x.Args[0])
			}
		case "+", "-":
			if len(x.Args) != 2 || !isInterval(x.Args[0]) || !isInterval(x.Args[1]) {
				return 0
			}
			a, b := dtFieldsOf(x.Args[0]), dtFieldsOf(x.Args[1])
			if a == 0 || b == 0 {
				return 0
			}
			as, ae := a.fields()
			bs, be := b.fields()
			return knownDT(min(as, bs), max(ae, be))
		case "date_subtract":
			return knownDT(vector.DTDay, vector.DTDay)
		case "timestamp_subtract", "*", "/", "make_dt_interval":
			return knownDT(vector.DTDay, vector.DTSecond)
		}
	}
	return 0
}

// dtCastToString is CAST(x AS STRING) of a day-time interval, Spark's
// text for the fields of x's type.
func dtCastToString(pos sql.Pos, x Expr) (Expr, error) {
	f := dtFieldsOf(x)
	if f == 0 {
		return nil, errorAt(pos, ErrUnsupported, "CAST(%s AS STRING) of a day-time interval whose type's fields (DAY TO SECOND, HOUR, ...) are not known here is not supported.", x)
	}
	return newCall(pos, dtToStringFunc, x, &Literal{Value: int32(f) - 1, Type: vector.Int32})
}

// dtToStringFunc is the planner's name of a day-time interval's cast to a
// string.
const dtToStringFunc = "dt_interval_string"

// DTFieldsKey is the field metadata that carries a day-time interval
// column's type fields (vector.DTFields(start, end) in decimal) from the
// projection that computed it to the queries over it (a view, a
// subquery), so that EXTRACT and CAST AS STRING of the column know them.
const DTFieldsKey = "arrowstream.dt_interval_fields"

// withDTFields is md with DTFieldsKey set to f (removed when f is 0).
func withDTFields(md arrow.Metadata, f dtFields) arrow.Metadata {
	md = withoutKey(md, DTFieldsKey)
	if f == 0 {
		return md
	}
	keys := append(append([]string(nil), md.Keys()...), DTFieldsKey)
	vals := append(append([]string(nil), md.Values()...), strconv.Itoa(int(f)-1))
	return arrow.NewMetadata(keys, vals)
}

// dtFieldsOfField reads DTFieldsKey of a day-time interval field; 0 when
// absent or malformed.
func dtFieldsOfField(f arrow.Field) dtFields {
	if !f.HasMetadata() || f.Type == nil || f.Type.ID() != arrow.DURATION {
		return 0
	}
	i := f.Metadata.FindKey(DTFieldsKey)
	if i < 0 {
		return 0
	}
	v, err := strconv.Atoi(f.Metadata.Values()[i])
	if err != nil || v < 0 || v >= 16 {
		return 0
	}
	start, end := dtFields(v + 1).fields()
	if start > end || end > vector.DTSecond {
		return 0
	}
	return dtFields(v + 1)
}
