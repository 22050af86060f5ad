package vector

import (
	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Hour is hour(ts): the hour of the wall-clock time of ts in the session
// time zone (0-23), an int. A string or date argument is cast to a
// timestamp first (raising under ANSI when it does not parse), as Spark's
// implicit cast; a TIMESTAMP_NTZ is its own wall clock.
func Hour(ts Expr) Expr {
	return &FuncExpr{Name: "hour", Args: []Expr{ts}, bind: bindTimeField(3600*fnMicrosPerSecond, 24)}
}

// Minute is minute(ts), 0-59; see Hour.
func Minute(ts Expr) Expr {
	return &FuncExpr{Name: "minute", Args: []Expr{ts}, bind: bindTimeField(60*fnMicrosPerSecond, 60)}
}

// Second is second(ts), 0-59 (the whole seconds; Spark's second() drops
// the fraction); see Hour.
func Second(ts Expr) Expr {
	return &FuncExpr{Name: "second", Args: []Expr{ts}, bind: bindTimeField(fnMicrosPerSecond, 60)}
}

// bindTimeField binds a field that is (wall micros / unit) mod count.
func bindTimeField(unit, count int64) func(*FuncExpr, *arrow.Schema, memory.Allocator, []Evaluator) (Evaluator, error) {
	return bindWallField(Int32, func(v int64) int32 { return int32(fnFloorMod(fnFloorDiv(v, unit), count)) })
}

// bindWallField binds a field of type to computed by field from the
// wall-clock microseconds of a timestamp (in the session time zone; a
// TIMESTAMP_NTZ is its own wall clock; dates and strings are cast to a
// timestamp first).
func bindWallField[D any](to arrow.DataType, field func(wallMicros int64) D) func(*FuncExpr, *arrow.Schema, memory.Allocator, []Evaluator) (Evaluator, error) {
	return func(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
		ts := args[0]
		dt := Unwrap(ts.DataType())
		loc := f.Loc
		switch {
		case dt.ID() == arrow.NULL:
			return fnNullResult(to, mem), nil
		case IsTimestampNTZ(dt):
			loc = nil // already a wall clock
		case dt.ID() == arrow.TIMESTAMP:
		case dt.ID() == arrow.DATE32 || dt.ID() == arrow.STRING:
			ts = foldQuietly(&castEval{child: ts, from: ts.DataType(), to: Timestamp, kern: castKernelFor(dt, Timestamp), mem: mem, mode: f.Mode, loc: f.Loc,
				expr: "CAST(" + f.Args[0].String() + " AS TIMESTAMP)", operand: f.Args[0].String()}, mem, ts)
		default:
			return nil, fnErrArgType(f.Args[0].String(), ts.DataType(), "a timestamp")
		}
		k := func(c *castEval, arr arrow.Array) (arrow.Array, error) {
			src := fnRawValues[int64](arr)
			return castFixedResult(c, arr, func(dst []D, _ *validityOut) error {
				var z zoneCache
				for i, v := range src {
					if !isUTC(c.loc) {
						v = toWall(&z, c.loc, v)
					}
					dst[i] = field(v)
				}
				return nil
			})
		}
		ev := &castEval{child: ts, from: ts.DataType(), to: to, kern: k, mem: mem, loc: loc, expr: f.String(), operand: f.Args[0].String()}
		return fnFoldConstant(f, in, mem, ev, ts)
	}
}
