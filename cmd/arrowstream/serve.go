package main

import (
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"strings"
)

const serveExamples = `  arrowstream serve                                   # Flight SQL on 127.0.0.1:31337, UI on :4040
  arrowstream serve --addr 127.0.0.1:0 --http ''      # any free port, no web UI
  ARROWSTREAM_USER=me ARROWSTREAM_PASSWORD=secret arrowstream serve
  arrowstream serve --init tables.sql                 # run statements first
  arrowstream serve --cluster 127.0.0.1:9092 --cluster-name c1 --addr 127.0.0.1:31337 --init tables.sql
                                                      # one instance of cluster c1 (start more with other ports)
  arrowstream serve --users-file users --grant 'analyst=clicks' --data-dir /srv/landing
                                                      # logins, a read grant, CSV files from one directory

then create tables over Flight SQL, for example:
  arrowstream query "CREATE TABLE events USING rate OPTIONS (rowsPerSecond '100')"
  arrowstream query "CREATE STREAMING TABLE evens AS SELECT * FROM STREAM events WHERE value % 2 = 0"
`

func runServe(args []string, stdout, stderr io.Writer) int {
	ctx, cancel := signalContext(stderr)
	defer cancel()
	return exitCode(serveCmd(ctx, args, osEnv(stdout, stderr)), "serve", stderr)
}

// newServeFlags declares the flags of serve.
func newServeFlags() (*flag.FlagSet, *appFlags, *stringList) {
	fs := newFlagSet("serve", "[flags]", serveExamples)
	f := addAppFlags(fs, "")
	f.cluster = addClusterFlags(fs)
	inits := &stringList{}
	fs.Var(inits, "init", "run the statements of this SQL `file` at start (repeatable)")
	return fs, f, inits
}

// serveCmd is `arrowstream serve`: the engine and its servers without the
// demo, until ctx ends. Tables are created over Flight SQL (or by --init
// files).
func serveCmd(ctx context.Context, args []string, env cliEnv) error {
	fs, f, inits := newServeFlags()
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	if fs.NArg() > 0 {
		fmt.Fprintf(env.stderr, "arrowstream serve: unexpected arguments %q (SQL files go to --init, or use run)\n", fs.Args())
		return errUsage{2}
	}
	if err := f.validate(); err != nil {
		fmt.Fprintf(env.stderr, "arrowstream serve: %v\n", err)
		return errUsage{2}
	}
	if err := f.cluster.validate(f.flight.addr); err != nil {
		fmt.Fprintf(env.stderr, "arrowstream serve: %v\n", err)
		return errUsage{2}
	}
	scripts, err := readScripts(*inits, os.Stdin)
	if err != nil {
		return err
	}
	a, err := startApp(ctx, f, env, "serve", "serve")
	if err != nil {
		return err
	}
	defer a.shutdown()
	if err := runScripts(ctx, a.engine, scripts, env.stdout, f.maxRows); err != nil {
		return err
	}
	a.banner(env.stdout, "without the demo: create tables over Flight SQL", nil)
	a.watch(ctx)
	return nil
}

// stringList is a repeatable string flag.
type stringList []string

// String is the flag's value as given ("" when none: the usage then shows
// no default, where fmt's "[]" read as a value to pass).
func (l *stringList) String() string { return strings.Join(*l, ",") }

func (l *stringList) Set(s string) error {
	*l = append(*l, s)
	return nil
}
