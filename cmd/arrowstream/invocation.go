package main

import (
	"os"
	"os/exec"
	"path/filepath"
	"strings"
)

// This file works out how the user started the command, so that the
// commands we print (banner, hints) work when pasted into their shell.

// selfCommand is the shell words that start this command again: "go run
// ./cmd/arrowstream" under go run, the bare name when it is on PATH, else
// the path it was started by.
func selfCommand() string {
	return selfCommandFor(os.Args[0], exec.LookPath)
}

// selfCommandFor is selfCommand with the program path and the PATH lookup
// as arguments, for the tests.
func selfCommandFor(arg0 string, lookPath func(string) (string, error)) string {
	if isGoRunBinary(arg0) {
		return "go run ./cmd/arrowstream"
	}
	base := filepath.Base(arg0)
	if base == "" || base == "." {
		return "arrowstream"
	}
	if !strings.ContainsRune(arg0, filepath.Separator) {
		return shellQuote(arg0) // the shell found it on PATH
	}
	if p, err := lookPath(base); err == nil && sameFile(p, arg0) {
		return shellQuote(base)
	}
	return shellQuote(arg0)
}

// isGoRunBinary tells a binary that go run built in its temporary work
// directory: .../go-build<digits>/b001/exe/<name>.
func isGoRunBinary(arg0 string) bool {
	dir := filepath.ToSlash(filepath.Dir(arg0))
	return strings.HasSuffix(dir, "/exe") && strings.Contains(dir, "/go-build")
}

func sameFile(a, b string) bool {
	sa, err1 := os.Stat(a)
	sb, err2 := os.Stat(b)
	return err1 == nil && err2 == nil && os.SameFile(sa, sb)
}

// shellQuote quotes s as one word for a POSIX shell: unchanged when it has
// only safe characters, else in single quotes (which keep backquotes, $
// and double quotes literal), an inner single quote written as '\”.
func shellQuote(s string) string {
	if s != "" && strings.Trim(s, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_-./:=@,+") == "" {
		return s
	}
	return "'" + strings.ReplaceAll(s, "'", `'\''`) + "'"
}
