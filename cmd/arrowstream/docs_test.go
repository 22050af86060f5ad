package main

import (
	"bytes"
	"context"
	"flag"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/internal/testutil"
	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// docsDir is the repository's docs/ directory, seen from this package.
const docsDir = "../../docs"

// sqlBlocks returns the ```sql blocks of a Markdown file, in order.
func sqlBlocks(t *testing.T, file string) []string {
	t.Helper()
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	re := regexp.MustCompile("(?ms)^```sql\n(.*?)^```")
	var out []string
	for _, m := range re.FindAllStringSubmatch(string(data), -1) {
		out = append(out, m[1])
	}
	return out
}

// TestDocsSQLExamples runs every ```sql block of the docs (and the
// README's), in order, one engine per file: the examples stay true to the
// code.
func TestDocsSQLExamples(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(docsDir, "*.md"))
	if len(files) == 0 {
		t.Fatal("no docs found")
	}
	ran := 0
	for _, file := range files {
		blocks := sqlBlocks(t, file)
		if len(blocks) == 0 {
			continue
		}
		t.Run(filepath.Base(file), func(t *testing.T) {
			e := newTestEngine(t)
			for i, b := range blocks {
				// Examples read what earlier ones started: wait until
				// every streaming table has committed an epoch.
				for _, q := range e.session.Streams().Active() {
					deadline := time.Now().Add(testutil.Scaled(3 * time.Minute))
					for {
						if tb, ok := e.sinks.Lookup(q.Name()); ok && tb.LatestEpoch() >= 0 {
							break
						}
						if time.Now().After(deadline) || !q.IsActive() {
							t.Fatalf("streaming table %s has no epoch: %v", q.Name(), q.Exception())
						}
						time.Sleep(20 * time.Millisecond)
					}
				}
				var out bytes.Buffer
				if err := runScript(context.Background(), e, filepath.Base(file), b, &out, 0); err != nil {
					t.Errorf("block %d:\n%s\n%v", i+1, b, err)
				}
				ran++
			}
		})
	}
	if ran == 0 {
		t.Fatal("no SQL example ran")
	}
}

// TestDocsConfigurationListsEveryFlag checks that docs/configuration.md
// names every flag of run, serve and query with its environment variable.
func TestDocsConfigurationListsEveryFlag(t *testing.T) {
	data, err := os.ReadFile(filepath.Join(docsDir, "configuration.md"))
	if err != nil {
		t.Fatal(err)
	}
	doc := string(data)
	runFlags, _, _ := newRunFlags()
	serveFlags, _, _ := newServeFlags()
	queryFlags, _ := newQueryFlags()
	shellFlags, _ := newShellFlags()
	sets := map[string]*flag.FlagSet{"run": runFlags, "serve": serveFlags, "query": queryFlags, "sql": shellFlags}
	for name, fs := range sets {
		fs.VisitAll(func(f *flag.Flag) {
			if !strings.Contains(doc, "`--"+f.Name+"`") || !strings.Contains(doc, envName(f.Name)) {
				t.Errorf("configuration.md does not document %s --%s (%s)", name, f.Name, envName(f.Name))
			}
		})
	}
	// And every documented flag exists.
	for _, m := range regexp.MustCompile("`--([a-z-]+)`").FindAllStringSubmatch(doc, -1) {
		found := false
		for _, fs := range sets {
			found = found || fs.Lookup(m[1]) != nil
		}
		if !found && m[1] != "help" {
			t.Errorf("configuration.md documents --%s, which no command has", m[1])
		}
	}
}

// internalFunctions are names in the function registry that the planner
// calls for operators and syntax (date - date, x[i], arrays_zip's field
// names, posexplode of a map) rather than functions of Spark's.
var internalFunctions = map[string]bool{
	"date_subtract": true, "subscript": true, "arrays_zip_named": true, "posexplode_entries": true,
	"json_tuple_item": true, "timestamp_subtract": true,
}

// TestDocsSQLListsEveryFunction checks that docs/sql.md names every
// function of the registry and every function SHOW FUNCTIONS lists (the
// analyzer's rewrites, higher-order functions, generators, window
// functions) and uses it in a ```sql example (which TestDocsSQLExamples
// runs): a function a query can call but the reference does not show
// fails.
func TestDocsSQLListsEveryFunction(t *testing.T) {
	file := filepath.Join(docsDir, "sql.md")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.ToLower(string(data))
	examples := strings.ToLower(strings.Join(sqlBlocks(t, file), "\n"))
	names := append(vector.FunctionNames(), plan.FunctionNames()...)
	slices.Sort(names)
	for _, name := range slices.Compact(names) {
		if internalFunctions[name] {
			continue
		}
		re := regexp.MustCompile(`(^|[^a-z0-9_])` + regexp.QuoteMeta(name) + `([^a-z0-9_]|$)`)
		switch {
		case !re.MatchString(doc):
			t.Errorf("docs/sql.md does not document the function %s", name)
		case !re.MatchString(examples):
			t.Errorf("no ```sql example of docs/sql.md uses the function %s", name)
		}
	}
}

// TestDocsSQLListsEveryAggregate checks that docs/sql.md names every
// aggregate function the planner resolves and uses it in a ```sql
// example.
func TestDocsSQLListsEveryAggregate(t *testing.T) {
	file := filepath.Join(docsDir, "sql.md")
	data, err := os.ReadFile(file)
	if err != nil {
		t.Fatal(err)
	}
	doc := strings.ToLower(string(data))
	examples := strings.ToLower(strings.Join(sqlBlocks(t, file), "\n"))
	for _, name := range plan.AggregateFunctionNames() {
		named := regexp.MustCompile(`(^|[^a-z0-9_])` + regexp.QuoteMeta(name) + `([^a-z0-9_]|$)`)
		called := regexp.MustCompile(`(^|[^a-z0-9_])` + regexp.QuoteMeta(name) + `\(`)
		switch {
		case !named.MatchString(doc):
			t.Errorf("docs/sql.md does not document the aggregate %s", name)
		case !called.MatchString(examples):
			t.Errorf("no ```sql example of docs/sql.md uses the aggregate %s", name)
		}
	}
}
