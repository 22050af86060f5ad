package plan

import (
	"strings"
	"time"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/sql"
	"github.com/arrowstream/arrowstream/vector"
)

// spark.sql.timestampType=TIMESTAMP_NTZ makes the session's TIMESTAMP
// TIMESTAMP_NTZ, as in Spark: what the word TIMESTAMP means in a type
// (CAST, table columns) and in a typed literal, and what to_timestamp and
// make_timestamp return. TIMESTAMP_LTZ, timestamp(x), current_timestamp()
// and the other functions keep TIMESTAMP (an instant).

// sessionTimestampTypes rewrites the statement's TIMESTAMP types and
// literals to TIMESTAMP_NTZ, as Spark's parser does under the setting:
// the rewritten syntax also names the columns as Spark does (CAST(x AS
// TIMESTAMP_NTZ), TIMESTAMP_NTZ '...'). A literal whose text carries a
// time zone stays a TIMESTAMP (it names an instant), and TIMESTAMP_LTZ is
// left alone. Rewriting twice changes nothing more.
func sessionTimestampTypes(stmt sql.Node) {
	sql.Inspect(stmt, func(n sql.Node) bool {
		switch x := n.(type) {
		case *sql.TypeName:
			if x.Name == "TIMESTAMP" && !x.LTZ {
				x.Name = "TIMESTAMP_NTZ"
			}
		case *sql.Literal:
			if x.Kind == sql.LitTimestamp {
				if timestampTextHasZone(x.Value) {
					x.Kind = sql.LitTimestampLTZ
				} else {
					x.Kind = sql.LitTimestampNTZ
				}
			}
		}
		return true
	})
}

// timestampTextHasZone reports whether a TIMESTAMP literal's text names an
// instant (it carries a zone or offset): read as a TIMESTAMP it is then the
// same in two session time zones. Spark's special values (epoch, now,
// today, ...) are wall times for TIMESTAMP_NTZ; text that does not parse
// is left to the literal's own error.
func timestampTextHasZone(text string) bool {
	switch strings.ToLower(strings.TrimSpace(text)) {
	case "epoch", "now", "today", "yesterday", "tomorrow":
		return false
	}
	lit := &Literal{Value: text, Type: vector.String}
	a, err := foldConstant(&Cast{X: lit, To: vector.Timestamp})
	if err != nil || a.Value == nil {
		return false
	}
	b, err := foldConstant(&Cast{X: lit, To: vector.Timestamp, Loc: time.FixedZone("probe", 3600)})
	return err == nil && b.Value == a.Value
}

// ntzTimestampFunc is the function that computes name under
// spark.sql.timestampType=TIMESTAMP_NTZ, and whether it differs: the
// parse and make functions whose result is the session's timestamp type.
func ntzTimestampFunc(name string) (string, bool) {
	switch name {
	case "to_timestamp", "try_to_timestamp":
		return "to_timestamp_ntz", true
	case "make_timestamp":
		return "make_timestamp_ntz", true
	}
	return name, false
}

// hasInstantTimestamp reports whether dt is or holds a TIMESTAMP (with a
// zone): under spark.sql.timestampType=TIMESTAMP_NTZ a DDL schema string
// read by a function (from_json) would have given TIMESTAMP_NTZ there.
func hasInstantTimestamp(dt arrow.DataType) bool {
	switch t := vector.Unwrap(dt).(type) {
	case *arrow.TimestampType:
		return t.TimeZone != ""
	case *arrow.ListType:
		return hasInstantTimestamp(t.Elem())
	case *arrow.MapType:
		return hasInstantTimestamp(t.KeyType()) || hasInstantTimestamp(t.ItemType())
	case *arrow.StructType:
		for _, f := range t.Fields() {
			if hasInstantTimestamp(f.Type) {
				return true
			}
		}
	}
	return false
}

// timestampTypeCall resolves the calls whose meaning depends on the
// session's timestamp type; ok is false for the others.
//   - to_timestamp and to_timestamp_ltz of a TIMESTAMP_NTZ are its cast to
//     TIMESTAMP (the wall clock read in the session time zone), as Spark's
//     ParseToTimestamp casts a non-string argument; so is to_timestamp of
//     a number under TIMESTAMP_LTZ (seconds since the epoch).
//   - Under TIMESTAMP_NTZ, to_timestamp and make_timestamp give
//     TIMESTAMP_NTZ. make_timestamp's time zone argument is then unused,
//     so only a constant zone that loads is taken (and dropped); a number
//     given to to_timestamp is refused (Spark has no cast from numbers to
//     TIMESTAMP_NTZ), and so is from_json, whose DDL schema string would
//     read TIMESTAMP as TIMESTAMP_NTZ there.
func (r *resolver) timestampTypeCall(f *sql.FuncCall, name string, args []Expr) (Expr, bool, error) {
	if (name == "to_timestamp" || name == "to_timestamp_ltz") && len(args) == 1 && vector.IsTimestampNTZ(args[0].DataType()) {
		return castTo(args[0], vector.Timestamp), true, nil
	}
	if !r.ntz() {
		if name == "to_timestamp" && len(args) == 1 && vector.IsNumeric(args[0].DataType()) {
			// Spark's ParseToTimestamp casts a number: seconds since
			// the epoch.
			return castTo(args[0], vector.Timestamp), true, nil
		}
		return nil, false, nil
	}
	if name == "from_json" {
		e, err := newCall(f.Pos, name, args...)
		if err == nil && hasInstantTimestamp(e.DataType()) {
			return nil, true, errorAt(f.Pos, ErrUnsupported, "from_json with a TIMESTAMP in its schema is not supported under %s=TIMESTAMP_NTZ.", ConfTimestampType)
		}
		return e, true, err
	}
	alt, ok := ntzTimestampFunc(name)
	if !ok {
		return nil, false, nil
	}
	switch name {
	case "to_timestamp":
		if len(args) > 0 && !isTextOrTime(args[0].DataType()) {
			return nil, true, errorAt(f.Pos, ErrUnsupported, "to_timestamp of a %s is not supported under %s=TIMESTAMP_NTZ.", vector.TypeName(args[0].DataType()), ConfTimestampType)
		}
	case "make_timestamp":
		if len(args) == 7 {
			lit, isLit := args[6].(*Literal)
			zone, isText := "", false
			if isLit {
				zone, isText = lit.Value.(string)
			}
			if !isText {
				return nil, true, errorAt(f.Pos, ErrUnsupported, "make_timestamp with a time zone that is not a constant string is not supported under %s=TIMESTAMP_NTZ.", ConfTimestampType)
			}
			if _, err := LoadTimeZone(zone); err != nil {
				return nil, true, errorAt(f.Pos, ErrUnsupported, "make_timestamp with the time zone %q is not supported under %s=TIMESTAMP_NTZ.", zone, ConfTimestampType)
			}
			args = args[:6]
		}
	}
	e, err := newCall(f.Pos, alt, args...)
	return e, true, err
}

// isTextOrTime reports whether dt is a string, a date, a timestamp or
// NULL: what to_timestamp reads without a cast from a number.
func isTextOrTime(dt arrow.DataType) bool {
	switch vector.Unwrap(dt).ID() {
	case arrow.STRING, arrow.LARGE_STRING, arrow.DATE32, arrow.TIMESTAMP, arrow.NULL:
		return true
	}
	return false
}
