package sql

import (
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

func TestInspect(t *testing.T) {
	s, err := Parse("WITH c AS (SELECT 1 AS x) SELECT a.b, count(*) AS n FROM STREAM s WATERMARK ts DELAY OF INTERVAL 1 SECOND AS t JOIN c USING (x) WHERE x IN (1, 2) GROUP BY a.b ORDER BY n DESC LIMIT 5")
	if err != nil {
		t.Fatal(err)
	}
	var kinds []string
	Inspect(s, func(n Node) bool {
		switch n := n.(type) {
		case Ident:
			kinds = append(kinds, n.Name)
		case *FuncCall:
			kinds = append(kinds, "call")
			return false // skip the name and arguments
		case *Literal:
			kinds = append(kinds, n.Value)
		case *IntervalLit:
			kinds = append(kinds, "interval")
		case IntervalPart:
			kinds = append(kinds, n.Unit)
		}
		return true
	})
	want := "c 1 x a b call n s ts interval SECOND t c x x 1 2 a b n 5"
	if got := strings.Join(kinds, " "); got != want {
		t.Errorf("Inspect visited\n%s\nwant\n%s", got, want)
	}
	Inspect(nil, func(Node) bool { t.Error("visited nil"); return true })
}

// TestKeywordsKnown guards against a misspelt keyword in the parser, which
// would silently never match: every keyword the parser tests for must be
// in the keyword table.
func TestKeywordsKnown(t *testing.T) {
	files, err := filepath.Glob("parser*.go")
	if err != nil || len(files) == 0 {
		t.Fatalf("no parser sources: %v", err)
	}
	re := regexp.MustCompile(`(?:isKw|isKwAt|acceptKw|expectKw)\((?:\w+, )?"([A-Z_]+)"|t\.kw == "([A-Z_]+)"|case ("[A-Z_]+"(?:, "[A-Z_]+")*):`)
	// Numeric literal suffixes and type names are matched by switches too.
	numberSuffixes := map[string]bool{"L": true, "S": true, "Y": true, "F": true, "D": true, "BD": true}
	n := 0
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		src, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, m := range re.FindAllStringSubmatch(string(src), -1) {
			words := m[1] + m[2]
			if m[3] != "" {
				words = strings.NewReplacer(`"`, "", ",", "").Replace(m[3])
			}
			for _, w := range strings.Fields(words) {
				n++
				if _, ok := keywords[w]; !ok && typeNames[w] == "" && !numberSuffixes[w] {
					t.Errorf("%s tests for keyword %s, which is not in the keyword table", f, w)
				}
			}
		}
	}
	if n < 50 {
		t.Errorf("found only %d keyword uses; is the pattern stale?", n)
	}
}
