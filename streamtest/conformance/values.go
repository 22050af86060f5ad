package conformance

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/streamtest"
	"github.com/arrowstream/arrowstream/vector"
)

// arrowType maps a scenario type name to its Arrow type.
func arrowType(name string) (arrow.DataType, error) {
	switch strings.ToLower(name) {
	case "int":
		return vector.Int32, nil
	case "bigint":
		return vector.Int64, nil
	case "double":
		return vector.Float64, nil
	case "string":
		return vector.String, nil
	case "boolean":
		return vector.Boolean, nil
	case "timestamp":
		return vector.Timestamp, nil
	}
	return nil, fmt.Errorf("unknown type %q (want int, bigint, double, string, boolean or timestamp)", name)
}

// schemaOf builds the schema of columns (validated).
func schemaOf(cols []Column) (*arrow.Schema, error) {
	fields := make([]arrow.Field, len(cols))
	for i, c := range cols {
		dt, err := arrowType(c.Type)
		if err != nil {
			return nil, fmt.Errorf("column %s: %w", c.Name, err)
		}
		fields[i] = arrow.Field{Name: c.Name, Type: dt, Nullable: c.Nullable == nil || *c.Nullable}
	}
	return arrow.NewSchema(fields, nil), nil
}

// convertRows converts JSON rows to Go values of the columns' types, as
// the in-memory sources take them: int → int32, bigint → int64, double →
// float64, timestamp (seconds since the Unix epoch) → time.Time.
func convertRows(cols []Column, rows [][]any) ([]streamtest.Row, error) {
	out := make([]streamtest.Row, len(rows))
	for r, row := range rows {
		if len(row) != len(cols) {
			return nil, fmt.Errorf("row %d has %d values, want %d", r, len(row), len(cols))
		}
		conv := make(streamtest.Row, len(row))
		for c, v := range row {
			x, err := convertValue(cols[c].Type, v)
			if err != nil {
				return nil, fmt.Errorf("row %d column %s: %w", r, cols[c].Name, err)
			}
			conv[c] = x
		}
		out[r] = conv
	}
	return out, nil
}

func convertValue(typ string, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	bad := func() error { return fmt.Errorf("%v (%T) is not a %s", v, v, typ) }
	switch strings.ToLower(typ) {
	case "string":
		s, ok := v.(string)
		if !ok {
			return nil, bad()
		}
		return s, nil
	case "boolean":
		b, ok := v.(bool)
		if !ok {
			return nil, bad()
		}
		return b, nil
	}
	n, ok := v.(json.Number)
	if !ok {
		if f, isFloat := v.(float64); isFloat {
			n = json.Number(strconv.FormatFloat(f, 'g', -1, 64))
		} else {
			return nil, bad()
		}
	}
	switch strings.ToLower(typ) {
	case "int":
		i, err := strconv.ParseInt(n.String(), 10, 32)
		if err != nil {
			return nil, bad()
		}
		return int32(i), nil
	case "bigint":
		i, err := n.Int64()
		if err != nil {
			return nil, bad()
		}
		return i, nil
	case "double":
		f, err := n.Float64()
		if err != nil {
			return nil, bad()
		}
		return f, nil
	case "timestamp":
		f, err := n.Float64()
		if err != nil || math.IsInf(f, 0) || math.Abs(f) > 9e12 {
			return nil, bad()
		}
		if i, err := n.Int64(); err == nil {
			return time.Unix(i, 0).UTC(), nil
		}
		return time.UnixMicro(int64(math.Round(f * 1e6))).UTC(), nil
	}
	return nil, fmt.Errorf("unknown type %q", typ)
}

// expectedRows turns JSON rows into expected rows: numbers stay
// json.Number (compared by value), arrays become []any.
func expectedRows(rows [][]any) []streamtest.Row {
	out := make([]streamtest.Row, len(rows))
	for i, r := range rows {
		out[i] = streamtest.Row(r)
	}
	return out
}

func parseOutputMode(s string) (arrowstream.OutputMode, error) {
	if s == "" {
		return arrowstream.Append, nil
	}
	m, err := arrowstream.ParseOutputMode(s)
	if err != nil {
		return 0, fmt.Errorf("output_mode: %w", err)
	}
	return m, nil
}

// queryConf turns query options into session settings: shuffle_partitions
// and watermark_policy by their Spark keys, Spark conf keys as given.
func queryConf(opts map[string]json.RawMessage) (map[string]string, error) {
	out := map[string]string{}
	for k, raw := range opts {
		v, err := scalarString(raw)
		if err != nil {
			return nil, fmt.Errorf("option %s: %w", k, err)
		}
		switch {
		case k == "shuffle_partitions":
			if n, err := strconv.Atoi(v); err != nil || n <= 0 {
				return nil, fmt.Errorf("option shuffle_partitions: %q is not a positive integer", v)
			}
			out[arrowstream.ConfShufflePartitions] = v
		case k == "watermark_policy":
			if v != "min" && v != "max" {
				return nil, fmt.Errorf("option watermark_policy: %q (valid values are 'min' and 'max')", v)
			}
			out[arrowstream.ConfWatermarkPolicy] = v
		case strings.HasPrefix(k, "spark."):
			out[k] = v
		default:
			return nil, fmt.Errorf("unknown query option %q (want shuffle_partitions, watermark_policy or a spark.* key)", k)
		}
	}
	return out, nil
}

// scalarString renders a JSON string, number or boolean as text.
func scalarString(raw json.RawMessage) (string, error) {
	var v any
	if err := decodeJSON(raw, &v); err != nil {
		return "", err
	}
	switch x := v.(type) {
	case string:
		return x, nil
	case json.Number:
		return x.String(), nil
	case bool:
		return strconv.FormatBool(x), nil
	}
	return "", fmt.Errorf("%s is not a string, number or boolean", raw)
}

// decodeJSON decodes raw into v, keeping numbers as json.Number and
// refusing unknown fields of structs.
func decodeJSON(raw json.RawMessage, v any) error {
	if len(raw) == 0 {
		return errors.New("missing value")
	}
	dec := json.NewDecoder(bytes.NewReader(raw))
	dec.UseNumber()
	dec.DisallowUnknownFields()
	if err := dec.Decode(v); err != nil {
		return err
	}
	if dec.More() {
		return errors.New("trailing data")
	}
	return nil
}
