package server

import (
	"fmt"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"github.com/arrowstream/arrowstream/internal/clip"
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
// else its start and end around a note of how many bytes were left out
// (clip.Text).
func ShortenMessage(msg string) string { return clip.Text(msg, MaxErrorMessageBytes) }

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

// MaxLoggedNameBytes bounds a name a client chose (a user name at login)
// where the server logs it. A name is as long as the client's headers or
// startup message allow, and a failed login is logged every time: in
// full, an unauthenticated client wrote megabytes of log per attempt.
const MaxLoggedNameBytes = 256

// LogName returns name for a log line: unchanged when it fits
// MaxLoggedNameBytes, else its start (cut on a UTF-8 boundary) and how
// many bytes were left out. The log handler quotes it, so control
// characters cannot forge lines either way.
func LogName(name string) string {
	if len(name) <= MaxLoggedNameBytes {
		return name
	}
	n := MaxLoggedNameBytes
	for n > 0 && !utf8.RuneStart(name[n]) {
		n--
	}
	return fmt.Sprintf("%s… [%d more bytes]", name[:n], len(name)-n)
}
