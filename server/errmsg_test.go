package server

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestShortenMessage: short messages pass unchanged; long ones keep their
// start and end, valid UTF-8 (multi-byte characters on the cuts), under
// the bound, saying how much was left out; a status keeps its code.
func TestShortenMessage(t *testing.T) {
	if got := ShortenMessage("short"); got != "short" {
		t.Fatalf("short message changed: %q", got)
	}
	exact := strings.Repeat("a", MaxErrorMessageBytes)
	if ShortenMessage(exact) != exact {
		t.Fatal("a message of exactly the bound changed")
	}
	for _, fill := range []string{"x", "é", "日本", "🙂"} {
		msg := "HEAD " + strings.Repeat(fill, 50_000) + " (at 1:8)"
		got := ShortenMessage(msg)
		if !utf8.ValidString(got) || len(got) > MaxErrorMessageBytes+100 || !strings.HasPrefix(got, "HEAD "+fill) ||
			!strings.HasSuffix(got, fill+" (at 1:8)") {
			t.Fatalf("%q: %d bytes, valid %v: %.80q ... %.80q", fill, len(got), utf8.ValidString(got), got, got[len(got)-80:])
		}
		if !strings.Contains(got, " bytes left out") {
			t.Fatalf("%q: %.200q", fill, got)
		}
	}
	err := shortStatus(status.Error(codes.InvalidArgument, strings.Repeat("v", 1<<20)))
	if st, _ := status.FromError(err); st.Code() != codes.InvalidArgument || len(st.Message()) > MaxErrorMessageBytes+100 {
		t.Fatalf("status: %v, %d bytes", st.Code(), len(st.Message()))
	}
	if st, _ := status.FromError(shortStatus(errors.New(strings.Repeat("p", 1<<20)))); st.Code() != codes.Unknown || len(st.Message()) > MaxErrorMessageBytes+100 {
		t.Fatalf("plain error: %v, %d bytes", st.Code(), len(st.Message()))
	}
	small := status.Error(codes.NotFound, "x")
	if shortStatus(small) != small || shortStatus(nil) != nil {
		t.Fatal("short errors must pass unchanged")
	}
}

// TestLogName: a name up to MaxLoggedNameBytes is logged as given; a
// longer one keeps its start, valid UTF-8 however the cut falls, and the
// count of the bytes left out.
func TestLogName(t *testing.T) {
	exact := strings.Repeat("a", MaxLoggedNameBytes)
	if LogName(exact) != exact || LogName("bob") != "bob" {
		t.Fatal("a name within the bound changed")
	}
	for _, fill := range []string{"x", "é", "日本", "🙂"} {
		name := strings.Repeat(fill, 10_000)
		got := LogName(name)
		kept, _, ok := strings.Cut(got, "… [")
		if !ok || !utf8.ValidString(got) || len(kept) > MaxLoggedNameBytes || len(kept) < MaxLoggedNameBytes-4 || !strings.HasPrefix(name, kept) {
			t.Fatalf("%q: %d bytes kept, valid %v: %.80q", fill, len(kept), utf8.ValidString(got), got)
		}
		if want := fmt.Sprintf("… [%d more bytes]", len(name)-len(kept)); !strings.HasSuffix(got, want) {
			t.Fatalf("%q: %q does not end with %q", fill, got[len(got)-40:], want)
		}
	}
}
