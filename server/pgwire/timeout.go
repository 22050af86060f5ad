package pgwire

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
)

// statement_timeout (SET, or the startup packet's parameter or its
// options "-c statement_timeout=...") bounds each statement: planning,
// and a query's run until its last row is sent. A statement that
// exceeds it fails with 57014, as a canceled one does, with
// PostgreSQL's message.

var errStatementTimeout = &pgError{code: stateQueryCanceled, msg: "canceling statement due to statement timeout"}

// parseTimeout reads a statement_timeout value: milliseconds, or a number
// with a unit (us, ms, s, min, h, d); 0 is no timeout.
func parseTimeout(v string) (time.Duration, error) {
	s := strings.TrimSpace(v)
	num := strings.TrimRightFunc(s, func(r rune) bool { return r >= 'a' && r <= 'z' || r == ' ' })
	unit := strings.TrimSpace(s[len(num):])
	n, err := strconv.ParseFloat(num, 64)
	if err != nil || n < 0 || n > float64(1<<31) {
		return 0, &pgError{code: stateInvalidParamValue, msg: fmt.Sprintf("invalid value for parameter \"statement_timeout\": %q", v)}
	}
	scale, ok := map[string]time.Duration{"": time.Millisecond, "us": time.Microsecond, "ms": time.Millisecond,
		"s": time.Second, "min": time.Minute, "h": time.Hour, "d": 24 * time.Hour}[unit]
	if !ok {
		return 0, &pgError{code: stateInvalidParamValue, msg: fmt.Sprintf("invalid unit for parameter \"statement_timeout\": %q (valid units: us, ms, s, min, h, d)", unit)}
	}
	return time.Duration(n * float64(scale)), nil
}

// withTimeout bounds ctx by the session's statement_timeout.
func (c *conn) withTimeout(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.stmtTimeout <= 0 {
		return context.WithCancel(ctx)
	}
	return context.WithTimeoutCause(ctx, c.stmtTimeout, errStatementTimeout)
}

// timeoutError is err, or errStatementTimeout when ctx ended by the
// statement timeout.
func timeoutError(ctx context.Context, err error) error {
	if err != nil && ctx.Err() != nil && errors.Is(context.Cause(ctx), errStatementTimeout) {
		return errStatementTimeout
	}
	return err
}

// startupOptions returns the "-c name=value" (and "--name=value")
// settings of the startup packet's options parameter.
func startupOptions(options string) map[string]string {
	out := map[string]string{}
	f := strings.Fields(options)
	for i := 0; i < len(f); i++ {
		kv := ""
		switch {
		case f[i] == "-c" && i+1 < len(f):
			i++
			kv = f[i]
		case strings.HasPrefix(f[i], "-c"):
			kv = f[i][2:]
		case strings.HasPrefix(f[i], "--"):
			kv = f[i][2:]
		}
		if k, v, ok := strings.Cut(kv, "="); ok {
			out[strings.ReplaceAll(k, "-", "_")] = v
		}
	}
	return out
}
