package main

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/arrowstream/access"
	"github.com/arrowstream/arrowstream/arrowstream/connectors"
	"github.com/arrowstream/arrowstream/arrowstream/pebblestate"
	"github.com/arrowstream/arrowstream/arrowstream/source/kafka"
	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/sql"
)

// engineOptions configure the embedded engine of run and serve.
type engineOptions struct {
	// checkpointRoot holds every streaming table's checkpoint
	// (<root>/<table>), reused by the next run.
	checkpointRoot string
	// sink are the memory sink's default table options (retention).
	sink   memsink.Options
	logger *slog.Logger
	// clock drives the clicks source (nil: the system clock).
	clock arrowstream.Clock
	// access confines what SQL may touch (nil: everything).
	access *access.Policy
	// cluster, when set, is this instance's cluster membership: Kafka
	// tables are shared with the other instances (docs/cluster.md).
	cluster *kafka.Cluster
}

// engine is the embedded Arrowstream: a session with the clicks source and
// the memory sink, a monitor of its queries, their metrics, and the SQL
// text of each streaming table (for EXPLAIN in the web UI).
type engine struct {
	logger  *slog.Logger
	session *arrowstream.Session
	sinks   *memsink.Catalog
	monitor *monitor
	metrics *metrics
	cluster *kafka.Cluster // nil outside cluster mode

	mu   sync.Mutex
	defs map[string]tableDef // by lower-case table name
}

// tableDef is how a streaming table was defined.
type tableDef struct {
	Name    string    `json:"name"`
	SQL     string    `json:"sql"`   // the CREATE STREAMING TABLE statement
	Query   string    `json:"query"` // its query, formatted
	Created time.Time `json:"created"`
}

func newEngine(opts engineOptions) *engine {
	logger := opts.logger
	if logger == nil {
		logger = slog.Default()
	}
	sopts := arrowstream.SessionOptions{Logger: logger, CheckpointRoot: opts.checkpointRoot, Access: opts.access}
	if opts.cluster != nil {
		sopts.Cluster = opts.cluster.Name()
		// spark.sql.shuffle.partitions defaults to GOMAXPROCS, which serve
		// lowers once other instances share the host (cluster_cores.go):
		// pinned at the start, a table created later gets the partitions
		// its instance's peers on the same machine got.
		sopts.Conf = map[string]string{arrowstream.ConfShufflePartitions: strconv.Itoa(runtime.GOMAXPROCS(0))}
	}
	s := arrowstream.NewSession(sopts)
	pebblestate.Register(s)
	connectors.InstallAll(s)
	if opts.cluster != nil {
		kafka.InstallCluster(s, opts.cluster) // replaces the kafka format of InstallAll
	}
	s.RegisterSourceFormat("clicks", clicksFormat(opts.clock))
	s.RegisterSourceOptions("clicks", clicksOptionKeys())
	sinks := memsink.NewCatalog()
	if opts.cluster != nil {
		// Before the memory-sink catalog: a cluster table reads as the
		// union of every instance's rows.
		s.AddCatalog(clusterCatalog{c: opts.cluster, sinks: sinks})
	}
	sinkOpts := opts.sink
	sinkOpts.Logger = logger
	memsink.Install(s, sinks, sinkOpts)
	e := &engine{logger: logger, session: s, sinks: sinks, metrics: newMetrics(sinks), defs: map[string]tableDef{}, cluster: opts.cluster}
	e.monitor = newMonitor(e.sinkSize, e.metrics)
	s.Streams().AddListener(e.monitor)
	return e
}

func (e *engine) sinkSize(table string) (memsink.Size, bool) {
	t, ok := e.sinks.Lookup(table)
	if !ok {
		return memsink.Size{}, false
	}
	return t.Size(), true
}

// SQL runs one statement through the session and remembers the definition
// of the streaming tables it creates. It is the entry point the Flight SQL
// server's QueryEngine should call (see flight.go).
func (e *engine) SQL(ctx context.Context, text string) (*arrowstream.Result, error) {
	res, err := e.session.SQL(ctx, text)
	if err != nil {
		return nil, err
	}
	if res.Query != nil {
		e.remember(res.Query.Name(), text)
	}
	return res, nil
}

// remember keeps the definition of a streaming table.
func (e *engine) remember(name, text string) {
	def := tableDef{Name: name, SQL: strings.TrimSpace(text), Created: time.Now().UTC()}
	if st, err := sql.Parse(text); err == nil {
		if c, ok := st.(*sql.CreateStreamingTable); ok && c.Query != nil {
			def.Query = sql.Format(c.Query)
		}
	}
	e.mu.Lock()
	e.defs[strings.ToLower(name)] = def
	e.mu.Unlock()
}

// restore recreates the tables recorded in the checkpoint root's catalog
// and restarts its streaming tables (see Session.RestoreCatalog); from
// then on the session records its DDL there. A table that cannot be
// restored is logged and left out: the process serves the others (a
// script that defines it again reports the error).
func (e *engine) restore(ctx context.Context) error {
	restored, err := e.session.RestoreCatalog(ctx)
	if err != nil {
		return err
	}
	var names, failed []string
	for _, r := range restored {
		if r.Err != nil {
			failed = append(failed, r.Name)
			continue
		}
		names = append(names, r.Name)
		if r.Query != nil {
			e.remember(r.Query.Name(), r.SQL)
		}
	}
	if len(restored) > 0 {
		e.logger.Info("restored the catalog", "tables", strings.Join(names, ", "), "failed", strings.Join(failed, ", "))
	}
	return nil
}

// definition returns how a streaming table was defined.
func (e *engine) definition(name string) (tableDef, bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	d, ok := e.defs[strings.ToLower(name)]
	return d, ok
}

// explain returns EXPLAIN EXTENDED of a streaming table's query.
func (e *engine) explain(ctx context.Context, name string) (string, error) {
	def, ok := e.definition(name)
	if !ok || def.Query == "" {
		return "", fmt.Errorf("no definition of streaming table %q is known (it was not created through this process's SQL)", name)
	}
	res, err := e.session.SQL(ctx, "EXPLAIN EXTENDED "+def.Query)
	if err != nil {
		return "", err
	}
	defer res.Close()
	var b strings.Builder
	err = each(ctx, res.Op, func(rec arrow.Record) error {
		for i := 0; i < int(rec.NumRows()); i++ {
			b.WriteString(cellText(rec.Column(0), i))
			b.WriteByte('\n')
		}
		return nil
	})
	return b.String(), err
}

// execPrint runs one statement and prints what it produced: a query's rows
// as a table, the start of a streaming table, or OK.
func (e *engine) execPrint(ctx context.Context, text string, out io.Writer, maxRows int) error {
	res, err := e.SQL(ctx, text)
	if err != nil {
		return err
	}
	defer res.Close()
	switch {
	case res.Op != nil:
		return writeResult(ctx, out, formatTable, res.Op, maxRows)
	case res.Query != nil:
		q := res.Query
		e.logger.Info("streaming table started", "table", q.Name(), "id", q.ID(), "checkpoint", q.CheckpointDir())
	default:
		e.logger.Debug("statement done", "sql", strings.TrimSpace(text))
	}
	return nil
}

// stop stops every streaming query (each at its next safe point; the
// checkpoint stays consistent) and waits at most timeout for them. It
// returns the queries still running.
func (e *engine) stop(timeout time.Duration) []string {
	queries := e.session.Streams().Active()
	var wg sync.WaitGroup
	for _, q := range queries {
		wg.Add(1)
		go func() {
			defer wg.Done()
			q.Stop()
		}()
	}
	done := make(chan struct{})
	go func() {
		wg.Wait()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-time.After(timeout):
	}
	var left []string
	for _, q := range queries {
		if q.IsActive() {
			left = append(left, queryLabel(q))
		}
	}
	return left
}

// quoteIdent backquotes a name.
func quoteIdent(name string) string {
	return "`" + strings.ReplaceAll(name, "`", "``") + "`"
}
