package sql

import (
	"math"
	"strconv"
	"strings"
)

// typeNames maps the type names Spark accepts, upper-cased, to the
// canonical name kept in TypeName.
var typeNames = map[string]string{
	"BOOLEAN": "BOOLEAN", "TINYINT": "TINYINT", "BYTE": "TINYINT",
	"SMALLINT": "SMALLINT", "SHORT": "SMALLINT", "INT": "INT", "INTEGER": "INT",
	"BIGINT": "BIGINT", "LONG": "BIGINT", "FLOAT": "FLOAT", "REAL": "FLOAT",
	"DOUBLE": "DOUBLE", "DECIMAL": "DECIMAL", "DEC": "DECIMAL", "NUMERIC": "DECIMAL",
	"STRING": "STRING", "VARCHAR": "VARCHAR", "CHAR": "CHAR", "CHARACTER": "CHAR",
	"BINARY": "BINARY", "DATE": "DATE", "TIMESTAMP": "TIMESTAMP",
	"TIMESTAMP_LTZ": "TIMESTAMP", "TIMESTAMP_NTZ": "TIMESTAMP_NTZ",
	"ARRAY": "ARRAY", "MAP": "MAP", "STRUCT": "STRUCT",
	"INTERVAL": "INTERVAL",
}

// MaxDecimalPrecision is the largest DECIMAL precision, as in Spark.
const MaxDecimalPrecision = 38

// parseType parses a data type.
func (p *parser) parseType() *TypeName {
	p.enter()
	defer p.leave()
	t := p.peek()
	if t.kind != tWord {
		p.unexpected("a type")
	}
	name := typeNames[strings.ToUpper(t.text)]
	if name == "" {
		p.failAt(t.pos, "unknown type %s", describe(*t))
	}
	p.next()
	tn := &TypeName{Pos: t.pos, Name: name, LTZ: strings.EqualFold(t.text, "TIMESTAMP_LTZ")}
	switch name {
	case "DECIMAL":
		if open := p.peek(); open.kind == tLParen {
			tn.Params = p.typeParams(open, name, 2)
			prec := tn.Params[0]
			if prec < 1 || prec > MaxDecimalPrecision {
				p.failAt(open.pos, "DECIMAL precision must be between 1 and %d, found %d", MaxDecimalPrecision, prec)
			}
			if len(tn.Params) == 2 && tn.Params[1] > prec {
				p.failAt(open.pos, "DECIMAL scale %d is larger than the precision %d", tn.Params[1], prec)
			}
		}
	case "VARCHAR", "CHAR":
		open := p.peek()
		if open.kind != tLParen {
			p.unexpected("'(' and a length after " + name)
		}
		tn.Params = p.typeParams(open, name, 1)
	case "INTERVAL":
		tn.Name = p.intervalTypeFields(t)
	case "ARRAY":
		open := p.expect(tLt, "'<' after ARRAY")
		tn.Elem = p.parseType()
		p.closeAngle(open)
	case "MAP":
		open := p.expect(tLt, "'<' after MAP")
		tn.Key = p.parseType()
		p.expect(tComma, "',' after the key type of MAP")
		tn.Elem = p.parseType()
		p.closeAngle(open)
	case "STRUCT":
		if p.accept(tNe) { // STRUCT<> lexes as STRUCT followed by <>
			return tn
		}
		open := p.expect(tLt, "'<' after STRUCT")
		if p.accept(tGt) {
			return tn
		}
		for {
			f := &StructField{Name: p.anyName("a field name in STRUCT")}
			f.Pos = f.Name.Pos
			p.accept(tColon)
			f.Type = p.parseType()
			tn.Fields = append(tn.Fields, f)
			if !p.accept(tComma) {
				break
			}
		}
		p.closeAngle(open)
	}
	return tn
}

// typeParams parses (n[, n]...) with at most max non-negative integers.
func (p *parser) typeParams(open *token, name string, max int) []int {
	p.next() // (
	var params []int
	for {
		t := p.peek()
		n, err := strconv.Atoi(t.text)
		if t.kind != tNumber || err != nil || n < 0 {
			p.unexpected("an integer parameter of " + name)
		}
		p.next()
		params = append(params, n)
		if len(params) == max || !p.accept(tComma) {
			break
		}
	}
	p.closeParen(open)
	return params
}

// closeAngle consumes the '>' matching open.
func (p *parser) closeAngle(open *token) {
	if p.peek().kind != tGt {
		p.unexpected("'>' to close '<' at " + open.pos.String())
	}
	p.next()
}

// intervalUnits maps interval unit names, singular or plural, upper-cased,
// to the canonical singular.
var intervalUnits = func() map[string]string {
	m := map[string]string{}
	for _, u := range []string{"YEAR", "MONTH", "WEEK", "DAY", "HOUR", "MINUTE", "SECOND", "MILLISECOND", "MICROSECOND"} {
		m[u] = u
		m[u+"S"] = u
	}
	return m
}()

// unitOf returns the canonical interval unit t names, or "".
func unitOf(t *token) string {
	if t.kind != tWord || len(t.text) > len("MICROSECONDS") {
		return ""
	}
	return intervalUnits[strings.ToUpper(t.text)]
}

// parseInterval parses INTERVAL 'text' or INTERVAL followed by one or more
// value/unit pairs.
func (p *parser) parseInterval() *IntervalLit {
	kw := p.next()
	lit := &IntervalLit{Pos: kw.pos}
	if t := p.peek(); t.kind == tString && unitOf(p.peekAt(1)) == "" {
		lit.Text = p.stringValue()
		return lit
	}
	for {
		part := IntervalPart{Pos: p.peek().pos}
		if p.accept(tMinus) {
			part.Neg = true
		} else {
			p.accept(tPlus)
		}
		v := p.peek()
		switch v.kind {
		case tNumber:
			if !isPlainDecimal(v.text) {
				p.failAt(v.pos, "invalid interval value %s", describe(*v))
			}
		case tString:
			part.Quoted = true
		default:
			p.unexpected("a number or string in INTERVAL")
		}
		part.Value = v.text
		p.next()
		if part.Unit = unitOf(p.peek()); part.Unit == "" {
			p.unexpected("an interval unit (YEAR, MONTH, WEEK, DAY, HOUR, MINUTE, SECOND, MILLISECOND or MICROSECOND)")
		}
		p.next()
		if t := p.peek(); t.kind == tWord && strings.EqualFold(t.text, "TO") && unitOf(p.peekAt(1)) != "" {
			// A field range: INTERVAL '1-2' YEAR TO MONTH.
			p.next()
			part.Unit += " TO " + unitOf(p.next())
		}
		lit.Parts = append(lit.Parts, part)
		if !p.intervalPairAhead() {
			return lit
		}
	}
}

// intervalPairAhead reports whether another value/unit pair of an interval
// literal follows, so that INTERVAL 1 HOUR - 5 stays a subtraction.
func (p *parser) intervalPairAhead() bool {
	k := 0
	if t := p.peek(); t.kind == tMinus || t.kind == tPlus {
		k = 1
	}
	v := p.peekAt(k)
	return (v.kind == tNumber || v.kind == tString) && unitOf(p.peekAt(k+1)) != ""
}

// isPlainDecimal reports whether s is digits with an optional fraction.
func isPlainDecimal(s string) bool {
	digits, dot := 0, false
	for i := 0; i < len(s); i++ {
		switch c := s[i]; {
		case c >= '0' && c <= '9':
			digits++
		case c == '.' && !dot:
			dot = true
		default:
			return false
		}
	}
	return digits > 0
}

// splitNumber splits a numeric token into its number and type suffix.
func splitNumber(s string) (body, suffix string) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i < len(s) && s[i] == '.' {
		i++
		for i < len(s) && s[i] >= '0' && s[i] <= '9' {
			i++
		}
	}
	if i < len(s) && (s[i] == 'e' || s[i] == 'E') {
		j := i + 1
		if j < len(s) && (s[j] == '+' || s[j] == '-') {
			j++
		}
		if j < len(s) && s[j] >= '0' && s[j] <= '9' {
			for j < len(s) && s[j] >= '0' && s[j] <= '9' {
				j++
			}
			i = j
		}
	}
	return s[:i], s[i:]
}

// numberLit classifies the numeric token t as Spark does: integers are INT
// when they fit, else BIGINT, else DECIMAL; a fraction makes a DECIMAL and
// an exponent a DOUBLE; suffixes L, S, Y, F, D and BD force BIGINT,
// SMALLINT, TINYINT, FLOAT, DOUBLE and DECIMAL. neg means a '-' preceded
// the number at pos.
func (p *parser) numberLit(t *token, pos Pos, neg bool) *Literal {
	body, suffix := splitNumber(t.text)
	value := body
	if neg {
		value = "-" + body
	}
	lit := &Literal{Pos: pos, Value: value}
	isInt := !strings.ContainsAny(body, ".eE")
	hasExp := strings.ContainsAny(body, "eE")
	outOfRange := func(typ string) {
		p.failAt(pos, "%s literal %s%s is out of range", typ, map[bool]string{true: "-"}[neg], t.raw)
	}
	checkInt := func(bits int, kind LiteralKind, typ string) {
		if !isInt {
			p.failAt(t.pos, "invalid numeric literal %s: %s needs an integer", describe(*t), typ)
		}
		if _, err := strconv.ParseInt(value, 10, bits); err != nil {
			outOfRange(typ)
		}
		lit.Kind = kind
	}
	checkFloat := func(bits int, kind LiteralKind, typ string) {
		if f, err := strconv.ParseFloat(value, bits); err != nil || math.IsInf(f, 0) {
			outOfRange(typ)
		}
		lit.Kind = kind
	}
	switch strings.ToUpper(suffix) {
	case "":
		switch {
		case hasExp:
			checkFloat(64, LitDouble, "DOUBLE")
		case !isInt:
			lit.Kind = LitDecimal
		default:
			if _, err := strconv.ParseInt(value, 10, 32); err == nil {
				lit.Kind = LitInt
			} else if _, err := strconv.ParseInt(value, 10, 64); err == nil {
				lit.Kind = LitBigInt
			} else {
				lit.Kind = LitDecimal
			}
		}
	case "L":
		checkInt(64, LitBigInt, "BIGINT")
	case "S":
		checkInt(16, LitSmallInt, "SMALLINT")
	case "Y":
		checkInt(8, LitTinyInt, "TINYINT")
	case "F":
		checkFloat(32, LitFloat, "FLOAT")
	case "D":
		checkFloat(64, LitDouble, "DOUBLE")
	case "BD":
		lit.Kind = LitDecimal
	default:
		p.failAt(t.pos, "invalid numeric literal %s", describe(*t))
	}
	if lit.Kind == LitDecimal && !hasExp && decimalDigits(body) > MaxDecimalPrecision {
		p.failAt(pos, "DECIMAL literal %s has more than %d digits", truncate(t.raw), MaxDecimalPrecision)
	}
	return lit
}

// decimalDigits counts the significant digits of a plain decimal number.
func decimalDigits(s string) int {
	intPart, frac, _ := strings.Cut(s, ".")
	return len(strings.TrimLeft(intPart, "0")) + len(frac)
}
