package main

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/url"
	"os"
	"strings"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/flight"
	"github.com/apache/arrow/go/v17/arrow/flight/flightsql"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

const queryExamples = `  arrowstream query "SELECT * FROM top_pages"
  arrowstream query --format csv "SELECT * FROM page_views ORDER BY window_start" > views.csv
  arrowstream query --uri grpc+tls://example.org:31337 --user me --password "$PW" "SHOW TABLES"
  arrowstream query --format arrow "SELECT * FROM page_views" | python3 -c 'import pyarrow as pa, sys; print(pa.ipc.open_stream(sys.stdin.buffer).read_all())'
  echo "DESCRIBE HISTORY page_views" | arrowstream query -
`

func runQuery(args []string, stdout, stderr io.Writer) int {
	ctx, cancel := signalContext(stderr)
	defer cancel()
	return exitCode(queryCmd(ctx, args, osEnv(stdout, stderr)), "query", stderr)
}

// queryFlags are the settings of `arrowstream query`.
type queryFlags struct {
	uri, user, password string
	format              *choiceFlag
	timeout             time.Duration
	tlsCA               string
	tlsSkipVerify       bool
	maxRows             int
}

// newQueryFlags declares the flags of query.
func newQueryFlags() (*flag.FlagSet, *queryFlags) {
	fs := newFlagSet("query", "[flags] SQL|-", queryExamples)
	f := &queryFlags{format: newChoice(formatTable, formatTable, formatCSV, formatJSON, formatArrow)}
	fs.StringVar(&f.uri, "uri", "grpc://127.0.0.1:31337", "Flight SQL server `URI`: grpc:// (or grpc+tcp://) in the clear, grpc+tls:// with TLS")
	fs.StringVar(&f.user, "user", "", "user `name` (HTTP basic auth, exchanged for a bearer token)")
	fs.StringVar(&f.password, "password", "", "`password` of --user (prefer the environment variable)")
	fs.Var(f.format, "format", "output `format`: table|csv|json (JSON lines)|arrow (Arrow IPC stream)")
	fs.DurationVar(&f.timeout, "timeout", time.Minute, "give up after this `duration` (0: never)")
	fs.StringVar(&f.tlsCA, "tls-ca", "", "PEM `file` of the CA that signed the server's certificate (grpc+tls)")
	fs.BoolVar(&f.tlsSkipVerify, "tls-skip-verify", false, "do not verify the server's certificate (testing only)")
	fs.IntVar(&f.maxRows, "max-rows", 0, "rows printed in table format (0: all)")
	return fs, f
}

// queryCmd is `arrowstream query [flags] SQL`: a Flight SQL client that
// runs each statement of SQL and prints the rows of those that return
// rows.
func queryCmd(ctx context.Context, args []string, env cliEnv) error {
	fs, f := newQueryFlags()
	pos, err := parseInterspersed(fs, args, env)
	if err != nil {
		return err
	}
	usageErr := func(format string, a ...any) error {
		fmt.Fprintf(env.stderr, "arrowstream query: "+format+"\n", a...)
		return errUsage{2}
	}
	if len(pos) != 1 {
		return usageErr("want one SQL argument (quote it, or pass - to read stdin), got %d: %q", len(pos), pos)
	}
	if (f.user == "") != (f.password == "") {
		return usageErr("--user and --password go together")
	}
	text := pos[0]
	if text == "-" {
		b, err := io.ReadAll(os.Stdin)
		if err != nil {
			return err
		}
		text = string(b)
	}
	var stmts []string
	for _, p := range splitAtSemicolons(text) {
		if p.code {
			stmts = append(stmts, strings.TrimSpace(text[p.start:p.end]))
		}
	}
	if len(stmts) == 0 {
		return usageErr("no SQL statement given")
	}
	for _, st := range stmts {
		if kind, _ := classify(st); kind == stmtSubscribe {
			return usageErr("%s never ends, and query prints whole results: follow it live with %s sql --uri %s (or read it with a Flight SQL client)",
				firstLine(st), selfCommand(), f.uri)
		}
	}
	if f.format.value == formatArrow && len(stmts) > 1 {
		return usageErr("--format arrow writes one result: give one statement")
	}
	target, creds, err := f.dialTarget()
	if err != nil {
		return usageErr("%v", err)
	}
	if f.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, f.timeout)
		defer cancel()
	}
	client, err := flightsql.NewClientCtx(ctx, target, nil, nil, grpc.WithTransportCredentials(creds))
	if err != nil {
		return fmt.Errorf("connect to %s: %w", f.uri, err)
	}
	defer client.Close()
	if f.user != "" {
		if ctx, err = client.Client.AuthenticateBasicToken(ctx, f.user, f.password); err != nil {
			return loginError(err, target, f.user)
		}
	}
	for _, st := range stmts {
		if err := runRemote(ctx, client, st, env.stdout, *f); err != nil {
			err = clientError(err, target)
			if len(stmts) > 1 {
				return fmt.Errorf("%s: %w", firstLine(st), err)
			}
			return err
		}
	}
	return nil
}

// dialTarget turns the URI into a gRPC target and credentials.
func (f *queryFlags) dialTarget() (string, credentials.TransportCredentials, error) {
	u, err := url.Parse(f.uri)
	if err != nil || u.Host == "" {
		return "", nil, fmt.Errorf("--uri %q: want grpc://host:port or grpc+tls://host:port", f.uri)
	}
	switch u.Scheme {
	case "grpc", "grpc+tcp":
		return u.Host, insecure.NewCredentials(), nil
	case "grpc+tls":
		cfg := &tls.Config{InsecureSkipVerify: f.tlsSkipVerify} //nolint:gosec // opt-in, for testing
		if f.tlsCA != "" {
			pem, err := os.ReadFile(f.tlsCA)
			if err != nil {
				return "", nil, err
			}
			pool := x509.NewCertPool()
			if !pool.AppendCertsFromPEM(pem) {
				return "", nil, fmt.Errorf("--tls-ca %s: no PEM certificate", f.tlsCA)
			}
			cfg.RootCAs = pool
		}
		return u.Host, credentials.NewTLS(cfg), nil
	}
	return "", nil, fmt.Errorf("--uri %q: unknown scheme %q (want grpc, grpc+tcp or grpc+tls)", f.uri, u.Scheme)
}

// returnsRows tells statements that return rows (sent as Flight SQL
// queries) from commands (sent as updates) by their first keyword.
func returnsRows(stmt string) bool {
	s := strings.TrimLeft(stmt, " \t\r\n(")
	word := strings.ToUpper(strings.FieldsFunc(s+" ", func(r rune) bool {
		return r == ' ' || r == '\t' || r == '\n' || r == '\r' || r == '('
	})[0])
	switch word {
	case "SELECT", "WITH", "SHOW", "DESCRIBE", "DESC", "EXPLAIN", "VALUES", "FROM", "TABLE":
		return true
	}
	return false
}

// runRemote runs one statement and prints its result.
func runRemote(ctx context.Context, c *flightsql.Client, stmt string, out io.Writer, f queryFlags) error {
	if !returnsRows(stmt) {
		n, err := c.ExecuteUpdate(ctx, stmt)
		if err != nil {
			return err
		}
		if f.format.value == formatTable {
			if n > 0 {
				fmt.Fprintf(out, "OK, %d rows affected\n", n)
			} else {
				fmt.Fprintln(out, "OK")
			}
		}
		return nil
	}
	info, err := c.Execute(ctx, stmt)
	if err != nil {
		return err
	}
	if len(info.Endpoint) == 0 {
		return errors.New("the server returned no endpoint to read the result from")
	}
	src, err := openEndpoints(ctx, c, info.Endpoint)
	if err != nil {
		return err
	}
	defer src.Close()
	return writeResult(ctx, out, f.format.value, src, f.maxRows)
}

// endpointStream reads a FlightInfo's endpoints one after the other as
// one result.
type endpointStream struct {
	c   *flightsql.Client
	eps []*flight.FlightEndpoint
	cur *flight.Reader
}

func openEndpoints(ctx context.Context, c *flightsql.Client, eps []*flight.FlightEndpoint) (*endpointStream, error) {
	rdr, err := c.DoGet(ctx, eps[0].Ticket)
	if err != nil {
		return nil, err
	}
	return &endpointStream{c: c, eps: eps[1:], cur: rdr}, nil
}

func (s *endpointStream) Schema() *arrow.Schema { return s.cur.Schema() }

func (s *endpointStream) Next(ctx context.Context) (arrow.Record, error) {
	for {
		rec, err := (readerStream{s.cur}).Next(ctx)
		if !errors.Is(err, io.EOF) || len(s.eps) == 0 {
			return rec, err
		}
		next, err := s.c.DoGet(ctx, s.eps[0].Ticket)
		if err != nil {
			return nil, err
		}
		if !next.Schema().Equal(s.cur.Schema()) {
			next.Release()
			return nil, errors.New("the result's endpoints have different schemas")
		}
		s.cur.Release()
		s.cur, s.eps = next, s.eps[1:]
	}
}

func (s *endpointStream) Close() { s.cur.Release() }

func firstLine(s string) string {
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i] + " ..."
	}
	return s
}
