package clip

import (
	"errors"
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// TestText: a text within the bound is unchanged; a longer one keeps its
// start and end, valid UTF-8 wherever the cuts fall, at most the bound
// plus the note, and the count left out adds up to the original length.
func TestText(t *testing.T) {
	if Text("short", 10) != "short" || Text("0123456789", 10) != "0123456789" {
		t.Fatal("a text within the bound changed")
	}
	for _, fill := range []string{"x", "é", "日本", "🙂"} {
		s := "HEAD " + strings.Repeat(fill, 100_000) + " END"
		got := Text(s, 1024)
		head, rest, ok := strings.Cut(got, " … [")
		if !ok {
			t.Fatalf("%q: no note in %.100q", fill, got)
		}
		var n int
		var tail string
		if _, err := fmt.Sscanf(rest, "%d bytes left out] … ", &n); err != nil {
			t.Fatalf("%q: note %.60q: %v", fill, rest, err)
		}
		tail = rest[strings.Index(rest, "] … ")+len("] … "):]
		if !utf8.ValidString(got) || len(head)+len(tail) > 1024 || !strings.HasPrefix(s, head) || !strings.HasSuffix(s, tail) ||
			len(head)+n+len(tail) != len(s) || !strings.HasSuffix(tail, " END") || !strings.HasPrefix(head, "HEAD ") {
			t.Fatalf("%q: head %d, left out %d, tail %d of %d bytes", fill, len(head), n, len(tail), len(s))
		}
	}
}

// TestBound: a long error's message is bounded and still matches its
// chain; a short one is returned as it is.
func TestBound(t *testing.T) {
	sentinel := errors.New("sentinel")
	short := fmt.Errorf("a: %w", sentinel)
	if Bound(short, 100) != short || Bound(nil, 1) != nil {
		t.Fatal("a short error or nil changed")
	}
	long := fmt.Errorf("%s: %w", strings.Repeat("v", 1<<20), sentinel)
	b := Bound(long, 4096)
	if len(b.Error()) > 4096+64 || !errors.Is(b, sentinel) || !strings.HasSuffix(b.Error(), ": sentinel") {
		t.Fatalf("bounded: %d bytes, is sentinel %v", len(b.Error()), errors.Is(b, sentinel))
	}
}
