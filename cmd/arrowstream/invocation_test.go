package main

import (
	"bytes"
	"context"
	"errors"
	"os/exec"
	"strings"
	"testing"
)

type fakeFlight string

func (f fakeFlight) Addr() string                   { return string(f) }
func (f fakeFlight) Stop(ctx context.Context) error { return nil }
func (f fakeFlight) StopQueries()                   {}

// TestBannerShellCommandPastes pastes the banner's shell command into a
// real POSIX shell and checks the words it gets: the SQL arrives as one
// argument, backquotes and quotes intact (issue #21: backquotes inside
// double quotes ran `page_views` as a command).
func TestBannerShellCommandPastes(t *testing.T) {
	sh, err := exec.LookPath("sh")
	if err != nil {
		t.Skip("no sh")
	}
	for _, tc := range []struct{ table, user, wantSQL string }{
		{"page_views", "", "SELECT * FROM `page_views` LIMIT 10"},
		{"page views", "", "SELECT * FROM `page views` LIMIT 10"},
		{"it's", "o'brien", "SELECT * FROM `it's` LIMIT 10"},
	} {
		fs, f, _ := newServeFlags()
		if err := fs.Parse(nil); err != nil {
			t.Fatal(err)
		}
		f.flight.user = tc.user
		a := &app{flags: f, flight: fakeFlight("127.0.0.1:31337"), ckRoot: "/tmp/ck"}
		var out bytes.Buffer
		a.banner(&out, "test", []string{tc.table})
		text := out.String()
		_, after, ok := strings.Cut(text, "From a shell:\n  ")
		if !ok {
			t.Fatalf("no shell command in the banner:\n%s", text)
		}
		line, _, _ := strings.Cut(after, "\n")
		if strings.Contains(line, "\"SELECT * FROM `") {
			t.Errorf("backquotes inside double quotes: %s", line)
		}
		_, args, ok := strings.Cut(line, " query ")
		if !ok {
			t.Fatalf("no query subcommand in %q", line)
		}
		got, err := exec.Command(sh, "-c", `ARROWSTREAM_PASSWORD=pw; printf '%s\n' `+args).Output()
		if err != nil {
			t.Fatalf("sh -c %q: %v", args, err)
		}
		words := strings.Split(strings.TrimSuffix(string(got), "\n"), "\n")
		want := []string{"--uri", "grpc://127.0.0.1:31337"}
		if tc.user != "" {
			want = append(want, "--user", tc.user, "--password", "pw")
		}
		want = append(want, tc.wantSQL)
		if strings.Join(words, "|") != strings.Join(want, "|") {
			t.Errorf("pasted %q: the shell passes %q, want %q", line, words, want)
		}
	}
}

func TestSelfCommand(t *testing.T) {
	notFound := func(string) (string, error) { return "", errors.New("not found") }
	for _, tc := range []struct{ arg0, want string }{
		{"/tmp/go-build123456/b001/exe/arrowstream", "go run ./cmd/arrowstream"},
		{"arrowstream", "arrowstream"},
		{"./arrowstream", "./arrowstream"},
		{"/opt/my tools/arrowstream", "'/opt/my tools/arrowstream'"},
	} {
		if got := selfCommandFor(tc.arg0, notFound); got != tc.want {
			t.Errorf("selfCommandFor(%q) = %q, want %q", tc.arg0, got, tc.want)
		}
	}
}

func TestShellQuote(t *testing.T) {
	for in, want := range map[string]string{
		"abc":             "abc",
		"":                "''",
		"a b":             "'a b'",
		"`x`":             "'`x`'",
		"it's":            `'it'\''s'`,
		"$HOME":           "'$HOME'",
		"SELECT * FROM t": "'SELECT * FROM t'",
	} {
		if got := shellQuote(in); got != want {
			t.Errorf("shellQuote(%q) = %q, want %q", in, got, want)
		}
	}
}
