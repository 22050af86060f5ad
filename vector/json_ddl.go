package vector

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
)

// maxDDLDepth bounds the nesting of ARRAY and STRUCT types in a DDL
// schema: the text comes from queries, and recursion must stay shallow.
const maxDDLDepth = 64

// ParseDDLSchema parses a schema in Spark's DDL form, "a INT, b STRING,
// c ARRAY<BIGINT>" (a field may be written "name: type" and followed by
// NOT NULL or COMMENT '...'), or as "STRUCT<a: INT, ...>", into a struct
// type with nullable fields. Types: BOOLEAN; TINYINT, SMALLINT, INT,
// INTEGER (int); BIGINT, LONG; FLOAT, REAL, DOUBLE (double); STRING,
// VARCHAR(n), CHAR(n); BINARY; DATE; TIMESTAMP (also _LTZ, _NTZ);
// DECIMAL(p, s) (also DEC, NUMERIC); ARRAY<t>; MAP<k, v>; STRUCT<...>.
// Errors give the position in the text.
func ParseDDLSchema(text string) (*arrow.StructType, error) {
	p := &ddlParser{src: text}
	p.skipSpace()
	save := p.pos
	if p.keyword("STRUCT") {
		p.skipSpace()
		if p.peek() == '<' {
			p.pos = save
			dt, err := p.parseType(0)
			if err != nil {
				return nil, err
			}
			p.skipSpace()
			if p.pos < len(p.src) {
				return nil, p.errorf("unexpected %q after the struct type", p.rest())
			}
			return dt.(*arrow.StructType), nil
		}
	}
	p.pos = save // a field may be called struct
	fields, err := p.parseFields(0, 0)
	if err != nil {
		return nil, err
	}
	if p.pos < len(p.src) {
		return nil, p.errorf("unexpected %q (want ',' and another field)", p.rest())
	}
	if len(fields) == 0 {
		return nil, fmt.Errorf("schema %q has no fields", text)
	}
	return arrow.StructOf(fields...), nil
}

// ParseDDLType parses the schema of from_json: a DDL field list or
// STRUCT<...> as ParseDDLSchema does, or a single ARRAY<t> or MAP<k, v>.
func ParseDDLType(text string) (arrow.DataType, error) {
	p := &ddlParser{src: text}
	p.skipSpace()
	save := p.pos
	if p.keyword("ARRAY") || p.keyword("MAP") {
		p.skipSpace()
		if p.peek() == '<' {
			p.pos = save
			dt, err := p.parseType(0)
			if err != nil {
				return nil, err
			}
			p.skipSpace()
			if p.pos < len(p.src) {
				return nil, p.errorf("unexpected %q after the type", p.rest())
			}
			return dt, nil
		}
	}
	return ParseDDLSchema(text)
}

type ddlParser struct {
	src string
	pos int
}

func (p *ddlParser) errorf(format string, args ...any) error {
	return fmt.Errorf("schema %q at position %d: %s", p.src, p.pos+1, fmt.Sprintf(format, args...))
}

func (p *ddlParser) rest() string {
	r := p.src[p.pos:]
	if len(r) > 20 {
		r = r[:20] + "..."
	}
	return r
}

func (p *ddlParser) peek() byte {
	if p.pos < len(p.src) {
		return p.src[p.pos]
	}
	return 0
}

func (p *ddlParser) skipSpace() {
	for p.pos < len(p.src) && strings.IndexByte(" \t\r\n", p.src[p.pos]) >= 0 {
		p.pos++
	}
}

func isIdentByte(c byte) bool {
	return c == '_' || c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z'
}

// word reads an identifier (letters, digits, _), or "" if there is none.
func (p *ddlParser) word() string {
	start := p.pos
	for p.pos < len(p.src) && isIdentByte(p.src[p.pos]) {
		p.pos++
	}
	return p.src[start:p.pos]
}

// keyword consumes kw (any case) when it is the next whole word.
func (p *ddlParser) keyword(kw string) bool {
	save := p.pos
	if strings.EqualFold(p.word(), kw) {
		return true
	}
	p.pos = save
	return false
}

// name reads a field name: an identifier or a `quoted` name (“ escapes `).
func (p *ddlParser) name() (string, error) {
	p.skipSpace()
	if p.peek() != '`' {
		w := p.word()
		if w == "" {
			return "", p.errorf("want a field name, found %q", p.rest())
		}
		return w, nil
	}
	var b strings.Builder
	for p.pos++; p.pos < len(p.src); p.pos++ {
		c := p.src[p.pos]
		if c == '`' {
			if p.pos+1 < len(p.src) && p.src[p.pos+1] == '`' {
				b.WriteByte('`')
				p.pos++
				continue
			}
			p.pos++
			return b.String(), nil
		}
		b.WriteByte(c)
	}
	return "", p.errorf("unterminated quoted field name")
}

// parseFields reads "name [:] type [NOT NULL] [COMMENT '...']" items
// separated by commas, until the end or (inside STRUCT) a '>'.
func (p *ddlParser) parseFields(depth int, closing byte) ([]arrow.Field, error) {
	var fields []arrow.Field
	seen := map[string]bool{}
	for {
		p.skipSpace()
		if p.pos >= len(p.src) || closing != 0 && p.peek() == closing {
			return fields, nil // only before the first field: see below
		}
		name, err := p.name()
		if err != nil {
			return nil, err
		}
		key := strings.ToLower(name)
		if seen[key] {
			return nil, p.errorf("duplicate field %s", name)
		}
		seen[key] = true
		p.skipSpace()
		if p.peek() == ':' {
			p.pos++
		}
		dt, err := p.parseType(depth)
		if err != nil {
			return nil, err
		}
		if err := p.fieldSuffix(); err != nil {
			return nil, err
		}
		// Every field is nullable: a JSON document may leave it out.
		fields = append(fields, arrow.Field{Name: name, Type: dt, Nullable: true})
		p.skipSpace()
		if p.peek() != ',' {
			return fields, nil
		}
		p.pos++
		p.skipSpace()
		if p.pos >= len(p.src) || closing != 0 && p.peek() == closing {
			return nil, p.errorf("want a field after ','")
		}
	}
}

// fieldSuffix skips NOT NULL and COMMENT 'text'.
func (p *ddlParser) fieldSuffix() error {
	for {
		p.skipSpace()
		switch {
		case p.keyword("NOT"):
			p.skipSpace()
			if !p.keyword("NULL") {
				return p.errorf("want NULL after NOT")
			}
		case p.keyword("COMMENT"):
			p.skipSpace()
			if q := p.peek(); q != '\'' && q != '"' {
				return p.errorf("want a quoted comment")
			} else {
				end := strings.IndexByte(p.src[p.pos+1:], q)
				if end < 0 {
					return p.errorf("unterminated comment")
				}
				p.pos += end + 2
			}
		default:
			return nil
		}
	}
}

// parseType reads one type.
func (p *ddlParser) parseType(depth int) (arrow.DataType, error) {
	if depth >= maxDDLDepth {
		return nil, p.errorf("types nested deeper than %d", maxDDLDepth)
	}
	p.skipSpace()
	start := p.pos
	w := strings.ToUpper(p.word())
	switch w {
	case "":
		return nil, p.errorf("want a type, found %q", p.rest())
	case "BOOLEAN", "BOOL":
		return Boolean, nil
	case "TINYINT", "BYTE", "SMALLINT", "SHORT", "INT", "INTEGER":
		return Int32, nil
	case "BIGINT", "LONG":
		return Int64, nil
	case "FLOAT", "REAL", "DOUBLE":
		return Float64, nil
	case "STRING", "VARCHAR", "CHAR":
		if _, err := p.params(0, 1); err != nil {
			return nil, err
		}
		return String, nil
	case "BINARY":
		return Binary, nil
	case "DATE":
		return Date, nil
	case "TIMESTAMP", "TIMESTAMP_LTZ", "TIMESTAMP_NTZ":
		return Timestamp, nil
	case "DECIMAL", "DEC", "NUMERIC":
		ps, err := p.params(0, 2)
		if err != nil {
			return nil, err
		}
		prec, scale := int32(10), int32(0)
		if len(ps) > 0 {
			prec = ps[0]
		}
		if len(ps) > 1 {
			scale = ps[1]
		}
		if prec < 1 || prec > 38 || scale < 0 || scale > prec {
			return nil, p.errorf("invalid DECIMAL(%d, %d): precision must be 1..38 and scale 0..precision", prec, scale)
		}
		return Decimal(prec, scale), nil
	case "ARRAY":
		if err := p.expect('<'); err != nil {
			return nil, err
		}
		elem, err := p.parseType(depth + 1)
		if err != nil {
			return nil, err
		}
		if err := p.expect('>'); err != nil {
			return nil, err
		}
		return ListOf(elem), nil
	case "MAP":
		if err := p.expect('<'); err != nil {
			return nil, err
		}
		key, err := p.parseType(depth + 1)
		if err != nil {
			return nil, err
		}
		if err := p.expect(','); err != nil {
			return nil, err
		}
		val, err := p.parseType(depth + 1)
		if err != nil {
			return nil, err
		}
		if err := p.expect('>'); err != nil {
			return nil, err
		}
		return MapOf(key, val), nil
	case "STRUCT":
		if err := p.expect('<'); err != nil {
			return nil, err
		}
		fields, err := p.parseFields(depth+1, '>')
		if err != nil {
			return nil, err
		}
		if err := p.expect('>'); err != nil {
			return nil, err
		}
		return arrow.StructOf(fields...), nil
	}
	p.pos = start
	return nil, p.errorf("unsupported type %s", w)
}

func (p *ddlParser) expect(c byte) error {
	p.skipSpace()
	if p.peek() != c {
		return p.errorf("want '%c', found %q", c, p.rest())
	}
	p.pos++
	return nil
}

// params reads an optional "(n[, m])" of at most max integers.
func (p *ddlParser) params(min, max int) ([]int32, error) {
	p.skipSpace()
	if p.peek() != '(' {
		if min > 0 {
			return nil, p.errorf("want '('")
		}
		return nil, nil
	}
	p.pos++
	var out []int32
	for {
		p.skipSpace()
		w := p.word()
		n, err := strconv.ParseInt(w, 10, 32)
		if err != nil {
			return nil, p.errorf("want a number, found %q", w)
		}
		out = append(out, int32(n))
		if len(out) > max {
			return nil, p.errorf("too many type parameters")
		}
		p.skipSpace()
		switch p.peek() {
		case ',':
			p.pos++
		case ')':
			p.pos++
			return out, nil
		default:
			return nil, p.errorf("want ',' or ')', found %q", p.rest())
		}
	}
}
