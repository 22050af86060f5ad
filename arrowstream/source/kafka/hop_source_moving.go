package kafka

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/vector"
)

// The downstream source of a hop whose state moves (state_move.go) does
// not claim its ranges: the epoch's transaction commits them with the
// state changes. Read decides which planned ranges the epoch reads:
//
//   - a replay of an epoch whose transaction committed (its claims file
//     is the one the instance's bookmark names) reads exactly the ranges
//     it read then;
//   - otherwise the epoch reads each planned range whose partition this
//     instance owns now and whose committed offset (stable: no
//     transaction pending) is still the range's start; the others moved
//     on. A decision that differs from the plan is written to the claims
//     file before reading. One that reads the whole plan (the usual
//     case) writes nothing: the plan is durable in the offset log
//     (DurablePlan), so a replay of a committed epoch without a claims
//     file reads the plan. A claims file an earlier attempt of the same
//     epoch left is removed (and the removal synced) first, so a missing
//     file always means the whole plan. That saved a sealed file, its
//     fsync and its directory's per downstream epoch.

// WrapStateProvider implements arrowstream.StateMover: the downstream
// stage's state partitions record their changes for the changelog topic
// and take the changelog's state when their hop partition moves here.
func (s *hopSource) WrapStateProvider(p checkpoint.StateStoreProvider) checkpoint.StateStoreProvider {
	return wrapMovingProvider(p, s.mover)
}

// clusterReadMoving is clusterRead for a hop source whose state moves.
func (s *Source) clusterReadMoving(ctx context.Context, end stream.Offset) (vector.Operator, error) {
	planned, err := decodeClusterOffset(end)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(end)
	name := hex.EncodeToString(sum[:12])
	path := filepath.Join(s.dir, claimsDir, name)
	done, err := s.mover.replayDone(ctx, name)
	if err != nil {
		return nil, err
	}
	hop := s.opts.Subscribe[0]
	gen := s.member.generation()
	var decided clusterOffset
	owned := map[int32]bool{}
	for _, p := range s.member.ownedNow()[hop] {
		owned[p] = true
	}
	if done {
		b, err := checkpoint.ReadSealedFile(path)
		switch {
		case errors.Is(err, os.ErrNotExist):
			decided = planned // the epoch read its whole plan
		case err != nil:
			return nil, fmt.Errorf("kafka: the replay of a committed epoch needs its claims file: %w", err)
		default:
			if decided, err = decodeClusterOffset(b); err != nil {
				return nil, fmt.Errorf("kafka: claims %s: %w", path, err)
			}
		}
		s.logger.Info("cluster: replay of an epoch whose transaction committed: its ranges are read again, Kafka is not written", "ranges", string(decided.encode()))
	} else {
		committed, err := stableOffsets(ctx, s.member)
		if err != nil {
			return nil, err
		}
		decided = clusterOffset{From: PartitionOffsets{}, End: PartitionOffsets{}}
		for t, ps := range planned.End {
			for p, to := range ps {
				from, ok := planned.From.get(t, p)
				if !ok {
					return nil, fmt.Errorf("kafka: cluster offset has an end but no start for %s-%d", t, p)
				}
				if c, ok := committed.get(t, p); ok && c == from && t == hop && owned[p] {
					decided.From.set(t, p, from)
					decided.End.set(t, p, to)
				}
			}
		}
		if err := removeDurably(path); err != nil {
			return nil, fmt.Errorf("kafka: claims: %w", err)
		}
		if !decided.sameAs(planned) {
			if err := s.recordDecision(path, decided); err != nil {
				return nil, err
			}
		}
	}
	s.mover.noteRead(owned, decided, name)
	s.noteDecided(end, planned, decided, gen)
	ranges, err := s.planRanges(ctx, decided.From, decided.End)
	if err != nil {
		return nil, err
	}
	s.consumed = decided.End
	s.noteReadUpTo(decided.End)
	if len(ranges) == 0 {
		return vector.NewScan(s.schema)
	}
	return newReader(s, ranges)
}

// removeDurably removes path, if it exists, and syncs its directory, so
// that the file cannot come back after a crash of the machine.
func removeDurably(path string) error {
	err := os.Remove(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	if err != nil {
		return err
	}
	d, err := os.Open(filepath.Dir(path))
	if err != nil {
		return err
	}
	defer d.Close()
	return d.Sync()
}

// stableOffsets fetches the group's committed offsets with no
// transaction pending on them (RequireStable), waiting while one is: a
// partition that just moved here may still have its previous owner's
// last transaction completing.
func stableOffsets(ctx context.Context, gm *groupMember) (PartitionOffsets, error) {
	wait := 5 * time.Millisecond
	for {
		ver := gm.cacheVersion()
		committed, _, err := gm.committedOffsets(kadm.RequireStable(ctx))
		if err == nil {
			gm.noteStable(committed, ver) // plans from it (cluster_offset_cache.go)
		}
		if err == nil || !errors.Is(err, kerr.UnstableOffsetCommit) {
			return committed, err
		}
		t := time.NewTimer(wait)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("kafka: cluster group %s: waiting for stable offsets: %w", gm.group, ctx.Err())
		case <-t.C:
		}
		wait = min(2*wait, 200*time.Millisecond)
	}
}

// DurablePlan implements stream.DurablePlanSource: an epoch's offsets are
// durable before it reads, so that an epoch whose transaction committed
// is replayed with the same offsets (its bookmark names them), never
// planned again with others.
func (s *hopSource) DurablePlan() bool { return s.mover != nil }

var _ stream.DurablePlanSource = (*hopSource)(nil)
