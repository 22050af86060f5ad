package main

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func run(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := dispatch(args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestDispatch(t *testing.T) {
	if code, _, stderr := run(); code != 2 || !strings.Contains(stderr, "conformance") {
		t.Fatalf("no command: %d %q", code, stderr)
	}
	if code, _, stderr := run("frobnicate"); code != 2 || !strings.Contains(stderr, `unknown command "frobnicate"`) {
		t.Fatalf("unknown command: %d %q", code, stderr)
	}
	if code, _, stderr := run("bench", "no-such-workload"); code != 2 || !strings.Contains(stderr, `unknown workload "no-such-workload"`) {
		t.Fatalf("bench: %d %q", code, stderr)
	}
	if code, _, _ := run("help"); code != 0 {
		t.Fatalf("help: %d", code)
	}
}

const passing = `[{"name": "plus_one", "sources": {"input": [{"name": "value", "type": "int"}]},
  "query": {"plan": [{"read": "input"}, {"select": ["value + 1 AS value"]}], "output_mode": "append"},
  "steps": [{"action": "start"}, {"action": "add", "source": "input", "rows": [[1]]}, {"action": "check", "mode": "answer", "rows": [[2]]}]}]`

func TestConformanceCommand(t *testing.T) {
	dir := t.TempDir()
	good := filepath.Join(dir, "good.json")
	os.WriteFile(good, []byte(passing), 0o644)
	code, stdout, stderr := run("conformance", good, "-run", "plus", "--conf", "spark.sql.shuffle.partitions=2")
	if code != 0 || stdout != "PASS plus_one\n1 passed, 0 failed\n" {
		t.Fatalf("passing file: %d %q %q", code, stdout, stderr)
	}
	bad := filepath.Join(dir, "bad", "wrong.json")
	os.MkdirAll(filepath.Dir(bad), 0o755)
	os.WriteFile(bad, []byte(strings.Replace(passing, "[[2]]", "[[3]]", 1)), 0o644)
	code, stdout, _ = run("conformance", "-v", filepath.Dir(bad))
	if code != 1 || !strings.Contains(stdout, "FAIL plus_one: [plan] step 2 (check)") || !strings.Contains(stdout, "0 passed, 1 failed") {
		t.Fatalf("failing directory: %d %q", code, stdout)
	}
	if code, _, stderr := run("conformance"); code != 2 || !strings.Contains(stderr, "usage") {
		t.Fatalf("no path: %d %q", code, stderr)
	}
	if code, _, stderr := run("conformance", "--conf", "novalue", good); code != 2 || !strings.Contains(stderr, "key=value") {
		t.Fatalf("bad --conf: %d %q", code, stderr)
	}
	if code, _, stderr := run("conformance", filepath.Join(dir, "missing.json")); code != 2 || !strings.Contains(stderr, "missing.json") {
		t.Fatalf("missing file: %d %q", code, stderr)
	}
	if code, _, stderr := run("conformance", "-run", "(", good); code != 2 || !strings.Contains(stderr, "-run") {
		t.Fatalf("bad regexp: %d %q", code, stderr)
	}
}
