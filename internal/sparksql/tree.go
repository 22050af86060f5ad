package sparksql

import (
	"context"
	"time"

	"fmt"
	"github.com/arrowstream/arrowstream/arrowstream"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strings"
)

// Setting is one "SET key=value" a file runs with before its queries.
type Setting struct{ Key, Value string }

// Conventions of Spark's SQLQueryTestSuite by the first directory of an
// input under inputs/ (listTestCases and runQueries in
// SQLQueryTestSuite.scala): the settings each kind of file runs with, and
// the kinds that cannot run here.
var (
	dirSettings = map[string][]Setting{
		"postgreSQL": {
			{"spark.sql.ansi.enabled", "true"},
			{"spark.sql.legacy.interval.enabled", "true"},
		},
		"ansi":         {{"spark.sql.ansi.enabled", "true"}},
		"timestampNTZ": {{"spark.sql.timestampType", "TIMESTAMP_NTZ"}},
	}
)

// isTree reports whether dir/inputs is Spark's whole sql-tests tree (it
// has a subdirectory other than ansi/) rather than a prepared flat
// directory, whose ansi/ files only import the top-level ones.
func isTree(dir string) (bool, error) {
	ents, err := os.ReadDir(filepath.Join(dir, "inputs"))
	if err != nil {
		return false, fmt.Errorf("sparksql: %w", err)
	}
	for _, e := range ents {
		if e.IsDir() && e.Name() != "ansi" {
			return true, nil
		}
	}
	return false, nil
}

// loadTree loads every input under dir/inputs, recursively, with the
// expected output at the same relative path under dir/results. A file is
// named by its path relative to inputs/ without ".sql"
// ("typeCoercion/native/concat"). An input without results is left out
// (Spark's suite would fail on it; there is nothing to compare with).
func loadTree(dir string) ([]*File, error) {
	root := filepath.Join(dir, "inputs")
	var inputs []string
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if !d.IsDir() && strings.HasSuffix(path, ".sql") {
			inputs = append(inputs, path)
		}
		return nil
	})
	if err != nil {
		return nil, fmt.Errorf("sparksql: listing %s: %w", root, err)
	}
	sort.Strings(inputs)
	var files []*File
	for _, in := range inputs {
		rel, err := filepath.Rel(root, in)
		if err != nil {
			return nil, fmt.Errorf("sparksql: %s: %w", in, err)
		}
		rel = filepath.ToSlash(rel)
		out := filepath.Join(dir, "results", filepath.FromSlash(rel)+".out")
		b, err := os.ReadFile(out)
		if os.IsNotExist(err) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("sparksql: expected output of %s: %w", in, err)
		}
		f := &File{Name: strings.TrimSuffix(rel, ".sql"), Expected: out}
		if f.Cases, err = ParseOutput(string(b)); err != nil {
			return nil, fmt.Errorf("sparksql: %s: %w", out, err)
		}
		top, sub, nested := strings.Cut(rel, "/")
		if nested {
			f.Settings = append(f.Settings, dirSettings[top]...)
		}
		if top == "udf" {
			// Spark runs these with its test UDF registered (and those
			// under udf/postgreSQL/ as PostgreSQL files too).
			f.Functions = append(f.Functions, "udf")
			if strings.HasPrefix(sub, "postgreSQL/") {
				f.Settings = append(f.Settings, dirSettings["postgreSQL"]...)
				top = "postgreSQL"
			}
		}
		if top == "postgreSQL" {
			f.Functions = append(f.Functions, pgFunctions...)
		}
		f.ANSI = settingIs(f.Settings, "spark.sql.ansi.enabled", "true")
		if err := readDirectives(in, f); err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	if len(files) == 0 {
		return nil, fmt.Errorf("sparksql: no input file with results under %s", root)
	}
	return files, nil
}

func settingIs(s []Setting, key, value string) bool {
	v := ""
	for _, x := range s {
		if strings.EqualFold(x.Key, key) {
			v = x.Value
		}
	}
	return strings.EqualFold(v, value)
}

// readDirectives reads the --SET and --CONFIG_DIM comment lines of an
// input file (the queries themselves come from the expected output).
func readDirectives(path string, f *File) error {
	b, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("sparksql: %w", err)
	}
	s, d, err := ParseDirectives(string(b))
	if err != nil {
		return fmt.Errorf("sparksql: %s: %w", path, err)
	}
	f.Settings = append(f.Settings, s...)
	f.Dims = d
	return nil
}

// ParseDirectives returns the settings of an input's "--SET k=v[,k=v]"
// lines and its config dimensions: for each "--CONFIG_DIMn" name in order
// of first appearance, the alternative setting sets, one per line. As in
// SQLQueryTestSuite, a line counts only when it starts with the directive.
func ParseDirectives(text string) (settings []Setting, dims [][][]Setting, err error) {
	dimIndex := map[string]int{}
	for _, line := range strings.Split(strings.ReplaceAll(text, "\r\n", "\n"), "\n") {
		switch {
		case strings.HasPrefix(line, "--SET "):
			s, err := parseSettingList(line[len("--SET "):])
			if err != nil {
				return nil, nil, fmt.Errorf("%q: %w", line, err)
			}
			settings = append(settings, s...)
		case strings.HasPrefix(line, "--CONFIG_DIM"):
			rest := line[len("--CONFIG_DIM"):]
			name, list, ok := strings.Cut(rest, " ")
			if !ok {
				return nil, nil, fmt.Errorf("%q: no settings after the dimension name", line)
			}
			s, err := parseSettingList(list)
			if err != nil {
				return nil, nil, fmt.Errorf("%q: %w", line, err)
			}
			i, seen := dimIndex[name]
			if !seen {
				i = len(dims)
				dimIndex[name] = i
				dims = append(dims, nil)
			}
			dims[i] = append(dims[i], s)
		}
	}
	return settings, dims, nil
}

func parseSettingList(list string) ([]Setting, error) {
	var out []Setting
	for _, kv := range strings.Split(list, ",") {
		k, v, ok := strings.Cut(kv, "=")
		if !ok || strings.TrimSpace(k) == "" {
			return nil, fmt.Errorf("setting %q is not key=value", kv)
		}
		out = append(out, Setting{strings.TrimSpace(k), strings.TrimSpace(v)})
	}
	return out, nil
}

// applySettings runs the file's settings as SET statements, and for each
// config dimension the first of its setting sets that the engine accepts
// in full (Spark expects the same output under each, so any one is an
// oracle). A refused setting is recorded as a refused SET of the file:
// answers that then differ from Spark's are skipped, not judged wrong.
func (r *Runner) applySettings(ctx context.Context, s *arrowstream.Session, f *File, st *fileState) {
	set := func(x Setting) error {
		_, _, err := r.query(ctx, s, Formatter{Loc: time.UTC}, "SET "+x.Key+"="+x.Value)
		return err
	}
	for _, x := range f.Settings {
		if err := set(x); err != nil {
			st.settings[strings.ToLower(x.Key)] = fmt.Sprintf("SET %s=%s (%v)", x.Key, x.Value, err)
		}
	}
	for _, dim := range f.Dims {
		var refused []string
		for _, alt := range dim {
			refused = refused[:0]
			for _, x := range alt {
				if err := set(x); err != nil {
					refused = append(refused, fmt.Sprintf("SET %s=%s (%v)", x.Key, x.Value, err))
				}
			}
			if len(refused) == 0 {
				break
			}
		}
		if len(refused) > 0 {
			st.settings[strings.ToLower(dim[0][0].Key)] = "every alternative of a config dimension, e.g. " + strings.Join(refused, "; ")
		}
	}
}
