package vector

import (
	"fmt"
	"strings"
)

// A string holding only a time of day ('10:11:12') casts to a timestamp
// of the current date in Spark. The engine does not answer with a date
// that depends on when the query runs, and NULL would be a wrong answer,
// so the cast is refused: with ANSI on it is an invalid input like any
// other, with ANSI off this error (NULL is what ANSI off gives only for
// text that is not a timestamp at all).

// isTimeOfDayOnly reports whether b is a time of day without a date, in
// the shapes Spark's stringToTimestamp reads as one.
func isTimeOfDayOnly(b []byte) bool {
	_, _, justTime, ok := timestampSegments(b)
	return ok && justTime
}

// ErrTimeOfDayOnly is wrapped by the error of a cast to a timestamp of a
// string holding only a time of day.
var ErrTimeOfDayOnly = fmt.Errorf("a time of day without a date is not supported (Spark takes the current date, which the engine does not use as data): %w", ErrInvalidInput)

func errTimeOfDayOnly(b []byte) error {
	return fmt.Errorf("cast of %s to a timestamp: %w", sparkQuote(string(b)), ErrTimeOfDayOnly)
}

// sparkQuote quotes s as Spark shows a string value in messages.
func sparkQuote(s string) string {
	return "'" + strings.ReplaceAll(s, "'", "\\'") + "'"
}
