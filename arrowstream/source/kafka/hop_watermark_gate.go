package kafka

import (
	"context"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// The consumption gate of the downstream watermark (docs/cluster.md,
// "Event time across instances").
//
// The marks say which event time every input partition has reached *in
// the hop*. That alone is not a watermark a downstream instance may
// apply: a row in the hop is read by whichever instance owns its hop
// partition, and ownership moves. When instance X's watermark passed a
// row that sat unread in a hop partition owned by Y (Y was killed, Y's
// epoch over it aborted in a rebalance, or Y was just slow), and the
// partition then moved to X, X restored the partition's state from the
// changelog (without the row) and dropped the row as late: the window
// was emitted without it. That was the loss of
// TestClusterStatefulKillAcceptance (part of one hop partition's windows,
// from before the kill).
//
// So a candidate watermark from the marks is released only once every
// hop partition's group offset has reached the hop's last stable offset
// listed right after those marks were fetched: every row the candidate
// counts is then in some instance's committed state (the transaction
// that moved the offset also wrote the changelog), and whoever owns the
// partition next restores it. A row is late at any instance only if it
// entered the hop after what every input partition had reached was
// already there and consumed — the single-instance rule, independent of
// which instance reads it. The price is one round of commits of latency
// (each owner commits its partitions at the end of its next epoch) and
// that a hop partition nobody consumes (its owner died and the session
// timeout has not passed) holds every instance's watermark, as it must.

// maxGatePending bounds the candidates waiting for consumption; beyond
// it the middle one is dropped (the watermark then moves in coarser
// steps, never past what was consumed).
const maxGatePending = 64

// gateCandidate is a watermark computed from the marks with the hop's
// stable ends listed after them.
type gateCandidate struct {
	us   int64
	ends map[int32]int64
}

// hopGate holds candidates until the hop's group has consumed up to
// their ends.
type hopGate struct {
	pending  []gateCandidate // increasing us
	released int64
	has      bool
}

// offer adds candidate us whose rows all lie below ends.
func (g *hopGate) offer(us int64, ends map[int32]int64) {
	if g.has && us <= g.released {
		return
	}
	if n := len(g.pending); n > 0 && us <= g.pending[n-1].us {
		return // an earlier listing with the same reach is easier to pass
	}
	g.pending = append(g.pending, gateCandidate{us: us, ends: ends})
	if len(g.pending) > maxGatePending {
		mid := len(g.pending) / 2
		g.pending = append(g.pending[:mid], g.pending[mid+1:]...)
	}
}

// release takes the consumed offsets of the hop's group (partitions not
// in it have consumed nothing) and returns the largest candidate they
// cover, and whether any candidate was ever released.
func (g *hopGate) release(consumed map[int32]int64) (int64, bool) {
	n := 0
	for i, c := range g.pending {
		if !covered(c.ends, consumed) {
			break
		}
		g.released, g.has, n = c.us, true, i+1
	}
	g.pending = g.pending[n:]
	return g.released, g.has
}

func covered(ends, consumed map[int32]int64) bool {
	for p, end := range ends {
		if end <= 0 {
			continue
		}
		if c, ok := consumed[p]; !ok || c < end {
			return false
		}
	}
	return true
}

// hopStableEnds lists the hop topic's last stable offsets.
func hopStableEnds(ctx context.Context, admin *kadm.Client, topic string) (ends map[int32]int64, err error) {
	listed, err := admin.ListCommittedOffsets(ctx, topic)
	if err != nil {
		return nil, fmt.Errorf("kafka: watermark of %s: list stable offsets: %w", topic, err)
	}
	ends = map[int32]int64{}
	for p, lo := range listed[topic] {
		if lo.Err != nil {
			return nil, fmt.Errorf("kafka: watermark of %s: stable offset of partition %d: %w", topic, p, lo.Err)
		}
		ends[p] = lo.Offset
	}
	return ends, nil
}

// hopConsumed fetches the hop group's committed offsets of topic.
func hopConsumed(ctx context.Context, admin *kadm.Client, topic, group string) (map[int32]int64, error) {
	out := map[int32]int64{}
	offs, err := admin.FetchOffsets(ctx, group)
	if errors.Is(err, kerr.GroupIDNotFound) {
		return out, nil
	}
	if err != nil {
		return nil, fmt.Errorf("kafka: watermark of %s: offsets of group %s: %w", topic, group, err)
	}
	for p, o := range offs[topic] {
		if o.Err != nil {
			return nil, fmt.Errorf("kafka: watermark of %s: offset of partition %d in group %s: %w", topic, p, group, o.Err)
		}
		if o.At >= 0 {
			out[p] = o.At
		}
	}
	return out, nil
}
