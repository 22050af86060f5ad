package files

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// jsonCodec decodes JSON lines with arrow's array.JSONReader.
type jsonCodec struct {
	schema *arrow.Schema // the decoded columns (without the corrupt-record column)
}

func (c *jsonCodec) decode(mem memory.Allocator, data []byte) ([]arrow.Record, error) {
	r := array.NewJSONReader(bytes.NewReader(data), c.schema, array.WithAllocator(mem), array.WithChunk(-1))
	return drainRecords(r)
}

// explain finds the first field of line that arrow cannot decode as its
// column's type, by decoding each field alone with the same reader.
func (c *jsonCodec) explain(line []byte) string {
	var obj map[string]json.RawMessage
	if err := json.Unmarshal(line, &obj); err != nil {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return fmt.Sprintf(" char %d", se.Offset)
		}
		return " (not a JSON object)"
	}
	for _, f := range c.schema.Fields() {
		v, ok := obj[f.Name]
		if !ok {
			continue
		}
		one, err := json.Marshal(map[string]json.RawMessage{f.Name: v})
		if err != nil {
			continue
		}
		recs, err := safeDecode(memory.DefaultAllocator, &jsonCodec{schema: arrow.NewSchema([]arrow.Field{f}, nil)}, one)
		for _, r := range recs {
			r.Release()
		}
		if err != nil {
			return fmt.Sprintf(" column %s (value %s)", f.Name, truncate(string(v), 40))
		}
	}
	return ""
}

func truncate(s string, n int) string {
	if len(s) <= n {
		return s
	}
	return s[:n] + "..."
}
