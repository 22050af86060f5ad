package sparksql

import (
	"context"
	"os"
	"path/filepath"
	"reflect"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// writeTree writes files (relative path under the golden directory ->
// content) and returns the directory.
func writeTree(t *testing.T, files map[string]string) string {
	t.Helper()
	dir := t.TempDir()
	for rel, text := range files {
		p := filepath.Join(dir, filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestParseDirectives(t *testing.T) {
	in := "--SET a.b=1, c = x\n" +
		"  --SET not.at.line.start=1\n" +
		"--CONFIG_DIM1 d=1\n" +
		"--CONFIG_DIM2 e=1,f=2\n" +
		"--CONFIG_DIM1 d=2\n" +
		"-- a comment\nSELECT 1;\n"
	s, d, err := ParseDirectives(in)
	if err != nil {
		t.Fatal(err)
	}
	if want := []Setting{{"a.b", "1"}, {"c", "x"}}; !reflect.DeepEqual(s, want) {
		t.Errorf("settings %v, want %v", s, want)
	}
	want := [][][]Setting{
		{{{"d", "1"}}, {{"d", "2"}}},
		{{{"e", "1"}, {"f", "2"}}},
	}
	if !reflect.DeepEqual(d, want) {
		t.Errorf("dims %v, want %v", d, want)
	}
	for _, bad := range []string{"--SET novalue\n", "--CONFIG_DIM1\n", "--CONFIG_DIM1 =1\n"} {
		if _, _, err := ParseDirectives(bad); err == nil {
			t.Errorf("%q parsed", bad)
		}
	}
}

// TestLoadTreeConventions loads a tree shaped as Spark's sql-tests and
// checks each directory's convention.
func TestLoadTreeConventions(t *testing.T) {
	one := header + block("SELECT 1", "struct<1:int>", "1")
	dir := writeTree(t, map[string]string{
		"inputs/top.sql":                        "--SET spark.sql.shuffle.partitions=3\nSELECT 1;\n",
		"results/top.sql.out":                   one,
		"inputs/ansi/top.sql":                   "--IMPORT top.sql\n",
		"results/ansi/top.sql.out":              one,
		"inputs/postgreSQL/p.sql":               "SELECT 1;\n",
		"results/postgreSQL/p.sql.out":          one,
		"inputs/timestampNTZ/ts.sql":            "--IMPORT timestamp.sql\n",
		"results/timestampNTZ/ts.sql.out":       one,
		"inputs/typeCoercion/native/c.sql":      "--CONFIG_DIM1 x=1\n--CONFIG_DIM1 x=2\nSELECT 1;\n",
		"results/typeCoercion/native/c.sql.out": one,
		"inputs/udf/u.sql":                      "SELECT udf(1);\n",
		"results/udf/u.sql.out":                 one,
		"inputs/udf/postgreSQL/pu.sql":          "SELECT udf(1);\n",
		"results/udf/postgreSQL/pu.sql.out":     one,
		"inputs/noresults.sql":                  "SELECT 1;\n",
	})
	files, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]*File{}
	for _, f := range files {
		got[f.Name] = f
	}
	if len(files) != 7 || got["noresults"] != nil {
		t.Fatalf("loaded %d files (%v), want 7 without the input lacking results", len(files), got)
	}
	checks := []struct {
		name     string
		ansi     bool
		settings []Setting
		skip     bool
	}{
		{"top", false, []Setting{{"spark.sql.shuffle.partitions", "3"}}, false},
		{"ansi/top", true, []Setting{{"spark.sql.ansi.enabled", "true"}}, false},
		{"postgreSQL/p", true, []Setting{{"spark.sql.ansi.enabled", "true"}, {"spark.sql.legacy.interval.enabled", "true"}}, false},
		{"timestampNTZ/ts", false, []Setting{{"spark.sql.timestampType", "TIMESTAMP_NTZ"}}, false},
		{"typeCoercion/native/c", false, nil, false},
		{"udf/u", false, nil, false},
		{"udf/postgreSQL/pu", true, []Setting{{"spark.sql.ansi.enabled", "true"}, {"spark.sql.legacy.interval.enabled", "true"}}, false},
	}
	pg := []string{"booleq", "boolne", "vol"}
	for name, want := range map[string][]string{"top": nil, "postgreSQL/p": pg, "udf/u": {"udf"}, "udf/postgreSQL/pu": append([]string{"udf"}, pg...)} {
		if f := got[name]; f != nil && !reflect.DeepEqual(f.Functions, want) {
			t.Errorf("%s: functions %v, want %v", name, f.Functions, want)
		}
	}
	for _, c := range checks {
		f := got[c.name]
		if f == nil {
			t.Errorf("%s not loaded", c.name)
			continue
		}
		if f.ANSI != c.ansi || !reflect.DeepEqual(f.Settings, c.settings) || (f.SkipReason != "") != c.skip {
			t.Errorf("%s: ansi %v settings %v skip %q; want %v %v %v", c.name, f.ANSI, f.Settings, f.SkipReason, c.ansi, c.settings, c.skip)
		}
	}
	if d := got["typeCoercion/native/c"].Dims; len(d) != 1 || len(d[0]) != 2 {
		t.Errorf("config dims %v", d)
	}
	// Spark's test UDF is registered for the files under udf/ only.
	sum := (&Runner{}).Run(context.Background(), []*File{got["udf/u"], got["udf/postgreSQL/pu"], got["top"]})
	if sum.Counts[Passed] != 3 {
		t.Errorf("udf files: %v, want their queries passed", sum.Counts)
	}
	top := *got["top"]
	top.Cases = []Case{{SQL: "SELECT udf(1)", Schema: "struct<udf(1):int>", Output: []string{"1"}}}
	if fr := (&Runner{}).RunFile(context.Background(), &top); fr.Counts[Failed] != 1 {
		t.Errorf("udf(1) outside udf/: %+v, want it to fail (no function udf)", fr.Queries)
	}
}

// TestRunnerSettings runs files whose settings the engine honours or
// refuses: under an honoured setting a differing answer is wrong, after a
// refused one it is skipped; a config dimension uses the first
// alternative the engine accepts.
func TestRunnerSettings(t *testing.T) {
	wrong := header + block("SELECT 1 AS a", "struct<a:int>", "2") + block("SELECT 1 AS a", "struct<a:int>", "1")
	dir := writeTree(t, map[string]string{
		"inputs/honoured.sql":        "--SET spark.sql.shuffle.partitions=2\nSELECT 1 AS a;\nSELECT 1 AS a;\n",
		"results/honoured.sql.out":   wrong,
		"inputs/refused.sql":         "--SET spark.sql.no.such.setting=1\nSELECT 1 AS a;\nSELECT 1 AS a;\n",
		"results/refused.sql.out":    wrong,
		"inputs/dim.sql":             "--CONFIG_DIM1 spark.sql.no.such.setting=1\n--CONFIG_DIM1 spark.sql.codegen.wholeStage=false\nSELECT 1 AS a;\nSELECT 1 AS a;\n",
		"results/dim.sql.out":        wrong,
		"inputs/dimrefused.sql":      "--CONFIG_DIM1 spark.sql.no.such.setting=1\n--CONFIG_DIM1 spark.sql.no.such.setting=2\nSELECT 1 AS a;\nSELECT 1 AS a;\n",
		"results/dimrefused.sql.out": wrong,
	})
	files, err := LoadDir(dir)
	if err != nil {
		t.Fatal(err)
	}
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	sum := (&Runner{Allocator: mem}).Run(context.Background(), files)
	mem.AssertSize(t, 0)
	want := map[string]Outcome{"honoured": Wrong, "refused": Skipped, "dim": Wrong, "dimrefused": Skipped}
	for _, f := range sum.Files {
		w, ok := want[f.Name]
		if !ok {
			continue
		}
		if f.Queries[0].Outcome != w || f.Queries[1].Outcome != Passed {
			t.Errorf("%s: %s (%s), %s; want %s, passed", f.Name, f.Queries[0].Outcome, f.Queries[0].Detail, f.Queries[1].Outcome, w)
		}
	}
}
