package layout

import (
	"os/exec"
	"strings"
	"testing"
)

// depRule bounds the whole dependency closure (go list -deps, tests
// excluded) of one package, as CockroachDB's per-package dep tests do: the
// project packages it may reach (allow, path prefixes relative to the
// module; nil: no limit) and import paths it must never reach (forbid,
// full path prefixes, third-party ones included).
type depRule struct {
	pkg    string
	allow  []string
	forbid []string
}

const (
	root       = module + "/arrowstream"
	pebbleLib  = "github.com/cockroachdb/pebble"
	pebbleProv = module + "/checkpoint/pebblestore"
)

// engineInternals are what only the arrowstream root (and what links it)
// may reach.
var engineInternals = []string{root + "/internal/engine", root + "/internal/stateful"}

// clip bounds quoted text in errors and logs (a leaf of the standard
// library only): the engine and the file sources bound a malformed
// record's error with it.
const clip = "internal/clip"

// arrowstreamRules is the layout of the arrowstream packages (issue #18,
// docs/design.md §1): contracts at the bottom, stateful operators, the
// engine, the public API on top; connectors and sinks beside the engine,
// seeing only the contracts.
var arrowstreamRules = []depRule{
	{pkg: "arrowstream/stream", allow: []string{"vector"}},
	{pkg: "arrowstream/internal/stateful", allow: []string{"arrowstream/stream", "plan", "vector", "checkpoint", "sql"},
		forbid: []string{root + "/internal/engine", pebbleProv, pebbleLib}},
	{pkg: "arrowstream/internal/engine", allow: []string{"arrowstream/stream", "arrowstream/internal/stateful", "plan", "vector", "checkpoint", "sql", clip},
		forbid: []string{pebbleProv, pebbleLib}},
	{pkg: "arrowstream/source/rate", allow: []string{"arrowstream/stream", "vector", "checkpoint"}},
	{pkg: "arrowstream/source/memory", allow: []string{"arrowstream/stream", "vector"}},
	{pkg: "arrowstream/sink/foreach", allow: []string{"arrowstream/stream", "vector"}},
	{pkg: "arrowstream/source/files", allow: []string{"arrowstream/stream", "vector", "checkpoint", clip}},
	{pkg: "arrowstream/source/kafka", allow: []string{"arrowstream/stream", "vector", "checkpoint"}},
	{pkg: "arrowstream/source/socket", allow: []string{"arrowstream/stream", "vector", "checkpoint"}},
	{pkg: "arrowstream/sink/console", allow: []string{"arrowstream/stream", "vector", "checkpoint"}},
	{pkg: "arrowstream/connectors", allow: []string{"arrowstream/stream", "arrowstream/source/", "arrowstream/sink/", "vector", "checkpoint", clip}},
	{pkg: "arrowstream/pebblestate", allow: []string{"arrowstream/stream", "checkpoint", "vector"}},
	{pkg: "arrowstream/arrowstreamtest", allow: []string{}},
	// The public API links the engine but not Pebble: a provider is
	// registered by the program that links it.
	{pkg: "arrowstream", forbid: []string{pebbleProv, pebbleLib, root + "/pebblestate"}},
	{pkg: "memsink", allow: []string{"arrowstream/stream", "vector", "checkpoint", "plan", "sql"},
		forbid: append([]string{root + "/source/", root + "/sink/"}, engineInternals...)},
}

// deps returns the dependency closure of a package (itself excluded).
func deps(t *testing.T, pkg string) []string {
	t.Helper()
	path := module + "/" + pkg
	out, err := exec.Command("go", "list", "-deps", "-f", "{{.ImportPath}}", path).Output()
	if err != nil {
		t.Fatalf("go list -deps %s: %v", path, err)
	}
	var ds []string
	for _, d := range strings.Fields(string(out)) {
		if d != path {
			ds = append(ds, d)
		}
	}
	return ds
}

// violations checks one package's dependency closure against its rule.
func violations(r depRule, ds []string) []string {
	var bad []string
	self := module + "/" + r.pkg
	for _, d := range ds {
		for _, f := range r.forbid {
			if strings.HasPrefix(d, f) {
				bad = append(bad, d+" (forbidden)")
			}
		}
		if r.allow == nil || !strings.HasPrefix(d, module+"/") || strings.HasPrefix(d, self+"/") {
			continue
		}
		if rel := strings.TrimPrefix(d, module+"/"); !allowedPath(rel, r.allow) {
			bad = append(bad, d+" (not in "+strings.Join(r.allow, ", ")+")")
		}
	}
	return bad
}

// allowedPath reports whether rel is one of the allowed packages or below
// one ("vector" allows vector/vectortest; "arrowstream/source/" allows
// every source).
func allowedPath(rel string, allow []string) bool {
	for _, a := range allow {
		if rel == strings.TrimSuffix(a, "/") || strings.HasPrefix(rel, strings.TrimSuffix(a, "/")+"/") {
			return true
		}
	}
	return false
}

func TestArrowstreamLayout(t *testing.T) {
	if _, err := exec.LookPath("go"); err != nil {
		t.Skip("no go command to list dependencies")
	}
	for _, r := range arrowstreamRules {
		t.Run(r.pkg, func(t *testing.T) {
			for _, v := range violations(r, deps(t, r.pkg)) {
				t.Errorf("%s depends on %s", r.pkg, v)
			}
		})
	}
}

// The checker itself must catch what the rules forbid (a test that cannot
// fail is worthless): a contract package reaching the engine, a connector
// reaching the root, the root reaching Pebble.
func TestArrowstreamLayoutCatchesViolations(t *testing.T) {
	rule := func(pkg string) depRule {
		for _, r := range arrowstreamRules {
			if r.pkg == pkg {
				return r
			}
		}
		t.Fatalf("no rule for %s", pkg)
		return depRule{}
	}
	tests := []struct {
		pkg  string
		deps []string
		bad  int
	}{
		{"arrowstream/stream", []string{module + "/vector", "github.com/apache/arrow/go/v17/arrow"}, 0},
		{"arrowstream/stream", []string{module + "/vector", module + "/plan"}, 1},
		{"arrowstream/source/kafka", []string{module + "/arrowstream/stream", root}, 1},
		{"arrowstream/connectors", []string{module + "/arrowstream/source/kafka", module + "/arrowstream/sink/console"}, 0},
		{"arrowstream/connectors", []string{root + "/internal/engine"}, 1},
		{"arrowstream", []string{root + "/internal/engine", pebbleProv, pebbleLib + "/v2"}, 2},
		{"memsink", []string{root + "/stream", root}, 1},
		{"arrowstream/internal/stateful", []string{root + "/internal/engine"}, 2},
	}
	for _, tc := range tests {
		if got := violations(rule(tc.pkg), tc.deps); len(got) != tc.bad {
			t.Errorf("%s with deps %v: violations %v, want %d", tc.pkg, tc.deps, got, tc.bad)
		}
	}
}
