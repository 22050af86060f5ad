package checkpoint

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"slices"
	"strings"
)

// GroupCommitter is implemented by a provider whose partitions commit an
// epoch together: the deltas of every partition that changed, of every
// operator, go into one state log record made durable with one fdatasync
// (StateLog), and a partition that did not change writes nothing. The
// engine uses it when its provider has it; the state log record is
// durable before CommitGroup returns, so before the epoch log's commit
// record that makes the epoch's state the one a restart resumes from.
type GroupCommitter interface {
	// OpenStateLog opens the state log of the checkpoint whose state
	// directory is stateDir (<checkpoint>/state). It is called before any
	// partition is opened.
	OpenStateLog(stateDir string) error
	// CommitGroup commits stores, all opened by this provider's
	// partitions at one version, as version+1. On error none is
	// committed and all are aborted.
	CommitGroup(ctx context.Context, stores []StateStore) error
	// CommitGroupAt is CommitGroup for version next, which names the
	// epoch when stores is empty: an epoch whose partitions were all
	// carried forward (Carrier) still writes its state log record (no
	// partition changed), so that a re-run epoch's record supersedes the
	// first run's and the log's end is the epoch's.
	CommitGroupAt(ctx context.Context, next int64, stores []StateStore) error
	// StateLogEnd is where the state log ends (nil: no record yet),
	// which the epoch's commit record carries (CommitMetadata.StateLog).
	StateLogEnd() *StateLogMark
}

// EpochLogGroupCommitter is a GroupCommitter that can take a state log
// opened for it (OpenQueryStateLog), such as one whose records live in the
// query's epoch log: the engine then appends an epoch's offsets, state
// and previous commit records in one write.
type EpochLogGroupCommitter interface {
	GroupCommitter
	// UseStateLog makes l the provider's state log, for the checkpoint
	// whose state directory is stateDir. It is called, instead of
	// OpenStateLog, before any partition is opened; the provider closes
	// l when it closes.
	UseStateLog(stateDir string, l *StateLog) error
}

var _ EpochLogGroupCommitter = (*MemoryProvider)(nil)

// UseStateLog implements EpochLogGroupCommitter.
func (m *MemoryProvider) UseStateLog(stateDir string, l *StateLog) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.glog != nil && m.glog != l {
		return fmt.Errorf("checkpoint: the state store provider of %s already has a state log (%s)", stateDir, m.glog.Dir())
	}
	m.glog, m.stateDir = l, stateDir
	return nil
}

// StateLogEnd implements GroupCommitter.
func (m *MemoryProvider) StateLogEnd() *StateLogMark {
	m.mu.Lock()
	l := m.glog
	m.mu.Unlock()
	if l == nil {
		return nil
	}
	return l.End()
}

var _ GroupCommitter = (*MemoryProvider)(nil)

// OpenStateLog implements GroupCommitter.
func (m *MemoryProvider) OpenStateLog(stateDir string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.glog != nil {
		return nil
	}
	l, err := OpenCheckpointStateLog(stateDir, m.w)
	if err != nil {
		return err
	}
	m.glog, m.stateDir = l, stateDir
	return nil
}

// attach makes a partition opened after OpenStateLog group-committed.
// Callers hold m.mu.
func (m *MemoryProvider) attach(p *StorePartition) error {
	if m.glog == nil {
		return nil
	}
	rel, err := StatePartitionPath(m.stateDir, p.dir)
	if err != nil {
		return err
	}
	p.glog, p.rel = m.glog, rel
	// Packs are read whatever the partition writes
	// (PartitionSnapshotFiles).
	op := filepath.Dir(p.dir)
	if m.packs == nil {
		m.packs = map[string]*snapPacks{}
	}
	if m.packs[op] == nil {
		m.packs[op] = newSnapPacks(op, m.w)
	}
	p.packs, p.packPart = m.packs[op], filepath.Base(p.dir)
	if m.byRel == nil {
		m.byRel = map[string]*StorePartition{}
	}
	m.byRel[rel] = p
	return nil
}

// CommitGroup implements GroupCommitter: every store's changes are
// encoded, the changed ones appended as one record, then every partition
// advances to version+1.
func (m *MemoryProvider) CommitGroup(ctx context.Context, stores []StateStore) error {
	if len(stores) == 0 {
		return nil
	}
	return m.CommitGroupAt(ctx, stores[0].Version()+1, stores)
}

// CommitGroupAt implements GroupCommitter.
func (m *MemoryProvider) CommitGroupAt(ctx context.Context, next int64, stores []StateStore) error {
	all := make([]*store, len(stores))
	abort := func() {
		for _, s := range all {
			if s != nil {
				s.Abort()
			}
		}
	}
	for i, st := range stores {
		s, ok := st.(*store)
		if !ok || s.p.glog == nil || s.p.glog != m.glog {
			for _, st := range stores {
				st.Abort()
			}
			return errors.New("checkpoint: CommitGroup: a store is not of this provider's group-committed partitions")
		}
		all[i] = s
	}
	if m.glog == nil {
		abort()
		return errors.New("checkpoint: CommitGroup: the provider has no state log")
	}
	version := next - 1
	var deltas []StateDelta // the changed partitions: few, or none
	for _, s := range all {
		if s.version != version {
			abort()
			return fmt.Errorf("checkpoint: CommitGroup: %s reads version %d, the group commits version %d", s.p.dir, s.version, next)
		}
		d, changed, err := s.prepareGroup(ctx)
		if err != nil {
			abort()
			return fmt.Errorf("checkpoint: commit state %s: %w", s.p.dir, err)
		}
		if changed {
			deltas = append(deltas, d)
		}
	}
	slices.SortFunc(deltas, func(a, b StateDelta) int { return strings.Compare(a.Path, b.Path) })
	if err := m.glog.Append(next, deltas); err != nil {
		abort()
		return err
	}
	var due maintDue
	for _, s := range all {
		s.due = &due
		s.finish(next, false)
	}
	// The snapshots this commit made due are written per operator, one
	// pack each (statestore_packjob.go).
	due.submit(m.opts.maint)
	return m.purgeLog(next)
}

// purgeLog drops the state log segments that no partition needs any
// more: a partition's oldest retained version is rebuilt from its newest
// snapshot at or below latest - MinVersionsToRetain (the base maintenance
// keeps), so it needs only the entries after that base.
//
// The log asks only for the partitions named by the records it must
// decide on (the oldest segment's, until one is still needed: usually the
// first), and a partition answers from the base versions it published
// (noteBases) without its lock: an epoch does not visit every partition,
// and the log's lock is never held while waiting for a partition's.
func (m *MemoryProvider) purgeLog(latest int64) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.glog.Purge(func(path string) (int64, bool) {
		p := m.byRel[path]
		if p == nil || p.glog == nil {
			return 0, false
		}
		return p.purgeBase(latest - int64(p.opts.MinVersionsToRetain)), true
	})
}

// noteBases publishes the versions of the partition's bases (snapshots
// and segments) for purgeLog, which reads them without p.mu. Callers hold
// p.mu and call it after every change of p.files that adds or removes a
// base (rare: maintenance), so the published list is never older than the
// files.
func (p *StorePartition) noteBases() {
	var vs []int64
	for k := range p.files {
		if isBase(k) {
			vs = append(vs, k.version)
		}
	}
	slices.Sort(vs)
	p.baseVers.Store(&vs)
}

// purgeBase is the newest base at or below oldest (0: none, or the files
// not indexed yet).
func (p *StorePartition) purgeBase(oldest int64) int64 {
	vs := p.baseVers.Load()
	if vs == nil {
		return 0
	}
	i, found := slices.BinarySearch(*vs, oldest)
	if found {
		return oldest
	}
	if i == 0 {
		return 0
	}
	return (*vs)[i-1]
}

// changedSince reports whether the partition has changes after version
// from up to to (delta files, or entries of the state log): a partition
// without needs no new snapshot, its newest one still describes it.
//
// Its cost is in the partition's files and log entries, not in the
// versions between from and to: an unchanged partition keeps its old
// snapshot, so that range grows with every epoch, and maintenance asks
// for every partition after every epoch.
func (p *StorePartition) changedSince(files map[fileKey]bool, from, to int64) bool {
	cover := int64(math.MaxInt64)
	if p.glog != nil {
		cover = p.glog.CoverFrom()
	}
	for k := range files {
		if k.kind == "delta" && k.version > from && k.version <= to && k.version < cover {
			return true
		}
	}
	return p.glog != nil && p.glog.Changed(p.rel, from, to)
}

// takeMaintErr fails (and aborts) the store when the context is done or
// the partition's background maintenance failed.
func (s *store) takeMaintErr(ctx context.Context) error {
	if err := ctx.Err(); err != nil {
		s.Abort()
		return err
	}
	p := s.p
	p.mu.Lock()
	maintErr := p.maintErr
	p.maintErr = nil
	p.mu.Unlock()
	if maintErr != nil {
		s.Abort()
		return maintErr
	}
	return nil
}

// prepare checks that the store can commit and encodes its delta (always
// when encode is set, else only when it changed anything). On error the
// store is aborted.
func (s *store) prepare(ctx context.Context, encode bool) (raw []byte, changed bool, err error) {
	if s.done {
		return nil, false, errors.New("checkpoint: state store already committed or aborted")
	}
	if s.cl != nil {
		return s.prepareChangelog(ctx, encode)
	}
	if s.err != nil {
		err := s.err
		s.Abort()
		return nil, false, err
	}
	if err := s.takeMaintErr(ctx); err != nil {
		return nil, false, err
	}
	changed = len(s.pending) > 0 || len(s.deleted) > 0
	s.changed = changed
	if !changed && !encode {
		return nil, false, nil
	}
	keys := make([]string, 0, len(s.pending)+len(s.deleted))
	for k := range s.pending {
		keys = append(keys, k)
	}
	for k := range s.deleted {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	raw, err = encodeState(s.p.opts.Allocator, keys, s.pending, s.deleted)
	if err != nil {
		s.Abort()
		return nil, false, fmt.Errorf("checkpoint: encode state delta for %s: %w", s.p.dir, err)
	}
	return raw, changed, nil
}

// prepareGroup is prepare for a group commit: a changelog's delta is not
// encoded here but handed to the state log, which encodes it from the
// partition's arena straight into the epoch's record (the arena stays
// the store's until finish or Abort).
func (s *store) prepareGroup(ctx context.Context) (StateDelta, bool, error) {
	if s.done || s.cl == nil {
		raw, changed, err := s.prepare(ctx, false)
		return StateDelta{Path: s.p.rel, Raw: raw}, changed, err
	}
	changed, err := s.checkChangelog(ctx)
	if err != nil || !changed {
		return StateDelta{}, false, err
	}
	return StateDelta{Path: s.p.rel, enc: s.cl.arena}, true, nil
}

// finish applies a prepared commit whose delta is durable (a file when
// file is set) and publishes version next.
func (s *store) finish(next int64, file bool) {
	if s.cl != nil {
		s.finishChangelog(next, file)
		return
	}
	p := s.p
	p.mu.Lock()
	for k, v := range s.pending {
		if old, ok := p.data[k]; ok {
			p.bytes -= int64(len(k) + len(old))
		}
		p.data[k] = v
		p.bytes += int64(len(k) + len(v))
		p.sinceSnap += int64(len(k) + len(v))
	}
	for k := range s.deleted {
		if old, ok := p.data[k]; ok {
			p.bytes -= int64(len(k) + len(old))
			delete(p.data, k)
		}
		p.sinceSnap += int64(len(k))
	}
	p.memBytes.Store(p.bytes)
	s.published(next, file)
}

// logged reports whether version v of the partition is the state log's
// to answer (it covers v): then a missing entry means "unchanged", and a
// <v>.delta file (an older run's) is not read.
func (p *StorePartition) logged(v int64) bool {
	return p.glog != nil && v >= p.glog.CoverFrom()
}

// hasDelta reports whether version v's changes can be read: from the
// state log (which covers it and has not purged it), or from <v>.delta.
func (p *StorePartition) hasDelta(files map[fileKey]bool, v int64) bool {
	return p.logged(v) && v >= p.glog.heldFrom() || files[fileKey{v, "delta"}]
}

// applyDelta applies version v's changes to data and returns the bytes
// read: from the state log when it covers v (through r; nothing when the
// partition did not change), else from <v>.delta.
func (p *StorePartition) applyDelta(r *logReader, files map[fileKey]bool, v, target int64, data map[string][]byte) (int, error) {
	if p.logged(v) {
		ref, ok := p.glog.lookup(p.rel, v)
		if !ok {
			return 0, nil
		}
		raw, err := r.read(ref)
		if err != nil {
			return 0, err
		}
		if err := decodeState(p.opts.Allocator, raw, data); err != nil {
			return 0, fmt.Errorf("checkpoint: %s: delta of %s version %d at offset %d: %w", ref.seg.path, p.rel, v, ref.off, err)
		}
		return len(raw), nil
	}
	if !files[fileKey{v, "delta"}] {
		return 0, fmt.Errorf("checkpoint: state %s: cannot load version %d: %s is missing: %w", p.dir, target, p.file(v, "delta"), ErrCorrupt)
	}
	return p.readInto(p.file(v, "delta"), data)
}
