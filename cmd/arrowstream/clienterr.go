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
	return &serverError{msg: serverMessage(st.Message()), err: err}
}

// loginError is clientError for a failed login as user: the server's
// reason once, and which flags to check (they were given, so "pass them"
// would be wrong).
func loginError(err error, target, user string) error {
	st, ok := status.FromError(err)
	if ok && st.Code() == codes.Unauthenticated {
		return &serverError{msg: fmt.Sprintf("log in as %s: %s (check --user and --password)", user, st.Message()), err: err}
	}
	return fmt.Errorf("log in as %s: %w", user, clientError(err, target))
}

// serverMessage drops the engine's "arrowstream: " from the start of a
// server's message: the command prints its own "arrowstream query: ", and
// the name said twice read as a doubled prefix.
func serverMessage(msg string) string {
	return strings.TrimPrefix(msg, "arrowstream: ")
}

// serverError shows msg and keeps the gRPC error for errors.Is/As.
type serverError struct {
	msg string
	err error
}

func (e *serverError) Error() string { return e.msg }
func (e *serverError) Unwrap() error { return e.err }
