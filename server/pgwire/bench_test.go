package pgwire

import (
	"context"
	"fmt"
	"net"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/flight"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/jackc/pgx/v5"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"

	"github.com/arrowstream/arrowstream/server"
)

// The read benchmark: SELECT * of a sink table (id bigint, v double,
// name text, ts timestamptz) through pgx in the binary format, next to a
// PostgreSQL 15 server (Debian's, when installed) serving the same rows
// from an UNLOGGED table through the same client, and next to a Flight
// DoGet of the same table. ARROWSTREAM_PG_BENCH_ROWS sets the rows
// (default 1,000,000; the figures in docs/postgres.md use 10,000,000).

var benchSchema = arrow.NewSchema([]arrow.Field{
	{Name: "id", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	{Name: "v", Type: arrow.PrimitiveTypes.Float64, Nullable: true},
	{Name: "name", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "ts", Type: &arrow.TimestampType{Unit: arrow.Microsecond, TimeZone: "UTC"}, Nullable: true},
}, nil)

func benchRows() int {
	if s := os.Getenv("ARROWSTREAM_PG_BENCH_ROWS"); s != "" {
		if n, err := strconv.Atoi(s); err == nil && n > 0 {
			return n
		}
	}
	return 1_000_000
}

// benchBase is the first timestamp (µs): 2024-01-01.
const benchBase = 1704067200_000_000

func benchRecords(mem memory.Allocator, n int) []arrow.Record {
	const batch = 64 << 10
	var out []arrow.Record
	for from := 0; from < n; from += batch {
		b := array.NewRecordBuilder(mem, benchSchema)
		for i := from; i < min(from+batch, n); i++ {
			b.Field(0).(*array.Int64Builder).Append(int64(i))
			b.Field(1).(*array.Float64Builder).Append(float64(i) * 0.5)
			b.Field(2).(*array.StringBuilder).Append("name-" + strconv.Itoa(i%1000))
			b.Field(3).(*array.TimestampBuilder).Append(arrow.Timestamp(benchBase + int64(i)*1000))
		}
		out = append(out, b.NewRecord())
		b.Release()
	}
	return out
}

// readPgx reads every row of query with pgx's extended protocol (binary
// results) and returns the row count.
func readPgx(b *testing.B, dsn, query string) int {
	ctx := context.Background()
	c, err := pgx.Connect(ctx, dsn)
	if err != nil {
		b.Fatal(err)
	}
	defer c.Close(ctx)
	rows, err := c.Query(ctx, query)
	if err != nil {
		b.Fatal(err)
	}
	n := 0
	var id int64
	var v float64
	var name string
	var ts time.Time
	for rows.Next() {
		if err := rows.Scan(&id, &v, &name, &ts); err != nil {
			b.Fatal(err)
		}
		n++
	}
	if err := rows.Err(); err != nil {
		b.Fatal(err)
	}
	return n
}

func BenchmarkRead(b *testing.B) {
	n := benchRows()
	f := startFixture(b, fixtureOpts{})
	f.addTable(b, "bench", benchSchema, benchRecords(f.mem, n)...)
	check := func(got int) {
		if got != n {
			b.Fatalf("read %d rows, want %d", got, n)
		}
	}
	b.Run("arrowstream-pg", func(b *testing.B) {
		for i := 0; i < b.N; i++ {
			check(readPgx(b, f.dsn("bench", "", ""), "SELECT * FROM bench"))
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/row")
	})
	b.Run("arrowstream-flight", func(b *testing.B) {
		cl, err := flight.NewClientWithMiddleware(f.srv.Addr().String(), nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			b.Fatal(err)
		}
		defer cl.Close()
		tk, err := server.Ticket{Version: server.TicketVersion, Table: "bench"}.Encode()
		if err != nil {
			b.Fatal(err)
		}
		for i := 0; i < b.N; i++ {
			stream, err := cl.DoGet(context.Background(), &flight.Ticket{Ticket: tk})
			if err != nil {
				b.Fatal(err)
			}
			r, err := flight.NewRecordReader(stream)
			if err != nil {
				b.Fatal(err)
			}
			got := 0
			for r.Next() {
				got += int(r.Record().NumRows())
			}
			if err := r.Err(); err != nil {
				b.Fatal(err)
			}
			r.Release()
			check(got)
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/row")
	})
	b.Run("postgres15", func(b *testing.B) {
		dsn := startPostgres(b, n)
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			check(readPgx(b, dsn, "SELECT * FROM bench"))
		}
		b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N)/float64(n), "ns/row")
	})
}

// startPostgres starts Debian's PostgreSQL 15 on a temporary directory
// and a loopback port, as the nobody user when run as root, with an
// UNLOGGED table of the benchmark's rows; it skips when PostgreSQL is not
// installed.
func startPostgres(b *testing.B, n int) string {
	bin := "/usr/lib/postgresql/15/bin"
	if _, err := os.Stat(filepath.Join(bin, "postgres")); err != nil {
		b.Skipf("PostgreSQL 15 is not installed (%v)", err)
	}
	dir, err := os.MkdirTemp("", "pgbench")
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { os.RemoveAll(dir) })
	var cred *syscall.Credential
	if os.Geteuid() == 0 {
		u, err := user.Lookup("nobody")
		if err != nil {
			b.Skipf("running as root without a nobody user: %v", err)
		}
		uid, _ := strconv.Atoi(u.Uid)
		gid, _ := strconv.Atoi(u.Gid)
		cred = &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid)}
		if err := os.Chown(dir, uid, gid); err != nil {
			b.Fatal(err)
		}
	}
	run := func(name string, args ...string) *exec.Cmd {
		cmd := exec.Command(filepath.Join(bin, name), args...)
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
		cmd.Dir = dir
		return cmd
	}
	data := filepath.Join(dir, "data")
	if out, err := run("initdb", "-D", data, "-U", "postgres", "-A", "trust", "--no-sync").CombinedOutput(); err != nil {
		b.Fatalf("initdb: %v\n%s", err, out)
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		b.Fatal(err)
	}
	port := l.Addr().(*net.TCPAddr).Port
	l.Close()
	pg := run("postgres", "-D", data, "-p", strconv.Itoa(port), "-c", "listen_addresses=127.0.0.1", "-k", dir, "-F")
	if err := pg.Start(); err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		pg.Process.Signal(syscall.SIGINT)
		pg.Wait()
	})
	dsn := fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", port)
	deadline := time.Now().Add(2 * time.Minute)
	for {
		c, err := pgx.Connect(context.Background(), dsn)
		if err == nil {
			_, err = c.Exec(context.Background(), fmt.Sprintf(`CREATE UNLOGGED TABLE bench AS SELECT i::bigint AS id, i * 0.5::float8 AS v,
				'name-' || (i %% 1000) AS name, timestamptz '2024-01-01 00:00:00+00' + i * interval '1 millisecond' AS ts
				FROM generate_series(0, %d) AS i`, n-1))
			if err == nil {
				_, err = c.Exec(context.Background(), "VACUUM ANALYZE bench")
			}
			c.Close(context.Background())
			if err != nil {
				b.Fatal(err)
			}
			return dsn
		}
		if time.Now().After(deadline) {
			b.Fatalf("PostgreSQL did not start: %v", err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}
