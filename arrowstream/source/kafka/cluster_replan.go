package kafka

import (
	"bytes"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
)

// An epoch of a cluster-mode source reads only the planned ranges it
// could claim (the downstream of a hop: those it owns whose committed
// offset is still the range's start). A range it could not read goes to
// the next plan. That plan is made from the group's committed offsets and
// the partitions' ends, so when nothing moved since (the claim was
// refused by the coordinator for a rebalance, no input arrived, the
// assignment is the same) it is exactly the last epoch's offset, and the
// engine takes an offset equal to the committed one for "no new data":
// the rows waited, unread, until more input came to those partitions or
// the assignment changed (session 26: under load a claim raced the
// rebalance that followed an instance joining, and half an input batch
// stayed unread for the whole two minutes of the test's wait).
//
// Such a plan is therefore made distinct by a retry count in the offset
// ({"v":1,"from":..,"end":..,"retry":n}; readers of older checkpoints
// see no count, older readers ignore it), so that the engine runs it and
// Read decides it again. It waits until the member's generation changed
// since the short epoch decided (the refused claims raced a rebalance
// that has now completed) or replanDelay passed (a refusal no rebalance
// follows), so that a rebalance still under way does not run an epoch
// that reads nothing at every trigger.

// replanDelay is how long the ranges of a short epoch wait to be planned
// again while the member's generation is unchanged.
const replanDelay = time.Second

// shortRead is the last epoch whose decision read less than its plan.
type shortRead struct {
	end stream.Offset // the epoch's planned offset
	gen int32         // the member's generation when it decided
	at  time.Time     // when it decided (s.now)
}

// generation is the member's group generation (-1 while it has none).
func (gm *groupMember) generation() int32 {
	_, gen := gm.client.GroupMetadata()
	return gen
}

// noteDecided records whether the epoch planned as end read its whole
// plan (gen: the member's generation before it decided).
func (s *Source) noteDecided(end stream.Offset, planned, decided clusterOffset, gen int32) {
	if decided.sameAs(planned) {
		s.short = shortRead{}
		return
	}
	s.short = shortRead{end: end, gen: gen, at: s.now()}
}

// replan returns whether plan may run after the epoch planned as start:
// a plan of other ranges always; one of start's ranges again (start read
// none of them) with its retry count raised, once the member's generation
// changed since start decided or replanDelay passed (always after a
// restart: when start decided is not known).
func (s *Source) replan(start stream.Offset, plan *clusterOffset) bool {
	if start == nil {
		return true
	}
	prev, err := decodeClusterOffset(start)
	if err != nil || !plan.sameAs(prev) {
		return true
	}
	if sh := s.short; bytes.Equal(sh.end, start) && s.member.generation() == sh.gen && s.now().Sub(sh.at) < replanDelay {
		return false
	}
	plan.Retry = prev.Retry + 1
	s.member.logger.Info("cluster: ranges an epoch could not read are planned again (the group's offsets did not move)",
		"ranges", string(plan.encode()))
	return true
}
