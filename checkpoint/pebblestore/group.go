package pebblestore

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"sort"

	"github.com/cockroachdb/pebble/v2"

	"github.com/arrowstream/arrowstream/checkpoint"
)

// Group commit (checkpoint.GroupCommitter): with a state log, an epoch's
// changelogs of every partition go into one state log record (one
// fdatasync) instead of a <version>.changelog file each, and a partition
// whose epoch changed nothing writes nothing, not even a manifest, unless
// a snapshot version finds changes since its last manifest. A restore
// takes the newest manifest at or below the version, then the changelogs
// after it: from the state log for the versions it covers (no entry:
// unchanged), from <version>.changelog files before.

var _ checkpoint.GroupCommitter = (*Provider)(nil)

// OpenStateLog implements checkpoint.GroupCommitter.
func (p *Provider) OpenStateLog(stateDir string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.glog != nil {
		return nil
	}
	l, err := checkpoint.OpenCheckpointStateLog(stateDir, p.opts.Writer)
	if err != nil {
		return err
	}
	p.glog, p.stateDir = l, stateDir
	return nil
}

var _ checkpoint.EpochLogGroupCommitter = (*Provider)(nil)

// UseStateLog implements checkpoint.EpochLogGroupCommitter.
func (p *Provider) UseStateLog(stateDir string, l *checkpoint.StateLog) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.glog != nil && p.glog != l {
		return fmt.Errorf("pebblestore: the provider of %s already has a state log (%s)", stateDir, p.glog.Dir())
	}
	p.glog, p.stateDir = l, stateDir
	return nil
}

// StateLogEnd implements checkpoint.GroupCommitter.
func (p *Provider) StateLogEnd() *checkpoint.StateLogMark {
	p.mu.Lock()
	l := p.glog
	p.mu.Unlock()
	if l == nil {
		return nil
	}
	return l.End()
}

// CommitGroup implements checkpoint.GroupCommitter.
func (p *Provider) CommitGroup(ctx context.Context, stores []checkpoint.StateStore) error {
	if len(stores) == 0 {
		return nil
	}
	return p.CommitGroupAt(ctx, stores[0].Version()+1, stores)
}

// CommitGroupAt implements checkpoint.GroupCommitter.
func (p *Provider) CommitGroupAt(ctx context.Context, next int64, stores []checkpoint.StateStore) error {
	all := make([]*store, 0, len(stores))
	for _, st := range stores {
		s, ok := st.(*store)
		if !ok || s.p.glog == nil || s.p.glog != p.glog {
			for _, st := range stores {
				st.Abort()
			}
			return errors.New("pebblestore: CommitGroup: a store is not of this provider's group-committed partitions")
		}
		all = append(all, s)
	}
	if p.glog == nil {
		failGroup(all, 0)
		return errors.New("pebblestore: CommitGroup: the provider has no state log")
	}
	version := next - 1
	var deltas []checkpoint.StateDelta
	for i, s := range all {
		if s.version != version {
			err := fmt.Errorf("pebblestore: CommitGroup: %s reads version %d, the group commits version %d", s.p.dir, s.version, next)
			failGroup(all, i)
			return err
		}
		raw, err := s.commitGrouped(ctx)
		if err != nil {
			failGroup(all, i)
			return err
		}
		if raw != nil {
			deltas = append(deltas, checkpoint.StateDelta{Path: s.p.rel, Raw: raw})
		}
	}
	sort.Slice(deltas, func(i, j int) bool { return deltas[i].Path < deltas[j].Path })
	if err := p.glog.Append(version+1, deltas); err != nil {
		failGroup(all, len(all))
		return err
	}
	return p.purgeLog(version + 1)
}

// failGroup aborts the stores from i on and makes the partitions of the
// ones before (whose databases hold the epoch's changes) restore at their
// next Begin.
func failGroup(all []*store, i int) {
	for _, s := range all[:i] {
		s.p.mu.Lock()
		s.p.version = -1
		s.p.mu.Unlock()
	}
	for _, s := range all[i:] {
		s.Abort()
	}
}

// commitGrouped applies the epoch's batch and returns its changelog for
// the state log (nil when there is nothing to log): an empty batch writes
// nothing unless a snapshot version finds changes since the last
// manifest; a snapshot version copies the SST files and writes its
// manifest as without group commit.
func (s *store) commitGrouped(ctx context.Context) ([]byte, error) {
	if s.done {
		return nil, errors.New("pebblestore: state store already committed or aborted")
	}
	if s.err != nil {
		err := s.err
		s.Abort()
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		s.Abort()
		return nil, err
	}
	s.done = true
	defer s.acct.release() // the batch is written or dropped by then
	p := s.p
	p.mu.Lock()
	defer p.mu.Unlock()
	p.busy = false
	next := s.version + 1
	changelog := p.prov.opts.ChangelogCheckpointing && next%int64(p.prov.opts.MinDeltasForSnapshot) != 0
	if s.batch.Empty() && (changelog || p.snapshotCurrent) {
		s.batch.Close()
		p.version = next
		p.metrics = map[string]int64{}
		return nil, nil
	}
	if !changelog {
		if _, err := p.commit(s.batch, s.version, s.numKeys); err != nil {
			p.version = -1
			return nil, err
		}
		return nil, nil
	}
	repr := bytes.Clone(s.batch.Repr())
	err := s.batch.Commit(pebble.NoSync)
	s.batch.Close()
	if err != nil {
		p.version = -1
		return nil, fmt.Errorf("pebblestore: write batch of version %d to %s: %w", next, p.local, err)
	}
	raw := encodeChangelog(p.prov.zenc, next, s.numKeys, repr)
	p.version, p.numKeys, p.snapshotCurrent = next, s.numKeys, false
	p.metrics = map[string]int64{"pebbleChangelogBytes": int64(len(raw))}
	p.maybeCleanup(next)
	return raw, nil
}

// purgeLog drops the state log segments no partition needs: a partition
// restores its oldest retained version from its newest manifest at or
// below it and needs only the changelogs after that.
func (p *Provider) purgeLog(latest int64) error {
	p.mu.Lock()
	parts := p.parts
	p.mu.Unlock()
	bases := make(map[string]int64, len(parts))
	for _, part := range parts {
		if part.glog == nil {
			continue
		}
		oldest := latest - int64(p.opts.MinVersionsToRetain) + 1
		base := int64(0)
		part.mu.Lock()
		for v := range part.referenced {
			if v <= oldest && v > base {
				base = v
			}
		}
		part.mu.Unlock()
		bases[part.rel] = base
	}
	return p.glog.Purge(func(path string) (int64, bool) {
		b, ok := bases[path]
		return b, ok
	})
}
