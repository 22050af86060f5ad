package conformance

import (
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestDecodeRejectsBadScenarios(t *testing.T) {
	base := `"sources": {"input": [{"name": "value", "type": "int"}]}, "query": {"plan": [{"read": "input"}], "output_mode": "append"}`
	cases := []struct{ name, json, want string }{
		{"not an array", `{}`, "cannot unmarshal"},
		{"trailing", `[] []`, "data after"},
		{"no name", `[{"name": "", ` + base + `, "steps": [{"action": "start"}]}]`, "no name"},
		{"unknown type", `[{"name": "x", "sources": {"input": [{"name": "v", "type": "float"}]}, "query": {"sql": "SELECT 1"}, "steps": [{"action": "start"}]}]`, `unknown type "float"`},
		{"no steps", `[{"name": "x", ` + base + `}]`, "no steps"},
		{"unknown action", `[{"name": "x", ` + base + `, "steps": [{"action": "explode"}]}]`, `step 0 (explode): unknown action`},
		{"unknown field", `[{"name": "x", ` + base + `, "steps": [{"action": "start", "triger": "once"}]}]`, `unknown field "triger"`},
		{"unknown source", `[{"name": "x", ` + base + `, "steps": [{"action": "add", "source": "other", "rows": []}]}]`, `unknown source "other"`},
		{"bad int", `[{"name": "x", ` + base + `, "steps": [{"action": "add", "source": "input", "rows": [[3000000000]]}]}]`, "is not a int"},
		{"bad arity", `[{"name": "x", ` + base + `, "steps": [{"action": "add", "source": "input", "rows": [[1, 2]]}]}]`, "row 0 has 2 values"},
		{"bad trigger", `[{"name": "x", ` + base + `, "steps": [{"action": "start", "trigger": "sometimes"}]}]`, `unknown trigger "sometimes"`},
		{"bad mode", `[{"name": "x", ` + base + `, "steps": [{"action": "check", "mode": "all", "rows": []}]}]`, `unknown check mode "all"`},
		{"bad phase", `[{"name": "x", ` + base + `, "steps": [{"action": "expect_failure", "phase": "later"}]}]`, `unknown phase`},
		{"bad op", `[{"name": "x", "sources": {"input": [{"name": "v", "type": "int"}]}, "query": {"plan": [{"read": "input"}, {"pivot": []}]}, "steps": [{"action": "start"}]}]`, `unknown operation "pivot"`},
		{"two ops", `[{"name": "x", "sources": {"input": [{"name": "v", "type": "int"}]}, "query": {"plan": [{"read": "input", "limit": 1}]}, "steps": [{"action": "start"}]}]`, "exactly one kind"},
		{"bad option", `[{"name": "x", "sources": {}, "query": {"sql": "SELECT 1", "options": {"speed": 3}}, "steps": [{"action": "start"}]}]`, `unknown query option "speed"`},
		{"bad policy", `[{"name": "x", "sources": {}, "query": {"sql": "SELECT 1", "options": {"watermark_policy": "avg"}}, "steps": [{"action": "start"}]}]`, "valid values"},
		{"duplicate", `[{"name": "x", ` + base + `, "steps": [{"action": "start"}]}, {"name": "x", ` + base + `, "steps": [{"action": "start"}]}]`, "duplicate name"},
		{"null scenario", `[null]`, "is null"},
		{"purge", `[{"name": "x", ` + base + `, "steps": [{"action": "purge_commit_log", "threshold": "all"}]}]`, "want an epoch"},
		{"metric", `[{"name": "x", ` + base + `, "steps": [{"action": "assert_last_progress_state", "numRowsTotal": "two"}]}]`, "want a number"},
		{"no query", `[{"name": "x", "sources": {}, "steps": [{"action": "stop"}]}]`, "neither a query nor sink_columns"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := Decode([]byte(c.json))
			if err == nil || !strings.Contains(err.Error(), c.want) {
				t.Fatalf("Decode = %v, want an error containing %q", err, c.want)
			}
		})
	}
}

func TestLoadDirectoryAndFiles(t *testing.T) {
	all, err := Load("../testdata/conformance")
	if err != nil {
		t.Fatal(err)
	}
	one, err := Load("../testdata/conformance/limit.json")
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 40 || len(one) != 5 || one[0].File != "../testdata/conformance/limit.json" {
		t.Fatalf("loaded %d and %d scenarios", len(all), len(one))
	}
	if _, err := Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no *.json") {
		t.Fatalf("empty directory: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	os.WriteFile(bad, []byte(`[{"name": 1}]`), 0o644)
	if _, err := Load(bad); err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Fatalf("bad file: %v", err)
	}
}

// FuzzDecode checks that no scenario file makes the decoder (and the step
// decoding the runner does) panic.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob("../testdata/conformance/*.json")
	for _, name := range files {
		if data, err := os.ReadFile(name); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`[{"name": "x", "sources": {"s": [{"name": "v", "type": "timestamp"}]}, "query": {"plan": [{"read": "s"}, {"join": {"right": [{"read": "s"}], "on": ["v"]}}]}, "steps": [{"action": "add", "source": "s", "rows": [[1e300]]}]}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		scs, err := Decode(data)
		if err != nil {
			return
		}
		for _, sc := range scs {
			Unsupported(sc)
			for _, st := range sc.Steps {
				s, err := decodeStep(sc, st)
				if err != nil {
					t.Fatalf("a validated step fails to decode: %v", err)
				}
				s.actions(nil)
			}
		}
	})
}
