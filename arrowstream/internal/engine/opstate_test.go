package engine

import (
	"context"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/internal/stateful"
	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
)

// opState runs one operator's declared state through the engine's
// lifecycle, as streamExec does, for executors built by hand in tests.
type singleOpState struct {
	op   stateful.Op
	life *stateLifecycle
}

// newSingleOpState keeps op's state in prov (nil: a memory provider
// writing through writer).
func newSingleOpState(mem memory.Allocator, op stateful.Op, writer *checkpoint.Writer, prov checkpoint.StateStoreProvider) singleOpState {
	l := newStateLifecycle(writer, mem, []stateful.StateDecl{op.State()})
	l.provider = prov
	return singleOpState{op: op, life: l}
}

// epoch opens the state for ep.
func (s singleOpState) epoch(ep stream.EpochInfo) (stateful.Epoch, error) {
	if err := s.life.open(ep.CheckpointDir, ep.ID, ep.NumPartitions, ep.Conf); err != nil {
		return stateful.Epoch{}, err
	}
	return stateful.Epoch{EpochInfo: ep, State: s.life.stores(0)}, nil
}

func (s singleOpState) HasState() bool { return true }

func (s singleOpState) CommitState(ctx context.Context, _ stream.EpochInfo) error {
	c, err := s.life.commit(ctx)
	if err != nil {
		s.op.Abort()
		return err
	}
	s.op.Committed(c[0])
	return nil
}

func (s singleOpState) AbortState(stream.EpochInfo) {
	s.life.abort()
	s.op.Abort()
}

func (s singleOpState) Close() error { return s.life.close() }

// StateLogEnd, ExpectStateLog and UseEpochLog implement stateLogMarker, as
// streamExec does: the state records go into the epoch log.
func (s singleOpState) StateLogEnd() *checkpoint.StateLogMark { return s.life.stateLogEnd() }

func (s singleOpState) ExpectStateLog(m *checkpoint.StateLogMark) { s.life.expectLogged = m }

func (s singleOpState) UseEpochLog(l *checkpoint.SegmentLog) error { return s.life.useEpochLog(l) }
