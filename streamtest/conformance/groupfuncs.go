package conformance

import (
	"encoding/binary"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
)

// groupFunc is a scenario's state function (a `function NAME:` line of a
// description) with the schema of its rows.
type groupFunc struct {
	schema *arrow.Schema
	fn     arrowstream.GroupFunc
}

var (
	strStrSchema = arrow.NewSchema([]arrow.Field{{Name: "_1", Type: arrow.BinaryTypes.String, Nullable: true}, {Name: "_2", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	strIntSchema = arrow.NewSchema([]arrow.Field{{Name: "_1", Type: arrow.BinaryTypes.String, Nullable: true}, {Name: "_2", Type: arrow.PrimitiveTypes.Int32, Nullable: true}}, nil)
	strI64Schema = arrow.NewSchema([]arrow.Field{{Name: "_1", Type: arrow.BinaryTypes.String, Nullable: true}, {Name: "_2", Type: arrow.PrimitiveTypes.Int64, Nullable: true}}, nil)
	strSchema    = arrow.NewSchema([]arrow.Field{{Name: "value", Type: arrow.BinaryTypes.String, Nullable: true}}, nil)
	intSchema    = arrow.NewSchema([]arrow.Field{{Name: "value", Type: arrow.PrimitiveTypes.Int32}}, nil)
)

// groupFuncs are the state functions the scenarios describe, by name.
var groupFuncs = map[string]groupFunc{
	"count_remove_at_3": {strStrSchema, func(key arrow.Array, rows arrow.Record, st *arrowstream.GroupState) (arrow.Record, error) {
		count := stateInt(st) + rows.NumRows()
		if count == 3 {
			st.Remove()
			return nil, nil
		}
		if err := setStateInt(st, count); err != nil {
			return nil, err
		}
		return row(strStrSchema, key.ValueStr(0), strconv.FormatInt(count, 10)), nil
	}},
	"count_minus1_at_3": {strStrSchema, func(key arrow.Array, rows arrow.Record, st *arrowstream.GroupState) (arrow.Record, error) {
		count := stateInt(st) + rows.NumRows()
		if count == 3 {
			st.Remove()
			return row(strStrSchema, key.ValueStr(0), "-1"), nil
		}
		if err := setStateInt(st, count); err != nil {
			return nil, err
		}
		return row(strStrSchema, key.ValueStr(0), strconv.FormatInt(count, 10)), nil
	}},
	// Spark's lazily consuming iterator: the state moves one row at a time,
	// so a key can emit several rows in one call and restart after removal.
	"count_each_remove_at_3": {strStrSchema, func(key arrow.Array, rows arrow.Record, st *arrowstream.GroupState) (arrow.Record, error) {
		var out [][]any
		for i := int64(0); i < rows.NumRows(); i++ {
			count := stateInt(st) + 1
			if count == 3 {
				st.Remove()
				continue
			}
			if err := setStateInt(st, count); err != nil {
				return nil, err
			}
			out = append(out, []any{key.ValueStr(0), strconv.FormatInt(count, 10)})
		}
		return rowsOf(strStrSchema, out...), nil
	}},
	"running_count_str": {strStrSchema, func(key arrow.Array, rows arrow.Record, st *arrowstream.GroupState) (arrow.Record, error) {
		count := stateInt(st) + rows.NumRows()
		if err := setStateInt(st, count); err != nil {
			return nil, err
		}
		return row(strStrSchema, key.ValueStr(0), strconv.FormatInt(count, 10)), nil
	}},
	"key_only": {strSchema, func(key arrow.Array, _ arrow.Record, _ *arrowstream.GroupState) (arrow.Record, error) {
		return row(strSchema, key.ValueStr(0)), nil
	}},
	"emit_nothing": {strSchema, func(arrow.Array, arrow.Record, *arrowstream.GroupState) (arrow.Record, error) {
		return nil, nil
	}},
	// SPARK-38320: a key that receives data must not time out in that
	// epoch, and a call that does not set the timeout again clears it.
	"timeout_500_once": {intSchema, func(_ arrow.Array, _ arrow.Record, st *arrowstream.GroupState) (arrow.Record, error) {
		if st.HasTimedOut() {
			return nil, errors.New("the state should not have timed out")
		}
		if !st.Exists() {
			if err := setStateInt(st, 0); err != nil {
				return nil, err
			}
			if err := st.SetTimeoutTimestamp(500); err != nil {
				return nil, err
			}
		}
		return row(intSchema, int32(0)), nil
	}},
	// GroupState.getCurrentWatermarkMs is an error where the operator's
	// input has no event-time column (Spark's watermarkPresent); the
	// error fails the epoch as Spark's exception fails the query.
	"emit_watermark_ms": {strStrSchema, func(key arrow.Array, _ arrow.Record, st *arrowstream.GroupState) (arrow.Record, error) {
		wm, err := st.GetCurrentWatermarkMs()
		if err != nil {
			return nil, err
		}
		return row(strStrSchema, key.ValueStr(0), strconv.FormatInt(wm, 10)), nil
	}},
	"emit_processing_time_ms": {strStrSchema, func(key arrow.Array, _ arrow.Record, st *arrowstream.GroupState) (arrow.Record, error) {
		return row(strStrSchema, key.ValueStr(0), strconv.FormatInt(st.GetCurrentProcessingTimeMs(), 10)), nil
	}},
	// A processing-time timeout may be set on a key without a state (or
	// right after removing it): the key is kept for the timeout alone, and
	// the timed-out call sees no state.
	"timeout_without_state": {strStrSchema, func(key arrow.Array, _ arrow.Record, st *arrowstream.GroupState) (arrow.Record, error) {
		k := key.ValueStr(0)
		if st.HasTimedOut() {
			if st.Exists() {
				return row(strStrSchema, k, "timed out with state"), nil
			}
			return row(strStrSchema, k, "timed out without state"), nil
		}
		msg := "timeout set"
		switch {
		case st.Exists():
			st.Remove()
			msg = "state removed, timeout set"
		case strings.HasPrefix(k, "s"):
			return row(strStrSchema, k, "state set"), setStateInt(st, 1)
		}
		if err := st.SetTimeoutDuration(5 * time.Second); err != nil {
			return nil, err
		}
		return row(strStrSchema, k, msg), nil
	}},
	// A timed-out call may set the timeout again: the key stays and
	// times out once more.
	"rearm_timeout_2s": {strStrSchema, func(key arrow.Array, rows arrow.Record, st *arrowstream.GroupState) (arrow.Record, error) {
		n, msg := stateInt(st), "rows"
		if st.HasTimedOut() {
			n, msg = n+1, "timed out"
			if err := setStateInt(st, n); err != nil {
				return nil, err
			}
		} else if !st.Exists() {
			if err := setStateInt(st, 0); err != nil {
				return nil, err
			}
		}
		if err := st.SetTimeoutDuration(2 * time.Second); err != nil {
			return nil, err
		}
		return row(strStrSchema, key.ValueStr(0), msg+" "+strconv.FormatInt(n, 10)), nil
	}},
	// The timeout setters refuse a timeout of the other kind (or with
	// none configured) and an event-time timeout below the watermark; the
	// error fails the epoch as Spark's exception fails the query.
	"count_timeout_duration_10s": {strStrSchema, func(key arrow.Array, rows arrow.Record, st *arrowstream.GroupState) (arrow.Record, error) {
		count := stateInt(st) + rows.NumRows()
		if err := setStateInt(st, count); err != nil {
			return nil, err
		}
		if err := st.SetTimeoutDuration(10 * time.Second); err != nil {
			return nil, err
		}
		return row(strStrSchema, key.ValueStr(0), strconv.FormatInt(count, 10)), nil
	}},
	"timeout_20s_before_max_event_time": {strIntSchema, func(key arrow.Array, rows arrow.Record, st *arrowstream.GroupState) (arrow.Record, error) {
		if st.HasTimedOut() {
			st.Remove()
			return row(strIntSchema, key.ValueStr(0), int32(-1)), nil
		}
		m, err := keepMaxEventTime(rows, st)
		if err != nil {
			return nil, err
		}
		if err := st.SetTimeoutTimestamp((m - 20) * 1000); err != nil {
			return nil, err
		}
		return row(strIntSchema, key.ValueStr(0), int32(m)), nil
	}},
	"running_count_long": {strI64Schema, func(key arrow.Array, rows arrow.Record, st *arrowstream.GroupState) (arrow.Record, error) {
		count := stateInt(st) + rows.NumRows()
		if err := setStateInt(st, count); err != nil {
			return nil, err
		}
		return row(strI64Schema, key.ValueStr(0), count), nil
	}},
	"count_with_processing_timeout": {strStrSchema, func(key arrow.Array, rows arrow.Record, st *arrowstream.GroupState) (arrow.Record, error) {
		if st.HasTimedOut() {
			st.Remove()
			return row(strStrSchema, key.ValueStr(0), "-1"), nil
		}
		count := stateInt(st) + rows.NumRows()
		if err := setStateInt(st, count); err != nil {
			return nil, err
		}
		if err := st.SetTimeoutDuration(10 * time.Second); err != nil {
			return nil, err
		}
		return row(strStrSchema, key.ValueStr(0), strconv.FormatInt(count, 10)), nil
	}},
	"max_event_time_with_timeout": {strIntSchema, func(key arrow.Array, rows arrow.Record, st *arrowstream.GroupState) (arrow.Record, error) {
		if st.HasTimedOut() {
			st.Remove()
			return row(strIntSchema, key.ValueStr(0), int32(-1)), nil
		}
		m, err := keepMaxEventTime(rows, st)
		if err != nil {
			return nil, err
		}
		if err := st.SetTimeoutTimestamp((m + 5) * 1000); err != nil {
			return nil, err
		}
		return row(strIntSchema, key.ValueStr(0), int32(m)), nil
	}},
}

// groupState adds a group-state operation to df.
func groupState(df *arrowstream.DataFrame, g groupStateSpec, mapGroups bool) *arrowstream.DataFrame {
	f := groupFuncs[g.Function]
	timeout := arrowstream.NoTimeout
	switch strings.ToLower(g.Timeout) {
	case "processing_time":
		timeout = arrowstream.ProcessingTimeTimeout
	case "event_time":
		timeout = arrowstream.EventTimeTimeout
	}
	gd := df.GroupByKey(g.Key)
	if mapGroups {
		return gd.MapGroupsWithState(f.schema, timeout, f.fn)
	}
	mode, err := arrowstream.ParseOutputMode(g.OutputMode)
	if err != nil {
		mode = arrowstream.Complete // refused by the planner with its message
	}
	return gd.FlatMapGroupsWithState(f.schema, mode, timeout, f.fn)
}

func stateInt(st *arrowstream.GroupState) int64 {
	if b := st.Get(); len(b) == 8 {
		return int64(binary.LittleEndian.Uint64(b))
	}
	return 0
}

func setStateInt(st *arrowstream.GroupState, v int64) error {
	return st.Update(binary.LittleEndian.AppendUint64(nil, uint64(v)))
}

// eventTimeSeconds reads the rows' timestamp column as whole seconds.
func eventTimeSeconds(rows arrow.Record) ([]int64, error) {
	for i, f := range rows.Schema().Fields() {
		ts, ok := f.Type.(*arrow.TimestampType)
		if !ok {
			continue
		}
		div := map[arrow.TimeUnit]int64{arrow.Second: 1, arrow.Millisecond: 1e3, arrow.Microsecond: 1e6, arrow.Nanosecond: 1e9}[ts.Unit]
		col := rows.Column(i).(*array.Timestamp)
		out := make([]int64, 0, col.Len())
		for j := 0; j < col.Len(); j++ {
			if col.IsValid(j) {
				out = append(out, int64(col.Value(j))/div)
			}
		}
		return out, nil
	}
	return nil, fmt.Errorf("no timestamp column in %s", rows.Schema())
}

// row builds a one-row record of schema from Go values.
func row(schema *arrow.Schema, vals ...any) arrow.Record {
	return rowsOf(schema, vals)
}

// rowsOf builds a record of schema with one row per entry of rows; nil
// when there are none (a GroupFunc's "no output").
func rowsOf(schema *arrow.Schema, rows ...[]any) arrow.Record {
	if len(rows) == 0 {
		return nil
	}
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for _, vals := range rows {
		for i, v := range vals {
			switch x := v.(type) {
			case string:
				b.Field(i).(*array.StringBuilder).Append(x)
			case int32:
				b.Field(i).(*array.Int32Builder).Append(x)
			case int64:
				b.Field(i).(*array.Int64Builder).Append(x)
			}
		}
	}
	return b.NewRecord()
}

// keepMaxEventTime folds the rows' event times (seconds) into the state's
// maximum, stores it and returns it.
func keepMaxEventTime(rows arrow.Record, st *arrowstream.GroupState) (int64, error) {
	m := stateInt(st)
	col, err := eventTimeSeconds(rows)
	if err != nil {
		return 0, err
	}
	for _, s := range col {
		m = max(m, s)
	}
	return m, setStateInt(st, m)
}
