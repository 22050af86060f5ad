package layout

import (
	"bufio"
	"bytes"
	"os/exec"
	"strings"
	"testing"
)

const module = "github.com/arrowstream/arrowstream"

// allowed lists, for each top-level package, the project packages it may
// import directly. Transitive imports follow from the table.
var allowed = map[string][]string{
	"vector":      {},
	"checkpoint":  {},
	"sql":         {},
	"plan":        {"vector", "sql"},
	"arrowstream": {"vector", "plan", "checkpoint", "sql"},
	"memsink":     {"arrowstream", "vector", "checkpoint", "plan"},
	"server":      {"memsink", "arrowstream", "plan", "sql", "vector", "checkpoint"},
	"streamtest":  {"memsink", "arrowstream", "plan", "vector", "checkpoint"},
	"cmd":         {"bench", "internal", "streamtest", "server", "memsink", "arrowstream", "plan", "sql", "vector", "checkpoint"},
	// bench: workloads and peers may use every engine package
	// (docs/design.md §1: "everything"), but nothing imports bench except the command.
	"bench": {"internal", "streamtest", "server", "memsink", "arrowstream", "plan", "sql", "vector", "checkpoint"},
}

// thirdParty restricts, for some packages, which non-standard-library
// import paths they may use directly (prefixes).
var thirdParty = map[string][]string{
	"vector": {"github.com/apache/arrow/go/v17/"},
	"sql":    {},
}

type pkg struct {
	path    string
	imports []string
	std     map[string]bool
}

// listPackages runs go list over the module and returns every non-test
// package with its direct imports.
func listPackages(t *testing.T) []pkg {
	t.Helper()
	out, err := exec.Command("go", "list", "-f", "{{.ImportPath}}|{{join .Imports \",\"}}", module+"/...").Output()
	if err != nil {
		t.Fatalf("go list: %v", err)
	}
	stdOut, err := exec.Command("go", "list", "std").Output()
	if err != nil {
		t.Fatalf("go list std: %v", err)
	}
	std := map[string]bool{}
	for _, l := range strings.Fields(string(stdOut)) {
		std[l] = true
	}
	var pkgs []pkg
	sc := bufio.NewScanner(bytes.NewReader(out))
	for sc.Scan() {
		path, imps, _ := strings.Cut(sc.Text(), "|")
		p := pkg{path: path, std: std}
		if imps != "" {
			p.imports = strings.Split(imps, ",")
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

// top returns the top-level project package of an import path ("vector"
// for module/vector/vectortest), or "" outside the module.
func top(path string) string {
	if path == module {
		return "."
	}
	rest, ok := strings.CutPrefix(path, module+"/")
	if !ok {
		return ""
	}
	first, _, _ := strings.Cut(rest, "/")
	return first
}

func TestDependencyDirection(t *testing.T) {
	pkgs := listPackages(t)
	if len(pkgs) == 0 {
		t.Fatal("go list found no packages")
	}
	for _, p := range pkgs {
		from := top(p.path)
		// Test kits (…test packages) may import the package they serve.
		isKit := strings.HasSuffix(p.path, "test") && p.path != module+"/"+from
		rules, ruled := allowed[from]
		for _, imp := range p.imports {
			to := top(imp)
			switch {
			case to == "" && !p.std[imp]:
				if prefixes, ok := thirdParty[from]; ok && !hasPrefix(imp, prefixes) {
					t.Errorf("%s imports third-party %s; %s may only use %v", p.path, imp, from, prefixes)
				}
			case to == "" || to == from || !ruled:
			case to == "internal":
			case isKit && contains(allowed[from], to):
			default:
				if !contains(rules, to) {
					t.Errorf("%s imports %s: %s may import only %v", p.path, imp, from, rules)
				}
			}
		}
	}
}

func hasPrefix(s string, prefixes []string) bool {
	for _, p := range prefixes {
		if strings.HasPrefix(s, p) {
			return true
		}
	}
	return false
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func TestRulesCatchViolations(t *testing.T) {
	// The checker must flag an upward import; guard against a test that
	// cannot fail.
	if contains(allowed["vector"], "plan") || !contains(allowed["plan"], "vector") {
		t.Fatal("rule table is inverted")
	}
	if top(module+"/vector/vectortest") != "vector" || top("github.com/other/x") != "" {
		t.Fatal("top() misclassifies paths")
	}
}
