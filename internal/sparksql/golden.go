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
	ANSI     bool   // runs with spark.sql.ansi.enabled=true
	Cases    []Case
	// Settings are SET before the queries run: the conventions of the
	// file's directory and the input's --SET lines.
	Settings []Setting
	// Dims are the input's --CONFIG_DIM dimensions, each a list of
	// alternative setting sets (Spark runs every combination and expects
	// the same output under each).
	Dims [][][]Setting
	// Functions are the user functions SQLQueryTestSuite registers for
	// the file (see suiteFunctions): udf under udf/, booleq, boolne and
	// vol under postgreSQL/ and udf/postgreSQL/.
	Functions []string
	// SkipReason, when set, says why none of the file's queries can run
	// here: they are all counted skipped.
	SkipReason string
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

// LoadDir loads the golden files of dir, sorted by name. When dir/inputs
// is Spark's whole sql-tests tree (it has subdirectories other than
// ansi/), every input is loaded recursively with the conventions of its
// directory (see loadTree). Otherwise dir is a prepared flat directory:
// every dir/inputs/*.sql (not the ansi/ subdirectory, whose files only
// import the others) with its expected output, the ANSI one where it
// exists; a file without any expected output is an error.
func LoadDir(dir string) ([]*File, error) {
	tree, err := isTree(dir)
	if err != nil {
		return nil, err
	}
	if tree {
		return loadTree(dir)
	}
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
		if err := readDirectives(in, f); err != nil {
			return nil, err
		}
		files = append(files, f)
	}
	return files, nil
}
