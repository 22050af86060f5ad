package engine

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/internal/stateful"
	"github.com/arrowstream/arrowstream/checkpoint"
)

// stateLifecycle is the one place that owns the state of a query's
// stateful operators per epoch: from the operators' declarations it opens
// the partitions (state/<op>/<p>) at the epoch's version before the plan
// runs, and commits or aborts them all after. The loops commit state
// before the sink sees the epoch's output (as Spark commits state inside
// the tasks of the sink's job), so that no output built from a failed
// state read or write is ever delivered; a re-run epoch reloads the
// version it started from.
type stateLifecycle struct {
	writer      *checkpoint.Writer
	mem         memory.Allocator
	newProvider StateProviderFunc
	provider    checkpoint.StateStoreProvider

	ops []*opState
	// expectLogged is the state log end the last commit record names
	// (CommitMetadata.StateLog): opening a state log that ends before it
	// is refused as damage.
	expectLogged *checkpoint.StateLogMark
	logOpen      bool // the provider's state log is open
	// epochLog is the run's v2 epoch log, where a new checkpoint's state
	// records go (nil: v1, or not given); stateLog is the state log
	// opened for the provider (nil: the provider opened its own).
	epochLog *checkpoint.SegmentLog
	stateLog *checkpoint.StateLog
	// groupBuf backs the stores an epoch commits together.
	groupBuf []checkpoint.StateStore
	// commits backs commit's answer, kept from epoch to epoch (the
	// caller hands each operator its entry by value); totals backs the
	// live rows commit counts per operator.
	commits []stateful.StateCommit
	totals  []int64
	// version is the version the open epoch reads (its id): the group
	// commit writes version+1 even when no partition was opened.
	version int64
	// sharedAcct reserves a BoundedProvider's shared memory (its block
	// cache) against the query's limit while the provider is open.
	sharedAcct *stateful.StoreAccount
	// recorded is the metadata of the checkpoint in recordedDir, whose
	// StateSchemas stand for state/<op>/_metadata/schema files
	// (state_schema.go); recordedDir is empty when none was given.
	recorded    checkpoint.QueryMetadata
	recordedDir string
}

// useEpochLog sets the run's epoch log. A state log that lives in an
// earlier run's epoch log (a restart in the process keeps the provider)
// moves to this one.
func (l *stateLifecycle) useEpochLog(ep *checkpoint.SegmentLog) error {
	l.epochLog = ep
	if l.stateLog != nil && ep != nil {
		return l.stateLog.Rebind(ep)
	}
	return nil
}

// opState is the state of one operator.
type opState struct {
	decl    stateful.StateDecl
	checked bool // the schema was compared with the checkpoint's
	parts   []checkpoint.StatePartition
	stores  []checkpoint.StateStore // open for the current epoch
	// storeBuf backs stores from epoch to epoch: an epoch does not
	// allocate a slice per operator.
	storeBuf []checkpoint.StateStore
	// lazy holds the handles of an epoch whose partitions open at their
	// first use (checkpoint.LazyStore, when the provider group-commits
	// and its partitions are Carriers): stores[p] is &lazy[p] (or its
	// LazyStore when the partition's stores take Put and Delete). An
	// epoch then costs nothing in a partition it does not touch.
	lazy []checkpoint.LazyLogStore
	// loaded: an epoch of this operator committed since its partitions
	// were opened or an epoch aborted. Until then every partition is
	// opened before the operator runs (it rebuilds its state from all of
	// them), so that a damaged file fails the epoch's open, named as
	// without lazy stores.
	loaded bool
	// acct reserves what the partitions hold in memory against the
	// query's limit (nil until the first commit).
	acct *stateful.StoreAccount
	// epochAcct reserves what an epoch writes into the partitions'
	// stores while they hold it (checkpoint.EpochBufferPartition).
	epochAcct *stateful.StoreAccount
	// metrics backs the CustomMetrics of the operator's StateCommit,
	// kept from epoch to epoch: the operators copy it into their report
	// (Committed), and the commit's answer is valid only until the next
	// commit.
	metrics map[string]int64
	// lazyOK and logs describe parts, found when they are opened (each
	// epoch asked every partition again): the partitions open lazily
	// (lazyParts), and which of them take changelogs.
	lazyOK bool
	logs   []bool
}

func newStateLifecycle(writer *checkpoint.Writer, mem memory.Allocator, decls []stateful.StateDecl) *stateLifecycle {
	l := &stateLifecycle{writer: writer, mem: mem}
	for _, d := range decls {
		l.ops = append(l.ops, &opState{decl: d})
	}
	return l
}

// keep drops the operators whose keep entry is false (the copies of a
// shared subplan, shared_subplan.go), before any epoch opened them: their
// state is neither opened nor declared.
func (l *stateLifecycle) keep(keep []bool) {
	ops := l.ops[:0]
	for i, op := range l.ops {
		if keep[i] {
			ops = append(ops, op)
		}
	}
	clear(l.ops[len(ops):])
	l.ops = ops
}

// open opens every operator's partitions at version ep.ID. On error
// nothing stays open.
func (l *stateLifecycle) open(checkpointDir string, id int64, numPartitions int, conf map[string]string) error {
	if len(l.ops) == 0 {
		return nil
	}
	if l.provider == nil {
		var err error
		if l.newProvider != nil {
			l.provider, err = l.newProvider(conf, l.writer)
		} else {
			l.provider = checkpoint.NewMemoryProvider(l.writer, checkpoint.StoreOptions{Allocator: l.mem})
		}
		if err != nil {
			return err
		}
		if bp, ok := l.provider.(checkpoint.BoundedProvider); ok {
			// Its memory is set by its settings: the shared part is
			// reserved as it opens (a refusal fails the start with the
			// limit's error), the partitions' with each commit.
			l.sharedAcct = stateful.NewProviderAccount(l.mem, l.provider.Name(), "shared block cache")
			if err := l.sharedAcct.SetFixed(bp.SharedMemoryBound()); err != nil {
				l.provider.Close()
				l.provider, l.sharedAcct = nil, nil
				return err
			}
		}
	}
	if gc, ok := l.provider.(checkpoint.GroupCommitter); ok && !l.logOpen {
		// One state log record per epoch for every partition that
		// changed (checkpoint.StateLog), opened before any partition.
		stateDir := filepath.Join(checkpointDir, "state")
		logDir := filepath.Join(stateDir, checkpoint.StateLogDir)
		if egc, ok := gc.(checkpoint.EpochLogGroupCommitter); ok {
			// In the epoch log (new checkpoints): the epoch's offsets,
			// state and previous commit records share one write.
			sl, err := checkpoint.OpenQueryStateLog(stateDir, l.epochLog, l.writer)
			if err != nil {
				return fmt.Errorf("arrowstream: open the state log of %s: %w", checkpointDir, err)
			}
			if err := egc.UseStateLog(stateDir, sl); err != nil {
				sl.Close()
				return fmt.Errorf("arrowstream: open the state log of %s: %w", checkpointDir, err)
			}
			logDir, l.stateLog = sl.Dir(), sl
		} else if err := gc.OpenStateLog(stateDir); err != nil {
			return fmt.Errorf("arrowstream: open the state log of %s: %w", checkpointDir, err)
		}
		if err := checkStateLogEnd(gc.StateLogEnd(), l.expectLogged, logDir); err != nil {
			return err
		}
		l.logOpen = true
	}
	l.version = id
	for _, op := range l.ops {
		if err := l.openOp(op, checkpointDir, id, numPartitions); err != nil {
			l.abort()
			return err
		}
	}
	return nil
}

func (l *stateLifecycle) openOp(op *opState, checkpointDir string, id int64, numPartitions int) error {
	if !op.checked {
		if err := l.checkSchema(op.decl, checkpointDir); err != nil {
			return err
		}
		op.checked = true
	}
	n := max(numPartitions, 1)
	if op.decl.Global {
		n = 1
	}
	if len(op.parts) != n {
		op.loaded = false
		op.parts = make([]checkpoint.StatePartition, n)
		for p := range op.parts {
			dir := filepath.Join(checkpointDir, "state", strconv.Itoa(op.decl.OpID), strconv.Itoa(p))
			part, err := l.provider.OpenPartition(dir)
			if err != nil {
				op.parts = nil
				return fmt.Errorf("arrowstream: open state of operator %d partition %d: %w", op.decl.OpID, p, err)
			}
			op.parts[p] = part
			if eb, ok := part.(checkpoint.EpochBufferPartition); ok {
				if op.epochAcct == nil {
					op.epochAcct = stateful.NewStoreEpochAccount(l.mem, op.decl)
				}
				eb.SetEpochBufferReserver(op.epochAcct.Add)
			}
		}
		op.lazyOK = l.lazyParts(op)
		op.logs = make([]bool, n)
		if op.lazyOK {
			for p, part := range op.parts {
				op.logs[p] = part.(checkpoint.Carrier).LogsChanges()
			}
		}
	}
	if cap(op.storeBuf) < n {
		op.storeBuf = make([]checkpoint.StateStore, n)
	}
	op.stores = op.storeBuf[:n]
	clear(op.stores)
	if op.lazyOK {
		if cap(op.lazy) < n {
			op.lazy = make([]checkpoint.LazyLogStore, n)
		}
		op.lazy = op.lazy[:n]
		for p, part := range op.parts {
			h := &op.lazy[p]
			h.Reset(part, id)
			if op.logs[p] {
				op.stores[p] = h
			} else {
				op.stores[p] = &h.LazyStore
			}
			if !op.loaded {
				if _, err := h.Open(); err != nil {
					return err // names the partition's files (state/<op>/<p>/...)
				}
			}
		}
		return nil
	}
	op.lazy = op.lazy[:0]
	for p, part := range op.parts {
		st, err := part.Begin(id)
		if err != nil {
			return err // names the partition's files (state/<op>/<p>/...)
		}
		op.stores[p] = st
	}
	return nil
}

// lazyParts reports whether op's partitions open lazily: the provider
// group-commits (an unchanged partition writes nothing) and every
// partition can carry its version forward.
func (l *stateLifecycle) lazyParts(op *opState) bool {
	if _, ok := l.provider.(checkpoint.GroupCommitter); !ok {
		return false
	}
	for _, part := range op.parts {
		if _, ok := part.(checkpoint.Carrier); !ok {
			return false
		}
	}
	return true
}

// lazy reports whether the open epoch has lazily opened partitions.
func (l *stateLifecycle) lazy() bool {
	for _, op := range l.ops {
		if len(op.lazy) > 0 {
			return true
		}
	}
	return false
}

// settle turns op's lazy handles into the stores to commit (appended to
// all; the partitions no operator touched are carried forward) and
// returns all with op's live keys. On error every store opened is
// aborted.
func (op *opState) settle(all []checkpoint.StateStore) ([]checkpoint.StateStore, int64, error) {
	var total int64
	for p := range op.lazy {
		st, n, err := op.lazy[p].Settle()
		if err != nil {
			return all, 0, fmt.Errorf("arrowstream: state of operator %d partition %d: %w", op.decl.OpID, p, err)
		}
		total += n
		if st != nil {
			all = append(all, st)
		}
	}
	return all, total, nil
}

// stores returns operator i's open stores.
func (l *stateLifecycle) stores(i int) []checkpoint.StateStore { return l.ops[i].stores }

// commit commits every open store (version id+1) and returns, per
// operator, what describes its stores. On error every store not yet
// committed is aborted: the epoch must be re-run from its version. The
// slice returned is valid until the next commit.
func (l *stateLifecycle) commit(ctx context.Context) ([]stateful.StateCommit, error) {
	if len(l.commits) != len(l.ops) {
		l.commits, l.totals = make([]stateful.StateCommit, len(l.ops)), make([]int64, len(l.ops))
	}
	out, totals := l.commits, l.totals
	clear(out)
	clear(totals)
	var groupTime time.Duration
	if gc, ok := l.provider.(checkpoint.GroupCommitter); ok {
		// Every operator's partitions together: one durable write.
		start := time.Now()
		all := l.groupBuf[:0]
		var err error
		for i, op := range l.ops {
			if len(op.lazy) > 0 {
				var n int64
				all, n, err = op.settle(all)
				totals[i] += n
				if err != nil {
					break
				}
				continue
			}
			for _, st := range op.stores {
				totals[i] += int64(st.Len())
			}
			all = append(all, op.stores...)
		}
		if err != nil {
			l.abort()
			clear(all)
			l.groupBuf = all[:0]
			return nil, fmt.Errorf("arrowstream: commit state: %w", err)
		}
		for _, op := range l.ops {
			op.stores = nil
		}
		if len(all) > 0 || l.lazy() {
			err = gc.CommitGroupAt(ctx, l.version+1, all)
		}
		clear(all) // the stores are done: keep no reference to them
		l.groupBuf = all[:0]
		if err != nil {
			for _, op := range l.ops {
				op.loaded = false
			}
			return nil, fmt.Errorf("arrowstream: commit state: %w", err)
		}
		for _, op := range l.ops {
			op.loaded = true
		}
		groupTime = time.Since(start)
	}
	for i, op := range l.ops {
		start := time.Now()
		total := totals[i]
		for p, st := range op.stores {
			total += int64(st.Len())
			if _, err := st.Commit(ctx); err != nil {
				op.stores[p] = nil
				l.abort()
				return nil, fmt.Errorf("arrowstream: commit state of operator %d partition %d: %w", op.decl.OpID, p, err)
			}
			op.stores[p] = nil
		}
		op.stores = nil
		c := stateful.StateCommit{NumRowsTotal: total, Partitions: int64(len(op.parts))}
		if op.metrics == nil {
			op.metrics = map[string]int64{}
		}
		metrics := op.metrics
		clear(metrics)
		var buffers int64
		for _, part := range op.parts {
			c.MemoryUsedBytes += part.MemoryBytes()
			if b, ok := part.(checkpoint.BufferedPartition); ok {
				buffers += b.BufferBytes()
			}
			for k, v := range part.Metrics() { // most providers' partitions have none
				metrics[k] += v
			}
		}
		if op.acct == nil {
			op.acct = stateful.NewStoreAccount(l.mem, op.decl)
		}
		// A refusal has stopped the query (its allocator fails it with
		// the limit's error); the committed epoch stays valid.
		if bp, ok := l.provider.(checkpoint.BoundedProvider); ok {
			// Keys and values on disk; in memory the memtables, bounded
			// by the settings.
			_ = op.acct.SetFixed(int64(len(op.parts))*bp.PartitionMemoryBound() + buffers)
		} else {
			_ = op.acct.Set(c.MemoryUsedBytes, total, buffers)
		}
		if n := op.acct.Bytes(); n > 0 {
			metrics[stateful.StoreMetric] = n
		}
		if l.provider != nil {
			c.MemoryUsedBytes += l.provider.MemoryBytes()
			for k, v := range l.provider.Metrics() {
				metrics[k] = v
			}
		}
		if len(metrics) > 0 {
			c.CustomMetrics = metrics
		}
		c.CommitTimeMs = (time.Since(start) + groupTime).Milliseconds()
		out[i] = c
	}
	return out, nil
}

// stateLogEnd is where the state log ends (nil: none, or a provider
// without group commit), for the epoch's commit record.
func (l *stateLifecycle) stateLogEnd() *checkpoint.StateLogMark {
	if gc, ok := l.provider.(checkpoint.GroupCommitter); ok {
		return gc.StateLogEnd()
	}
	return nil
}

// checkStateLogEnd refuses a state log in dir that ends (got) before the
// end the last commit record names (want).
func checkStateLogEnd(got, want *checkpoint.StateLogMark, dir string) error {
	if want == nil || got != nil && got.Version >= want.Version {
		return nil
	}
	have := int64(0)
	if got != nil {
		have = got.Version
	}
	return fmt.Errorf("arrowstream: state log: checkpoint: %s: the state log ends at version %d but the last committed epoch wrote version %d there: records were lost: %w",
		filepath.Join(dir, want.Segment), have, want.Version, checkpoint.ErrCorrupt)
}

// abort discards every open store's updates.
func (l *stateLifecycle) abort() {
	for _, op := range l.ops {
		op.loaded = false
		for _, st := range op.stores {
			if st != nil {
				st.Abort()
			}
		}
		op.stores = nil
	}
}

// close aborts open stores and closes the provider (every partition).
func (l *stateLifecycle) close() error {
	l.abort()
	if l.provider == nil {
		return nil
	}
	err := l.provider.Close()
	l.provider, l.logOpen, l.stateLog = nil, false, nil
	if l.sharedAcct != nil {
		l.sharedAcct.Release()
		l.sharedAcct = nil
	}
	for _, op := range l.ops {
		op.parts, op.lazy = nil, nil
		if op.acct != nil {
			op.acct.Release()
		}
		if op.epochAcct != nil {
			op.epochAcct.Release()
		}
	}
	return err
}

// checkSchema records an operator's state schema on first use and
// compares it on every later start: with the state/<op>/_metadata/schema
// file when there is one (checkpoints in Spark's v1 layout, v2 ones
// written before their metadata recorded the schemas), else with the
// schema recorded in the checkpoint's metadata. The file is sealed (checkpoint.Seal),
// so that a damaged one is reported as damage (checkpoint.ErrCorrupt,
// naming the file) rather than as a different query's state; files
// written before sealing (no trailer) are compared as they are.
func (l *stateLifecycle) checkSchema(d stateful.StateDecl, checkpointDir string) error {
	dir := filepath.Join(checkpointDir, "state", strconv.Itoa(d.OpID), "_metadata")
	path := filepath.Join(dir, "schema")
	data, err := os.ReadFile(path)
	if err == nil {
		var legacy bool
		data, legacy, err = checkpoint.Unseal(path, data)
		if err == nil && legacy && bytes.ContainsRune(data, '\n') {
			// An unsealed schema is one line: this is a sealed file cut
			// inside its trailer.
			err = fmt.Errorf("checkpoint: %s: truncated checksum trailer: %w", path, checkpoint.ErrCorrupt)
		}
	}
	switch {
	case errors.Is(err, checkpoint.ErrCorrupt):
		return fmt.Errorf("arrowstream: state schema of stateful operator %d: %w", d.OpID, err)
	case err == nil:
		if string(data) != d.Schema {
			return fmt.Errorf("arrowstream: the state of stateful operator %d in %s was written by a different query: it holds %s, this query needs %s; start the changed query on a new checkpoint location", d.OpID, path, data, d.Schema)
		}
		return nil
	case !errors.Is(err, os.ErrNotExist):
		return fmt.Errorf("arrowstream: read %s: %w", path, err)
	}
	// No schema file: a v2 checkpoint records the schemas in its metadata
	// when it is created (state_schema.go). An operator the query gained
	// after that still gets its file.
	if schema, meta, ok := l.recordedSchema(checkpointDir, d.OpID); ok {
		if schema != d.Schema {
			return fmt.Errorf("arrowstream: the state of stateful operator %d in %s was written by a different query: its metadata %s records %s, this query needs %s; start the changed query on a new checkpoint location",
				d.OpID, filepath.Join(checkpointDir, "state"), meta, schema, d.Schema)
		}
		return nil
	}
	if err := l.writer.MkdirAll(dir); err != nil {
		return err
	}
	if err := l.writer.WriteSealedFile(path, []byte(d.Schema), false); err != nil && !errors.Is(err, checkpoint.ErrExists) {
		return err
	}
	return nil
}
