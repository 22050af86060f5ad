package main

import (
	"bytes"
	"context"
	"strings"
	"testing"
)

// testEnv is a cliEnv with captured output and the given variables.
func testEnv(vars map[string]string) (cliEnv, *bytes.Buffer, *bytes.Buffer) {
	var out, errb bytes.Buffer
	return cliEnv{stdout: &out, stderr: &errb, getenv: func(k string) string { return vars[k] }}, &out, &errb
}

func TestFlagsUsageAndErrors(t *testing.T) {
	ctx := context.Background()
	cmds := map[string]func(context.Context, []string, cliEnv) error{"run": runCmd, "serve": serveCmd, "query": queryCmd}
	for name, cmd := range cmds {
		t.Run(name+"/help", func(t *testing.T) {
			env, out, _ := testEnv(nil)
			if code := exitCode(cmd(ctx, []string{"-h"}, env), name, env.stderr); code != 0 {
				t.Fatalf("-h: exit %d", code)
			}
			for _, want := range []string{"usage: arrowstream " + name, "examples:", "[$ARROWSTREAM_"} {
				if !strings.Contains(out.String(), want) {
					t.Errorf("-h output lacks %q:\n%s", want, out)
				}
			}
			// A repeatable flag given nothing has no default to show.
			if strings.Contains(out.String(), `(default "[]")`) {
				t.Errorf("-h shows an empty list as a default value:\n%s", out)
			}
		})
		for _, args := range [][]string{{"--no-such-flag"}, {"--max-rows", "many"}} {
			t.Run(name+"/"+args[0], func(t *testing.T) {
				env, out, errb := testEnv(nil)
				if code := exitCode(cmd(ctx, args, env), name, env.stderr); code != 2 {
					t.Fatalf("%v: exit %d, want 2", args, code)
				}
				if out.Len() != 0 || !strings.Contains(errb.String(), "usage:") {
					t.Fatalf("%v: stdout %q, stderr %q", args, out, errb)
				}
				// The error spells the flag as the usage does.
				if !strings.Contains(errb.String(), ": "+args[0]) && !strings.Contains(errb.String(), "flag "+args[0]+":") {
					t.Errorf("%v: the error does not name %s as typed in the usage:\n%s", args, args[0], errb)
				}
			})
		}
		t.Run(name+"/bad-env", func(t *testing.T) {
			variable := "ARROWSTREAM_LOG_FORMAT"
			if name == "query" {
				variable = "ARROWSTREAM_FORMAT"
			}
			env, _, errb := testEnv(map[string]string{variable: "xml"})
			if code := exitCode(cmd(ctx, nil, env), name, env.stderr); code != 2 {
				t.Fatalf("exit %d, want 2", code)
			}
			if !strings.Contains(errb.String(), variable) {
				t.Fatalf("the error does not name the variable: %s", errb)
			}
		})
	}
}

func TestFlagsFromEnvironment(t *testing.T) {
	fs := newFlagSet("x", "", "")
	f := addAppFlags(fs, "")
	env, _, _ := testEnv(map[string]string{"ARROWSTREAM_HTTP": "127.0.0.1:9", "ARROWSTREAM_SINK_MAX_EPOCHS": "7", "ARROWSTREAM_ADDR": "127.0.0.1:8"})
	// The command line wins over the environment.
	if err := parseFlags(fs, []string{"--addr", "127.0.0.1:1"}, env); err != nil {
		t.Fatal(err)
	}
	if f.httpAddr != "127.0.0.1:9" || f.sinkMaxEpochs != 7 || f.flight.addr != "127.0.0.1:1" {
		t.Fatalf("http %q, epochs %d, addr %q", f.httpAddr, f.sinkMaxEpochs, f.flight.addr)
	}
}

func TestFlagsValidate(t *testing.T) {
	env, _, errb := testEnv(nil)
	err := runCmd(context.Background(), []string{"--user", "u"}, env)
	if code := exitCode(err, "run", env.stderr); code != 2 || !strings.Contains(errb.String(), "--password") {
		t.Fatalf("exit %d, stderr %s", code, errb)
	}
	env, _, errb = testEnv(nil)
	if code := exitCode(serveCmd(context.Background(), []string{"x.sql"}, env), "serve", env.stderr); code != 2 {
		t.Fatalf("serve with a file argument: exit %d, %s", code, errb)
	}
}

func TestRunPrintDemo(t *testing.T) {
	env, out, _ := testEnv(nil)
	if err := runCmd(context.Background(), []string{"--print-demo"}, env); err != nil {
		t.Fatal(err)
	}
	if out.String() != demoSQL {
		t.Fatal("--print-demo does not print the demo")
	}
}
