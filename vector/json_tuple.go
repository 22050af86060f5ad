package vector

import (
	"strconv"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// json_tuple_item(json, key) is one column of the generator
// json_tuple(json, k1, k2, ...), which the planner builds from one call
// per key (Spark's JsonTuple): the value of key in the top-level JSON
// object, a string unquoted and any other value as compact JSON text;
// NULL when json is not an object, is malformed, lacks key or holds a
// JSON null there. With a repeated key the last non-null value wins. As
// in Spark's streaming parser, text after the object is not read.

func init() {
	functions["json_tuple_item"] = arrayFunc("json_tuple_item", 2, 2, typeJSONTupleItem)
}

func typeJSONTupleItem(f *FuncExpr, args []Evaluator) (arrow.DataType, arrayKernel, error) {
	return String, kernJSONTupleItem, typeJSONString(f, args)
}

func kernJSONTupleItem(e *arrayFnEval, arrs []arrow.Array, n int) (arrow.Array, error) {
	js, ok1 := arrs[0].(*array.String)
	ks, ok2 := arrs[1].(*array.String)
	if !ok1 || !ok2 {
		return nullList(e, n), nil
	}
	b := array.NewStringBuilder(e.mem)
	defer b.Release()
	joffs, jdata := BinaryParts(js)
	var buf []byte
	for r := 0; r < n; r++ {
		if js.IsNull(r) || ks.IsNull(r) {
			b.AppendNull()
			continue
		}
		text := jdata[joffs[r]:joffs[r+1]]
		start := skipJSONSpace(text, 0)
		end := skipJSONValue(text, start)
		if start >= len(text) || text[start] != '{' || end < 0 {
			b.AppendNull()
			continue
		}
		obj := text[start:end]
		key := ks.Value(r)
		vs, ve := -1, -1
		ok := jsonMembers(obj, 0, '{', func(k []byte, s, e int) bool {
			if obj[s] != 'n' && jsonKeyEquals(k, key) {
				vs, ve = s, e
			}
			return true
		})
		if !ok || vs < 0 {
			b.AppendNull()
			continue
		}
		buf = appendJSONTupleValue(buf[:0], obj[vs:ve])
		b.BinaryBuilder.Append(buf)
	}
	return b.NewArray(), nil
}

// appendJSONTupleValue appends v as json_tuple returns it: a string
// decoded, a top-level floating-point number as Jackson re-writes a double
// (1e2 is 100.0), anything else compacted.
func appendJSONTupleValue(dst, v []byte) []byte {
	if integerToken(v) || !numberToken(v) {
		out, _ := appendJSONResult(dst, v)
		return out
	}
	f, err := strconv.ParseFloat(string(v), 64)
	if err != nil {
		return append(dst, v...)
	}
	return appendJavaDouble(dst, f, 64)
}
