package arrowstream

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/arrowstream/arrowstream/arrowstream/internal/engine"
	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// DataStreamWriter starts a streaming query writing a DataFrame to a sink
// (Spark's DataStreamWriter). Configure it, then call Start.
type DataStreamWriter struct {
	df      *DataFrame
	format  string
	sink    Sink
	mode    OutputMode
	trigger Trigger
	name    string
	opts    map[string]string
	err     error

	// For the stages of a query cut at a repartition hop (cluster_hop.go):
	// a checkpoint directory chosen by the session, the table whose group
	// the stage's cluster source joins, and whether the cut was made.
	ckDir        string
	clusterTable string
	hopped       bool
	onStop       func(error)
	ownSink      bool // the query closes sink when it stops
	// For the downstream stage of a hop whose state moves between
	// instances: settings of the query (over the session's) and the
	// wrapper of its state provider (cluster_state.go).
	stageConf map[string]string
	wrapState func(checkpoint.StateStoreProvider) checkpoint.StateStoreProvider
	bindMover func([]Source) error
}

// WriteStream returns a writer for a streaming DataFrame.
func (df *DataFrame) WriteStream() *DataStreamWriter {
	return &DataStreamWriter{df: df, opts: map[string]string{}}
}

// Format selects a registered sink format ("memory", ...).
func (w *DataStreamWriter) Format(name string) *DataStreamWriter { w.format = name; return w }

// Sink writes to s directly instead of a format.
func (w *DataStreamWriter) Sink(s Sink) *DataStreamWriter { w.sink = s; return w }

// OutputMode sets the output mode (default Append).
func (w *DataStreamWriter) OutputMode(m OutputMode) *DataStreamWriter { w.mode = m; return w }

// OutputModeString sets the output mode by name ("append", "update",
// "complete").
func (w *DataStreamWriter) OutputModeString(m string) *DataStreamWriter {
	mode, err := ParseOutputMode(m)
	if err != nil && w.err == nil {
		w.err = err
	}
	w.mode = mode
	return w
}

// Trigger sets the trigger (default ProcessingTime(0)).
func (w *DataStreamWriter) Trigger(t Trigger) *DataStreamWriter { w.trigger = t; return w }

// QueryName names the query (and the memory sink's table).
func (w *DataStreamWriter) QueryName(name string) *DataStreamWriter { w.name = name; return w }

// Option sets a writer option ("checkpointLocation", sink options).
func (w *DataStreamWriter) Option(key, value string) *DataStreamWriter { w.opts[key] = value; return w }

// Start plans the query, opens its checkpoint and sink, and starts it.
// Analysis errors (unsupported operations for the output mode, unknown
// formats, a checkpoint the sink cannot resume from) are returned here.
func (w *DataStreamWriter) Start(ctx context.Context) (*StreamingQuery, error) {
	if w.df.err != nil {
		return nil, w.df.err
	}
	if w.err != nil {
		return nil, w.err
	}
	if !w.df.IsStreaming() {
		return nil, fmt.Errorf("arrowstream: writeStream over a batch DataFrame: read a stream with ReadStream, or use Collect")
	}
	s := w.df.s
	if w.sink == nil && w.format == "" {
		return nil, fmt.Errorf("arrowstream: writeStream needs a sink: set Format(...) or Sink(...)")
	}
	conf := s.confFor(ctx)
	if _, ok := conf[ConfShufflePartitions]; !ok {
		conf[ConfShufflePartitions] = defaultShufflePartitions()
	}
	if _, ok := conf[ConfWatermarkPolicy]; !ok {
		conf[ConfWatermarkPolicy] = "min"
	}
	// Spark refuses a bad policy as soon as the conf is set; the engine
	// reads it when the first epoch runs, which would start the query and
	// fail it later, so the value is checked here.
	// (An empty value means min only in an old checkpoint's offset log.)
	if p := conf[ConfWatermarkPolicy]; strings.TrimSpace(p) == "" {
		return nil, fmt.Errorf("arrowstream: watermark policy %q: valid values are 'min' and 'max'", p)
	} else if _, err := engine.ParseWatermarkPolicy(p); err != nil {
		return nil, err
	}
	for k, v := range w.opts {
		if key, ok := stateConfKey(k); ok {
			conf[key] = v // state store settings as query options
		}
	}
	for k, v := range w.stageConf {
		conf[k] = v
	}
	var cont engine.ContinuousConfig
	if w.trigger.IsContinuous() {
		var err error
		if cont, err = engine.ContinuousOptions(w.df.node, w.mode, w.opts); err != nil {
			return nil, err
		}
	}
	restart, err := engine.RestartOptions(w.opts, w.trigger.IsContinuous())
	if err != nil {
		return nil, err
	}
	if w.sink == nil {
		what := fmt.Sprintf("the %s sink", w.format)
		if w.name != "" {
			what += " of query " + w.name
		}
		if err := s.checkSinkOptions(w.format, what, w.opts); err != nil {
			return nil, fmt.Errorf("arrowstream: %w", err)
		}
	}
	if err := s.checkOptionsAccess(w.format, w.opts); err != nil {
		return nil, err
	}
	if err := s.checkConfAccess(conf); err != nil {
		return nil, err
	}
	dir, temporary, err := s.checkpointDirFor(w.name, w.opts)
	if err != nil {
		return nil, err
	}
	if w.ckDir != "" {
		dir, temporary = w.ckDir, false
	}
	writer := &checkpoint.Writer{NoSync: s.noSync, Hook: s.ckHook, LogFormat: s.ckFormat, Prefault: vector.PrefaultScratch[byte]}
	// The checkpoint's single-writer lock, before anything below opens
	// the checkpoint: the plan's state stores, the sink's recovery and
	// the sources' checkpoints modify files there (cut torn tails, delete
	// what is outside their chain), which under another live writer of
	// the same checkpoint would destroy its in-flight work. Held until
	// the query has stopped and closed its sink and state (engine.Config
	// Unlock), or released here when the start fails.
	lock, err := checkpoint.LockWriter(dir, writer, lockHolder(w.name))
	if err != nil {
		if temporary {
			os.RemoveAll(dir)
		}
		return nil, fmt.Errorf("arrowstream: start query %s: %w", queryLabel(w.name), err)
	}
	started := false
	defer func() {
		if !started {
			lock.Release()
		}
	}()
	qmem, bindFail := s.queryAllocator(w.name)
	planOpts, err := engine.PlanOptions(dir, writer, conf)
	if err != nil {
		return nil, err
	}
	exec, sources, sourceDescs, err := engine.NewExec(qmem, w.df.node, w.mode, writer, w.stateProviderFunc(s), planOpts)
	if err != nil {
		return nil, err
	}
	if w.bindMover != nil {
		if err := w.bindMover(sources); err != nil {
			exec.Close()
			return nil, fmt.Errorf("arrowstream: stateful streaming query %s: %w", w.name, err)
		}
	}
	if s.cluster != "" && exec.HasState() && !w.hopped {
		exec.Close()
		if temporary {
			os.RemoveAll(dir)
		}
		// The hop's stages take their own checkpoints' locks.
		lock.Release()
		return s.startWithHop(ctx, w)
	}
	if err := s.clusterStateCheck(w.name, exec.HasState() && !w.hopped); err != nil {
		exec.Close()
		return nil, err
	}
	if err := clusterSourceConf(conf, sources); err != nil {
		exec.Close()
		return nil, err
	}
	if w.clusterTable != "" {
		for _, src := range sources {
			if ct, ok := src.(stream.ClusterTableSource); ok {
				ct.SetClusterTable(w.clusterTable)
			}
		}
	}
	sink := w.sink
	var closeSink func()
	if sink != nil && w.ownSink {
		closeSink = engine.CloseSinkFunc(sink, sinkDescription(w.format, sink), s.logger)
	}
	if sink == nil {
		s.mu.Lock()
		f, ok := s.sinkFmts[strings.ToLower(w.format)]
		s.mu.Unlock()
		if !ok {
			exec.Close()
			return nil, fmt.Errorf("arrowstream: unknown sink format %q", w.format)
		}
		info := SinkInfo{QueryName: w.name, Schema: w.df.node.Schema(), Mode: w.mode, KeyColumns: keyColumns(w.df.node),
			CheckpointDir: dir, Options: w.opts}
		if sink, err = f(ctx, qmem, info); err != nil {
			exec.Close()
			return nil, fmt.Errorf("arrowstream: %s sink for query %s: %w", w.format, w.name, err)
		}
		closeSink = engine.CloseSinkFunc(sink, sinkDescription(w.format, sink), s.logger)
	}
	// failed releases what Start created when it cannot start the query.
	failed := func() {
		exec.Close()
		if closeSink != nil {
			closeSink()
		}
	}
	if rs, ok := sink.(RecoverableSink); ok {
		if ok, _ := checkpoint.HasEpochLog(dir); ok {
			if err := rs.CanRecover(dir, w.mode); err != nil {
				failed()
				return nil, err
			}
		}
	}
	cfg := engine.Config{
		CheckpointDir: dir, Sources: sources, SourceDescriptions: sourceDescs,
		Sink: sink, SinkDescription: sinkDescription(w.format, sink), Exec: exec, Trigger: w.trigger.toEngine(),
		Clock: s.clock, Conf: conf, Writer: writer,
		MinBatchesToRetain: confInt(conf, "spark.sql.streaming.minBatchesToRetain", 100),
		NoDataBatches:      confBool(conf, "spark.sql.streaming.noDataMicroBatches.enabled", true),
		Logger:             s.logger,
		Faults:             s.faults,
		Continuous:         cont,
		CloseSink:          closeSink,
		Restart:            restart,
		Unlock: func() {
			if err := lock.Release(); err != nil {
				s.logger.Warn("releasing the checkpoint's writer lock failed", "dir", dir, "err", err)
			}
		},
	}
	if cont.Arrival {
		if _, ok := sink.(ArrivalSink); !ok {
			failed()
			return nil, fmt.Errorf("arrowstream: continuous.visibility=arrival: the %s sink cannot show uncommitted rows (use the memory sink, or visibility commit)", cfg.SinkDescription)
		}
	}
	if temporary {
		cfg.OnStop = func(err error) {
			if err == nil {
				os.RemoveAll(dir)
			}
		}
	}
	if w.onStop != nil {
		cfg.OnStop = w.onStop
	}
	q, err := s.manager.start(ctx, w.name, cfg)
	if err != nil {
		failed()
		return nil, err
	}
	started = true // the query releases the lock when it ends
	if bindFail != nil {
		bindFail(func(err error) { go q.Fail(err) })
	}
	return q, nil
}

// lockHolder describes a query in its checkpoint's lock file.
func lockHolder(name string) string {
	return "streaming query " + queryLabel(name)
}

// queryLabel names a query in messages: its name, or that it has none.
func queryLabel(name string) string {
	if name == "" {
		return "(unnamed)"
	}
	return strconv.Quote(name)
}

func sinkDescription(format string, sink Sink) string {
	if d, ok := sink.(interface{ Description() string }); ok {
		return d.Description()
	}
	if format != "" {
		return format
	}
	return fmt.Sprintf("%T", sink)
}

// keyColumns are the grouping keys of a plan whose result is an
// aggregation (the key of Update-mode rows).
func keyColumns(n plan.Node) []string {
	for {
		switch x := n.(type) {
		case *plan.Aggregate:
			out := make([]string, len(x.GroupBy))
			for i, g := range x.GroupBy {
				out[i] = g.Name
			}
			return out
		case *plan.Sort:
			n = x.Input
		case *plan.SubqueryAlias:
			n = x.Input
		default:
			return plan.TopNKeyColumns(n) // a streaming top-N's (partition, rank)
		}
	}
}

func confInt(conf map[string]string, key string, def int) int {
	if v, ok := conf[key]; ok {
		if n, err := strconv.Atoi(v); err == nil {
			return n
		}
	}
	return def
}

func confBool(conf map[string]string, key string, def bool) bool {
	if v, ok := conf[key]; ok {
		if b, err := strconv.ParseBool(v); err == nil {
			return b
		}
	}
	return def
}
