package memsink

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"slices"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
)

// loaded is a persisted file read back and checked.
type loaded struct {
	name  string
	meta  fileMeta
	recs  []arrow.Record // owned; the table's schema (views: plus the internal columns)
	bytes int64
}

func releaseLoaded(files []*loaded) {
	for _, f := range files {
		releaseAll(f.recs)
		f.recs = nil
	}
}

// recover rebuilds the table from its persisted files: the chain from the
// newest file back to its base. Files outside the chain (superseded or
// evicted ones a crash left behind, writes that never committed) are
// deleted afterwards.
func (t *Table) recover(ctx context.Context) error {
	p := t.persist
	// Create the directory now: its presence tells CanRecover that this
	// query persists its sink, even before the first epoch is written.
	if err := p.w.MkdirAll(p.dir); err != nil {
		return fmt.Errorf("memsink: table %q: %w", t.Name(), err)
	}
	names, err := p.list()
	if err != nil || len(names) == 0 {
		return err
	}
	chain, err := p.loadChain(ctx, names)
	if err != nil {
		return err
	}
	if t.view != nil {
		err = t.rebuildView(chain)
	} else {
		t.rebuildSegments(chain)
	}
	releaseLoaded(chain)
	if err != nil {
		return fmt.Errorf("memsink: table %q: recover: %w", t.Name(), err)
	}
	for _, n := range names {
		if !slices.Contains(p.chain, n) {
			t.log.Warn("deleting sink file outside the recovered chain", "file", p.path(n))
			if err := os.Remove(p.path(n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				t.log.Warn("cannot delete sink file", "file", p.path(n), "err", err)
			}
		}
	}
	t.log.Info("recovered memory sink", "dir", p.dir, "files", len(chain), "latest_epoch", t.LatestEpoch(), "rows", t.Size().Rows)
	return nil
}

// loadChain reads the newest file and then each predecessor down to the
// newest file's base, and returns them oldest first.
func (p *persister) loadChain(ctx context.Context, names []string) (chain []*loaded, err error) {
	defer func() {
		if err != nil {
			releaseLoaded(chain)
			chain = nil
		}
	}()
	present := map[string]bool{}
	for _, n := range names {
		present[n] = true
	}
	name := names[len(names)-1]
	var base string
	baseEpoch, baseView := int64(0), false
	for {
		if err := ctx.Err(); err != nil {
			return chain, err
		}
		f, err := p.read(name)
		if err != nil {
			return chain, err
		}
		chain = append(chain, f)
		if base == "" {
			base = f.meta.Base
			baseEpoch, baseView, _ = parseFileName(base)
		}
		if name == base {
			break
		}
		if f.meta.View || f.meta.Prev < 0 || f.meta.Prev >= f.meta.Epoch || f.meta.Epoch <= baseEpoch {
			return chain, fmt.Errorf("memsink: table %q: %s: chain broken (epoch %d, predecessor %d) before reaching the table's first file %s: %w",
				p.t.Name(), p.path(name), f.meta.Epoch, f.meta.Prev, p.path(base), checkpoint.ErrCorrupt)
		}
		prev := epochFile(f.meta.Prev)
		if baseView && f.meta.Prev == baseEpoch {
			prev = base
		}
		if !present[prev] {
			return chain, fmt.Errorf("memsink: table %q: %s is missing: %s names epoch %d as its predecessor and the table's files start at %s: %w",
				p.t.Name(), p.path(prev), name, f.meta.Prev, base, checkpoint.ErrCorrupt)
		}
		name = prev
	}
	slices.Reverse(chain)
	return chain, nil
}

// read reads and checks one file.
func (p *persister) read(name string) (*loaded, error) {
	path := p.path(name)
	raw, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("memsink: table %q: read %s: %w", p.t.Name(), path, err)
	}
	m, schema, recs, err := decodeFile(p.t.mem, raw)
	if err != nil {
		return nil, fmt.Errorf("memsink: table %q: %s: %w", p.t.Name(), path, err)
	}
	f := &loaded{name: name, meta: m}
	if err := p.adoptLoaded(f, schema, recs); err != nil {
		releaseAll(f.recs)
		return nil, fmt.Errorf("memsink: table %q: %s: %w", p.t.Name(), path, err)
	}
	return f, nil
}

// adoptLoaded checks a decoded file against its name and the table and
// takes its records (owned) with the table's schema.
func (p *persister) adoptLoaded(f *loaded, schema *arrow.Schema, recs []arrow.Record) error {
	epoch, view, _ := parseFileName(f.name)
	if f.meta.Epoch != epoch || f.meta.View != view {
		releaseAll(recs)
		return fmt.Errorf("metadata says epoch %d (view snapshot %v), the name says otherwise: %w", f.meta.Epoch, f.meta.View, checkpoint.ErrCorrupt)
	}
	want := p.t.schema
	if view {
		if p.t.view == nil {
			releaseAll(recs)
			return fmt.Errorf("a view snapshot, but the table is not a view (UpdateAsView)")
		}
		want = p.t.view.full
	}
	if err := checkShape(schema, want); err != nil {
		releaseAll(recs)
		return fmt.Errorf("persisted rows do not fit the query: %w", err)
	}
	seen := map[*memory.Buffer]struct{}{}
	for _, r := range recs {
		f.bytes += recordBytes(seen, r)
		out := array.NewRecord(want, r.Columns(), r.NumRows())
		r.Release()
		if out.NumRows() == 0 {
			out.Release()
			continue
		}
		f.recs = appendSplit(f.recs, out)
	}
	return nil
}

func (f *loaded) info() EpochInfo {
	return EpochInfo{Epoch: f.meta.Epoch, Rows: f.meta.EpochRows, Bytes: f.bytes, CommitTime: f.meta.Commit, Replaced: f.meta.Replaced}
}

// rebuildSegments publishes the epochs of chain (taking their records),
// applying the current retention limits.
func (t *Table) rebuildSegments(chain []*loaded) {
	segs := make([]*segment, len(chain))
	for i, f := range chain {
		segs[i] = newSegment(f.info(), f.recs)
		f.recs = nil
	}
	// Each segment holds one epoch, so evict drops whole segments.
	kept, evicted, _ := t.evict(segs, chain[0].meta.Prev)
	k := len(segs) - len(kept)
	t.publish(newVersion(chain[len(chain)-1].meta.Epoch, evicted, kept, nil, nil))
	for _, s := range segs {
		s.release()
	}
	t.persist.chain = t.persist.chain[:0]
	for _, f := range chain[k:] {
		t.persist.chain = append(t.persist.chain, f.name)
	}
}

// rebuildView loads the view snapshot the chain may start with, replays
// the epochs after it and publishes the retained states.
func (t *Table) rebuildView(chain []*loaded) error {
	var states []*viewState
	defer func() {
		for _, s := range states {
			s.release()
		}
	}()
	lim := t.limits()
	push := func(st *viewState) {
		states = append(states, st)
		k := lim.evictStates(states)
		for _, s := range states[:k] {
			s.release()
		}
		states = states[k:]
	}
	rest := chain
	if f := chain[0]; f.meta.View {
		recs := f.recs
		f.recs = nil
		if err := t.view.load(recs); err != nil {
			return fmt.Errorf("%s: %w", t.persist.path(f.name), err)
		}
		push(t.view.state(f.info()))
		rest = chain[1:]
	}
	var rowsSince int64
	for _, f := range rest {
		recs := f.recs
		f.recs = nil
		if err := t.view.apply(f.info(), recs); err != nil {
			return fmt.Errorf("%s: %w", t.persist.path(f.name), err)
		}
		if _, err := t.view.compact(); err != nil {
			return fmt.Errorf("%s: %w", t.persist.path(f.name), err)
		}
		push(t.view.state(f.info()))
		rowsSince += f.meta.Rows
	}
	t.publish(newVersion(chain[len(chain)-1].meta.Epoch, -1, nil, states, t.view))
	t.persist.chain = t.persist.chain[:0]
	for _, f := range chain {
		t.persist.chain = append(t.persist.chain, f.name)
	}
	t.persist.rowsSinceBase = rowsSince
	return nil
}

// checkCommitted compares the recovered table with the query's commit
// log: every committed epoch went through AddBatch, which persisted it
// before the commit, so a table whose newest epoch is older than the last
// commit has lost files (the newest one deleted, the directory replaced),
// and resuming would silently drop those rows. Complete mode is exempt:
// its next epoch rewrites the whole table.
func (t *Table) checkCommitted() error {
	if t.info.Mode == stream.Complete {
		return nil
	}
	if ok, err := checkpoint.HasEpochLog(t.info.CheckpointDir); err != nil || !ok {
		return nil // a new query: nothing committed
	}
	offsets, log, err := checkpoint.OpenEpochLogs(t.info.CheckpointDir, t.opts.Writer)
	if err != nil {
		return fmt.Errorf("memsink: table %q: %w", t.Name(), err)
	}
	defer log.Close()
	last, _, ok, err := log.Latest()
	if err != nil {
		return fmt.Errorf("memsink: table %q: %w", t.Name(), err)
	}
	if latest := t.LatestEpoch(); ok && latest < last {
		return fmt.Errorf("memsink: table %q: epoch %d is committed but the sink's files end at epoch %d: %s is missing: %w",
			t.Name(), last, latest, t.persist.path(epochFile(last)), checkpoint.ErrCorrupt)
	}
	// The sink sees an epoch only after its offsets are durable: a sink
	// ahead of the offset log means the log lost records (a segment cut
	// short or deleted), and re-planning those epochs would read other
	// data under the same epoch ids, which the sink would then skip.
	lastOff, _, okOff, err := offsets.Latest()
	if err != nil {
		return fmt.Errorf("memsink: table %q: %w", t.Name(), err)
	}
	if latest := t.LatestEpoch(); latest >= 0 && (!okOff || lastOff < latest) {
		end, next := "is empty", int64(0)
		if okOff {
			end, next = "ends at "+offsets.EntryName(lastOff), lastOff+1
		}
		return fmt.Errorf("memsink: table %q: the sink holds epoch %d but the offset log %s (%s is missing): the log lost records: %w",
			t.Name(), latest, end, offsets.EntryName(next), checkpoint.ErrCorrupt)
	}
	return nil
}
