package plan

import (
	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// specialDatetimeLiteral resolves the typed literals of Spark's special
// datetime strings (AstBuilder's convertSpecialDate and
// convertSpecialTimestamp): DATE 'epoch' is 1970-01-01 and TIMESTAMP
// 'epoch' the Unix epoch; 'now' is the query's current time, 'today' its
// date (a timestamp at midnight in the session time zone), 'yesterday'
// and 'tomorrow' a day before and after. Spark reads the clock when it
// parses; the engine reads the query's current time (CurrentTimestamp),
// the same instant for every such literal of a query. ok is false for
// another literal, left to literalOf.
func specialDatetimeLiteral(x *sql.Literal) (e Expr, ok bool, err error) {
	var to arrow.DataType
	switch x.Kind {
	case sql.LitDate:
		to = vector.Date
	case sql.LitTimestamp, sql.LitTimestampLTZ:
		to = vector.Timestamp
	case sql.LitTimestampNTZ:
		to = vector.TimestampNTZ
	default:
		return nil, false, nil
	}
	word, ok := vector.SpecialDatetimeValue(x.Value)
	if !ok {
		return nil, false, nil
	}
	e, err = specialDatetime(x.Pos, word, to)
	return e, true, err
}

// specialCast is Spark's SpecialDatetimeValues rule: a cast of a constant
// string to DATE, TIMESTAMP or TIMESTAMP_NTZ whose text is a special
// value ('epoch', 'now', 'today', 'yesterday', 'tomorrow') is that value,
// as the typed literal would be; Spark's cast alone gives NULL (or fails
// under ANSI) for the text. The rule rewrites every such cast, the
// implicit ones of a comparison (d > 'epoch') too. Only a string literal
// is read here (Spark also folds other constant strings first).
func specialCast(e Expr, to arrow.DataType) (Expr, bool) {
	if to.ID() != arrow.DATE32 && to.ID() != arrow.TIMESTAMP {
		return nil, false
	}
	l, ok := e.(*Literal)
	if !ok || !isString(l.Type) {
		return nil, false
	}
	text, ok := l.Value.(string)
	if !ok {
		return nil, false
	}
	word, ok := vector.SpecialDatetimeValue(text)
	if !ok {
		return nil, false
	}
	v, err := specialDatetime(sql.Pos{}, word, to)
	if err != nil {
		return nil, false // left to the cast, which names the text
	}
	return v, true
}

// specialDatetime is the value of a special datetime word as a to.
func specialDatetime(pos sql.Pos, word string, to arrow.DataType) (Expr, error) {
	now := &CurrentTimestamp{}
	switch word {
	case "epoch":
		if to.ID() == arrow.DATE32 {
			return &Literal{Value: arrow.Date32(0), Type: to}, nil
		}
		// The instant 0, and for TIMESTAMP_NTZ the wall time 1970-01-01
		// 00:00: both are 0 microseconds.
		return &Literal{Value: arrow.Timestamp(0), Type: to}, nil
	case "now":
		// As a DATE, "now" is today.
		return castTo(now, to), nil
	}
	day := castTo(now, vector.Date)
	shift := map[string]int32{"yesterday": -1, "tomorrow": 1}[word]
	if shift != 0 {
		var err error
		if day, err = newCall(pos, "date_add", day, &Literal{Value: shift, Type: vector.Int32}); err != nil {
			return nil, err
		}
	}
	// A date cast to TIMESTAMP is its midnight in the session time zone;
	// to TIMESTAMP_NTZ the wall time 00:00.
	return castTo(day, to), nil
}
