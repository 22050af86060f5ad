package main

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"os/exec"
	"strings"
	"time"

	"github.com/apache/arrow/go/v17/arrow/flight/flightsql"
	"google.golang.org/grpc/metadata"

	"github.com/arrowstream/arrowstream/sql"
)

// shell is the interpreter behind `arrowstream sql`: it runs statements
// and dot commands against a Flight SQL server (the process's own
// embedded one, or --uri) and prints the results. It knows nothing of
// the terminal: the line editor feeds it lines (shell.go), so that the
// same code runs scripts, piped input and tests.
type shell struct {
	client *flightsql.Client
	auth   metadata.MD // the bearer token of --user, sent with every call
	target string
	out    io.Writer
	errOut io.Writer

	mode        string // table, csv, json or line
	timer       bool
	pager       string // shell command of the pager ("" none)
	interactive bool   // out is a terminal: live views redraw in place, long results go to the pager
	height      func() int
	maxRows     int
	comp        *completer

	buf   strings.Builder // the statement being typed
	depth int             // .read nesting
	tmpN  int             // ad-hoc streaming queries started
	quit  bool

	banner string // the greeting, printed when stdin is a terminal
	failed int    // errors reported (the exit status of a script)
}

// Prompts of the line editor.
const (
	promptFirst = "arrowstream> "
	promptMore  = "        ...> "
)

// prompt is the prompt for the next line.
func (s *shell) prompt() string {
	if strings.TrimSpace(s.buf.String()) == "" {
		return promptFirst
	}
	return promptMore
}

// pending reports whether a statement is partly typed.
func (s *shell) pending() bool { return strings.TrimSpace(s.buf.String()) != "" }

// reset drops the partly typed statement (Ctrl-C at the prompt).
func (s *shell) reset() { s.buf.Reset() }

// line feeds one input line. A dot or backslash command is run at once
// when no statement is being typed; SQL accumulates until a semicolon
// ends it outside quotes and comments, and every complete statement runs
// in order. It returns the complete entry for the history when a
// statement or command ran (""), and reports errors on errOut: a failed
// statement does not end the shell.
func (s *shell) line(ctx context.Context, text string) (history string) {
	if !s.pending() {
		if t := strings.TrimSpace(text); strings.HasPrefix(t, ".") || strings.HasPrefix(t, `\`) {
			s.report(s.command(ctx, t))
			return t
		}
	}
	if s.pending() {
		s.buf.WriteByte('\n')
	}
	s.buf.WriteString(text)
	src := s.buf.String()
	spans := splitAtSemicolons(src)
	if len(spans) < 2 {
		return "" // no semicolon yet
	}
	last := spans[len(spans)-1]
	complete := src[:last.start]
	rest := src[last.start:]
	s.buf.Reset()
	if last.code {
		s.buf.WriteString(strings.TrimLeft(rest, " \t\r\n"))
	}
	for _, sp := range spans[:len(spans)-1] {
		if !sp.code {
			continue
		}
		if err := s.statement(ctx, strings.TrimSpace(src[sp.start:sp.end])); err != nil {
			s.report(err)
			if ctx.Err() != nil {
				break
			}
		}
	}
	// One history line per statement: the history file holds lines.
	return strings.ReplaceAll(strings.TrimSpace(complete), "\n", " ")
}

// flush runs what is left in the buffer at the end of a script (a last
// statement without a semicolon).
func (s *shell) flush(ctx context.Context) {
	if s.pending() {
		s.line(ctx, ";")
	}
}

// report prints an error (a server's without gRPC wrapping).
func (s *shell) report(err error) {
	switch {
	case err == nil:
	case errors.Is(err, context.Canceled):
		s.failed++
		fmt.Fprintln(s.errOut, "Cancelled.")
	default:
		s.failed++
		fmt.Fprintf(s.errOut, "Error: %v\n", clientError(err, s.target))
	}
}

// statement runs one SQL statement.
func (s *shell) statement(ctx context.Context, stmt string) error {
	start := time.Now()
	defer func() {
		if s.timer {
			fmt.Fprintf(s.out, "Time: %.3f ms\n", float64(time.Since(start).Microseconds())/1000)
		}
	}()
	ctx = s.withAuth(ctx)
	switch kind, parsed := classify(stmt); kind {
	case stmtSubscribe:
		return s.subscribe(ctx, stmt)
	case stmtStreamingQuery:
		return s.adhoc(ctx, parsed)
	case stmtCommand:
		n, err := s.client.ExecuteUpdate(ctx, stmt)
		if err != nil {
			return err
		}
		if n > 0 {
			fmt.Fprintf(s.out, "OK, %d rows affected\n", n)
		} else {
			fmt.Fprintln(s.out, "OK")
		}
		s.comp.refresh(ctx, s.client)
		return nil
	}
	return s.query(ctx, stmt)
}

// Kinds of statements, as the shell runs them.
const (
	stmtQuery = iota
	stmtCommand
	stmtSubscribe
	stmtStreamingQuery
)

// classify tells queries, commands, SUBSCRIBE and queries of streams
// apart. A statement the parser refuses is sent as a query, so that the
// server's error (with its position) is what the user sees.
func classify(stmt string) (int, sql.Statement) {
	st, err := sql.Parse(stmt)
	if err != nil {
		if returnsRows(stmt) {
			return stmtQuery, nil
		}
		return stmtCommand, nil
	}
	switch st := st.(type) {
	case *sql.Subscribe:
		return stmtSubscribe, st
	case *sql.Query:
		streaming := false
		sql.Inspect(st, func(n sql.Node) bool {
			if r, ok := n.(*sql.TableRef); ok && r.Stream {
				streaming = true
			}
			return !streaming
		})
		if streaming {
			return stmtStreamingQuery, st
		}
		return stmtQuery, st
	case *sql.ShowTables, *sql.ShowFunctions, *sql.Describe, *sql.DescribeHistory, *sql.DescribeFunction, *sql.DescribeQuery, *sql.ShowColumns, *sql.Explain:
		return stmtQuery, st
	case *sql.Set:
		if !st.HasValue {
			return stmtQuery, st // SET key answers its value
		}
	}
	return stmtCommand, st
}

// withAuth adds the bearer token of the connection to ctx.
func (s *shell) withAuth(ctx context.Context) context.Context {
	if s.auth == nil {
		return ctx
	}
	return metadata.NewOutgoingContext(ctx, s.auth)
}

// query runs a statement that returns rows and prints them.
func (s *shell) query(ctx context.Context, stmt string) error {
	info, err := s.client.Execute(ctx, stmt)
	if err != nil {
		return err
	}
	if len(info.Endpoint) == 0 {
		return errors.New("the server returned no endpoint to read the result from")
	}
	src, err := openEndpoints(ctx, s.client, info.Endpoint)
	if err != nil {
		return err
	}
	defer src.Close()
	return s.print(ctx, src)
}

// print writes a result in the current mode; in table mode a result
// taller than the terminal goes through the pager.
func (s *shell) print(ctx context.Context, src recordStream) error {
	if s.mode == formatLine {
		return writeLineMode(ctx, s.out, src)
	}
	if s.mode != formatTable || !s.interactive || s.pager == "" {
		return writeResult(ctx, s.out, s.mode, src, s.maxRows)
	}
	var b bytes.Buffer
	if err := writeResult(ctx, &b, s.mode, src, s.maxRows); err != nil {
		return err
	}
	if bytes.Count(b.Bytes(), []byte("\n")) < s.height()-1 {
		_, err := s.out.Write(b.Bytes())
		return err
	}
	return runPager(ctx, s.pager, &b, s.out)
}

// runPager shows text through the pager command (run by sh, so that
// PAGER may carry arguments). A pager that fails to start is bypassed.
func runPager(ctx context.Context, pager string, text *bytes.Buffer, out io.Writer) error {
	cmd := exec.CommandContext(ctx, "sh", "-c", pager)
	cmd.Stdin = text
	cmd.Stdout = out
	cmd.Stderr = os.Stderr
	if err := cmd.Run(); err != nil && ctx.Err() == nil {
		var exitErr *exec.ExitError
		if errors.As(err, &exitErr) {
			return nil // the user quit the pager
		}
		_, werr := io.Copy(out, text)
		return errors.Join(fmt.Errorf("pager %q: %w (printed without it; .pager off turns it off)", pager, err), werr)
	}
	return nil
}

// subscribe follows SUBSCRIBE until the stream ends or ctx is cancelled
// (Ctrl-C), which is not an error.
func (s *shell) subscribe(ctx context.Context, stmt string) error {
	info, err := s.client.Execute(ctx, stmt)
	if err != nil {
		return err
	}
	rdr, err := s.client.DoGet(ctx, info.Endpoint[0].Ticket)
	if err != nil {
		return err
	}
	defer rdr.Release()
	return s.follow(ctx, rdr)
}

// adhoc runs a query of streams as a temporary streaming table: created
// (append mode when the query allows it, else update, else complete),
// followed live, dropped when the view ends.
func (s *shell) adhoc(ctx context.Context, st sql.Statement) error {
	q, ok := st.(*sql.Query)
	if !ok {
		return fmt.Errorf("not a query: %s", sql.Format(st))
	}
	s.tmpN++
	name := fmt.Sprintf("_shell_%d_%d", os.Getpid(), s.tmpN)
	var firstErr error
	created := ""
	for _, mode := range []string{"append", "update", "complete"} {
		ddl := sql.Format(&sql.CreateStreamingTable{
			Name:       []sql.Ident{{Name: name}},
			Properties: []*sql.Property{{Key: "outputMode", Value: mode}, {Key: "persist", Value: "false"}},
			Query:      q,
		})
		if _, err := s.client.ExecuteUpdate(ctx, ddl); err != nil {
			if firstErr == nil {
				firstErr = err
			}
			if ctx.Err() != nil {
				return err
			}
			continue
		}
		created = mode
		break
	}
	if created == "" {
		return firstErr
	}
	fmt.Fprintf(s.out, "Running as %s, a temporary streaming query (%s mode); Ctrl-C stops and drops it.\n", name, created)
	defer func() {
		// ctx is cancelled by now (Ctrl-C): the drop needs its own.
		dctx, cancel := context.WithTimeout(s.withAuth(context.Background()), 30*time.Second)
		defer cancel()
		drop := sql.Format(&sql.DropTable{Name: []sql.Ident{{Name: name}}, IfExists: true})
		if _, err := s.client.ExecuteUpdate(dctx, drop); err != nil {
			fmt.Fprintf(s.errOut, "Error: dropping %s: %v\n", name, clientError(err, s.target))
		}
	}()
	since := int64(-1)
	return s.subscribe(ctx, sql.Format(&sql.Subscribe{Name: []sql.Ident{{Name: name}}, Since: &since}))
}

// describeArg is the DESCRIBE statement of .schema's argument: a table
// name as typed in SQL (dotted, `backquoted` parts).
func describeArg(arg string) (string, error) {
	var parts []sql.Ident
	for _, p := range splitName(arg) {
		if p == "" {
			return "", fmt.Errorf(".schema %s: not a table name", arg)
		}
		parts = append(parts, sql.Ident{Name: p})
	}
	return sql.Format(&sql.Describe{Name: parts}), nil
}

// splitName splits a dotted name outside backquotes and unquotes each
// part (a doubled backquote stands for one).
func splitName(name string) []string {
	var parts []string
	var cur strings.Builder
	quoted := false
	for i := 0; i < len(name); i++ {
		c := name[i]
		switch {
		case c == '`' && quoted && i+1 < len(name) && name[i+1] == '`':
			cur.WriteByte('`')
			i++
		case c == '`':
			quoted = !quoted
		case c == '.' && !quoted:
			parts = append(parts, cur.String())
			cur.Reset()
		default:
			cur.WriteByte(c)
		}
	}
	return append(parts, cur.String())
}

// command runs a dot (or backslash) command.
func (s *shell) command(ctx context.Context, line string) error {
	fields := strings.Fields(line)
	name, args := fields[0], fields[1:]
	arg := strings.TrimSpace(strings.TrimPrefix(line, name))
	switch name {
	case ".help", `\?`, `\h`:
		fmt.Fprint(s.out, shellHelp)
		return nil
	case ".quit", ".exit", `\q`:
		s.quit = true
		return nil
	case ".tables", `\dt`:
		return s.statement(ctx, "SHOW TABLES")
	case ".schema", `\d`:
		if len(args) == 0 {
			return s.statement(ctx, "SHOW TABLES")
		}
		stmt, err := describeArg(arg)
		if err != nil {
			return err
		}
		return s.statement(ctx, stmt)
	case ".mode":
		if len(args) != 1 {
			return fmt.Errorf(".mode %s: want one of table, csv, json, line (now %s)", arg, s.mode)
		}
		switch args[0] {
		case formatTable, formatCSV, formatJSON, formatLine:
			s.mode = args[0]
			return nil
		}
		return fmt.Errorf(".mode %s: want one of table, csv, json, line", args[0])
	case ".timer", `\timing`:
		on, err := onOff(name, args, !s.timer)
		s.timer = on
		return err
	case ".pager":
		switch {
		case len(args) == 0:
			fmt.Fprintf(s.out, "pager: %q\n", s.pager)
		case arg == "off":
			s.pager = ""
		case arg == "on":
			s.pager = defaultPager()
		default:
			s.pager = arg
		}
		return nil
	case ".read", `\i`:
		if arg == "" {
			return fmt.Errorf("%s: want a file name", name)
		}
		return s.read(ctx, arg)
	}
	return fmt.Errorf("unknown command %s: .help lists the commands", name)
}

// onOff reads the on/off argument of a toggle (none: toggle).
func onOff(name string, args []string, toggled bool) (bool, error) {
	if len(args) == 0 {
		return toggled, nil
	}
	switch strings.ToLower(args[0]) {
	case "on":
		return true, nil
	case "off":
		return false, nil
	}
	return !toggled, fmt.Errorf("%s %s: want on or off", name, args[0])
}

// read runs the statements and commands of a file, line by line.
func (s *shell) read(ctx context.Context, name string) error {
	if s.depth >= 16 {
		return fmt.Errorf(".read %s: files read each other more than 16 levels deep", name)
	}
	b, err := os.ReadFile(name)
	if err != nil {
		return fmt.Errorf(".read: %w", err)
	}
	saved := s.buf.String()
	s.buf.Reset()
	s.depth++
	defer func() {
		s.depth--
		s.buf.Reset()
		s.buf.WriteString(saved)
	}()
	for _, l := range strings.Split(string(b), "\n") {
		if ctx.Err() != nil || s.quit {
			return ctx.Err()
		}
		s.line(ctx, l)
	}
	s.flush(ctx)
	return nil
}

// defaultPager is $PAGER, else less when installed.
func defaultPager() string {
	if p := os.Getenv("PAGER"); p != "" {
		return p
	}
	if _, err := exec.LookPath("less"); err == nil {
		return "less -FRSX"
	}
	return ""
}

const shellHelp = `Statements end with a semicolon and may span lines. Commands:
  .tables              list the tables (\dt)
  .schema TABLE        describe a table (\d TABLE)
  .mode MODE           output mode: table, csv, json or line
  .timer on|off        print how long each statement took (\timing)
  .pager on|off|CMD    page results taller than the terminal (default $PAGER or less)
  .read FILE           run the statements of a file (\i FILE)
  .help                this text (\?)
  .quit                leave the shell (\q, Ctrl-D)
Live results:
  SUBSCRIBE t [SINCE EPOCH n];      follow each epoch of t as it commits
  SELECT ... FROM STREAM s ...;     run as a temporary streaming table and follow it
  Ctrl-C stops the running statement or live view, not the shell.
Tab completes keywords, tables and columns (table.column too).
`
