package main

import (
	"flag"
	"fmt"
	"io"
	"regexp"
	"strings"
	"time"

	"github.com/arrowstream/arrowstream/streamtest/conformance"
)

// confFlags collects repeated --conf key=value flags.
type confFlags map[string]string

func (c confFlags) String() string {
	parts := make([]string, 0, len(c))
	for k, v := range c {
		parts = append(parts, k+"="+v)
	}
	return strings.Join(parts, ",")
}

func (c confFlags) Set(s string) error {
	k, v, ok := strings.Cut(s, "=")
	if !ok || strings.TrimSpace(k) == "" {
		return fmt.Errorf("want key=value, got %q", s)
	}
	c[strings.TrimSpace(k)] = v
	return nil
}

// runConformance implements "arrowstream conformance": exit status 0 only
// when no scenario failed, 1 when some did, 2 for bad usage or files.
func runConformance(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("conformance", flag.ContinueOnError)
	fs.SetOutput(stderr)
	verbose := fs.Bool("v", false, "print every step (and the fixture's dump on a failure)")
	runExpr := fs.String("run", "", "run only the scenarios whose name matches this regular expression")
	restart := fs.Bool("restart", false, "also stop and restart stateful queries after every epoch")
	timeout := fs.Duration("timeout", 30*time.Second, "bound of every wait of a step")
	types := fs.Bool("types", false, "also require the sink's column types to match each scenario's output (stricter than FORMAT.md, which compares values: 2 equals 2.0)")
	conf := confFlags{}
	fs.Var(conf, "conf", "a query option key=value for every scenario (repeatable)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: arrowstream conformance [-v] [-run REGEXP] [-restart] [-types] [--conf key=value]... PATH...")
		fs.PrintDefaults()
	}
	// Flags may come before or after the paths.
	var paths []string
	for {
		if err := fs.Parse(args); err != nil {
			return 2
		}
		if fs.NArg() == 0 {
			break
		}
		paths = append(paths, fs.Arg(0))
		args = fs.Args()[1:]
	}
	if len(paths) == 0 {
		fs.Usage()
		return 2
	}
	r := &conformance.Runner{Out: stdout, Verbose: *verbose, Conf: conf, RestartAfterChecks: *restart, StepTimeout: *timeout, CheckOutputTypes: *types}
	if *runExpr != "" {
		re, err := regexp.Compile(*runExpr)
		if err != nil {
			fmt.Fprintf(stderr, "arrowstream conformance: -run: %v\n", err)
			return 2
		}
		r.Run = re
	}
	scenarios, err := conformance.Load(paths...)
	if err != nil {
		fmt.Fprintf(stderr, "arrowstream conformance: %v\n", err)
		return 2
	}
	if sum := r.RunAll(scenarios); sum.Failed > 0 {
		return 1
	}
	return 0
}
