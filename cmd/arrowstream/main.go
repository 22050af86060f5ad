package main

import (
	"fmt"
	"io"
	"os"
	"sort"
)

// command is a subcommand: it gets its arguments and returns the exit
// status.
type command struct {
	summary string
	run     func(args []string, stdout, stderr io.Writer) int
}

var commands = map[string]command{
	"conformance": {"run conformance scenario files", runConformance},
	"run":         {"run the demo, or SQL files, and serve the results", runRun},
	"serve":       {"serve Flight SQL and the web UI, without the demo", runServe},
	"query":       {"run SQL on a Flight SQL server and print the result", runQuery},
	"bench":       {"run the benchmarks with their peers and print the figures", runBench},
	"chaos":       {"kill a checkpointed query over and over; check nothing is lost or doubled", runChaos},
	"difftest":    {"generate random tables and queries; check answers with differential oracles", runDifftest},
	"sparksql":    {"run Spark's SQL golden files and compare every answer", runSparkSQL},
	"sql":         {"an interactive SQL shell (embedded engine, or --uri to a server)", runShell},
	"version":     {"print the version, VCS revision and Go version of this binary", runVersion},
}

func main() {
	os.Exit(dispatch(os.Args[1:], os.Stdout, os.Stderr))
}

func dispatch(args []string, stdout, stderr io.Writer) int {
	if len(args) == 0 || args[0] == "-h" || args[0] == "--help" || args[0] == "help" {
		usage(stderr)
		if len(args) == 0 {
			return 2
		}
		return 0
	}
	cmd, ok := commands[args[0]]
	if !ok {
		fmt.Fprintf(stderr, "arrowstream: unknown command %q\n", args[0])
		usage(stderr)
		return 2
	}
	return cmd.run(args[1:], stdout, stderr)
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: arrowstream <command> [arguments]\n\ncommands:")
	names := make([]string, 0, len(commands))
	for n := range commands {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-12s %s\n", n, commands[n].summary)
	}
}
