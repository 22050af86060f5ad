package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strings"
)

// envPrefix prefixes the environment variables that set flags: the flag
// --http-addr is also ARROWSTREAM_HTTP_ADDR.
const envPrefix = "ARROWSTREAM_"

// cliEnv is what a subcommand sees of its process: arguments aside, the
// streams and the environment. Tests pass their own.
type cliEnv struct {
	stdout, stderr io.Writer
	getenv         func(string) string
}

func osEnv(stdout, stderr io.Writer) cliEnv {
	return cliEnv{stdout: stdout, stderr: stderr, getenv: os.Getenv}
}

// envName is the environment variable of a flag.
func envName(flagName string) string {
	return envPrefix + strings.ToUpper(strings.ReplaceAll(flagName, "-", "_"))
}

// newFlagSet returns a flag set whose usage shows the synopsis, the flags
// (with their environment variables) and the examples.
func newFlagSet(name, synopsis, examples string) *flag.FlagSet {
	fs := flag.NewFlagSet("arrowstream "+name, flag.ContinueOnError)
	fs.SetOutput(io.Discard) // parseFlags prints errors and usage itself
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "usage: arrowstream %s %s\n\nflags (each can also be set by the environment variable shown):\n", name, synopsis)
		fs.VisitAll(func(f *flag.Flag) {
			typ, help := flag.UnquoteUsage(f)
			fmt.Fprintf(w, "  --%s", f.Name)
			if typ != "" {
				fmt.Fprintf(w, " %s", typ)
			}
			fmt.Fprintf(w, "\n    \t%s", strings.ReplaceAll(help, "\n", "\n    \t"))
			if f.DefValue != "" && f.DefValue != "false" {
				fmt.Fprintf(w, " (default %q)", f.DefValue)
			}
			fmt.Fprintf(w, " [$%s]\n", envName(f.Name))
		})
		if examples != "" {
			fmt.Fprintf(w, "\nexamples:\n%s", examples)
		}
	}
	return fs
}

// errUsage ends a subcommand with the status parseFlags chose.
type errUsage struct{ code int }

func (e errUsage) Error() string { return fmt.Sprintf("usage (exit status %d)", e.code) }

// parseFlags applies ARROWSTREAM_* variables, then the command line. -h
// prints the usage on stdout (status 0); an unknown flag or a bad value,
// from the command line or the environment, prints the error and the usage
// on stderr (status 2). Both come back as errUsage.
func parseFlags(fs *flag.FlagSet, args []string, env cliEnv) error {
	var envErr error
	fs.VisitAll(func(f *flag.Flag) {
		if envErr != nil {
			return
		}
		if v := env.getenv(envName(f.Name)); v != "" {
			if err := fs.Set(f.Name, v); err != nil {
				envErr = fmt.Errorf("invalid value %q for %s: %v", v, envName(f.Name), err)
			}
		}
	})
	err := envErr
	if err == nil {
		err = fs.Parse(args)
	}
	return reportParse(fs, err, env)
}

// parseInterspersed is parseFlags that also takes flags after the
// positional arguments (query "SELECT 1" --addr x), which it returns.
// A "--" ends the flags as usual.
func parseInterspersed(fs *flag.FlagSet, args []string, env cliEnv) ([]string, error) {
	if err := parseFlags(fs, args, env); err != nil {
		return nil, err
	}
	var pos []string
	for fs.NArg() > 0 {
		rest := fs.Args()
		// fs.Parse consumed a "--" if the arguments before rest end with it.
		if consumed := len(args) - len(rest); consumed > 0 && args[consumed-1] == "--" {
			return append(pos, rest...), nil
		}
		pos = append(pos, rest[0])
		args = rest[1:]
		if err := reportParse(fs, fs.Parse(args), env); err != nil {
			return nil, err
		}
	}
	return pos, nil
}

// reportParse turns a flag parsing error into errUsage, printing the
// usage (see parseFlags).
func reportParse(fs *flag.FlagSet, err error, env cliEnv) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, flag.ErrHelp):
		fs.SetOutput(env.stdout)
		fs.Usage()
		return errUsage{0}
	default:
		fmt.Fprintf(env.stderr, "%s: %s\n", fs.Name(), dashDash.Replace(err.Error()))
		fs.SetOutput(env.stderr)
		fs.Usage()
		return errUsage{2}
	}
}

// dashDash spells the flag in the flag package's parse errors as the
// usage, the docs and the examples do (--format, not -format).
var dashDash = strings.NewReplacer(
	"for flag -", "for flag --",
	"not defined: -", "not defined: --",
	"needs an argument: -", "needs an argument: --",
	"invalid boolean flag ", "invalid boolean flag --",
)

// exitCode turns a subcommand's error into its exit status: errUsage's,
// else 1 after printing the error.
func exitCode(err error, name string, stderr io.Writer) int {
	var u errUsage
	switch {
	case err == nil:
		return 0
	case errors.As(err, &u):
		return u.code
	default:
		fmt.Fprintf(stderr, "arrowstream %s: %v\n", name, err)
		return 1
	}
}

// choiceFlag is a string flag limited to a few values.
type choiceFlag struct {
	value   string
	choices []string
}

func newChoice(def string, choices ...string) *choiceFlag {
	return &choiceFlag{value: def, choices: choices}
}

func (c *choiceFlag) String() string { return c.value }

func (c *choiceFlag) Set(s string) error {
	for _, ch := range c.choices {
		if strings.EqualFold(s, ch) {
			c.value = ch
			return nil
		}
	}
	return fmt.Errorf("want one of %s", strings.Join(c.choices, ", "))
}

// logFlags are the logging flags every long-running subcommand takes.
type logFlags struct {
	format *choiceFlag
	level  *choiceFlag
}

func addLogFlags(fs *flag.FlagSet) *logFlags {
	l := &logFlags{format: newChoice("text", "text", "json"), level: newChoice("info", "debug", "info", "warn", "error")}
	fs.Var(l.format, "log-format", "log format: `text|json`")
	fs.Var(l.level, "log-level", "least severe level logged: `debug|info|warn|error`")
	return l
}

// logger builds the slog logger writing to w.
func (l *logFlags) logger(w io.Writer) *slog.Logger {
	var level slog.Level
	_ = level.UnmarshalText([]byte(l.level.value)) // the choices are valid levels
	opts := &slog.HandlerOptions{Level: level}
	if l.format.value == "json" {
		return slog.New(slog.NewJSONHandler(w, opts))
	}
	return slog.New(slog.NewTextHandler(w, opts))
}
