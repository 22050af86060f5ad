package main

import (
	"flag"
	"net"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
)

// TestDocsPortsAndFlags reads docs/*.md and README.md: every Flight SQL URI
// uses the port of serve's --addr default, every local web UI address the
// port of --http's default (unless the line sets --http), and every flag
// written after `arrowstream run|serve|query|sql` is a flag of that command.
// Docs that drift from the flag set fail here.
func TestDocsPortsAndFlags(t *testing.T) {
	files, _ := filepath.Glob(filepath.Join(docsDir, "*.md"))
	files = append(files, filepath.Join(docsDir, "..", "README.md"))
	runFlags, _, _ := newRunFlags()
	serveFlags, _, _ := newServeFlags()
	queryFlags, _ := newQueryFlags()
	shellFlags, _ := newShellFlags()
	sets := map[string]*flag.FlagSet{"run": runFlags, "serve": serveFlags, "query": queryFlags, "sql": shellFlags}
	defaultPort := func(fs *flag.FlagSet, name string) string {
		_, port, err := net.SplitHostPort(fs.Lookup(name).DefValue)
		if err != nil {
			t.Fatalf("--%s default: %v", name, err)
		}
		return port
	}
	grpcPort, httpPort := defaultPort(serveFlags, "addr"), defaultPort(serveFlags, "http")
	grpcURI := regexp.MustCompile(`grpc(?:\+tls|\+tcp)?://([A-Za-z0-9.-]+):([0-9]+)`)
	httpURI := regexp.MustCompile(`https?://(?:127\.0\.0\.1|localhost):([0-9]+)`)
	command := regexp.MustCompile(`arrowstream (run|serve|query|sql)((?: +[^ ` + "`" + `|;&>]+)*)`)
	longFlag := regexp.MustCompile(`(?:^| )--([a-z][a-z-]*)`)
	checked := 0
	for _, file := range files {
		data, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		name := filepath.Base(file)
		for i, line := range strings.Split(string(data), "\n") {
			where := name + ":" + strconv.Itoa(i+1)
			for _, m := range grpcURI.FindAllStringSubmatch(line, -1) {
				checked++
				if m[2] != grpcPort && !strings.Contains(line, "--addr") {
					t.Errorf("%s: %s uses port %s; serve listens on %s by default (--addr)", where, m[0], m[2], grpcPort)
				}
			}
			for _, m := range httpURI.FindAllStringSubmatch(line, -1) {
				checked++
				if m[1] != httpPort && !strings.Contains(line, "--http") && !strings.Contains(line, "ARROWSTREAM_HTTP") {
					t.Errorf("%s: %s uses port %s; the web UI listens on %s by default (--http)", where, m[0], m[1], httpPort)
				}
			}
			for _, m := range command.FindAllStringSubmatch(line, -1) {
				for _, f := range longFlag.FindAllStringSubmatch(m[2], -1) {
					checked++
					if f[1] != "help" && sets[m[1]].Lookup(f[1]) == nil {
						t.Errorf("%s: `arrowstream %s --%s`: %s has no such flag", where, m[1], f[1], m[1])
					}
				}
			}
		}
	}
	if checked == 0 {
		t.Fatal("no port or flag found in the docs: the patterns are wrong")
	}
}
