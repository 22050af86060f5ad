package arrowstream

import (
	"errors"
	"fmt"
	"reflect"
	"runtime"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/plan"
)

// GroupStateTimeout is the timeout kind of a FlatMapGroupsWithState
// (docs/semantics.md §8).
type GroupStateTimeout = plan.GroupStateTimeout

// The group state timeouts.
const (
	// NoTimeout: keys never time out.
	NoTimeout = plan.NoTimeout
	// ProcessingTimeTimeout: a key times out when the batch timestamp
	// passes the timeout set with SetTimeoutDuration; it forces a
	// (no-data) batch on every trigger.
	ProcessingTimeTimeout = plan.ProcessingTimeTimeout
	// EventTimeTimeout: a key times out when the watermark passes the
	// timeout set with SetTimeoutTimestamp; needs a watermark.
	EventTimeTimeout = plan.EventTimeTimeout
)

// GroupFunc is the user function of FlatMapGroupsWithState and
// MapGroupsWithState (see stream.GroupFunc).
type GroupFunc = stream.GroupFunc

// GroupState is the state handle of one key in one call of a GroupFunc
// (see stream.GroupState).
type GroupState = stream.GroupState

// ErrGroupState is wrapped by the errors of GroupState's methods.
var ErrGroupState = stream.ErrGroupState

// FlatMapGroupsWithState calls fn per key with its rows and state
// (groupByKey(key).flatMapGroupsWithState). outputSchema is the schema of
// fn's rows; mode is the function's output mode (Update or Append).
// fn may run concurrently for different keys, never for the same key (see
// GroupFunc). Within an epoch, the rows of one state partition come out in
// key order (keys with rows, then timed-out keys), partitions one after
// the other; Spark defines no order across keys either.
func (g *GroupedData) FlatMapGroupsWithState(outputSchema *arrow.Schema, mode OutputMode, timeout GroupStateTimeout, fn GroupFunc) *DataFrame {
	return g.groupState(outputSchema, mode, timeout, fn, false)
}

// MapGroupsWithState is FlatMapGroupsWithState with exactly one output row
// per call, in Update mode (mapGroupsWithState). fn may run concurrently
// for different keys, never for the same key (see GroupFunc).
func (g *GroupedData) MapGroupsWithState(outputSchema *arrow.Schema, timeout GroupStateTimeout, fn GroupFunc) *DataFrame {
	return g.groupState(outputSchema, Update, timeout, fn, true)
}

func (g *GroupedData) groupState(outputSchema *arrow.Schema, mode OutputMode, timeout GroupStateTimeout, fn GroupFunc, mapGroups bool) *DataFrame {
	op := "flatMapGroupsWithState"
	if mapGroups {
		op = "mapGroupsWithState"
	}
	return g.df.then(op, func(bd plan.Builder, n plan.Node) (plan.Node, error) {
		if len(g.keys) != 1 {
			return nil, fmt.Errorf("groupByKey takes one key expression, got %d", len(g.keys))
		}
		if fn == nil {
			return nil, errors.New("no function")
		}
		return bd.FlatMapGroups(n, plan.FlatMapSpec{Key: g.keys[0], Func: fn, FuncName: funcName(fn),
			OutputSchema: outputSchema, Mode: plan.OutputMode(mode), Timeout: timeout, MapGroups: mapGroups})
	})
}

// GroupByKey groups by one key expression for FlatMapGroupsWithState and
// MapGroupsWithState ("expr [AS name]").
func (df *DataFrame) GroupByKey(key string) *GroupedData { return df.GroupBy(key) }

// funcName names a function for EXPLAIN (its Go symbol).
func funcName(fn GroupFunc) string {
	if f := runtime.FuncForPC(reflect.ValueOf(fn).Pointer()); f != nil {
		name := f.Name()
		return name[strings.LastIndex(name, "/")+1:]
	}
	return "GroupFunc"
}
