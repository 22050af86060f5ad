package spec

import (
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

const dir = "../../testdata/conformance"

func TestDecodeRefusesBadShapes(t *testing.T) {
	cases := []struct{ name, json, want string }{
		{"not an array", `{}`, "cannot unmarshal"},
		{"trailing data", `[] []`, "data after"},
		{"null scenario", `[null]`, "scenario 0 is null"},
		{"no name", `[{"name": " "}]`, "scenario 0 ( ): no name"},
		{"duplicate name", `[{"name": "a"}, {"name": "a"}]`, `scenario 1: duplicate name "a"`},
		{"step without action", `[{"name": "a", "steps": [{"rows": []}]}]`, "step without an action"},
		{"action not a string", `[{"name": "a", "steps": [{"action": 3}]}]`, "action:"},
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

func TestDecodeKeepsNumbersAndStepFields(t *testing.T) {
	scs, err := Decode([]byte(`[{"name": "a", "query": {"sql": "SELECT 1", "plan": [{"limit": 12345678901234567}]},
		"steps": [{"action": "add", "source": "s", "rows": [[1.50]]}]}]`))
	if err != nil {
		t.Fatal(err)
	}
	st := scs[0].Steps[0]
	if st.Action != "add" || string(st.Fields["source"]) != `"s"` || string(st.Fields["rows"]) != `[[1.50]]` {
		t.Fatalf("step = %+v", st)
	}
	if _, ok := st.Fields["action"]; ok {
		t.Fatal("the action is kept among the fields")
	}
	back, err := json.Marshal(st)
	if err != nil || !strings.Contains(string(back), `"action":"add"`) {
		t.Fatalf("MarshalJSON = %s, %v", back, err)
	}
	if got := string(scs[0].Query.Plan[0]["limit"]); got != "12345678901234567" {
		t.Fatalf("limit kept as %s", got)
	}
	ops, err := Generic(scs[0].Query.Plan)
	if err != nil || ops[0]["limit"] != float64(12345678901234567) {
		t.Fatalf("Generic = %v, %v", ops, err)
	}
}

func TestLoadDirectoryAndFiles(t *testing.T) {
	all, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	one, err := Load(filepath.Join(dir, "limit.json"))
	if err != nil {
		t.Fatal(err)
	}
	if len(all) < 40 || len(one) != 5 || one[0].File != filepath.Join(dir, "limit.json") {
		t.Fatalf("loaded %d and %d scenarios", len(all), len(one))
	}
	files, err := Files(dir)
	if err != nil || len(files) < 10 {
		t.Fatalf("Files = %v, %v", files, err)
	}
	for i := 1; i < len(files); i++ {
		if files[i-1] >= files[i] {
			t.Fatalf("files out of order: %v", files)
		}
	}
	if _, err := Load(t.TempDir()); err == nil || !strings.Contains(err.Error(), "no *.json") {
		t.Fatalf("empty directory: %v", err)
	}
	if _, err := Load(filepath.Join(t.TempDir(), "missing.json")); err == nil || !strings.Contains(err.Error(), "missing.json") {
		t.Fatalf("missing file: %v", err)
	}
	bad := filepath.Join(t.TempDir(), "bad.json")
	if err := os.WriteFile(bad, []byte(`[{"name": 1}]`), 0o644); err != nil {
		t.Fatal(err)
	}
	if _, err := Load(bad); err == nil || !strings.Contains(err.Error(), "bad.json") {
		t.Fatalf("bad file: %v", err)
	}
}

// FuzzDecode checks that no input makes Decode panic and that what it
// accepts has named, unique scenarios.
func FuzzDecode(f *testing.F) {
	files, _ := filepath.Glob(filepath.Join(dir, "*.json"))
	for _, name := range files {
		if data, err := os.ReadFile(name); err == nil {
			f.Add(data)
		}
	}
	f.Add([]byte(`[{"name": "x", "steps": [{"action": "start"}]}]`))
	f.Fuzz(func(t *testing.T, data []byte) {
		scs, err := Decode(data)
		if err != nil {
			return
		}
		seen := map[string]bool{}
		for _, sc := range scs {
			if sc == nil || strings.TrimSpace(sc.Name) == "" || seen[sc.Name] {
				t.Fatalf("accepted a bad scenario list: %s", data)
			}
			seen[sc.Name] = true
		}
	})
}
