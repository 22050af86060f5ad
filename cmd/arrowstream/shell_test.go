package main

import (
	"bytes"
	"context"
	"io"
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// runShellScript runs `arrowstream sql` on an embedded engine with script
// as its (non-terminal) stdin and returns stdout and stderr.
func runShellScript(t *testing.T, script string, args ...string) (string, string) {
	t.Helper()
	out, errOut, err := shellScriptStatus(t, script, args...)
	if err != nil {
		t.Fatalf("shell: %v\nstdout:\n%s\nstderr:\n%s", err, out, errOut)
	}
	return out, errOut
}

// shellScriptStatus is runShellScript returning shellCmd's error (the
// exit status) instead of failing on it.
func shellScriptStatus(t *testing.T, script string, args ...string) (string, string, error) {
	t.Helper()
	dir := t.TempDir()
	in := filepath.Join(dir, "stdin.sql")
	if err := os.WriteFile(in, []byte(script), 0o644); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(in)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var out, errOut bytes.Buffer
	env := cliEnv{stdout: &out, stderr: &errOut, getenv: func(string) string { return "" }}
	all := append([]string{"--checkpoint", filepath.Join(dir, "ck"), "--history", "off"}, args...)
	err = shellCmd(context.Background(), all, env, f)
	return out.String(), errOut.String(), err
}

// TestShellScript runs statements spread over lines, dot and backslash
// commands, .read, modes and errors through the shell on an embedded
// engine: a failed statement is reported without ending the shell.
func TestShellScript(t *testing.T) {
	inc := filepath.Join(t.TempDir(), "inc.sql")
	if err := os.WriteFile(inc, []byte("SELECT 'from the file'\n  AS src;\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	script := strings.Join([]string{
		"SELECT 1 AS a,",
		"       'x;y' AS b -- a comment; with a semicolon",
		";",
		"CREATE TABLE nums USING rate OPTIONS (rowsPerSecond '1');",
		".tables",
		`\d nums`,
		".mode csv",
		"SELECT 2 AS two, 3 AS three;",
		".mode line",
		"SELECT 4 AS four, 'long' AS name;",
		".mode json",
		".read " + inc,
		".mode table",
		"SELECT * FROM missing_table;",
		".bogus",
		".mode xml",
		".timer on",
		"SELECT 5 AS five",
	}, "\n")
	out, errOut, err := shellScriptStatus(t, script)
	if u, ok := err.(errUsage); !ok || u.code != 1 {
		t.Errorf("a script with failed statements ended with %v, want exit status 1", err)
	}
	if !strings.Contains(errOut, "3 of the script's statements or commands failed") {
		t.Errorf("stderr does not count the failures:\n%s", errOut)
	}
	for _, want := range []string{
		"| a | b   |",
		"| 1 | x;y |",
		"OK\n",
		"| nums ",
		"| value     | bigint ",
		"two,three\n2,3\n",
		"four = 4\nname = long\n",
		`{"src":"from the file"}`,
		"| five |",
		"Time: ",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("stdout lacks %q:\n%s", want, out)
		}
	}
	for _, want := range []string{
		"Error: ",
		"missing_table",
		"Error: unknown command .bogus: .help lists the commands",
		"Error: .mode xml: want one of table, csv, json, line",
	} {
		if !strings.Contains(errOut, want) {
			t.Errorf("stderr lacks %q:\n%s", want, errOut)
		}
	}
	if strings.Contains(errOut, "rpc error") {
		t.Errorf("a gRPC prefix reached the user:\n%s", errOut)
	}
}

// TestShellScriptOutputIsOnlyResults: the README's `arrowstream sql --mode
// csv < report.sql` gives a CSV file: no banner before the results, and
// exit status 0 when every statement ran.
func TestShellScriptOutputIsOnlyResults(t *testing.T) {
	out, errOut, err := shellScriptStatus(t, "SELECT 1 AS n, 'a' AS s;\nSELECT 2 AS n, 'b' AS s;\n", "--mode", "csv")
	if err != nil {
		t.Fatalf("exit status %v for a script that ran, stderr:\n%s", err, errOut)
	}
	if want := "n,s\n1,a\nn,s\n2,b\n"; out != want {
		t.Errorf("stdout of the csv script = %q, want only the results %q", out, want)
	}
}

// TestShellHistoryEntry: a statement typed over several lines is one
// history line; a line without a semicolon adds nothing yet.
func TestShellHistoryEntry(t *testing.T) {
	sh := &shell{out: io.Discard, errOut: io.Discard, comp: newCompleter()}
	if got := sh.line(context.Background(), "SELECT"); got != "" || sh.prompt() != promptMore {
		t.Fatalf("first line: entry %q, prompt %q", got, sh.prompt())
	}
	sh.reset()
	if sh.prompt() != promptFirst {
		t.Fatal("reset kept the statement")
	}
	if got := sh.line(context.Background(), ".mode csv"); got != ".mode csv" || sh.mode != formatCSV {
		t.Fatalf(".mode csv: entry %q, mode %q", got, sh.mode)
	}
}

func TestShellDescribeArg(t *testing.T) {
	for in, want := range map[string]string{
		"t":              "DESCRIBE TABLE t",
		"db.t":           "DESCRIBE TABLE db.t",
		"`odd name`":     "DESCRIBE TABLE `odd name`",
		"`a.b`.c":        "DESCRIBE TABLE `a.b`.c",
		"`x``y`; DROP t": "DESCRIBE TABLE `x``y; DROP t`",
	} {
		if got, err := describeArg(in); err != nil || got != want {
			t.Errorf(".schema %s: %q (%v), want %q", in, got, err, want)
		}
	}
	if _, err := describeArg("a..b"); err == nil {
		t.Error(".schema a..b: no error")
	}
}

// TestShellQuit: .quit ends the shell before later lines.
func TestShellQuit(t *testing.T) {
	out, _ := runShellScript(t, "SELECT 1 AS one;\n.quit\nSELECT 2 AS two;\n")
	if !strings.Contains(out, "| one |") || strings.Contains(out, "two") {
		t.Fatalf("output:\n%s", out)
	}
}

func TestShellClassify(t *testing.T) {
	for _, c := range []struct {
		stmt string
		kind int
	}{
		{"SELECT * FROM t", stmtQuery},
		{"SELECT a FROM STREAM s WHERE a > 1", stmtStreamingQuery},
		{"WITH x AS (SELECT * FROM STREAM s) SELECT * FROM x", stmtStreamingQuery},
		{"SUBSCRIBE t SINCE EPOCH 3", stmtSubscribe},
		{"CREATE STREAMING TABLE c AS SELECT * FROM STREAM s", stmtCommand},
		{"SHOW TABLES", stmtQuery},
		{"DESCRIBE HISTORY t", stmtQuery},
		{"DROP TABLE t", stmtCommand},
		{"SELEC oops", stmtCommand},
		{"SELECT (", stmtQuery},
		{"SET spark.sql.shuffle.partitions", stmtQuery},
		{"SET spark.sql.shuffle.partitions = 4", stmtCommand},
	} {
		if got, _ := classify(c.stmt); got != c.kind {
			t.Errorf("%q: kind %d, want %d", c.stmt, got, c.kind)
		}
	}
}

func TestShellCompleter(t *testing.T) {
	c := newCompleter()
	c.tables = []string{"page_views", "pages", "system.query_progress"}
	c.columns = map[string][]string{"page_views": {"window_start", "page", "views"}, "pages": {"page", "title"}}
	complete := func(line string) []string {
		got, n := c.Do([]rune(line), len([]rune(line)))
		var out []string
		for _, g := range got {
			out = append(out, line[len(line)-n:]+string(g))
		}
		return out
	}
	for _, tc := range []struct {
		line string
		want string
	}{
		{"SELECT * FROM page_v", "page_views "},
		{"SELECT * FROM pag", "page_views |pages |page "},
		{"SELECT page_views.vi", "views "},
		{"SELECT p.x", ""},
		{"sel", "select "},
		{"SEL", "SELECT "},
		{"SELECT * FROM system.q", "system.query_progress "},
		{".ta", ".tables "},
		{".m", ".mode "},
		{"SELECT ", ""},
		{"subscribe page_views si", "since "},
	} {
		if got := strings.Join(complete(tc.line), "|"); got != tc.want {
			t.Errorf("%q completes to [%s], want [%s]", tc.line, got, tc.want)
		}
	}
}

// liveRecord builds a subscription record: (k, n) rows of one epoch.
func liveRecord(t *testing.T, epoch int64, rows ...[2]int64) arrow.Record {
	t.Helper()
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "k", Type: vector.Int64}, {Name: "n", Type: vector.Int64},
		{Name: "_epoch", Type: vector.Int64}, {Name: "_commit_timestamp", Type: vector.Timestamp},
	}, nil)
	b := array.NewRecordBuilder(memory.DefaultAllocator, schema)
	defer b.Release()
	for _, r := range rows {
		b.Field(0).(*array.Int64Builder).Append(r[0])
		b.Field(1).(*array.Int64Builder).Append(r[1])
		b.Field(2).(*array.Int64Builder).Append(epoch)
		b.Field(3).(*array.TimestampBuilder).Append(arrow.Timestamp(1_700_000_000_000_000 + epoch))
	}
	return b.NewRecord()
}

// TestShellLiveView: complete tables are redrawn in place (cursor up and
// clear over the previous drawing), update tables merge by key, append
// tables scroll.
func TestShellLiveView(t *testing.T) {
	var out bytes.Buffer
	sh := &shell{out: &out, interactive: true, height: func() int { return 40 }}
	v := &liveView{s: sh, mode: "complete", names: []string{"k", "n"}, epoch: -1, index: map[string]int{}}
	v.add(liveRecord(t, 1, [2]int64{1, 10}, [2]int64{2, 20}))
	first := out.String()
	if strings.Contains(first, "\x1b[") || !strings.Contains(first, "epoch 1,") || !strings.Contains(first, "2 | 20") {
		t.Fatalf("first drawing:\n%q", first)
	}
	out.Reset()
	v.add(liveRecord(t, 2, [2]int64{3, 30}))
	lines := strings.Count(first, "\n")
	if want := "\x1b[" + strconv.Itoa(lines) + "A\x1b[J"; !strings.HasPrefix(out.String(), want) {
		t.Fatalf("redraw starts %q, want %q (up over %d lines)", out.String()[:min(12, out.Len())], want, lines)
	}
	if strings.Contains(out.String(), "2 | 20") || !strings.Contains(out.String(), "3 | 30") {
		t.Fatalf("complete mode kept an old row:\n%s", out.String())
	}
	out.Reset()
	v.add(liveRecord(t, 3)) // an epoch without rows: the result is empty
	if !strings.Contains(out.String(), "0 rows") {
		t.Fatalf("empty epoch:\n%s", out.String())
	}

	out.Reset()
	u := &liveView{s: sh, mode: "update", keys: []int{0}, names: []string{"k", "n"}, epoch: -1, index: map[string]int{}}
	u.add(liveRecord(t, 1, [2]int64{1, 10}, [2]int64{2, 20}))
	u.add(liveRecord(t, 2, [2]int64{2, 21}, [2]int64{3, 30}))
	last := out.String()[strings.LastIndex(out.String(), "\x1b[J"):]
	for _, want := range []string{"1 | 10", "2 | 21", "3 | 30", "3 rows"} {
		if !strings.Contains(last, want) {
			t.Fatalf("update view lacks %q:\n%s", want, last)
		}
	}

	out.Reset()
	sh.interactive = false
	a := &liveView{s: sh, mode: "append", names: []string{"k", "n"}, epoch: -1, index: map[string]int{}}
	a.add(liveRecord(t, 1, [2]int64{1, 10}))
	a.add(liveRecord(t, 2, [2]int64{2, 20}))
	if got := regexp.MustCompile(`-- epoch \d+`).FindAllString(out.String(), -1); strings.Join(got, ",") != "-- epoch 1,-- epoch 2" {
		t.Fatalf("append view:\n%s", out.String())
	}
}
