package main

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// goAPIBlock returns the statements of the ```go block under "## The Go
// API in ten lines" of a Markdown file: comments dropped, whitespace
// collapsed, a raw string spanning lines kept in one statement.
func goAPIBlock(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("(?ms)^## The Go API in ten lines\n.*?^```go\n(.*?)^```")
	m := re.FindStringSubmatch(string(data))
	if m == nil {
		t.Fatalf("%s has no ```go block under \"## The Go API in ten lines\"", file)
	}
	var stmts []string
	var cur strings.Builder
	for _, line := range strings.Split(m[1], "\n") {
		if i := strings.Index(line, "//"); i >= 0 && strings.Count(line[:i], `"`)%2 == 0 {
			line = line[:i]
		}
		cur.WriteString(line)
		cur.WriteByte(' ')
		if strings.Count(cur.String(), "`")%2 == 1 {
			continue // inside a raw string
		}
		if s := collapseSpace(cur.String()); s != "" {
			stmts = append(stmts, s)
		}
		cur.Reset()
	}
	return stmts
}

func collapseSpace(s string) string { return strings.Join(strings.Fields(s), " ") }

// TestDocsGoAPIInTenLines keeps the README's and architecture.md's Go
// example the code that TestGoAPIInTenLines runs: the two copies say the
// same, and every call of theirs (the right-hand side of an assignment)
// is made by the test as written. Only the final print is the docs' own.
func TestDocsGoAPIInTenLines(t *testing.T) {
	readme := goAPIBlock(t, filepath.Join("..", "..", "README.md"))
	arch := goAPIBlock(t, filepath.Join(docsDir, "architecture.md"))
	if strings.Join(readme, "\n") != strings.Join(arch, "\n") {
		t.Errorf("the README's Go example and architecture.md's differ:\n%s\n--- and ---\n%s",
			strings.Join(readme, "\n"), strings.Join(arch, "\n"))
	}
	src, err := os.ReadFile("goapi_test.go")
	if err != nil {
		t.Fatal(err)
	}
	test := collapseSpace(string(src))
	for _, stmt := range readme {
		call := stmt
		if i := strings.Index(call, ":="); i >= 0 {
			call = strings.TrimSpace(call[i+2:])
		}
		if call == "fmt.Println(recs[0])" {
			continue // the test checks the rows instead of printing them
		}
		if !strings.Contains(test, call) {
			t.Errorf("the docs' Go example calls %s, which TestGoAPIInTenLines does not run", call)
		}
	}
	if len(readme) < 8 {
		t.Errorf("found %d statements in the README's Go example, want the ten lines:\n%s", len(readme), strings.Join(readme, "\n"))
	}
}
