package kafka

import (
	"context"
	"errors"

	"github.com/arrowstream/arrowstream/checkpoint"
)

// Group commit for the downstream stage's moving state. The engine commits
// an epoch's stores in one durable write when its provider is a
// checkpoint.GroupCommitter (one state log record, one fdatasync, nothing
// for a partition that did not change); the wrapper used to hide that, so
// each of the instance's state partitions committed its own files every
// epoch. The wrappers below keep the inner provider's group commit: the
// overlays of moved partitions are written into the inner stores, the
// inner provider commits them together, and then, as after the last
// single commit, the epoch's changes, hop offsets and bookmark go to Kafka
// in one transaction before the sink sees the epoch (state_move_txn.go).

// wrapMovingProvider wraps p, keeping its group-commit interfaces.
func wrapMovingProvider(p checkpoint.StateStoreProvider, m *stateMover) checkpoint.StateStoreProvider {
	base := &movingProvider{inner: p, m: m}
	gc, ok := p.(checkpoint.GroupCommitter)
	if !ok {
		return base
	}
	g := &movingGroupProvider{movingProvider: base, gc: gc}
	if egc, ok := p.(checkpoint.EpochLogGroupCommitter); ok {
		return &movingEpochLogProvider{movingGroupProvider: g, egc: egc}
	}
	return g
}

// movingGroupProvider is a movingProvider over a GroupCommitter.
type movingGroupProvider struct {
	*movingProvider
	gc checkpoint.GroupCommitter
}

func (p *movingGroupProvider) OpenStateLog(stateDir string) error { return p.gc.OpenStateLog(stateDir) }

func (p *movingGroupProvider) StateLogEnd() *checkpoint.StateLogMark { return p.gc.StateLogEnd() }

// CommitGroup implements checkpoint.GroupCommitter over the inner stores.
func (p *movingGroupProvider) CommitGroup(ctx context.Context, stores []checkpoint.StateStore) error {
	if len(stores) == 0 {
		return nil
	}
	return p.CommitGroupAt(ctx, stores[0].Version()+1, stores)
}

// CommitGroupAt implements checkpoint.GroupCommitter over the inner
// stores. With no stores (an epoch whose partitions were all carried
// forward; the wrapper's partitions are not Carriers today, so the engine
// does not ask for it) the inner provider writes the epoch's record alone.
func (p *movingGroupProvider) CommitGroupAt(ctx context.Context, next int64, stores []checkpoint.StateStore) error {
	if len(stores) == 0 {
		return p.gc.CommitGroupAt(ctx, next, nil)
	}
	moving := make([]*movingStore, len(stores))
	inner := make([]checkpoint.StateStore, len(stores))
	abortAll := func() {
		for _, st := range stores {
			st.Abort() // each movingStore tells the mover (idempotent)
		}
	}
	for i, st := range stores {
		switch s := st.(type) {
		case *movingStore:
			moving[i] = s
		case *movingLogStore:
			moving[i] = s.movingStore
		default:
			abortAll()
			return errors.New("kafka: cluster state: CommitGroup: a store is not of this provider's partitions")
		}
		inner[i] = moving[i].inner
	}
	for _, s := range moving {
		if s.over {
			if err := s.writeOverlay(); err != nil {
				abortAll()
				return err
			}
		}
	}
	if err := p.gc.CommitGroupAt(ctx, next, inner); err != nil {
		// The inner provider aborted every store; the epoch is forgotten.
		p.m.aborted()
		return err
	}
	last := false
	for _, s := range moving {
		last = p.m.committed(s.k, s.changes)
		s.changes = nil
	}
	if last {
		s := moving[len(moving)-1]
		if _, err := p.m.commitEpoch(ctx, s.inner.Version(), s.k.op); err != nil {
			p.m.aborted()
			return err
		}
	}
	return nil
}

// movingEpochLogProvider is a movingGroupProvider whose inner provider
// takes a state log opened in the query's epoch log.
type movingEpochLogProvider struct {
	*movingGroupProvider
	egc checkpoint.EpochLogGroupCommitter
}

func (p *movingEpochLogProvider) UseStateLog(stateDir string, l *checkpoint.StateLog) error {
	return p.egc.UseStateLog(stateDir, l)
}

var (
	_ checkpoint.GroupCommitter         = (*movingGroupProvider)(nil)
	_ checkpoint.EpochLogGroupCommitter = (*movingEpochLogProvider)(nil)
)
