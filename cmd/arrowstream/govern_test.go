package main

import (
	"flag"
	"io"
	"testing"

	"github.com/arrowstream/arrowstream/server"
)

// TestGovernFlagsReachLimits: the quota and memory flags set the server's
// limits, and their defaults are the server's defaults.
func TestGovernFlagsReachLimits(t *testing.T) {
	parse := func(args ...string) server.Limits {
		fs := flag.NewFlagSet("serve", flag.ContinueOnError)
		fs.SetOutput(io.Discard)
		g := addGovernFlags(fs)
		if err := fs.Parse(args); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		if err := g.validate(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		return g.limits
	}
	def := parse()
	if def.ReturnMemoryBytes != server.DefaultReturnMemoryBytes || def.StallTimeout != server.DefaultStallTimeout ||
		def.MaxStatementBytes != server.DefaultMaxStatementBytes || def.MaxPreparedStatements != server.DefaultMaxPreparedStatements ||
		def.MaxPreparedStatementsPerUser != server.DefaultMaxPreparedStatementsPerUser || def.MaxPreparedBytesPerUser != server.DefaultMaxPreparedBytesPerUser {
		t.Fatalf("defaults: %+v", def)
	}
	l := parse("--return-memory", "-1", "--max-statement-bytes", "4096", "--stall-timeout", "5s",
		"--max-prepared-statements", "50", "--max-prepared-statements-per-user", "7", "--max-prepared-bytes-per-user", "9999")
	if l.ReturnMemoryBytes != -1 || l.MaxStatementBytes != 4096 || l.StallTimeout.Seconds() != 5 ||
		l.MaxPreparedStatements != 50 || l.MaxPreparedStatementsPerUser != 7 || l.MaxPreparedBytesPerUser != 9999 {
		t.Fatalf("parsed: %+v", l)
	}
}
