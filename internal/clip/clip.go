// Package clip bounds texts that quote user data (a malformed record, a
// failed query's error) before they are logged, kept or shown: a record or
// a value may be megabytes long, and an error quoting it was logged at
// every restart of a streaming table and kept in its status.
package clip

import (
	"fmt"
	"unicode/utf8"
)

// Text returns s unchanged when it is at most max bytes long, else its
// start (three quarters of max) and its end (an eighth) around a note of
// how many bytes were left out, cut on UTF-8 boundaries. The end is kept
// because errors name the position or the cause last.
func Text(s string, max int) string {
	if len(s) <= max {
		return s
	}
	head, tail := max*3/4, len(s)-max/8
	for head > 0 && !utf8.RuneStart(s[head]) {
		head--
	}
	for tail < len(s) && !utf8.RuneStart(s[tail]) {
		tail++
	}
	return fmt.Sprintf("%s … [%d bytes left out] … %s", s[:head], tail-head, s[tail:])
}

// Error is err's message bounded by Text, keeping err for errors.Is and
// errors.As.
type Error struct {
	msg string
	err error
}

// Bound returns err when its message is at most max bytes long, else an
// *Error whose message is the bounded one and which unwraps to err.
func Bound(err error, max int) error {
	if err == nil {
		return nil
	}
	msg := err.Error()
	if len(msg) <= max {
		return err
	}
	return &Error{msg: Text(msg, max), err: err}
}

func (e *Error) Error() string { return e.msg }
func (e *Error) Unwrap() error { return e.err }
