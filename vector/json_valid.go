package vector

import "encoding/json"

// validJSON reports whether b is exactly one JSON value (RFC 8259) with
// optional surrounding whitespace, as encoding/json.Valid does (which it
// matches, fuzz-tested). from_json calls it on every row, and this tight
// loop without per-byte function calls is several times faster than the
// standard library's scanner. Nesting deeper than its fixed stack falls
// back to json.Valid, so it never allocates.
func validJSON(b []byte) bool {
	var stack [64]byte // '{' or '[' per open container
	depth := 0
	i := skipJSONSpace(b, 0)
	for {
		// A value starts at i.
		if i >= len(b) {
			return false
		}
		switch c := b[i]; {
		case c == '{' || c == '[':
			if depth == len(stack) {
				return json.Valid(b)
			}
			stack[depth] = c
			depth++
			i = skipJSONSpace(b, i+1)
			if i < len(b) && b[i] == c+2 { // '}' is '{'+2, ']' is '['+2
				depth--
				i++
				break
			}
			if c == '{' {
				if i = jsonKey(b, i); i < 0 {
					return false
				}
			}
			continue
		case c == '"':
			if i = jsonString(b, i); i < 0 {
				return false
			}
		case c == '-' || c >= '0' && c <= '9':
			if i = jsonNumber(b, i); i < 0 {
				return false
			}
		case c == 't':
			if i = jsonLiteral(b, i, "true"); i < 0 {
				return false
			}
		case c == 'f':
			if i = jsonLiteral(b, i, "false"); i < 0 {
				return false
			}
		case c == 'n':
			if i = jsonLiteral(b, i, "null"); i < 0 {
				return false
			}
		default:
			return false
		}
		// After a value: close containers, or go on to the next element.
		for {
			i = skipJSONSpace(b, i)
			if depth == 0 {
				return i == len(b)
			}
			if i >= len(b) {
				return false
			}
			top := stack[depth-1]
			switch b[i] {
			case top + 2:
				depth--
				i++
				continue
			case ',':
				i = skipJSONSpace(b, i+1)
				if top == '{' {
					if i = jsonKey(b, i); i < 0 {
						return false
					}
				}
			default:
				return false
			}
			break
		}
	}
}

func skipJSONSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// jsonKey reads `"key" :` and the space after it; -1 if malformed.
func jsonKey(b []byte, i int) int {
	if i >= len(b) || b[i] != '"' {
		return -1
	}
	if i = jsonString(b, i); i < 0 {
		return -1
	}
	i = skipJSONSpace(b, i)
	if i >= len(b) || b[i] != ':' {
		return -1
	}
	return skipJSONSpace(b, i+1)
}

// jsonString reads a string starting at the quote at i; it returns the
// index after the closing quote, or -1.
func jsonString(b []byte, i int) int {
	for i++; i < len(b); i++ {
		switch c := b[i]; {
		case c == '"':
			return i + 1
		case c < 0x20:
			return -1
		case c == '\\':
			i++
			if i >= len(b) {
				return -1
			}
			switch b[i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if i+4 >= len(b) {
					return -1
				}
				for _, h := range b[i+1 : i+5] {
					if !(h >= '0' && h <= '9' || h >= 'a' && h <= 'f' || h >= 'A' && h <= 'F') {
						return -1
					}
				}
				i += 4
			default:
				return -1
			}
		}
	}
	return -1
}

// jsonNumber reads -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?.
func jsonNumber(b []byte, i int) int {
	if b[i] == '-' {
		i++
	}
	digits := func(i int) (int, bool) {
		start := i
		for i < len(b) && b[i] >= '0' && b[i] <= '9' {
			i++
		}
		return i, i > start
	}
	if i < len(b) && b[i] == '0' {
		i++
	} else {
		var ok bool
		if i, ok = digits(i); !ok {
			return -1
		}
	}
	if i < len(b) && b[i] == '.' {
		var ok bool
		if i, ok = digits(i + 1); !ok {
			return -1
		}
	}
	if i < len(b) && (b[i] == 'e' || b[i] == 'E') {
		i++
		if i < len(b) && (b[i] == '+' || b[i] == '-') {
			i++
		}
		var ok bool
		if i, ok = digits(i); !ok {
			return -1
		}
	}
	return i
}

func jsonLiteral(b []byte, i int, lit string) int {
	if len(b)-i < len(lit) || string(b[i:i+len(lit)]) != lit {
		return -1
	}
	return i + len(lit)
}
