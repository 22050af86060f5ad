package main

import (
	"context"
	"net"
	"regexp"
	"strings"
	"testing"
)

// TestPortClashNamesFlagAndFreePort holds a port, starts serve on it (as
// the web UI, then as Flight SQL) and checks the error names the flag and
// a port that is free.
func TestPortClashNamesFlagAndFreePort(t *testing.T) {
	held, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer held.Close()
	addr := held.Addr().String()
	for _, tc := range []struct {
		flag string
		args []string
	}{
		{"http", []string{"--http", addr, "--addr", ""}},
		{"addr", []string{"--http", "", "--addr", addr}},
	} {
		env, _, _ := testEnv(nil)
		args := append([]string{"--checkpoint", t.TempDir(), "--status", "off"}, tc.args...)
		err := serveCmd(context.Background(), args, env)
		if err == nil {
			t.Fatalf("serve %v started on a port in use", args)
		}
		msg := err.Error()
		if !strings.Contains(msg, "address already in use") || !strings.Contains(msg, "--"+tc.flag+" "+addr) {
			t.Errorf("serve %v: error %q does not name --%s %s", args, msg, tc.flag, addr)
		}
		m := regexp.MustCompile(`pass --` + tc.flag + ` (127\.0\.0\.1:\d+) \(free now\)`).FindStringSubmatch(msg)
		if m == nil {
			t.Fatalf("serve %v: error %q suggests no free port", args, msg)
		}
		if m[1] == addr {
			t.Errorf("suggested the port in use %s", m[1])
		}
		ln, err := net.Listen("tcp", m[1])
		if err != nil {
			t.Errorf("suggested port %s is not free: %v", m[1], err)
		} else {
			ln.Close()
		}
	}
}
