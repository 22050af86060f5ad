package memsink

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
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

// recover rebuilds the table from its persisted records: the chain from
// the newest record back to its base, each link a record of the log or a
// per-epoch file of an earlier build. Records and files outside the chain
// (superseded or evicted ones a crash left behind) are dropped afterwards:
// files deleted, segments deleted once none of their records is live.
func (t *Table) recover(ctx context.Context) error {
	p := t.persist
	// Create the directory now: its presence tells CanRecover that this
	// query persists its sink, even before the first epoch is written.
	if err := p.w.MkdirAll(p.dir); err != nil {
		return fmt.Errorf("memsink: table %q: %w", t.Name(), err)
	}
	files, segs, err := p.list()
	if err != nil {
		return err
	}
	if err := p.scanLog(segs); err != nil {
		return err
	}
	names := slices.Clone(files)
	isFile := make(map[string]bool, len(files))
	for _, n := range files {
		isFile[n] = true
	}
	for n := range p.log.at {
		if !isFile[n] {
			names = append(names, n)
		}
	}
	if len(names) == 0 {
		return nil
	}
	sortFiles(names)
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
	inChain := make(map[string]bool, len(p.chain))
	for _, n := range p.chain {
		inChain[n] = true
	}
	for _, n := range files {
		if _, inLog := p.log.at[n]; !inChain[n] || inLog {
			t.log.Warn("deleting sink file outside the recovered chain", "file", p.path(n))
			if err := os.Remove(p.path(n)); err != nil && !errors.Is(err, fs.ErrNotExist) {
				t.log.Warn("cannot delete sink file", "file", p.path(n), "err", err)
			}
		}
	}
	p.adoptLog(inChain)
	t.log.Info("recovered memory sink", "dir", p.dir, "entries", len(chain), "segments", len(p.log.segs), "latest_epoch", t.LatestEpoch(), "rows", t.Size().Rows)
	return nil
}

// scanLog reads and checks the log's segments (sequence numbers segs,
// ascending) and indexes their records; a later copy of an entry wins. A
// torn tail of the newest segment (a crash during an append) is cut back
// durably to its last whole record; anywhere else it is damage.
func (p *persister) scanLog(segs []int64) error {
	l := p.log
	for i, seq := range segs {
		path := filepath.Join(p.dir, logSegmentName(seq))
		data, err := os.ReadFile(path)
		if err != nil {
			return fmt.Errorf("memsink: table %q: read %s: %w", p.t.Name(), path, err)
		}
		scan, err := decodeLogSegment(path, data)
		if err != nil {
			return fmt.Errorf("memsink: table %q: %w", p.t.Name(), err)
		}
		l.nextSeq = seq + 1
		if scan.torn != "" {
			if i < len(segs)-1 {
				return fmt.Errorf("memsink: table %q: %s: damaged at offset %d (%s) in a segment that is not the newest: %w",
					p.t.Name(), path, scan.valid, scan.torn, checkpoint.ErrCorrupt)
			}
			p.t.log.Warn("cutting the torn tail of the sink log (a crash during an append)", "file", path, "offset", scan.valid, "tail", scan.torn)
			if err := cutTail(path, scan.valid, l.syncs()); err != nil {
				return fmt.Errorf("memsink: table %q: cut the torn tail of %s at %d: %w", p.t.Name(), path, scan.valid, err)
			}
			if scan.valid < logHeaderLen {
				continue // removed: nothing of it was written
			}
		}
		seg := &logSegment{seq: seq, path: path, size: scan.valid}
		l.segs = append(l.segs, seg)
		for _, r := range scan.records {
			l.at[r.name()] = logLoc{seg: seg, ipc: r.ipc, n: r.n, frameAt: r.off}
		}
	}
	return nil
}

// cutTail truncates path to size, durably; a file with no whole header
// is removed.
func cutTail(path string, size int64, sync bool) error {
	if size < logHeaderLen {
		return os.Remove(path)
	}
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	defer f.Close()
	if err := f.Truncate(size); err != nil {
		return err
	}
	if sync {
		return checkpoint.Fdatasync(f)
	}
	return nil
}

// adoptLog keeps the log's records of the recovered chain (inChain) and
// deletes the segments left without any (all superseded or evicted),
// except the newest, which the next epoch appends to.
func (p *persister) adoptLog(inChain map[string]bool) {
	l := p.log
	for n, loc := range l.at {
		if inChain[n] {
			loc.seg.live++
		} else {
			delete(l.at, n)
		}
	}
	kept := l.segs[:0]
	for i, s := range l.segs {
		if s.live == 0 && i < len(l.segs)-1 {
			p.t.log.Info("deleting sink log segment without live records", "file", s.path)
			if err := os.Remove(s.path); err != nil && !errors.Is(err, fs.ErrNotExist) {
				p.t.log.Warn("cannot delete sink log segment", "file", s.path, "err", err)
			}
			continue
		}
		kept = append(kept, s)
	}
	l.segs = kept
}

// loadChain reads the newest entry and then each predecessor down to the
// newest entry's base, and returns them oldest first.
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
			return chain, fmt.Errorf("memsink: table %q: %s: chain broken (epoch %d, predecessor %d) before reaching the table's first entry %s: %w",
				p.t.Name(), p.where(name), f.meta.Epoch, f.meta.Prev, p.path(base), checkpoint.ErrCorrupt)
		}
		prev := epochFile(f.meta.Prev)
		if baseView && f.meta.Prev == baseEpoch {
			prev = base
		}
		if !present[prev] {
			by := name
			if loc, ok := p.log.at[name]; ok {
				by = loc.where()
			}
			return chain, fmt.Errorf("memsink: table %q: %s is missing: %s names epoch %d as its predecessor and the table's files start at %s (no file or log record holds it): %w",
				p.t.Name(), p.path(prev), by, f.meta.Prev, base, checkpoint.ErrCorrupt)
		}
		name = prev
	}
	slices.Reverse(chain)
	return chain, nil
}

// read reads and checks one entry: its log record, or its file.
func (p *persister) read(name string) (*loaded, error) {
	var raw []byte
	var err error
	loc, inLog := p.log.at[name]
	where := p.where(name)
	if inLog {
		raw, err = p.log.readIPC(loc)
	} else {
		raw, err = os.ReadFile(where)
	}
	if err != nil {
		return nil, fmt.Errorf("memsink: table %q: read %s: %w", p.t.Name(), where, err)
	}
	var m fileMeta
	var schema *arrow.Schema
	var recs []arrow.Record
	if inLog {
		m, schema, recs, err = decodeIPC(p.t.mem, raw)
	} else {
		m, schema, recs, err = decodeFile(p.t.mem, raw)
	}
	if err != nil {
		return nil, fmt.Errorf("memsink: table %q: %s: %w", p.t.Name(), where, err)
	}
	f := &loaded{name: name, meta: m}
	if err := p.adoptLoaded(f, schema, recs); err != nil {
		releaseAll(f.recs)
		return nil, fmt.Errorf("memsink: table %q: %s: %w", p.t.Name(), where, err)
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
		return fmt.Errorf("memsink: table %q: epoch %d is committed but the sink's records end at epoch %d: %s: %w",
			t.Name(), last, latest, t.persist.missing(last), checkpoint.ErrCorrupt)
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

// missing names where the record of epoch, committed but not found, was
// due: the end of the log's newest segment, its per-epoch file when the
// table has no log yet, or the directory when it holds neither.
func (p *persister) missing(epoch int64) string {
	if n := len(p.log.segs); n > 0 {
		return fmt.Sprintf("%s, the log's newest segment, ends before its record", p.log.segs[n-1].path)
	}
	if len(p.chain) > 0 {
		return fmt.Sprintf("%s is missing", p.path(epochFile(epoch)))
	}
	return fmt.Sprintf("%s holds no log segment and no epoch file", p.dir)
}
