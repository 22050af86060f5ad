package main

import (
	"context"
	"crypto/sha256"
	_ "embed"
	"encoding/hex"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/memsink"
)

// demoSQL is the built-in demo: see demo.sql.
//
//go:embed demo.sql
var demoSQL string

const runExamples = `  arrowstream run                          # the built-in demo (clicks per page and window)
  arrowstream run --checkpoint /tmp/ck     # the demo, checkpointed under /tmp/ck
  arrowstream run my_tables.sql            # your statements instead of the demo
  arrowstream run --print-demo > demo.sql  # start from the demo's SQL
  ARROWSTREAM_HTTP=127.0.0.1:8080 arrowstream run --log-format json
`

func runRun(args []string, stdout, stderr io.Writer) int {
	ctx, cancel := signalContext(stderr)
	defer cancel()
	return exitCode(runCmd(ctx, args, osEnv(stdout, stderr)), "run", stderr)
}

// newRunFlags declares the flags of run.
func newRunFlags() (*flag.FlagSet, *appFlags, *bool) {
	fs := newFlagSet("run", "[flags] [FILE.sql ...]", runExamples)
	f := addAppFlags(fs, defaultPGAddr)
	printDemo := fs.Bool("print-demo", false, "print the demo's SQL and exit")
	return fs, f, printDemo
}

// runCmd is `arrowstream run [flags] [FILE.sql ...]`: the demo or the
// files' statements, served until ctx ends (Ctrl-C). A file that starts no
// streaming table runs its statements and returns.
func runCmd(ctx context.Context, args []string, env cliEnv) error {
	fs, f, printDemo := newRunFlags()
	if err := parseFlags(fs, args, env); err != nil {
		return err
	}
	if err := f.validate(); err != nil {
		fmt.Fprintf(env.stderr, "arrowstream run: %v\n", err)
		return errUsage{2}
	}
	if *printDemo {
		_, err := io.WriteString(env.stdout, demoSQL)
		return err
	}
	files := fs.Args()
	scripts, err := readScripts(files, os.Stdin)
	if err != nil {
		return err
	}
	what, ckName := "the demo", "demo"
	if len(files) > 0 {
		what, ckName = strings.Join(files, ", "), scriptCheckpointName(files)
	}
	a, err := startApp(ctx, f, env, "run", ckName)
	if err != nil {
		return err
	}
	defer a.shutdown()
	if len(files) == 0 {
		err = runScript(ctx, a.engine, "demo.sql", demoSQL, env.stdout, f.maxRows)
	} else {
		err = runScripts(ctx, a.engine, scripts, env.stdout, f.maxRows)
	}
	if err != nil {
		var nr *memsink.NotRecoverableError
		switch {
		case errors.As(err, &nr):
			err = fmt.Errorf("%w\n(the table's earlier rows were not kept: it has 'persist'='false', or its checkpoint is from an older version. "+
				"CREATE OR REPLACE STREAMING TABLE starts it over, archiving the checkpoint; without 'persist'='false' a table is recoverable)", err)
		case errors.Is(err, checkpoint.ErrCorrupt):
			err = fmt.Errorf("%w\n(the checkpoint under %s was written by an incompatible run: delete it, or pass another --checkpoint)", err, a.ckRoot)
		}
		return err
	}
	var tables []string
	for _, q := range a.engine.monitor.Queries() {
		if q.Status == "active" {
			tables = append(tables, q.Name)
		}
	}
	if len(tables) == 0 {
		a.logger.Info("no streaming table is running: done")
		return nil
	}
	a.banner(env.stdout, fmt.Sprintf("%s: streaming tables %s", what, strings.Join(tables, ", ")), tables)
	a.watch(ctx)
	return nil
}

// scriptCheckpointName names the default checkpoint root of a set of
// files: the first file's name and a hash of all their absolute paths, so
// that the same files reuse their checkpoint and others do not.
func scriptCheckpointName(files []string) string {
	h := sha256.New()
	for _, f := range files {
		abs, err := filepath.Abs(f)
		if err != nil {
			abs = f
		}
		h.Write([]byte(abs))
		h.Write([]byte{0})
	}
	base := strings.TrimSuffix(filepath.Base(files[0]), filepath.Ext(files[0]))
	return base + "-" + hex.EncodeToString(h.Sum(nil))[:8]
}
