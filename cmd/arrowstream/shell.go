package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"sync"

	"github.com/apache/arrow/go/v17/arrow/flight/flightsql"
	"github.com/chzyer/readline"
	"golang.org/x/term"
	"google.golang.org/grpc"
	"google.golang.org/grpc/metadata"
)

const shellExamples = `  arrowstream sql                                   # an embedded engine (checkpoint root under the user cache)
  arrowstream sql --uri grpc://127.0.0.1:31337      # the shell of a running arrowstream serve / run
  arrowstream sql --checkpoint ./ck setup.sql       # run setup.sql, then read statements
  arrowstream sql --mode csv < queries.sql > out.csv
`

// shellFlags are the settings of `arrowstream sql`.
type shellFlags struct {
	query      *queryFlags // --uri and its credentials and TLS settings
	checkpoint string
	mode       *choiceFlag
	history    string
	pager      string
	log        *logFlags
}

func newShellFlags() (*flag.FlagSet, *shellFlags) {
	fs := newFlagSet("sql", "[flags] [FILE.sql ...]", shellExamples)
	qf := &queryFlags{format: newChoice(formatTable)}
	f := &shellFlags{query: qf}
	fs.StringVar(&qf.uri, "uri", "", "Flight SQL server `URI` to connect to (grpc://, grpc+tls://); empty: run an embedded engine in this process")
	fs.StringVar(&qf.user, "user", "", "user `name` on the server (with --password)")
	fs.StringVar(&qf.password, "password", "", "`password` of --user (prefer the environment variable)")
	fs.StringVar(&qf.tlsCA, "tls-ca", "", "PEM `file` of the CA that signed the server's certificate (grpc+tls)")
	fs.BoolVar(&qf.tlsSkipVerify, "tls-skip-verify", false, "do not verify the server's certificate (testing only)")
	fs.StringVar(&f.checkpoint, "checkpoint", "", "checkpoint root `directory` of the embedded engine (default: a directory under the user's cache directory)")
	f.mode = newChoice(formatTable, formatTable, formatCSV, formatJSON, formatLine)
	fs.Var(f.mode, "mode", "output `mode`: table|csv|json|line (.mode changes it)")
	fs.StringVar(&f.history, "history", "", "history `file` (default: arrowstream/sql_history under the user's config directory; \"off\": none)")
	fs.StringVar(&f.pager, "pager", defaultPager(), "pager `command` for results taller than the terminal (empty: none)")
	fs.IntVar(&qf.maxRows, "max-rows", 0, "rows printed of each result in table mode (0: all)")
	f.log = addLogFlags(fs)
	_ = fs.Set("log-level", "error") // warnings (a slow trigger) would break into the prompt
	return fs, f
}

func runShell(args []string, stdout, stderr io.Writer) int {
	return exitCode(shellCmd(context.Background(), args, osEnv(stdout, stderr), os.Stdin), "sql", stderr)
}

// shellCmd is `arrowstream sql`: it runs the files given, then reads
// statements from stdin, with a line editor when stdin is a terminal.
func shellCmd(ctx context.Context, args []string, env cliEnv, stdin *os.File) error {
	fs, f := newShellFlags()
	files, err := parseInterspersed(fs, args, env)
	if err != nil {
		return err
	}
	if (f.query.user == "") != (f.query.password == "") {
		fmt.Fprintln(env.stderr, "arrowstream sql: --user and --password go together")
		return errUsage{2}
	}
	sh := &shell{out: env.stdout, errOut: env.stderr, mode: f.mode.value, pager: f.pager,
		interactive: isTerminal(env.stdout), maxRows: f.query.maxRows, comp: newCompleter()}
	sh.height = func() int { return terminalHeight(env.stdout) }
	// The banner greets a person at a terminal; printed before a script's
	// results it would be the first lines of `--mode csv < report.sql`.
	typing := term.IsTerminal(int(stdin.Fd()))

	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	closeConn, err := sh.connect(ctx, f, env)
	if err != nil {
		return err
	}
	defer closeConn()
	if typing {
		fmt.Fprintln(env.stdout, sh.banner)
		fmt.Fprintln(env.stdout, `Statements end with ";". Enter .help for the commands, Ctrl-D to leave.`)
	}
	sh.comp.refresh(sh.withAuth(ctx), sh.client)

	// Ctrl-C (SIGINT while a statement runs: the line editor reads it as
	// a key at the prompt) cancels the running statement only.
	run := &statementRunner{}
	sigs := make(chan os.Signal, 1)
	signal.Notify(sigs, os.Interrupt)
	defer signal.Stop(sigs)
	go func() {
		for {
			select {
			case <-sigs:
				run.interrupt()
			case <-ctx.Done():
				return
			}
		}
	}()

	for _, name := range files {
		if err := run.do(ctx, func(ctx context.Context) error { return sh.read(ctx, name) }); err != nil {
			sh.report(err)
		}
		if sh.quit {
			return sh.scriptStatus()
		}
	}
	if !typing {
		if err := sh.script(ctx, run, stdin); err != nil {
			return err
		}
		return sh.scriptStatus()
	}
	return sh.interact(ctx, run, f, stdin)
}

// connect starts the embedded engine (no --uri) or dials the server, and
// authenticates. The returned function closes what it opened.
func (sh *shell) connect(ctx context.Context, f *shellFlags, env cliEnv) (func(), error) {
	stop := func() {}
	uri := f.query.uri
	if uri == "" {
		a, err := startEmbedded(ctx, f, env)
		if err != nil {
			return nil, err
		}
		stop = a.shutdown
		uri = "grpc://" + a.flight.Addr()
		sh.banner = fmt.Sprintf("Arrowstream SQL shell, embedded engine (checkpoint %s).", a.ckRoot)
	} else {
		sh.banner = fmt.Sprintf("Arrowstream SQL shell, connected to %s.", uri)
	}
	f.query.uri = uri
	target, creds, err := f.query.dialTarget()
	if err != nil {
		stop()
		return nil, err
	}
	sh.target = target
	client, err := flightsql.NewClientCtx(ctx, target, nil, nil, grpc.WithTransportCredentials(creds))
	if err != nil {
		stop()
		return nil, fmt.Errorf("connect to %s: %w", uri, err)
	}
	sh.client = client
	if f.query.user != "" {
		actx, err := client.Client.AuthenticateBasicToken(ctx, f.query.user, f.query.password)
		if err != nil {
			client.Close()
			stop()
			return nil, loginError(err, target, f.query.user)
		}
		sh.auth, _ = metadata.FromOutgoingContext(actx)
	}
	return func() {
		client.Close()
		stop()
	}, nil
}

// startEmbedded runs the engine and its Flight SQL server on a free
// loopback port, without the web UI, for this process only.
func startEmbedded(ctx context.Context, f *shellFlags, env cliEnv) (*app, error) {
	fs := flag.NewFlagSet("embedded", flag.ContinueOnError)
	af := addAppFlags(fs, "") // no PostgreSQL endpoint for an embedded shell
	args := []string{"--addr", "127.0.0.1:0", "--http", "", "--status", "off", "--log-level", f.log.level.value, "--log-format", f.log.format.value}
	if f.checkpoint != "" {
		args = append(args, "--checkpoint", f.checkpoint)
	}
	if err := fs.Parse(args); err != nil {
		return nil, err
	}
	if err := af.validate(); err != nil {
		return nil, err
	}
	return startApp(ctx, af, env, "sql", "shell")
}

// statementRunner runs one statement at a time under a context that
// Ctrl-C cancels.
type statementRunner struct {
	mu     sync.Mutex
	cancel context.CancelFunc
}

func (r *statementRunner) do(ctx context.Context, f func(context.Context) error) error {
	ctx, cancel := context.WithCancel(ctx)
	r.mu.Lock()
	r.cancel = cancel
	r.mu.Unlock()
	defer func() {
		r.mu.Lock()
		r.cancel = nil
		r.mu.Unlock()
		cancel()
	}()
	return f(ctx)
}

// interrupt cancels the running statement, if any.
func (r *statementRunner) interrupt() {
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.cancel != nil {
		r.cancel()
	}
}

// scriptStatus is the exit status of a script (files, piped stdin): a
// failed statement is reported and the script goes on, as at the prompt,
// but the exit status says that one failed, so that `arrowstream sql <
// report.sql && next-step` stops at a broken report.
func (sh *shell) scriptStatus() error {
	if sh.failed > 0 {
		fmt.Fprintf(sh.errOut, "arrowstream sql: %d of the script's statements or commands failed\n", sh.failed)
		return errUsage{1}
	}
	return nil
}

// script reads statements from a file or pipe, without prompts.
func (sh *shell) script(ctx context.Context, run *statementRunner, in io.Reader) error {
	b, err := io.ReadAll(in)
	if err != nil {
		return err
	}
	for _, l := range strings.Split(string(b), "\n") {
		if sh.quit || ctx.Err() != nil {
			break
		}
		_ = run.do(ctx, func(ctx context.Context) error {
			sh.line(ctx, l)
			return nil
		})
	}
	_ = run.do(ctx, func(ctx context.Context) error {
		sh.flush(ctx)
		return nil
	})
	return nil
}

// interact is the interactive loop: the line editor with history and
// completion.
func (sh *shell) interact(ctx context.Context, run *statementRunner, f *shellFlags, stdin *os.File) error {
	history := f.history
	if history == "" {
		if dir, err := os.UserConfigDir(); err == nil {
			history = filepath.Join(dir, "arrowstream", "sql_history")
			_ = os.MkdirAll(filepath.Dir(history), 0o700)
		}
	}
	if history == "off" {
		history = ""
	}
	rl, err := readline.NewEx(&readline.Config{
		Prompt:                 promptFirst,
		HistoryFile:            history,
		HistoryLimit:           5000,
		DisableAutoSaveHistory: true, // a multi-line statement is saved as one entry
		AutoComplete:           sh.comp,
		InterruptPrompt:        "^C",
		EOFPrompt:              "",
		Stdin:                  stdin,
		Stdout:                 sh.out,
		Stderr:                 sh.errOut,
	})
	if err != nil {
		return fmt.Errorf("line editor: %w", err)
	}
	defer rl.Close()
	for !sh.quit {
		rl.SetPrompt(sh.prompt())
		line, err := rl.Readline()
		switch {
		case errors.Is(err, readline.ErrInterrupt):
			sh.reset() // Ctrl-C at the prompt drops the statement being typed
			continue
		case errors.Is(err, io.EOF):
			return nil
		case err != nil:
			return err
		}
		var entry string
		_ = run.do(ctx, func(ctx context.Context) error {
			entry = sh.line(ctx, line)
			return nil
		})
		if entry != "" {
			_ = rl.SaveHistory(entry)
		}
	}
	return nil
}

// terminalHeight is w's height in lines (24 when unknown).
func terminalHeight(w io.Writer) int {
	if f, ok := w.(*os.File); ok {
		if _, rows, err := term.GetSize(int(f.Fd())); err == nil && rows > 0 {
			return rows
		}
	}
	return 24
}
