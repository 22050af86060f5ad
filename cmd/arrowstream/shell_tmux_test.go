package main

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/arrowstream/arrowstream/internal/testutil"
)

// tmuxSession drives the built binary in a real terminal: a tmux server
// of its own (private socket), keys sent, the pane captured.
type tmuxSession struct {
	t      *testing.T
	socket string
}

func (s *tmuxSession) tmux(args ...string) string {
	s.t.Helper()
	out, err := s.run(args...)
	if err != nil {
		s.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
	}
	return out
}

func (s *tmuxSession) run(args ...string) (string, error) {
	cmd := exec.Command("tmux", append([]string{"-L", s.socket}, args...)...)
	cmd.Env = append(os.Environ(), "TERM=xterm-256color")
	out, err := cmd.CombinedOutput()
	return string(out), err
}

// newSession starts the tmux server and its session. Starting the server
// once failed in CI with "server exited unexpectedly" (and passed when
// run again): that is tmux's own start, not the shell, so it is tried
// again a few times before the test fails.
func (s *tmuxSession) newSession(args ...string) {
	s.t.Helper()
	args = append([]string{"new-session"}, args...)
	for attempt := 1; ; attempt++ {
		out, err := s.run(args...)
		if err == nil {
			return
		}
		if attempt == 3 || !strings.Contains(out, "server exited unexpectedly") {
			s.t.Fatalf("tmux %s: %v\n%s", strings.Join(args, " "), err, out)
		}
		s.t.Logf("tmux failed to start (attempt %d): %v: %s", attempt, err, out)
		exec.Command("tmux", "-L", s.socket, "kill-server").Run()
		time.Sleep(time.Second)
	}
}

// typeLine types text (literally) and Enter. tmux reads a trailing ";"
// of an argument as its command separator: it is escaped.
func (s *tmuxSession) typeLine(text string) {
	s.t.Helper()
	s.typeText(text)
	s.tmux("send-keys", "-t", "sh", "Enter")
}

func (s *tmuxSession) typeText(text string) {
	s.t.Helper()
	if strings.HasSuffix(text, ";") {
		text = strings.TrimSuffix(text, ";") + `\;`
	}
	s.tmux("send-keys", "-t", "sh", "-l", text)
}

func (s *tmuxSession) keys(keys ...string) {
	s.t.Helper()
	s.tmux(append([]string{"send-keys", "-t", "sh"}, keys...)...)
}

func (s *tmuxSession) pane() string {
	s.t.Helper()
	return s.tmux("capture-pane", "-p", "-t", "sh", "-S", "-200")
}

// waitPane waits until the pane satisfies cond (a bound for a hang, not
// for a slow machine). capture-pane drops the spaces that end a line.
func (s *tmuxSession) waitPane(what string, cond func(pane string) bool) string {
	s.t.Helper()
	deadline := time.Now().Add(testutil.Scaled(2 * time.Minute))
	for {
		p := s.pane()
		if cond(p) {
			return p
		}
		if time.Now().After(deadline) {
			s.t.Fatalf("timed out waiting for %s; the pane:\n%s", what, p)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

func (s *tmuxSession) waitFor(text string) string {
	s.t.Helper()
	return s.waitPane(fmt.Sprintf("%q", text), func(p string) bool { return strings.Contains(p, text) })
}

// lastLine is the pane's last non-empty line.
func lastLine(pane string) string {
	lines := strings.Split(strings.TrimRight(pane, "\n "), "\n")
	return strings.TrimRight(lines[len(lines)-1], " ")
}

var liveEpoch = regexp.MustCompile(`epoch (\d+), committed`)

// maxEpoch is the highest epoch a live view shows in the pane.
func maxEpoch(pane string) int64 {
	best := int64(-1)
	for _, m := range liveEpoch.FindAllStringSubmatch(pane, -1) {
		if n, _ := strconv.ParseInt(m[1], 10, 64); n > best {
			best = n
		}
	}
	return best
}

// TestShellInTmux is the shell under a real terminal: a multi-line
// statement, completion, .tables, a live SUBSCRIBE on which new epochs
// appear, Ctrl-C back to the prompt, and the history across sessions.
func TestShellInTmux(t *testing.T) {
	if _, err := exec.LookPath("tmux"); err != nil {
		t.Skip("tmux is not installed (apt-get install tmux): the terminal test of the shell is skipped")
	}
	bin := buildBinary(t)
	dir := t.TempDir()
	hist := filepath.Join(dir, "history")
	s := &tmuxSession{t: t, socket: fmt.Sprintf("arrowstream-test-%d", os.Getpid())}
	start := func() {
		s.newSession("-d", "-s", "sh", "-x", "120", "-y", "40",
			bin+" sql --checkpoint "+filepath.Join(dir, "ck")+" --history "+hist+" --pager ''; echo SHELL-EXITED; sleep 600")
	}
	start()
	t.Cleanup(func() { exec.Command("tmux", "-L", s.socket, "kill-server").Run() })
	s.waitFor("arrowstream>")

	s.typeLine("CREATE TABLE ticks USING rate OPTIONS (rowsPerSecond '20');")
	s.waitFor("OK")
	// A statement over three lines: the continuation prompt, then one OK.
	s.typeLine("CREATE STREAMING TABLE tick_counts")
	s.typeLine("  TBLPROPERTIES ('outputMode' = 'complete', 'trigger' = '500 milliseconds')")
	s.waitFor("...>")
	s.typeLine("AS SELECT value % 3 AS digit, count(*) AS n FROM STREAM ticks GROUP BY value % 3;")
	s.waitPane("the second OK", func(p string) bool { return strings.Count(p, "\nOK\n") >= 2 })

	s.typeLine(".tables")
	s.waitFor("| tick_counts ")

	// Completion: a table name from its prefix, a column after "table.".
	s.typeText("SELECT tick_counts.dig")
	s.keys("Tab")
	s.waitFor("SELECT tick_counts.digit")
	s.typeText("FROM tick_c")
	s.keys("Tab")
	s.waitFor("FROM tick_counts")
	s.typeLine("ORDER BY 1 LIMIT 1;")
	// No row yet when the first epoch has not committed (a loaded machine).
	s.waitPane("the result", func(p string) bool { return strings.Contains(p, "(1 row)") || strings.Contains(p, "(0 rows)") })

	// A live view: new epochs appear in place until Ctrl-C.
	s.typeLine("SUBSCRIBE tick_counts;")
	p := s.waitPane("a first epoch", func(p string) bool { return maxEpoch(p) >= 0 })
	first := maxEpoch(p)
	s.waitPane("later epochs", func(p string) bool { return maxEpoch(p) >= first+3 })
	if n := strings.Count(s.pane(), "Following complete mode"); n != 1 {
		t.Fatalf("the live view printed its header %d times", n)
	}
	s.keys("C-c")
	s.waitPane("the prompt after Ctrl-C", func(p string) bool { return lastLine(p) == "arrowstream>" })
	if strings.Contains(s.pane(), "SHELL-EXITED") {
		t.Fatal("Ctrl-C ended the shell")
	}

	// Ctrl-C at the prompt drops a half-typed statement.
	s.typeLine("SELECT 'dropped'")
	s.waitFor("...>")
	s.keys("C-c")
	s.typeLine("SELECT 'kept' AS word;")
	s.waitFor("| kept ")
	if strings.Contains(s.pane(), "| dropped") {
		t.Fatal("the interrupted statement ran")
	}

	// History across sessions: leave with Ctrl-D, start again, Up.
	s.keys("C-d")
	s.waitFor("SHELL-EXITED")
	s.tmux("kill-session", "-t", "sh")
	b, err := os.ReadFile(hist)
	if err != nil {
		t.Fatal(err)
	}
	if !regexp.MustCompile(`(?m)^CREATE STREAMING TABLE tick_counts .*TBLPROPERTIES .* GROUP BY value % 3;$`).Match(b) {
		t.Fatalf("the three-line statement is not one history line:\n%s", b)
	}
	start()
	s.waitFor("arrowstream>")
	s.keys("Up")
	s.waitFor("arrowstream> SELECT 'kept' AS word;")
	s.keys("C-u", "C-d")
	s.waitFor("SHELL-EXITED")
}
