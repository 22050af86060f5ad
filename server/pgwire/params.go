package pgwire

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgtype"
)

// $n placeholders are bound by substitution: each is replaced by a SQL
// literal of the dialect built from the value the client sent (decoded
// with pgx's pgtype by the parameter's type), typed with a CAST, before
// the statement is planned. The literal is produced here, never copied
// from the client's text, so a value cannot change the statement's
// structure. A parameter's type is the one Parse gave, else the one a
// "$n::type" or "CAST($n AS type)" in the statement names, else text.

// maxParams is the most placeholders a statement may have (the protocol
// counts them in an int16).
const maxParams = math.MaxUint16

// placeholderCount returns the highest placeholder number of text.
func placeholderCount(text string) (int, error) {
	n := 0
	var err error
	scan(text, func(ev scanEvent, s, e int) bool {
		if ev != evPlaceholder {
			return true
		}
		k, perr := strconv.Atoi(text[s+1 : e])
		if perr != nil || k > maxParams {
			err = &pgError{code: stateSyntax, msg: fmt.Sprintf("placeholder %s: at most $%d", text[s:e], maxParams)}
			return false
		}
		n = max(n, k)
		return true
	})
	return n, err
}

// typeNames maps PostgreSQL and dialect type names to OIDs.
var typeNames = map[string]uint32{
	"bool": oidBool, "boolean": oidBool,
	"int2": oidInt2, "smallint": oidInt2, "tinyint": oidInt2,
	"int": oidInt4, "int4": oidInt4, "integer": oidInt4,
	"int8": oidInt8, "bigint": oidInt8, "long": oidInt8,
	"float4": oidFloat4, "real": oidFloat4, "float": oidFloat4,
	"float8": oidFloat8, "double": oidFloat8,
	"numeric": oidNumeric, "decimal": oidNumeric,
	"text": oidText, "varchar": oidVarchar, "string": oidText, "char": oidText,
	"bytea": oidBytea, "binary": oidBytea,
	"date": oidDate, "timestamp": oidTimestamptz, "timestamptz": oidTimestamptz, "timestamp_ntz": oidTimestamp,
	"interval": oidInterval, "json": oidJSON, "jsonb": oidJSON,
}

// paramTypes returns the type of each of n placeholders: given (from
// Parse, 0 = unspecified), else from a cast in text, else unspecified (0): a string.
func paramTypes(text string, n int, given []uint32) []uint32 {
	out := make([]uint32, n)
	copy(out, given)
	scan(text, func(ev scanEvent, s, e int) bool {
		if ev != evPlaceholder {
			return true
		}
		k, _ := strconv.Atoi(text[s+1 : e])
		if k < 1 || k > n || out[k-1] != 0 {
			return true
		}
		if oid, ok := castAfter(text[e:]); ok {
			out[k-1] = oid
		} else if oid, ok := castAround(text[:s], text[e:]); ok {
			out[k-1] = oid
		}
		return true
	})
	// The rest stay 0, "unspecified", in ParameterDescription: drivers
	// then send the value's own text form (pgx: an int32 as "42"), which
	// binds as a string literal the planner casts where it is compared.
	return out
}

// castAfter reads "::type" at the start of rest.
func castAfter(rest string) (uint32, bool) {
	rest = strings.TrimLeft(rest, " \t\n")
	if !strings.HasPrefix(rest, "::") {
		return 0, false
	}
	return leadingType(rest[2:])
}

// castAround reads "CAST(" before and " AS type" after a placeholder.
func castAround(before, after string) (uint32, bool) {
	b := strings.TrimRight(before, " \t\n")
	if !strings.HasSuffix(b, "(") {
		return 0, false
	}
	b = strings.TrimRight(b[:len(b)-1], " \t\n")
	if len(b) < 4 || !strings.EqualFold(b[len(b)-4:], "cast") {
		return 0, false
	}
	a := strings.TrimLeft(after, " \t\n")
	if len(a) < 3 || !strings.EqualFold(a[:2], "as") || (a[2] != ' ' && a[2] != '\t' && a[2] != '\n') {
		return 0, false
	}
	return leadingType(a[3:])
}

func leadingType(s string) (uint32, bool) {
	s = strings.TrimLeft(s, " \t\n")
	j := 0
	for j < len(s) && (isIdentByte(s[j])) {
		j++
	}
	name := strings.ToLower(s[:j])
	if name == "double" && strings.HasPrefix(strings.ToLower(strings.TrimLeft(s[j:], " ")), "precision") {
		return oidFloat8, true
	}
	oid, ok := typeNames[name]
	return oid, ok
}

// sqlTypeOf is the dialect's type a NULL of a parameter type is cast to.
func sqlTypeOf(oid uint32) string {
	switch oid {
	case oidBool:
		return "BOOLEAN"
	case oidInt2:
		return "SMALLINT"
	case oidInt4:
		return "INT"
	case oidInt8:
		return "BIGINT"
	case oidFloat4:
		return "FLOAT"
	case oidFloat8:
		return "DOUBLE"
	case oidNumeric:
		return "DECIMAL(38,18)"
	case oidBytea:
		return "BINARY"
	case oidDate:
		return "DATE"
	case oidTimestamp:
		return "TIMESTAMP_NTZ"
	case oidTimestamptz:
		return "TIMESTAMP"
	}
	return "STRING"
}

// substitute replaces each placeholder of text by lit(k) (k from 0).
func substitute(text string, lit func(k int) (string, error)) (string, error) {
	var b strings.Builder
	last := 0
	var err error
	scan(text, func(ev scanEvent, s, e int) bool {
		if ev != evPlaceholder {
			return true
		}
		k, _ := strconv.Atoi(text[s+1 : e])
		var l string
		if l, err = lit(k - 1); err != nil {
			return false
		}
		b.WriteString(text[last:s])
		b.WriteString(l)
		last = e
		return true
	})
	if err != nil {
		return "", err
	}
	b.WriteString(text[last:])
	return b.String(), nil
}

// nullBound is text with every placeholder a typed NULL: how a statement
// is described before its values are bound.
func nullBound(text string, types []uint32) string {
	out, _ := substitute(text, func(k int) (string, error) {
		if k < 0 || k >= len(types) {
			return "NULL", nil
		}
		return "CAST(NULL AS " + sqlTypeOf(types[k]) + ")", nil
	})
	return out
}

// bindValues substitutes the Bind message's values into text.
func bindValues(m *pgtype.Map, text string, types []uint32, formats []int16, values [][]byte) (string, error) {
	if len(values) != len(types) {
		return "", &pgError{code: stateProtocolViolation, msg: fmt.Sprintf("bind message supplies %d parameters, but the statement has %d", len(values), len(types))}
	}
	if len(formats) > 1 && len(formats) != len(values) {
		return "", &pgError{code: stateProtocolViolation, msg: fmt.Sprintf("%d parameter format codes for %d parameters", len(formats), len(values))}
	}
	return substitute(text, func(k int) (string, error) {
		if k < 0 || k >= len(values) {
			return "", &pgError{code: stateSyntax, msg: fmt.Sprintf("there is no parameter $%d", k+1)}
		}
		format := formatText
		switch len(formats) {
		case 0:
		case 1:
			format = formats[0]
		default:
			format = formats[k]
		}
		if format != formatText && format != formatBinary {
			return "", &pgError{code: stateProtocolViolation, msg: fmt.Sprintf("parameter $%d: format code %d", k+1, format)}
		}
		l, err := literal(m, types[k], format, values[k])
		if err != nil {
			return "", &pgError{code: stateInvalidText, msg: fmt.Sprintf("parameter $%d: %v", k+1, err)}
		}
		return l, nil
	})
}

// literal renders one parameter value as a typed SQL literal.
func literal(m *pgtype.Map, oid uint32, format int16, src []byte) (string, error) {
	if src == nil {
		return "CAST(NULL AS " + sqlTypeOf(oid) + ")", nil
	}
	switch oid {
	case oidBool:
		var v bool
		if err := m.Scan(oid, format, src, &v); err != nil {
			return "", err
		}
		if v {
			return "TRUE", nil
		}
		return "FALSE", nil
	case oidInt2, oidInt4, oidInt8:
		var v int64
		if err := m.Scan(oid, format, src, &v); err != nil {
			return "", err
		}
		return "CAST(" + strconv.FormatInt(v, 10) + " AS " + sqlTypeOf(oid) + ")", nil
	case oidFloat4, oidFloat8:
		var v float64
		if err := m.Scan(oid, format, src, &v); err != nil {
			return "", err
		}
		return "CAST('" + strconv.FormatFloat(v, 'g', -1, 64) + "' AS " + sqlTypeOf(oid) + ")", nil
	case oidNumeric:
		var v pgtype.Numeric
		if err := m.Scan(oid, format, src, &v); err != nil {
			return "", err
		}
		if !v.Valid || v.NaN || v.InfinityModifier != pgtype.Finite {
			return "", fmt.Errorf("numeric NaN and infinity are not supported")
		}
		return numericLiteral(v), nil
	case oidBytea:
		var v []byte
		if err := m.Scan(oid, format, src, &v); err != nil {
			return "", err
		}
		return "X'" + fmt.Sprintf("%X", v) + "'", nil
	case oidDate:
		var v pgtype.Date
		if err := m.Scan(oid, format, src, &v); err != nil {
			return "", err
		}
		if v.InfinityModifier != pgtype.Finite {
			return "", fmt.Errorf("infinite dates are not supported")
		}
		return "DATE '" + v.Time.Format("2006-01-02") + "'", nil
	case oidTimestamp:
		var v pgtype.Timestamp
		if err := m.Scan(oid, format, src, &v); err != nil {
			return "", err
		}
		if v.InfinityModifier != pgtype.Finite {
			return "", fmt.Errorf("infinite timestamps are not supported")
		}
		return "TIMESTAMP_NTZ '" + v.Time.Format("2006-01-02 15:04:05.999999") + "'", nil
	case oidTimestamptz:
		var v pgtype.Timestamptz
		if err := m.Scan(oid, format, src, &v); err != nil {
			return "", err
		}
		if v.InfinityModifier != pgtype.Finite {
			return "", fmt.Errorf("infinite timestamps are not supported")
		}
		return "TIMESTAMP '" + v.Time.UTC().Format("2006-01-02 15:04:05.999999") + "Z'", nil
	case oidInterval:
		var v pgtype.Interval
		if err := m.Scan(oid, format, src, &v); err != nil {
			return "", err
		}
		if v.Months != 0 {
			return "", fmt.Errorf("intervals with months are not supported")
		}
		us := v.Microseconds + int64(v.Days)*86_400_000_000
		return "INTERVAL '" + strconv.FormatInt(us, 10) + " microseconds'", nil
	}
	// text, varchar, json, unknown: the bytes are the string (also in
	// binary format).
	return stringLiteral(string(src)), nil
}

// stringLiteral quotes s for the dialect, whose strings take backslash
// escapes.
func stringLiteral(s string) string {
	var b strings.Builder
	b.Grow(len(s) + 2)
	b.WriteByte('\'')
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '\'', '\\':
			b.WriteByte('\\')
			b.WriteByte(c)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case 0:
			b.WriteString(`\0`)
		default:
			b.WriteByte(c)
		}
	}
	b.WriteByte('\'')
	return b.String()
}

// numericLiteral renders Int × 10^Exp as an exact decimal literal.
func numericLiteral(v pgtype.Numeric) string {
	digits := v.Int.String()
	neg := strings.HasPrefix(digits, "-")
	digits = strings.TrimPrefix(digits, "-")
	var s string
	switch {
	case v.Exp >= 0:
		s = digits + strings.Repeat("0", int(v.Exp))
	default:
		scale := int(-v.Exp)
		if len(digits) <= scale {
			digits = strings.Repeat("0", scale-len(digits)+1) + digits
		}
		s = digits[:len(digits)-scale] + "." + digits[len(digits)-scale:]
	}
	if neg {
		s = "-" + s
	}
	return s + "BD"
}
