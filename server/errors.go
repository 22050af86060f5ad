package server

import (
	"context"
	"errors"
	"fmt"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/arrowstream/arrowstream/arrowstream/access"
	"github.com/arrowstream/arrowstream/memsink"
)

// statusOf turns err into a gRPC status error. fallback is the code of an
// error that carries none (InvalidArgument for statement errors, Internal
// for the server's own). Only codes that the ADBC Flight SQL driver passes
// through unchanged are used: FailedPrecondition, Aborted and OutOfRange
// would reach ADBC clients as Unknown.
func statusOf(err error, fallback codes.Code) error {
	if err == nil {
		return nil
	}
	if s, ok := status.FromError(err); ok {
		return s.Err()
	}
	var mle *MemoryLimitError
	code := fallback
	switch {
	case errors.As(err, &mle):
		code = codes.ResourceExhausted
	case errors.Is(err, context.DeadlineExceeded):
		code = codes.DeadlineExceeded
	case errors.Is(err, context.Canceled):
		code = codes.Canceled
	case errors.Is(err, ErrNotFound), errors.Is(err, memsink.ErrNotRetained):
		code = codes.NotFound
	case errors.Is(err, ErrAlreadyExists), errors.Is(err, memsink.ErrNameTaken):
		code = codes.AlreadyExists
	case errors.Is(err, ErrUnsupported):
		code = codes.Unimplemented
	case errors.Is(err, ErrPermissionDenied), errors.Is(err, access.ErrDenied):
		code = codes.PermissionDenied
	}
	return status.Error(code, err.Error())
}

// statusf is status.Errorf, kept short for the many call sites.
func statusf(c codes.Code, format string, args ...any) error {
	return status.Errorf(c, format, args...)
}

// panicError converts a recovered panic value into an error: a memory
// limit stays a *MemoryLimitError (ResourceExhausted); anything else is a
// bug, reported as Internal.
func panicError(what string, v any) error {
	if mle, ok := v.(*MemoryLimitError); ok {
		return mle
	}
	if err, ok := v.(error); ok {
		var mle *MemoryLimitError
		if errors.As(err, &mle) {
			return mle
		}
	}
	return status.Errorf(codes.Internal, "%s: internal error: %v", what, v)
}

// timeoutError rewrites a deadline error of a query run under the
// server's query timeout so that the message says which limit fired.
//
// A query the stopping server cancelled says so (Unavailable).
func (s *Server) timeoutError(ctx context.Context, err error) error {
	if err != nil && errors.Is(context.Cause(ctx), errServerStopping) {
		return status.Errorf(codes.Unavailable, "query stopped: %v", errServerStopping)
	}
	if err != nil && errors.Is(err, context.DeadlineExceeded) && s.cfg.Limits.QueryTimeout > 0 && ctx.Err() != nil {
		return status.Error(codes.DeadlineExceeded, fmt.Sprintf("query exceeded the server's query timeout of %s: %v", s.cfg.Limits.QueryTimeout, err))
	}
	return err
}
