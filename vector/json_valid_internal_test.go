package vector

import (
	"encoding/json"
	"strings"
	"testing"
)

var validJSONSeeds = []string{
	`{}`, `[]`, ` {"a": [1, -2.5e+3, true, false, null, "x\"\\\/\b\f\n\r\t\u00e9"]} `, `{"a":{"b":{}}}`,
	`0`, `-0`, `01`, `1.`, `.5`, `1e`, `1E+`, `-`, `"unterminated`, `"\x"`, `"\u12"`, `"\u12G4"`, "\"\x01\"",
	`{"a"}`, `{"a":}`, `{,}`, `[1,]`, `[,1]`, `{"a":1,}`, `{"a":1 "b":2}`, `[1 2]`, `{"a":1}{"b":2}`, `tru`, `nul`, `falsey`,
	`{1:2}`, `[}`, `{]`, `[[[[]]]]`, strings.Repeat("[", 70) + strings.Repeat("]", 70), strings.Repeat("[", 70) + strings.Repeat("]", 69),
	"\t\n\r [ ] \n", ``, ` `, `"é"`, "\"\xff\"",
}

func TestValidJSONMatchesEncodingJSON(t *testing.T) {
	for _, s := range validJSONSeeds {
		if got, want := validJSON([]byte(s)), json.Valid([]byte(s)); got != want {
			t.Errorf("validJSON(%q) = %v, encoding/json says %v", s, got, want)
		}
	}
}

// FuzzValidJSON: validJSON agrees with encoding/json.Valid on any input.
func FuzzValidJSON(f *testing.F) {
	for _, s := range validJSONSeeds {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := validJSON([]byte(s)), json.Valid([]byte(s)); got != want {
			t.Fatalf("validJSON(%q) = %v, encoding/json says %v", s, got, want)
		}
	})
}
