package streamtest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/arrowstream/arrowstreamtest"
	"github.com/arrowstream/arrowstream/arrowstream/pebblestate"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/memsink"
)

// DefaultStepTimeout bounds every wait of an action.
const DefaultStepTimeout = 30 * time.Second

// Row is one row of values (see the package doc for how values compare).
type Row = []any

// Options configure a Stream.
type Options struct {
	// Dir is the directory of the checkpoint (required by New; NewT uses
	// t.TempDir()). The checkpoint lives in Dir/checkpoint.
	Dir string
	// Allocator for all data (default: the poisoning test allocator of
	// internal/testutil/poisonmem, which NewT also checks for leaks when
	// the test ends).
	Allocator memory.Allocator
	// Conf holds session settings by Spark's keys
	// (spark.sql.shuffle.partitions, ...).
	Conf map[string]string
	// QueryName names the query and its memory-sink table (default
	// "stream").
	QueryName string
	// OutputMode is the query's output mode.
	OutputMode arrowstream.OutputMode
	// Query builds the query from the fixture's session; it is called at
	// every start. Nil for a fixture that only writes to the sink directly.
	Query func(sess *arrowstream.Session) *arrowstream.DataFrame
	// SinkSchema and SinkMode describe the memory-sink table of a fixture
	// without a query (SinkWrite and SinkAssert actions).
	SinkSchema *arrow.Schema
	SinkMode   arrowstream.OutputMode
	// Fsync makes the engine fsync checkpoint files (off by default: a
	// test checkpoint need not survive a machine crash, and fsync is slow).
	Fsync bool
	// StepTimeout bounds each wait (default DefaultStepTimeout).
	StepTimeout time.Duration
	// Logger receives the engine's logs (default: discarded).
	Logger *slog.Logger
	// Trace, when set, receives one line per action as it runs.
	Trace func(line string)
}

// Stream is the fixture: a session with in-memory sources, a query
// restarted on one checkpoint, one memory-sink table and a manual clock.
type Stream struct {
	opts    Options
	mem     memory.Allocator
	sess    *arrowstream.Session
	sinks   *memsink.Catalog
	ckpt    string
	clock   *switchClock
	manual  *arrowstreamtest.ManualClock
	faults  *faultInjector
	gate    *gate
	sources []*Source
	direct  *memsink.Table // the sink of a fixture without a query

	query       *arrowstream.StreamingQuery // the current (or last) run
	trigger     arrowstream.Trigger
	manualRun   bool
	started     bool  // some run was started
	lastChecked int64 // sink epoch seen by the previous check
	stateMark   *arrowstream.StreamingQueryProgress
	// carried are the reports after stateMark of runs ended by
	// RestartKeepingMetrics, which AssertStateRows counts as the current run's.
	carried []*arrowstream.StreamingQueryProgress

	history []string
	closed  bool
}

// New returns a fixture keeping its checkpoint under opts.Dir.
func New(opts Options) (*Stream, error) {
	if opts.Dir == "" {
		return nil, errors.New("streamtest: Options.Dir is required")
	}
	if opts.QueryName == "" {
		opts.QueryName = "stream"
	}
	if opts.StepTimeout <= 0 {
		opts.StepTimeout = DefaultStepTimeout
	}
	if opts.Logger == nil {
		opts.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	s := &Stream{
		opts:        opts,
		mem:         opts.Allocator,
		ckpt:        filepath.Join(opts.Dir, "checkpoint"),
		manual:      arrowstreamtest.NewManualClock(time.UnixMilli(0)),
		faults:      &faultInjector{},
		gate:        newGate(),
		sinks:       memsink.NewCatalog(),
		lastChecked: -1,
	}
	if s.mem == nil {
		s.mem = poisonmem.New()
	}
	s.clock = &switchClock{c: arrowstream.SystemClock{}}
	s.sess = arrowstream.NewSession(arrowstream.SessionOptions{
		Allocator: s.mem, Logger: opts.Logger, Clock: s.clock, Conf: opts.Conf, Faults: s.faults, NoSync: !opts.Fsync,
	})
	pebblestate.Register(s.sess)
	memsink.Install(s.sess, s.sinks, memsink.Options{})
	if opts.Query == nil && opts.SinkSchema != nil {
		t, err := memsink.New(s.mem, arrowstream.SinkInfo{QueryName: opts.QueryName, Schema: opts.SinkSchema, Mode: opts.SinkMode}, memsink.Options{Logger: opts.Logger})
		if err != nil {
			return nil, fmt.Errorf("streamtest: sink: %w", err)
		}
		s.direct = t
	}
	return s, nil
}

// NewT returns a fixture in t.TempDir() (unless opts.Dir is set), closed
// when the test ends.
func NewT(t testing.TB, opts Options) *Stream {
	t.Helper()
	if opts.Dir == "" {
		opts.Dir = t.TempDir()
	}
	if opts.Allocator == nil {
		// Registered before the Close cleanup below, so it runs after it.
		opts.Allocator = poisonmem.NewChecked(t)
	}
	s, err := New(opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Error(err)
		}
	})
	return s
}

// Session is the fixture's session (for registering more tables).
func (s *Stream) Session() *arrowstream.Session { return s.sess }

// Query is the current or last run of the query (nil before the first
// start).
func (s *Stream) Query() *arrowstream.StreamingQuery { return s.query }

// CheckpointDir is the query's checkpoint location.
func (s *Stream) CheckpointDir() string { return s.ckpt }

// Trigger is the trigger of the current (or last) run.
func (s *Stream) Trigger() arrowstream.Trigger { return s.trigger }

// UsesManualClock reports whether the current (or last) run was started
// on the manual clock.
func (s *Stream) UsesManualClock() bool { return s.manualRun }

// ManualClock is the fixture's manual clock.
func (s *Stream) ManualClock() *arrowstreamtest.ManualClock { return s.manual }

// Sink is the memory-sink table (nil before the first start of a query).
func (s *Stream) Sink() *memsink.Table {
	if s.direct != nil {
		return s.direct
	}
	t, _ := s.sinks.Lookup(s.opts.QueryName)
	return t
}

// AddTable registers a static table of rows (Go values as the sources
// accept them).
func (s *Stream) AddTable(name string, schema *arrow.Schema, rows ...Row) error {
	rec, err := buildRecord(s.mem, schema, rows)
	if err != nil {
		return fmt.Errorf("streamtest: table %s: %w", name, err)
	}
	defer rec.Release()
	return s.sess.RegisterTable(name, schema, rec)
}

// Do runs one action and records it in the history shown by Dump.
func (s *Stream) Do(a Action) error {
	if s.closed {
		return errors.New("streamtest: the stream is closed")
	}
	s.history = append(s.history, a.String())
	if s.opts.Trace != nil {
		s.opts.Trace(a.String())
	}
	if err := a.run(s); err != nil {
		return fmt.Errorf("%s: %w", a, err)
	}
	return nil
}

// Run runs actions in order and stops at the first failure, whose error
// names the action (by index) and ends with the fixture's Dump.
func (s *Stream) Run(actions ...Action) error {
	for i, a := range actions {
		if err := s.Do(a); err != nil {
			return fmt.Errorf("action %d: %w\n%s", i, err, s.Dump())
		}
	}
	return nil
}

// Run runs actions on s and fails the test at the first failure, with the
// fixture's dump.
func Run(t testing.TB, s *Stream, actions ...Action) {
	t.Helper()
	if err := s.Run(actions...); err != nil {
		t.Fatal(err)
	}
}

// Close stops the query and releases the sources, tables and sinks.
func (s *Stream) Close() error {
	if s.closed {
		return nil
	}
	s.closed = true
	var errs []error
	if s.query != nil {
		if err := s.stopQuery(); err != nil {
			errs = append(errs, err)
		}
	}
	for _, name := range s.sinks.List() {
		if t, ok := s.sinks.Drop(name); ok {
			t.Close()
		}
	}
	if s.direct != nil {
		s.direct.Close()
	}
	for _, src := range s.sources {
		s.sess.DropTable(src.name)
		src.stream.Close()
	}
	for _, name := range s.sess.Catalog().(interface{ TableNames() []string }).TableNames() {
		s.sess.DropTable(name)
	}
	return errors.Join(errs...)
}

// running reports whether a run of the query is active.
func (s *Stream) running() bool { return s.query != nil && s.query.IsActive() }

// startQuery starts a run with the given trigger and clock.
func (s *Stream) startQuery(trigger arrowstream.Trigger, manual bool) (*arrowstream.StreamingQuery, error) {
	if s.opts.Query == nil {
		return nil, errors.New("the fixture has no query")
	}
	if s.running() {
		return nil, errors.New("the query is already running (stop it first)")
	}
	if manual {
		s.clock.use(s.manual)
	} else {
		s.clock.use(arrowstream.SystemClock{})
	}
	df := s.opts.Query(s.sess)
	if df == nil {
		return nil, errors.New("Options.Query returned no DataFrame")
	}
	return df.WriteStream().Format("memory").QueryName(s.opts.QueryName).OutputMode(s.opts.OutputMode).
		Trigger(trigger).Option("checkpointLocation", s.ckpt).Start(context.Background())
}

// stopQuery stops the current run, bounded by the step timeout.
func (s *Stream) stopQuery() error {
	q := s.query
	done := make(chan struct{})
	go func() {
		q.Stop()
		close(done)
	}()
	select {
	case <-done:
		return nil
	case <-time.After(s.opts.StepTimeout):
		return fmt.Errorf("timed out after %s stopping the query", s.opts.StepTimeout)
	}
}

// waitFor polls cond until it holds, the query fails (when failFast), or
// the step timeout passes.
func (s *Stream) waitFor(what string, cond func() bool) error {
	deadline := time.Now().Add(s.opts.StepTimeout)
	for !cond() {
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %s waiting for %s", s.opts.StepTimeout, what)
		}
		time.Sleep(time.Millisecond)
	}
	return nil
}

// idleOnManualClock reports whether the run uses the manual clock with a
// trigger interval, so that it idles in the clock between triggers.
func (s *Stream) idleOnManualClock() bool {
	return s.manualRun && s.trigger.Interval() > 0
}

// settle waits until the running query has processed all available input
// (with a manual clock: until it waits for its next trigger). A query
// that is not running is left as it is; one that fails meanwhile is an
// error.
func (s *Stream) settle() error {
	if s.query == nil {
		return nil
	}
	q := s.query
	if !q.IsActive() {
		return nil // ended before: compared as it is
	}
	if s.idleOnManualClock() {
		if err := s.waitFor("the query to wait for its next trigger on the manual clock", func() bool {
			return s.manual.Waiting() || !q.IsActive()
		}); err != nil {
			return err
		}
	} else {
		ctx, cancel := context.WithTimeout(context.Background(), s.opts.StepTimeout)
		err := q.ProcessAllAvailable(ctx)
		cancel()
		if errors.Is(err, context.DeadlineExceeded) {
			return fmt.Errorf("timed out after %s in processAllAvailable", s.opts.StepTimeout)
		}
	}
	if err := q.Exception(); err != nil && !q.IsActive() {
		return fmt.Errorf("the query failed: %w", err)
	}
	return nil
}
