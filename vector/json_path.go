package vector

import (
	"encoding/json"
	"fmt"
	"strconv"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// get_json_object, json_array_length and json_object_keys read JSON text
// in place: a scanner skips values without decoding them, and only the
// selected value is copied out (strings decoded, other values compacted,
// as Spark's Jackson generator writes them).

// jsonPathStep is one step of a JSON path: a field name or an array index.
type jsonPathStep struct {
	name  string
	index int // >= 0 for [n]
}

// parseJSONPath parses Spark's get_json_object paths: $ followed by .name,
// ['name'] or [n] steps. ok is false for a path Spark answers NULL for
// (which includes the [*] wildcard, not supported here).
func parseJSONPath(p string) ([]jsonPathStep, bool) {
	if len(p) == 0 || p[0] != '$' {
		return nil, false
	}
	var steps []jsonPathStep
	i := 1
	for i < len(p) {
		switch p[i] {
		case '.':
			j := i + 1
			for j < len(p) && p[j] != '.' && p[j] != '[' {
				j++
			}
			if j == i+1 {
				return nil, false
			}
			steps = append(steps, jsonPathStep{name: p[i+1 : j], index: -1})
			i = j
		case '[':
			if i+1 < len(p) && p[i+1] == '\'' {
				j := i + 2
				for j < len(p) && p[j] != '\'' {
					j++
				}
				if j+1 >= len(p) || p[j+1] != ']' {
					return nil, false
				}
				steps = append(steps, jsonPathStep{name: p[i+2 : j], index: -1})
				i = j + 2
				continue
			}
			j := i + 1
			for j < len(p) && p[j] >= '0' && p[j] <= '9' {
				j++
			}
			if j == i+1 || j >= len(p) || p[j] != ']' {
				return nil, false
			}
			n, err := strconv.Atoi(p[i+1 : j])
			if err != nil {
				return nil, false
			}
			steps = append(steps, jsonPathStep{index: n})
			i = j + 1
		default:
			return nil, false
		}
	}
	return steps, true
}

// skipJSONValue returns the end of the JSON value at b[i] (after leading
// space), or -1 when it is malformed.
func skipJSONValue(b []byte, i int) int {
	i = skipJSONSpace(b, i)
	if i >= len(b) {
		return -1
	}
	switch c := b[i]; {
	case c == '"':
		return jsonString(b, i)
	case c == '{' || c == '[':
		close := c + 2
		i = skipJSONSpace(b, i+1)
		if i < len(b) && b[i] == close {
			return i + 1
		}
		for {
			if c == '{' {
				if i = skipJSONSpace(b, i); i >= len(b) || b[i] != '"' {
					return -1
				}
				if i = jsonString(b, i); i < 0 {
					return -1
				}
				if i = skipJSONSpace(b, i); i >= len(b) || b[i] != ':' {
					return -1
				}
				i++
			}
			if i = skipJSONValue(b, i); i < 0 {
				return -1
			}
			i = skipJSONSpace(b, i)
			if i >= len(b) {
				return -1
			}
			if b[i] == close {
				return i + 1
			}
			if b[i] != ',' {
				return -1
			}
			i++
		}
	case c == 't':
		return jsonLiteral(b, i, "true")
	case c == 'f':
		return jsonLiteral(b, i, "false")
	case c == 'n':
		return jsonLiteral(b, i, "null")
	default:
		return jsonNumber(b, i)
	}
}

// jsonMembers calls f for each member of the object or element of the
// array at b[i] (start and end of the value; for objects also the key's
// raw quoted text); false from f stops. ok is false when b[i] is not a
// container of kind open or is malformed.
func jsonMembers(b []byte, i int, open byte, f func(key []byte, start, end int) bool) bool {
	i = skipJSONSpace(b, i)
	if i >= len(b) || b[i] != open {
		return false
	}
	close := open + 2
	i = skipJSONSpace(b, i+1)
	if i < len(b) && b[i] == close {
		return true
	}
	for {
		var key []byte
		if open == '{' {
			if i = skipJSONSpace(b, i); i >= len(b) || b[i] != '"' {
				return false
			}
			k := jsonString(b, i)
			if k < 0 {
				return false
			}
			key = b[i:k]
			if i = skipJSONSpace(b, k); i >= len(b) || b[i] != ':' {
				return false
			}
			i++
		}
		start := skipJSONSpace(b, i)
		end := skipJSONValue(b, start)
		if end < 0 {
			return false
		}
		if !f(key, start, end) {
			return true
		}
		i = skipJSONSpace(b, end)
		if i >= len(b) {
			return false
		}
		if b[i] == close {
			return true
		}
		if b[i] != ',' {
			return false
		}
		i++
	}
}

// jsonKeyEquals reports whether the raw quoted key equals name.
func jsonKeyEquals(raw []byte, name string) bool {
	if len(raw) == len(name)+2 && string(raw[1:len(raw)-1]) == name {
		return true
	}
	var s string
	if json.Unmarshal(raw, &s) != nil {
		return false
	}
	return s == name
}

// jsonAt returns the bounds of the value path selects in b; ok is false
// when b is not valid JSON or the path selects nothing.
func jsonAt(b []byte, path []jsonPathStep) (start, end int, ok bool) {
	if !validJSON(b) {
		return 0, 0, false
	}
	start = skipJSONSpace(b, 0)
	end = skipJSONValue(b, start)
	for _, st := range path {
		found := false
		if st.index >= 0 {
			k := 0
			jsonMembers(b, start, '[', func(_ []byte, s, e int) bool {
				if k == st.index {
					start, end, found = s, e, true
					return false
				}
				k++
				return true
			})
		} else {
			jsonMembers(b, start, '{', func(key []byte, s, e int) bool {
				if jsonKeyEquals(key, st.name) {
					start, end, found = s, e, true
					return false
				}
				return true
			})
		}
		if !found {
			return 0, 0, false
		}
	}
	return start, end, true
}

// appendJSONResult appends the value b (valid JSON) as get_json_object
// returns it: a string decoded, null as ok=false, others compacted.
func appendJSONResult(dst, b []byte) ([]byte, bool) {
	switch b[0] {
	case '"':
		var s string
		if json.Unmarshal(b, &s) != nil {
			return dst, false
		}
		return append(dst, s...), true
	case 'n':
		return dst, false
	}
	inStr, esc := false, false
	for _, c := range b {
		switch {
		case inStr:
			switch {
			case esc:
				esc = false
			case c == '\\':
				esc = true
			case c == '"':
				inStr = false
			}
		case c == '"':
			inStr = true
		case c == ' ' || c == '\t' || c == '\n' || c == '\r':
			continue
		}
		dst = append(dst, c)
	}
	return dst, true
}

func typeJSONString(f *FuncExpr, args []Evaluator) error {
	for i, a := range args {
		if t := Unwrap(a.DataType()); !IsStringLike(t) && t.ID() != arrow.NULL {
			return fmt.Errorf("[DATATYPE_MISMATCH.UNEXPECTED_INPUT_TYPE] argument %d of %s must be a STRING, not %s: %w", i+1, f.Name, TypeName(t), ErrType)
		}
	}
	return nil
}

func typeGetJSONObject(f *FuncExpr, args []Evaluator) (arrow.DataType, arrayKernel, error) {
	return String, kernGetJSONObject, typeJSONString(f, args)
}

// kernGetJSONObject is get_json_object(json, path).
func kernGetJSONObject(e *arrayFnEval, arrs []arrow.Array, n int) (arrow.Array, error) {
	b := array.NewStringBuilder(e.mem)
	defer b.Release()
	js, ok1 := arrs[0].(*array.String)
	ps, ok2 := arrs[1].(*array.String)
	if !ok1 || !ok2 {
		return nullList(e, n), nil
	}
	joffs, jdata := BinaryParts(js)
	var buf []byte
	var lastPath string
	var steps []jsonPathStep
	pathOK := false
	for r := 0; r < n; r++ {
		if js.IsNull(r) || ps.IsNull(r) {
			b.AppendNull()
			continue
		}
		if p := ps.Value(r); r == 0 || p != lastPath {
			lastPath = p
			steps, pathOK = parseJSONPath(p)
		}
		if !pathOK {
			b.AppendNull()
			continue
		}
		text := jdata[joffs[r]:joffs[r+1]]
		s, end, ok := jsonAt(text, steps)
		if !ok {
			b.AppendNull()
			continue
		}
		buf, ok = appendJSONResult(buf[:0], text[s:end])
		if !ok {
			b.AppendNull()
			continue
		}
		b.BinaryBuilder.Append(buf)
	}
	return b.NewArray(), nil
}

func typeJSONArrayLength(f *FuncExpr, args []Evaluator) (arrow.DataType, arrayKernel, error) {
	return Int32, kernJSONArrayLength, typeJSONString(f, args)
}

// kernJSONArrayLength is json_array_length: the elements of a top-level
// array, NULL for anything else or invalid JSON.
func kernJSONArrayLength(e *arrayFnEval, arrs []arrow.Array, n int) (arrow.Array, error) {
	js, ok := arrs[0].(*array.String)
	if !ok {
		return nullList(e, n), nil
	}
	b := array.NewInt32Builder(e.mem)
	defer b.Release()
	joffs, jdata := BinaryParts(js)
	for r := 0; r < n; r++ {
		text := jdata[joffs[r]:joffs[r+1]]
		if js.IsNull(r) || !validJSON(text) {
			b.AppendNull()
			continue
		}
		count := int32(0)
		if !jsonMembers(text, 0, '[', func([]byte, int, int) bool { count++; return true }) {
			b.AppendNull()
			continue
		}
		b.Append(count)
	}
	return b.NewArray(), nil
}

func typeJSONObjectKeys(f *FuncExpr, args []Evaluator) (arrow.DataType, arrayKernel, error) {
	return ListOf(String), kernJSONObjectKeys, typeJSONString(f, args)
}

// kernJSONObjectKeys is json_object_keys: the keys of a top-level object
// in order, NULL for anything else or invalid JSON.
func kernJSONObjectKeys(e *arrayFnEval, arrs []arrow.Array, n int) (arrow.Array, error) {
	js, ok := arrs[0].(*array.String)
	if !ok {
		return nullList(e, n), nil
	}
	keys := array.NewStringBuilder(e.mem)
	defer keys.Release()
	offs := make([]int32, 1, n+1)
	valid := make([]bool, n)
	nulls := 0
	joffs, jdata := BinaryParts(js)
	for r := 0; r < n; r++ {
		text := jdata[joffs[r]:joffs[r+1]]
		start := keys.Len()
		ok := !js.IsNull(r) && validJSON(text) && jsonMembers(text, 0, '{', func(key []byte, _, _ int) bool {
			var s string
			if json.Unmarshal(key, &s) == nil {
				keys.Append(s)
			}
			return true
		})
		if !ok || keys.Len() < start {
			nulls++
			offs = append(offs, int32(keys.Len()))
			continue
		}
		valid[r] = true
		offs = append(offs, int32(keys.Len()))
	}
	child := keys.NewArray()
	defer child.Release()
	return buildList(e.mem, ListOf(String), offs, valid, nulls, child), nil
}
