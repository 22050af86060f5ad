package vector

import (
	"encoding/json"
	"testing"
)

func TestGetJSONObjectPaths(t *testing.T) {
	doc := `{"a": {"b": [1, {"c": "x y"}, null]}, "s": "q\"t", "e\u0073c": true, "n": null}`
	cases := []struct {
		path string
		want string
		ok   bool
	}{
		{"$", `{"a":{"b":[1,{"c":"x y"},null]},"s":"q\"t","e\u0073c":true,"n":null}`, true}, // compacted, strings kept
		{"$.a.b[0]", "1", true},
		{"$.a.b[1].c", "x y", true},
		{"$['a']['b'][1]", `{"c":"x y"}`, true},
		{"$.a.b[2]", "", false}, // JSON null is NULL
		{"$.a.b[3]", "", false},
		{"$.s", `q"t`, true},
		{"$.esc", "true", true}, // an escaped key matches its decoded name
		{"$.n", "", false},
		{"$.missing", "", false},
		{"a", "", false},
		{"$.", "", false},
		{"$[*]", "", false},
		{"$.a[", "", false},
	}
	for _, c := range cases {
		steps, ok := parseJSONPath(c.path)
		got := ""
		if ok {
			var s, e int
			if s, e, ok = jsonAt([]byte(doc), steps); ok {
				var b []byte
				b, ok = appendJSONResult(nil, []byte(doc)[s:e])
				got = string(b)
			}
		}
		if ok != c.ok || got != c.want {
			t.Errorf("%s: got %q, %v; want %q, %v", c.path, got, ok, c.want, c.ok)
		}
	}
}

// FuzzJSONPath checks the path parser and the in-place scanner against
// encoding/json: a selected value is valid JSON, and a document the
// scanner walks is one encoding/json accepts.
func FuzzJSONPath(f *testing.F) {
	f.Add(`{"a": [1, 2, {"b": "c"}]}`, "$.a[2].b")
	f.Add(`[1, [2, 3]]`, "$[1][0]")
	f.Add(`{"a\u0062": 1}`, "$['ab']")
	f.Add(`{"a":`, "$.a")
	f.Fuzz(func(t *testing.T, doc, path string) {
		steps, ok := parseJSONPath(path)
		if !ok {
			return
		}
		s, e, ok := jsonAt([]byte(doc), steps)
		if !ok {
			return
		}
		if !json.Valid([]byte(doc)) {
			t.Fatalf("selected %q from invalid JSON %q", doc[s:e], doc)
		}
		if !json.Valid([]byte(doc[s:e])) {
			t.Fatalf("selected invalid JSON %q from %q by %q", doc[s:e], doc, path)
		}
		if out, ok := appendJSONResult(nil, []byte(doc[s:e])); ok && doc[s] != '"' && !json.Valid(out) {
			t.Fatalf("compacted %q to invalid JSON %q", doc[s:e], out)
		}
	})
}
