package arrowstream

import (
	"fmt"
	"log/slog"
	"maps"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"sort"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/access"
	"github.com/arrowstream/arrowstream/arrowstream/internal/engine"
	"github.com/arrowstream/arrowstream/arrowstream/source/rate"
	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// SessionOptions configure a Session. The zero value is usable.
type SessionOptions struct {
	// Allocator for all query data (default: vector.NewDefaultAllocator,
	// a PoolAllocator over a MappedAllocator, so that a cancelled query
	// never waits for a large buffer to be zeroed: docs/operations.md).
	Allocator memory.Allocator
	// Logger (default slog.Default()).
	Logger *slog.Logger
	// Clock drives triggers and batch timestamps (default the system clock).
	Clock Clock
	// CheckpointRoot is where queries without a checkpointLocation option
	// keep their checkpoint: <root>/<queryName> (Spark's
	// spark.sql.streaming.checkpointLocation). Empty: a temporary directory
	// per query, deleted when the query stops cleanly.
	CheckpointRoot string
	// NoSync skips fsync of checkpoint files (tests and benchmarks only: a
	// machine crash may then lose checkpoint files).
	NoSync bool
	// Conf holds session settings, by Spark's keys where one exists
	// (spark.sql.shuffle.partitions, ...multipleWatermarkPolicy,
	// ...noDataMicroBatches.enabled, ...minBatchesToRetain).
	Conf map[string]string
	// Faults, when set, can fail epochs of the session's queries at a
	// precise point: a test hook whose contract is
	// arrowstreamtest.FaultInjector. Production code leaves it nil.
	Faults interface {
		BeforeSink(query string, epoch, inputRows int64) error
	}
	// CheckpointHook, when set, is called at each step of every atomic
	// checkpoint write of the session's queries (a test hook: crash
	// harnesses kill the process at precise steps; see checkpoint.FaultHook).
	CheckpointHook checkpoint.FaultHook
	// CheckpointLogFormat is the offset and commit log format of new
	// query checkpoints: 0 (default) for the v2 epoch log, 1 for Spark's
	// one file per epoch. An existing checkpoint keeps its format.
	CheckpointLogFormat int
	// Access, when set, confines the files, checkpoints and network
	// endpoints the session's sources and sinks may use (a server sets
	// it; nil: no restriction). See package access.
	Access *access.Policy
	// Cluster, when not empty, is the name of the cluster this instance
	// belongs to (arrowstream serve --cluster-name): streaming queries may
	// then read only sources that split their data across the instances
	// (stream.PartitionedSource, the Kafka source of kafka.InstallCluster);
	// any other would be read once by every instance (docs/cluster.md).
	Cluster string
}

// Session is the entry point of the Go API (Spark's SparkSession): it holds
// the catalog of tables, the registered source and sink formats and the
// query manager. Safe for concurrent use.
type Session struct {
	mem memory.Allocator
	// streamAlloc gives streaming queries their allocators (nil: mem).
	streamAlloc StreamingAllocatorFunc
	logger      *slog.Logger
	clock       Clock
	ckRoot      string
	noSync      bool
	manager     *QueryManager
	catalog     *plan.MemoryCatalog
	faults      engine.FaultInjector
	ckHook      checkpoint.FaultHook
	ckFormat    int
	access      *access.Policy
	cluster     string

	mu          sync.Mutex
	conf        map[string]string
	sourceFmts  map[string]SourceFormat
	sinkFmts    map[string]SinkFormat
	sinkKeys    map[string][]string // format -> its option keys, when it declared them
	sourceKeys  map[string][]string // source format -> its option keys, when it declared them
	stateProvs  map[string]StateStoreProviderFunc
	extraTables []plan.Catalog       // other catalogs consulted after the session's (sink tables)
	hop         stream.Repartitioner // cluster mode: the repartition hops (cluster_hop.go)

	dbs databases // CREATE DATABASE, USE (sql_database.go)

	funcs map[string]*plan.ScalarFunction // RegisterFunction, by lower-case name (under mu)

	held []heldSource // AddHeldBytes (memory_target.go), under mu

	durable atomic.Pointer[catalogLog] // set by RestoreCatalog
	// restoring is set while RestoreCatalog replays the catalog.
	restoring atomic.Bool
	ddlMu     sync.Mutex // orders DDL and its catalog records
}

// NewSession returns a session with the built-in source formats (memory,
// rate, rate-micro-batch).
func NewSession(opts SessionOptions) *Session {
	s := &Session{
		mem: opts.Allocator, logger: opts.Logger, clock: opts.Clock, ckRoot: opts.CheckpointRoot, noSync: opts.NoSync,
		catalog: plan.NewMemoryCatalog(), conf: map[string]string{}, faults: opts.Faults, ckHook: opts.CheckpointHook, access: opts.Access,
		ckFormat:   opts.CheckpointLogFormat,
		cluster:    opts.Cluster,
		sourceFmts: map[string]SourceFormat{}, sinkFmts: map[string]SinkFormat{}, sinkKeys: map[string][]string{},
		sourceKeys: map[string][]string{"rate": rate.RateOptionKeys(), "rate-micro-batch": rate.RateMicroBatchOptionKeys(), "memory": nil},
		stateProvs: map[string]StateStoreProviderFunc{"memory": memoryStateProvider},
	}
	if s.mem == nil {
		s.mem = vector.NewDefaultAllocator()
	}
	if s.logger == nil {
		s.logger = slog.Default()
	}
	if s.clock == nil {
		s.clock = SystemClock{}
	}
	for k, v := range opts.Conf {
		s.conf[k] = v
	}
	s.manager = NewQueryManager(s.logger)
	s.sourceFmts["rate"] = func(mem memory.Allocator, _ *arrow.Schema, o map[string]string) (Source, error) {
		ro, err := rate.ParseRateOptions(o)
		if err != nil {
			return nil, err
		}
		ro.Clock = s.clock
		if ro.Limits, err = rate.LimitsFromConf(s.Conf); err != nil {
			return nil, err
		}
		return rate.NewRateSource(mem, ro)
	}
	s.sourceFmts["rate-micro-batch"] = func(mem memory.Allocator, _ *arrow.Schema, o map[string]string) (Source, error) {
		ro, err := rate.ParseRateMicroBatchOptions(o)
		if err != nil {
			return nil, err
		}
		if ro.Limits, err = rate.LimitsFromConf(s.Conf); err != nil {
			return nil, err
		}
		return rate.NewRateMicroBatchSource(mem, ro)
	}
	return s
}

// Allocator returns the session's allocator.
func (s *Session) Allocator() memory.Allocator { return s.mem }

// Streams returns the session's query manager.
func (s *Session) Streams() *QueryManager { return s.manager }

// Catalog returns the session's table catalog (sources and static tables);
// catalogs added with AddCatalog are consulted after it.
func (s *Session) Catalog() plan.Catalog { return sessionCatalog{s} }

// AddCatalog makes the tables of c (sink tables, for instance) visible to
// queries.
func (s *Session) AddCatalog(c plan.Catalog) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.extraTables = append(s.extraTables, c)
}

// RegisterSourceFormat adds (or replaces) a source format.
func (s *Session) RegisterSourceFormat(name string, f SourceFormat) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sourceFmts[strings.ToLower(name)] = f
}

// RegisterSinkFormat adds (or replaces) a sink format.
func (s *Session) RegisterSinkFormat(name string, f SinkFormat) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sinkFmts[strings.ToLower(name)] = f
}

// RegisterSinkOptions declares the option keys of a sink format, so that
// CREATE STREAMING TABLE rejects unknown TBLPROPERTIES before it plans the
// query (with a "did you mean" hint).
func (s *Session) RegisterSinkOptions(format string, keys []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sinkKeys[strings.ToLower(format)] = append([]string(nil), keys...)
}

// RegisterSourceOptions declares the option keys of a source format, so
// that CREATE TABLE ... USING format OPTIONS (...) and ReadStreamFormat
// reject an unknown key (with a "did you mean" hint) instead of ignoring
// it. The connectors of package connectors declare theirs.
func (s *Session) RegisterSourceOptions(format string, keys []string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.sourceKeys[strings.ToLower(format)] = append([]string(nil), keys...)
}

// checkSourceOptions fails on an option key the source format (if it
// declared its keys) does not read.
func (s *Session) checkSourceOptions(format string, opts map[string]string) error {
	s.mu.Lock()
	keys, ok := s.sourceKeys[strings.ToLower(format)]
	s.mu.Unlock()
	if !ok {
		return nil
	}
	names := make([]string, 0, len(opts))
	for k := range opts {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if !slices.ContainsFunc(keys, func(c string) bool { return strings.EqualFold(c, k) }) {
			if len(keys) == 0 {
				return fmt.Errorf("unknown option '%s': source format %s takes no options", k, format)
			}
			return fmt.Errorf("unknown option '%s' of source format %s%s", k, format, plan.DidYouMean(k, keys))
		}
	}
	return nil
}

// checkSinkOptions fails on a key that neither the format (if it declared
// its keys) nor the writer knows; what names the options' owner in the
// error ("streaming table t").
func (s *Session) checkSinkOptions(format, what string, props map[string]string) error {
	s.mu.Lock()
	keys, ok := s.sinkKeys[strings.ToLower(format)]
	s.mu.Unlock()
	if !ok {
		return nil
	}
	known := append(append([]string(nil), keys...), stream.WriterOptionKeys()...)
	names := make([]string, 0, len(props))
	for k := range props {
		names = append(names, k)
	}
	sort.Strings(names)
	for _, k := range names {
		if !slices.ContainsFunc(known, func(c string) bool { return strings.EqualFold(c, k) }) {
			return fmt.Errorf("unknown option '%s' of %s%s", k, what, plan.DidYouMean(k, known))
		}
	}
	return nil
}

// SetConf sets a session setting.
func (s *Session) SetConf(key, value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.conf[key] = value
}

// Conf returns a session setting and whether it is set.
func (s *Session) Conf(key string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.conf[key]
	return v, ok
}

func (s *Session) confCopy() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.conf)
}

// RegisterStream makes src readable as the streaming table name. Every
// query over name reads this one source (as Spark's MemoryStream: data
// added to it reaches every query). A MemoryStream is read through one
// Reader per query, so that each query's commits release only what every
// query has consumed.
func (s *Session) RegisterStream(name string, src Source) {
	s.catalog.Register(name, &streamTable{schema: src.Schema(), shared: src, cluster: s.cluster, name: name})
}

// RegisterSource declares the streaming table name of a format: each query
// that reads it creates its own source from the options (CREATE TABLE
// name USING format OPTIONS (...)).
func (s *Session) RegisterSource(name, format string, schema *arrow.Schema, opts map[string]string) error {
	t, err := s.formatTable(format, schema, opts)
	if err != nil {
		return fmt.Errorf("arrowstream: table %s: %w", name, err)
	}
	s.catalog.Register(name, t)
	return nil
}

// RegisterTable adds a static table over records (borrowed and retained).
func (s *Session) RegisterTable(name string, schema *arrow.Schema, records ...arrow.Record) error {
	t, err := plan.NewMemTable(schema, records...)
	if err != nil {
		return fmt.Errorf("arrowstream: table %s: %w", name, err)
	}
	s.catalog.Register(name, t)
	return nil
}

// DropTable removes a source or static table.
func (s *Session) DropTable(name string) bool {
	if t, err := s.catalog.Table(name); err == nil {
		if mt, ok := t.(interface{ Release() }); ok {
			defer mt.Release()
		}
	}
	return s.catalog.Drop(name)
}

func (s *Session) formatNames() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	var out []string
	for n := range s.sourceFmts {
		out = append(out, n)
	}
	return out
}

// streamTable is a catalog entry for a streaming source: either one shared
// source instance or a factory that makes one per query.
type streamTable struct {
	schema  *arrow.Schema
	shared  Source
	factory func() (Source, error)
	// cluster and name: in cluster mode, OpenSource refuses a source that
	// every instance would read whole (clusterRefusal).
	cluster, name string
}

func (t *streamTable) Schema() *arrow.Schema { return t.schema }

// Append implements plan.Appender for a pushed stream (CREATE TABLE t
// (cols) USING memory): the rows of one INSERT arrive together, as the
// next blocks of the stream.
func (t *streamTable) Append(records ...arrow.Record) error {
	ms, ok := t.shared.(*MemoryStream)
	if !ok {
		return fmt.Errorf("arrowstream: INSERT INTO %s: only USING memory streams take inserted rows: %w", t.name, plan.ErrUnsupported)
	}
	_, err := ms.AddRecords(records...)
	return err
}

// AcceptsInserts reports whether Append takes rows: only a memory stream's
// table does (other streams read their rows from outside).
func (t *streamTable) AcceptsInserts() bool {
	_, ok := t.shared.(*MemoryStream)
	return ok
}
func (t *streamTable) Streaming() bool { return true }

// OpenSource returns the source for a query and whether the query owns it
// (closes it when it stops); it implements engine.SourceTable.
func (t *streamTable) OpenSource() (Source, bool, error) {
	if t.cluster != "" && t.shared != nil {
		return nil, false, clusterRefusal(t.cluster, t.name, t.shared)
	}
	if ms, ok := t.shared.(*MemoryStream); ok {
		// Each query consumes a memory stream through its own reader, so
		// that one query's commits do not release rows another has not
		// read; the reader is the query's to close.
		return ms.NewReader(), true, nil
	}
	if t.shared != nil {
		return t.shared, false, nil
	}
	src, err := t.factory()
	if err == nil && t.cluster != "" {
		if err = clusterRefusal(t.cluster, t.name, src); err != nil {
			src.Close()
			return nil, false, err
		}
	}
	return src, true, err
}

// sessionCatalog looks names up in the session's catalog, then in the
// added catalogs.
type sessionCatalog struct{ s *Session }

func (c sessionCatalog) Table(name string) (plan.Table, error) {
	key, _ := c.s.tableKey(name)
	t, err := c.s.catalog.Table(key)
	if err == nil {
		return t, nil
	}
	c.s.mu.Lock()
	extra := append([]plan.Catalog(nil), c.s.extraTables...)
	c.s.mu.Unlock()
	for _, cat := range extra {
		if t, err2 := cat.Table(key); err2 == nil {
			return t, nil
		}
		// Sink tables belong to no database: found by their name from
		// any current database.
		if key != name {
			if t, err2 := cat.Table(name); err2 == nil {
				return t, nil
			}
		}
	}
	return nil, err
}

func (c sessionCatalog) TableNames() []string {
	names := c.s.catalog.TableNames()
	c.s.mu.Lock()
	extra := append([]plan.Catalog(nil), c.s.extraTables...)
	c.s.mu.Unlock()
	for _, cat := range extra {
		if l, ok := cat.(plan.TableLister); ok {
			names = append(names, l.TableNames()...)
		}
	}
	return names
}

// defaultShufflePartitions is GOMAXPROCS, as the issue asks (Spark: 200).
func defaultShufflePartitions() string { return strconv.Itoa(runtime.GOMAXPROCS(0)) }

// checkpointDirFor decides a query's checkpoint location (Spark's rules):
// the checkpointLocation option, else <root>/<name>, else a temporary
// directory removed on clean stop.
func (s *Session) checkpointDirFor(name string, opts map[string]string) (dir string, temporary bool, err error) {
	loc, err := s.confinedCheckpointDir(name, opts)
	if err != nil {
		return "", false, err
	}
	if loc != "" {
		return loc, false, nil
	}
	if s.ckRoot != "" && name != "" {
		if err := checkTableDirName(name); err != nil {
			return "", false, err
		}
		return filepath.Join(s.ckRoot, name), false, nil
	}
	d, err := os.MkdirTemp("", "arrowstream-checkpoint-")
	if err != nil {
		return "", false, fmt.Errorf("arrowstream: temporary checkpoint directory: %w", err)
	}
	return d, true, nil
}

// LookupStream returns the source registered with RegisterStream (or
// CREATE TABLE ... USING memory) under name.
func (s *Session) LookupStream(name string) (Source, bool) {
	t, err := s.catalog.Table(name)
	if err != nil {
		return nil, false
	}
	st, ok := t.(*streamTable)
	if !ok || st.shared == nil {
		return nil, false
	}
	return st.shared, true
}

// LocalTable is a table declared in the session itself (a source or a
// static table), as listed by LocalTables.
type LocalTable struct {
	Name      string
	Schema    *arrow.Schema
	Streaming bool
}

// LocalTables lists the sources and static tables declared in the session
// (not the tables of catalogs added with AddCatalog).
func (s *Session) LocalTables() []LocalTable {
	var out []LocalTable
	for _, n := range s.catalog.TableNames() {
		t, err := s.catalog.Table(n)
		if err != nil {
			continue
		}
		out = append(out, LocalTable{Name: n, Schema: t.Schema(), Streaming: t.Streaming()})
	}
	return out
}
