package server

import (
	"fmt"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// MaxErrorMessageBytes bounds the message of an error sent to a client.
// Errors quote their input (a value that failed a cast, a document that
// did not parse), and an input may be as large as a query can build (tens
// of MB under --query-memory). gRPC carries the message in the trailers,
// which clients refuse past their metadata limit (16 MiB in grpc-go, 8 KiB
// by default in gRPC C++ and Java): a client then saw a broken stream, or
// "no server", instead of the error. The start of a message (the error
// class and the offending value's beginning) and its end (the position in
// the statement) are kept.
const MaxErrorMessageBytes = 4 << 10

// ShortenMessage returns msg unchanged when it fits MaxErrorMessageBytes,
// else its start and end around a note of how many bytes were left out,
// cut on UTF-8 boundaries.
func ShortenMessage(msg string) string {
	if len(msg) <= MaxErrorMessageBytes {
		return msg
	}
	head, tail := MaxErrorMessageBytes*3/4, len(msg)-MaxErrorMessageBytes/8
	for head > 0 && !utf8.RuneStart(msg[head]) {
		head--
	}
	for tail < len(msg) && !utf8.RuneStart(msg[tail]) {
		tail++
	}
	return fmt.Sprintf("%s … [%d bytes of the message left out] … %s", msg[:head], tail-head, msg[tail:])
}

// shortStatus bounds the message of the error a call returns, keeping its
// code and details.
func shortStatus(err error) error {
	if err == nil {
		return nil
	}
	s, ok := status.FromError(err)
	if len(s.Message()) <= MaxErrorMessageBytes {
		return err
	}
	if !ok {
		return status.Error(codes.Unknown, ShortenMessage(err.Error()))
	}
	p := s.Proto()
	p.Message = ShortenMessage(p.Message)
	return status.FromProto(p).Err()
}
