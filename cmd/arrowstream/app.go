package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"math"
	"os"
	"os/signal"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/arrowstream/access"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/internal/hugeheap"
	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/server/pgwire"
)

// appFlags are the settings of the long-running subcommands (run, serve).
type appFlags struct {
	flight         *flightConfig
	httpAddr       string
	pg             *pgConfig
	checkpoint     string
	sinkMaxBytes   int64
	sinkMaxEpochs  int
	sinkOffHeap    bool
	status         *choiceFlag
	statusInterval time.Duration
	stopTimeout    time.Duration
	maxRows        int
	log            *logFlags
	gov            *governFlags
	cluster        *clusterFlags // serve only (nil: run)
}

// addAppFlags declares the flags of run and serve; pgDefault is the
// default PostgreSQL address ("" on serve: off unless given).
func addAppFlags(fs *flag.FlagSet, pgDefault string) *appFlags {
	f := &appFlags{flight: addFlightFlags(fs), pg: addPGFlags(fs, pgDefault)}
	fs.StringVar(&f.httpAddr, "http", "127.0.0.1:4040", "web UI, JSON API and /metrics listen `address` (empty: no HTTP server)")
	fs.StringVar(&f.checkpoint, "checkpoint", "", "checkpoint root `directory`, one subdirectory per streaming table, reused by the next run\n(default: a directory under the user's cache directory)")
	fs.Int64Var(&f.sinkMaxBytes, "sink-max-bytes", 256<<20, "memory-sink retention: `bytes` each table keeps in memory, oldest epochs evicted first (0: no bound)")
	fs.IntVar(&f.sinkMaxEpochs, "sink-max-epochs", 0, "memory-sink retention: `epochs` each table keeps (0: no bound)")
	fs.BoolVar(&f.sinkOffHeap, "sink-off-heap", false, "memory-sink tables map the records compaction merges outside the Go heap (per table: offHeap; docs/performance.md, \"Memory against retained data\")")
	f.status = newChoice("auto", "auto", "terminal", "log", "off")
	fs.Var(f.status, "status", "live query status: `auto|terminal|log|off` (auto: terminal when stdout is one, else log lines)")
	fs.DurationVar(&f.statusInterval, "status-interval", 10*time.Second, "`interval` of the status log lines")
	fs.DurationVar(&f.stopTimeout, "stop-timeout", 5*time.Second, "how long Ctrl-C waits for the queries to stop before giving up on them")
	fs.IntVar(&f.maxRows, "max-rows", 1000, "rows printed of each SELECT in a file (0: all)")
	f.log = addLogFlags(fs)
	f.gov = addGovernFlags(fs)
	return f
}

// validate checks the combinations a flag set cannot.
func (f *appFlags) validate() error {
	if (f.flight.user == "") != (f.flight.password == "") {
		return errors.New("--user and --password go together")
	}
	if f.sinkMaxBytes < 0 || f.sinkMaxEpochs < 0 || f.maxRows < 0 {
		return errors.New("--sink-max-bytes, --sink-max-epochs and --max-rows must not be negative")
	}
	if t := f.flight.memoryTarget; !(t >= 0) || math.IsInf(t, 0) {
		return fmt.Errorf("--memory-target %v: must be a positive ratio (or 0: off)", t)
	}
	return f.gov.validate()
}

// defaultCheckpointRoot is <user cache dir>/arrowstream/checkpoints/<name>.
func defaultCheckpointRoot(name string) (string, error) {
	dir, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("no user cache directory (%v): set --checkpoint", err)
	}
	return filepath.Join(dir, "arrowstream", "checkpoints", name), nil
}

// signalContext is canceled at the first SIGINT or SIGTERM. A second one
// ends the process at once.
func signalContext(stderr io.Writer) (context.Context, context.CancelFunc) {
	ctx, cancel := context.WithCancel(context.Background())
	ch := make(chan os.Signal, 2)
	signal.Notify(ch, os.Interrupt, syscall.SIGTERM)
	go func() {
		select {
		case <-ch:
			cancel()
		case <-ctx.Done():
			signal.Stop(ch)
			return
		}
		select {
		case <-ch:
			fmt.Fprintln(stderr, "arrowstream: second interrupt, exiting without waiting")
			os.Exit(130)
		case <-time.After(time.Minute):
		}
		signal.Stop(ch)
	}()
	return ctx, cancel
}

// app is a running engine with its servers and status display.
type app struct {
	flags  *appFlags
	env    cliEnv
	logger *slog.Logger
	board  *statusBoard // nil unless the status goes to a terminal
	engine *engine
	http   *httpServer
	flight flightServer
	pg     *pgwire.Server
	ckRoot string
	lock   *rootLock // held on ckRoot until shutdown
	// memTarget keeps the runtime's memory limit in proportion to what
	// the engine holds (--memory-target; nil: off).
	memTarget *arrowstream.MemoryTarget
	// hugeHeap advises the heap's memory MADV_HUGEPAGE (--huge-pages;
	// nil: off).
	hugeHeap *hugeheap.Advisor
	// stopCoreSharing ends the sharing of the host's cores among cluster
	// instances (cluster_cores.go; nil outside cluster mode).
	stopCoreSharing func()
}

// startApp builds the engine and starts the HTTP and Flight SQL servers.
// The status display starts with watch.
// command (run or serve) is how the root's lock names its holder; ckName
// names the default checkpoint root.
func startApp(ctx context.Context, f *appFlags, env cliEnv, command, ckName string) (_ *app, err error) {
	a := &app{flags: f, env: env}
	mode := f.status.value
	if mode == "auto" {
		mode = "log"
		if isTerminal(env.stdout) {
			mode = "terminal"
		}
	}
	logOut := env.stderr
	if mode == "terminal" {
		a.board = newStatusBoard(env.stdout)
		if isTerminal(env.stderr) {
			logOut = a.board // log lines above the board, not through it
		}
	}
	a.logger = f.log.logger(logOut)
	f.status.value = mode
	a.ckRoot = f.checkpoint
	if a.ckRoot == "" {
		var err error
		if a.ckRoot, err = defaultCheckpointRoot(ckName); err != nil {
			return nil, err
		}
	}
	// Absolute, as the catalog records checkpoint paths: a later run from
	// another directory must find them.
	if a.ckRoot, err = filepath.Abs(a.ckRoot); err != nil {
		return nil, fmt.Errorf("checkpoint directory: %w", err)
	}
	if err := os.MkdirAll(a.ckRoot, 0o755); err != nil {
		return nil, fmt.Errorf("checkpoint directory: %w", err)
	}
	if a.lock, err = lockRoot(a.ckRoot, command); err != nil {
		return nil, err
	}
	defer func() {
		if err != nil {
			a.lock.release()
		}
	}()
	// The root lock makes this process the single writer of the catalog
	// log and the static tables' rows (under ReservedDir): a temp file of
	// an atomic write there is a killed process's. The streaming tables'
	// checkpoints are swept by their queries, under their own locks.
	if _, err := checkpoint.RemoveStaleTemps(ctx, filepath.Join(a.ckRoot, arrowstream.ReservedDir), a.logger); err != nil {
		a.logger.Warn("stale temp files of interrupted writes not removed", "err", err)
	}
	// A process with a Flight SQL port serves SQL users: confine what their
	// statements may touch.
	var policy *access.Policy
	if f.flight.addr != "" {
		var err error
		if policy, err = f.gov.policy(a.ckRoot); err != nil {
			return nil, err
		}
	}
	auth, err := f.gov.authenticator(f.flight, a.logger)
	if err != nil {
		return nil, err
	}
	cluster, err := f.cluster.membership(f.flight.addr, a.logger)
	if err != nil {
		return nil, err
	}
	if cluster != nil {
		a.stopCoreSharing = startCoreSharing(cluster, a.logger)
		defer func() {
			if err != nil {
				a.stopCoreSharing()
			}
		}()
	}
	// Before the engine and the restore allocate: the advice covers the
	// heap as it is and follows its growth.
	a.hugeHeap = startHugeHeap(f.flight.hugePages, hugeheap.Options{}, a.logger)
	defer func() {
		if err != nil {
			a.hugeHeap.Stop()
		}
	}()
	a.engine = newEngine(engineOptions{
		cluster:        cluster,
		access:         policy,
		checkpointRoot: a.ckRoot,
		// Streaming tables are recoverable by default: their committed
		// epochs are persisted in the checkpoint ('persist'='false' opts out).
		sink:   memsink.Options{MaxBytes: f.sinkMaxBytes, MaxEpochs: f.sinkMaxEpochs, Persist: true, OffHeap: f.sinkOffHeap},
		logger: a.logger,
	})
	// Before the restored tables fill: the target measures the runtime's
	// memory with nothing held.
	if a.memTarget, err = startMemoryTarget(a.engine, f.flight); err != nil {
		return nil, err
	}
	if err := a.engine.restore(ctx); err != nil {
		a.engine.stop(f.stopTimeout)
		a.memTarget.Stop()
		return nil, err
	}
	if f.httpAddr != "" {
		if err := checkHTTPExposure(ctx, f.httpAddr, auth, f.gov.tlsCert != "", f.flight.allowInsecure); err != nil {
			return nil, err
		}
		h, err := startHTTP(ctx, f.httpAddr, a.engine, httpOptions{
			auth:     &webAuth{auth: auth, metricsOpen: f.gov.metricsOpen, secure: f.gov.tlsCert != ""},
			certFile: f.gov.tlsCert, keyFile: f.gov.tlsKey,
		})
		if err != nil {
			return nil, fmt.Errorf("HTTP server: %w", addrInUse("http", f.httpAddr, err))
		}
		a.http = h
		a.logger.Info("serving the web UI and /metrics", "addr", "http://"+h.Addr()+"/")
	}
	if f.flight.addr != "" {
		fsrv, err := startFlightServer(ctx, a.engine, f.flight, f.gov, auth)
		if err != nil {
			a.shutdown()
			return nil, fmt.Errorf("Flight SQL server: %w", addrInUse("addr", f.flight.addr, err))
		}
		a.flight = fsrv
	}
	if err := a.startPG(ctx, f.pg, f.flight); err != nil {
		a.shutdown()
		return nil, err
	}
	var addrs []string
	if a.flight != nil {
		addrs = append(addrs, "Flight SQL grpc://"+a.flight.Addr())
	}
	if a.pg != nil {
		addrs = append(addrs, "PostgreSQL "+a.pg.Addr().String())
	}
	if a.http != nil {
		addrs = append(addrs, "web UI http://"+a.http.Addr()+"/")
	}
	if err := a.lock.describe(command, addrs); err != nil {
		a.logger.Warn("cannot describe the checkpoint root's holder", "err", err)
	}
	return a, nil
}

// watch shows the status until ctx ends.
func (a *app) watch(ctx context.Context) {
	switch {
	case a.board != nil:
		runStatusBoard(ctx, a.engine.monitor, a.board)
	case a.flags.status.value == "log":
		runStatusLog(ctx, a.engine.monitor, a.logger, a.flags.statusInterval)
	default:
		<-ctx.Done()
	}
}

// shutdown stops the queries, then the servers.
func (a *app) shutdown() {
	start := time.Now()
	if a.stopCoreSharing != nil {
		a.stopCoreSharing()
	}
	if a.flight != nil {
		// Running statements end now, not when the grace below runs out.
		a.flight.StopQueries()
	}
	if a.engine != nil {
		if left := a.engine.stop(a.flags.stopTimeout); len(left) > 0 {
			a.logger.Error("queries did not stop in time", "queries", strings.Join(left, ", "), "timeout", a.flags.stopTimeout)
		}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if a.pg != nil {
		if err := a.pg.Stop(ctx); err != nil {
			a.logger.Warn("PostgreSQL endpoint stop", "err", err)
		}
	}
	if a.flight != nil {
		if err := a.flight.Stop(ctx); err != nil {
			a.logger.Warn("Flight SQL server stop", "err", err)
		}
	}
	if a.http != nil {
		if err := a.http.Stop(ctx); err != nil {
			a.logger.Warn("HTTP server stop", "err", err)
		}
	}
	a.memTarget.Stop()
	a.hugeHeap.Stop()
	a.lock.release()
	a.logger.Info("stopped", "took", time.Since(start).Round(time.Millisecond), "checkpoint", a.ckRoot)
}

// banner tells how to connect.
func (a *app) banner(w io.Writer, what string, tables []string) {
	fmt.Fprintf(w, "\nArrowstream is running %s.\n", what)
	fmt.Fprintf(w, "  checkpoint  %s  (reused by the next run; delete it to start over)\n", a.ckRoot)
	uri := ""
	if a.flight != nil {
		uri = "grpc://" + a.flight.Addr()
		fmt.Fprintf(w, "  Flight SQL  %s  (ADBC URI)\n", uri)
	}
	if a.pg != nil {
		fmt.Fprintf(w, "  PostgreSQL  %s  (psql -h %s -p %s)\n", a.pg.Addr(), pgHost(a.pg.Addr()), pgPort(a.pg.Addr()))
	}
	if a.http != nil {
		fmt.Fprintf(w, "  web UI      http://%s/\n", a.http.Addr())
		fmt.Fprintf(w, "  metrics     http://%s/metrics\n", a.http.Addr())
	}
	example := "SHOW TABLES"
	if len(tables) > 0 {
		example = "SELECT * FROM " + quoteIdent(tables[0]) + " LIMIT 10"
	}
	if uri != "" {
		kwargs := ""
		auth := ""
		if u := a.flags.flight.user; u != "" {
			kwargs = fmt.Sprintf(", db_kwargs={\"username\": %q, \"password\": \"...\"}", u)
			auth = fmt.Sprintf(" --user %s --password \"$ARROWSTREAM_PASSWORD\"", shellQuote(u))
		}
		fmt.Fprintf(w, "\nFrom Python (pip install adbc-driver-flightsql pyarrow):\n")
		fmt.Fprintf(w, "  import adbc_driver_flightsql.dbapi as flightsql\n")
		fmt.Fprintf(w, "  conn = flightsql.connect(%q%s)\n", uri, kwargs)
		fmt.Fprintf(w, "  cur = conn.cursor(); cur.execute(%q)\n", example)
		fmt.Fprintf(w, "  print(cur.fetch_arrow_table())\n")
		fmt.Fprintf(w, "From a shell:\n  %s query --uri %s%s %s\n", selfCommand(), uri, auth, shellQuote(example))
		fmt.Fprintf(w, "An interactive SQL shell (SUBSCRIBE <table>; follows a table live):\n  %s sql --uri %s%s\n", selfCommand(), uri, auth)
	}
	fmt.Fprintf(w, "\nPress Ctrl-C to stop; run again to continue where it stopped.\n\n")
}
