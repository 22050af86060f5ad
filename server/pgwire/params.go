package pgwire

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/jackc/pgx/v5/pgtype"
)

// $n placeholders are the dialect's: the values the client sends are
// decoded (pgx's pgtype, by the parameter's type) into a one-row Arrow
// batch, a column per parameter, that the engine binds to the
// placeholders as literal nodes while it parses the statement
// (params_bind.go; server.Request.Params). A value is never spliced into
// the statement's text, so it cannot change the statement. A
// parameter's type is the one Parse gave, else the one a "$n::type" or
// "CAST($n AS type)" in the statement names, else text.

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

// pgNumericText renders Int × 10^Exp as exact decimal digits, with its
// scale.
func pgNumericText(v pgtype.Numeric) (string, int32) {
	digits := v.Int.String()
	neg := strings.HasPrefix(digits, "-")
	digits = strings.TrimPrefix(digits, "-")
	var s string
	scale := int32(0)
	switch {
	case v.Exp >= 0:
		s = digits + strings.Repeat("0", int(v.Exp))
	default:
		scale = -v.Exp
		if len(digits) <= int(scale) {
			digits = strings.Repeat("0", int(scale)-len(digits)+1) + digits
		}
		s = digits[:len(digits)-int(scale)] + "." + digits[len(digits)-int(scale):]
	}
	if neg {
		s = "-" + s
	}
	return s, scale
}
