package sparksql

import (
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
)

// Case is one query of a golden file with Spark's answer.
type Case struct {
	SQL    string
	Schema string   // struct<...>; struct<> for commands and errors
	Output []string // result lines, or the exception class and message
	// Error reports that Spark raised an error (Output[0] is its class).
	Error bool
}

// File is one golden file: its name (the input's base name without .sql)
// and cases in order.
type File struct {
	Name     string
	Expected string // path of the .sql.out file used
	ANSI     bool   // Expected is from results/ansi
	// Settings are the SET statements of the input file's header, which
	// Spark's answers were computed under.
	Settings []string
	Cases    []Case
}

var exceptionLine = regexp.MustCompile(`^([A-Za-z_$][\w$]*\.)+[A-Z][\w$]*(Exception|Error)$`)

// ParseOutput parses the text of a .sql.out file: blocks of "-- !query",
// "-- !query schema" and "-- !query output" sections.
func ParseOutput(text string) ([]Case, error) {
	text = strings.ReplaceAll(text, "\r\n", "\n")
	// Split the way SQLQueryTestSuite does: on lines that start with
	// "-- !query"; segment 0 is the header.
	marker := regexp.MustCompile(`(?m)^-- !query.*\n`)
	segs := marker.Split(text, -1)
	if len(segs) < 1 || (len(segs)-1)%3 != 0 {
		return nil, fmt.Errorf("malformed golden output: %d sections after the header, want a multiple of 3", len(segs)-1)
	}
	var out []Case
	for i := 1; i+2 < len(segs); i += 3 {
		c := Case{
			SQL:    strings.TrimSpace(segs[i]),
			Schema: strings.TrimSpace(segs[i+1]),
		}
		body := strings.TrimRight(segs[i+2], " \t\n\r")
		if body != "" {
			c.Output = strings.Split(body, "\n")
		}
		c.Error = c.Schema == "struct<>" && len(c.Output) > 0 && exceptionLine.MatchString(c.Output[0])
		out = append(out, c)
	}
	return out, nil
}

// LoadDir loads every input file of dir (dir/inputs/*.sql, not the ansi/
// subdirectory, whose files only import the others) with its expected
// output, sorted by name. A file without any expected output is an error.
func LoadDir(dir string) ([]*File, error) {
	inputs, err := filepath.Glob(filepath.Join(dir, "inputs", "*.sql"))
	if err != nil {
		return nil, err
	}
	if len(inputs) == 0 {
		return nil, fmt.Errorf("sparksql: no input files in %s", filepath.Join(dir, "inputs"))
	}
	sort.Strings(inputs)
	var files []*File
	for _, in := range inputs {
		name := strings.TrimSuffix(filepath.Base(in), ".sql")
		f := &File{Name: name}
		ansi := filepath.Join(dir, "results", "ansi", name+".sql.out")
		plain := filepath.Join(dir, "results", name+".sql.out")
		if _, err := os.Stat(ansi); err == nil {
			f.Expected, f.ANSI = ansi, true
		} else {
			f.Expected = plain
		}
		b, err := os.ReadFile(f.Expected)
		if err != nil {
			return nil, fmt.Errorf("sparksql: expected output of %s: %w", in, err)
		}
		if f.Cases, err = ParseOutput(string(b)); err != nil {
			return nil, fmt.Errorf("sparksql: %s: %w", f.Expected, err)
		}
		if f.Settings, err = headerSettings(in); err != nil {
			return nil, fmt.Errorf("sparksql: header of %s: %w", in, err)
		}
		files = append(files, f)
	}
	return files, nil
}
