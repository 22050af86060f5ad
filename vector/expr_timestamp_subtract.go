package vector

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// timestamp_subtract(end, start) is Spark's SubtractTimestamps, the
// planner's form of end - start for timestamps (TIMESTAMP - TIMESTAMP,
// TIMESTAMP_NTZ - TIMESTAMP_NTZ; the planner casts a date, a string or a
// mix of the two timestamp types first, as Spark's coercion does). The
// result is a day-time interval: the microseconds between the two wall
// clocks, read in the session time zone for TIMESTAMP and as they are for
// TIMESTAMP_NTZ. Reading wall clocks, not instants, is Spark's choice
// (DateTimeUtils.subtractTimestamps): across a daylight-saving change the
// interval is the difference of the local readings, so
// '2024-03-31 03:00' - '2024-03-31 01:00' in Europe/Paris is 2 hours
// although one hour passed. A difference that does not fit a long of
// microseconds raises ErrOverflow, as Java's ChronoUnit.between does.

// bindTimestampSubtract binds timestamp_subtract(end, start).
func bindTimestampSubtract(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	if IsTimestampNTZ(args[0].DataType()) != IsTimestampNTZ(args[1].DataType()) {
		return nil, fmt.Errorf("timestamp_subtract needs two timestamps of one type, not %s and %s: %w",
			TypeName(args[0].DataType()), TypeName(args[1].DataType()), ErrType)
	}
	end, start := sessionWall(f, args, 0), sessionWall(f, args, 1)
	return bindRows(f, in, mem, args, []rowKind{rowMicros, rowMicros}, Interval, rowKernels{
		num: func(a []rowArg, i int) (int64, bool, error) {
			e, s := end(a, i), start(a, i)
			d := e - s
			// Signed overflow: the operands' signs differ and the
			// result's sign is not the minuend's.
			if (e >= 0) != (s >= 0) && (d >= 0) != (e >= 0) {
				return 0, false, fmt.Errorf("the interval between %d and %d microseconds does not fit a long: %w", e, s, ErrOverflow)
			}
			return d, true, nil
		},
	})
}

func init() {
	functions["timestamp_subtract"] = funcSpec{2, 2, rowBinder("timestamp_subtract", bindTimestampSubtract)}
	ntzFunctions["timestamp_subtract"] = true
}
