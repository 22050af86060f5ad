package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"regexp"
	"time"

	"github.com/arrowstream/arrowstream/internal/sparksql"
)

// sparksqlEnv names the golden directory when no argument is given.
const sparksqlEnv = "ARROWSTREAM_SPARKSQL"

// runSparkSQL implements "arrowstream sparksql [DIR]": it runs Spark's SQL
// golden files and prints the per-file table. Exit status 1 when a query
// answered differently from Spark, 2 for bad usage or files.
func runSparkSQL(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("sparksql", flag.ContinueOnError)
	fs.SetOutput(stderr)
	verbose := fs.Bool("v", false, "print every query that did not pass, with why")
	runExpr := fs.String("run", "", "run only the files whose name matches this regular expression")
	timeout := fs.Duration("timeout", 2*time.Minute, "bound of one statement")
	pgData := fs.String("pgdata", "", "directory of Spark's PostgreSQL test data (agg.data, onek.data, tenk.data) loaded as aggtest, onek and tenk1 (default: test-data/postgresql beside DIR, as in Spark's tree, when it exists)")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: arrowstream sparksql [-v] [-run REGEXP] [-pgdata DIR] [DIR]\n\nDIR holds inputs/ and results/, flat or Spark's whole sql-tests tree (default $%s, else ../shared/sparksql from the repository root)\n", sparksqlEnv)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return 2
	}
	if fs.NArg() > 1 {
		fs.Usage()
		return 2
	}
	dir := fs.Arg(0)
	if dir == "" {
		dir = defaultSparkSQLDir()
	}
	files, err := sparksql.LoadDir(dir)
	if err != nil {
		fmt.Fprintf(stderr, "arrowstream sparksql: %v\n", err)
		return 2
	}
	if *runExpr != "" {
		re, err := regexp.Compile(*runExpr)
		if err != nil {
			fmt.Fprintf(stderr, "arrowstream sparksql: -run: %v\n", err)
			return 2
		}
		kept := files[:0]
		for _, f := range files {
			if re.MatchString(f.Name) {
				kept = append(kept, f)
			}
		}
		files = kept
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	defer stop()
	if *pgData == "" {
		*pgData = sparksql.PostgresDataDir(dir)
	} else if st, err := os.Stat(*pgData); err != nil || !st.IsDir() {
		fmt.Fprintf(stderr, "arrowstream sparksql: -pgdata %s: not a directory\n", *pgData)
		return 2
	}
	r := &sparksql.Runner{QueryTimeout: *timeout, PostgresData: *pgData}
	sum := r.Run(ctx, files)
	if *verbose {
		sum.WriteDetails(stdout)
	}
	sum.WriteTable(stdout)
	if sum.Counts[sparksql.Wrong] > 0 {
		return 1
	}
	return 0
}

// defaultSparkSQLDir is $ARROWSTREAM_SPARKSQL, else ../shared/sparksql
// next to the repository root (the directory of go.mod above the working
// directory).
func defaultSparkSQLDir() string {
	if d := os.Getenv(sparksqlEnv); d != "" {
		return d
	}
	dir, err := os.Getwd()
	if err != nil {
		return filepath.Join("..", "shared", "sparksql")
	}
	for d := dir; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			return filepath.Join(d, "..", "shared", "sparksql")
		}
		if filepath.Dir(d) == d {
			return filepath.Join("..", "shared", "sparksql")
		}
	}
}
