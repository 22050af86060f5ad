package main

import (
	"fmt"
	"strings"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// clientError turns a gRPC error from the Flight SQL server at target
// into what a user of `query` needs: no "rpc error: code = … desc = …"
// wrapping, the server's own message, and for a server that cannot be
// reached, how to start one. Errors that are not gRPC statuses (a local
// failure) come back unchanged.
func clientError(err error, target string) error {
	st, ok := status.FromError(err)
	if !ok || st.Code() == codes.OK {
		return err
	}
	switch st.Code() {
	case codes.Unavailable:
		if strings.HasPrefix(st.Message(), "SUBSCRIBE:") {
			return &serverError{msg: st.Message(), err: err} // the server said why it ended
		}
		return &serverError{msg: fmt.Sprintf("no server at %s: start one with %s serve (or pass --uri)", target, selfCommand()), err: err}
	case codes.Unauthenticated:
		return &serverError{msg: "not authenticated: " + st.Message() + " (pass --user and --password)", err: err}
	case codes.DeadlineExceeded:
		return &serverError{msg: "timed out: " + st.Message() + " (see --timeout)", err: err}
	}
	return &serverError{msg: st.Message(), err: err}
}

// serverError shows msg and keeps the gRPC error for errors.Is/As.
type serverError struct {
	msg string
	err error
}

func (e *serverError) Error() string { return e.msg }
func (e *serverError) Unwrap() error { return e.err }
