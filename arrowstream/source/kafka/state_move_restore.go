package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync/atomic"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
)

// RestoreStats counts the restores of state partitions on an instance
// (Cluster.Restores): how many partitions were restored before an epoch
// processed them, how many of those from the local snapshot plus the
// changelog's tail, and how many changelog records those restores read
// (a replay's re-reading of a committed epoch's restores is not
// counted).
type RestoreStats struct {
	Partitions   int64
	FromSnapshot int64
	Records      int64
}

// restoreCounters are a Cluster's RestoreStats.
type restoreCounters struct {
	partitions, fromSnapshot, records atomic.Int64
}

// Restores returns what the restores of this instance's state partitions
// have read since the Cluster was made.
func (c *Cluster) Restores() RestoreStats {
	return RestoreStats{Partitions: c.restores.partitions.Load(),
		FromSnapshot: c.restores.fromSnapshot.Load(), Records: c.restores.records.Load()}
}

// errTailGone: the changelog no longer holds the records after the local
// snapshot (its start moved past it, or it ends before it): the
// partition is restored from the changelog whole.
var errTailGone = errors.New("kafka: changelog: the tail after the local snapshot is not in the topic")

// readChangelog reads a state partition's changelog from its start to
// upTo (negative: its last stable offset; committed transactions only)
// and returns the state it holds, the last value of each key, deleted
// keys left out, the offset it read up to and the records it read
// (under mu).
func (m *stateMover) readChangelog(ctx context.Context, k partKey, upTo int64) (map[string][]byte, int64, int64, error) {
	out := map[string][]byte{}
	hi, n, err := m.scanChangelog(ctx, k, -1, upTo, func(key string, value []byte) {
		if value == nil {
			delete(out, key)
			return
		}
		out[key] = value
	})
	if err != nil {
		return nil, 0, 0, err
	}
	return out, hi, n, nil
}

// readChangelogTail reads a state partition's changelog from offset from
// (where the local snapshot's state was the changelog's) to its last
// stable offset, and returns the last change of each key in it (nil: the
// key was deleted), the offset it read up to and the records it read
// (under mu). errTailGone: the topic no longer holds those records.
func (m *stateMover) readChangelogTail(ctx context.Context, k partKey, from int64) (map[string][]byte, int64, int64, error) {
	tail := map[string][]byte{}
	hi, n, err := m.scanChangelog(ctx, k, from, -1, func(key string, value []byte) { tail[key] = value })
	if err != nil {
		return nil, 0, 0, err
	}
	return tail, hi, n, nil
}

// scanChangelog calls apply for each state record of partition k's
// changelog in [from, upTo) in order (from negative: the partition's
// start; upTo negative: its last stable offset), with the value copied
// and never nil for an upsert, nil for a deletion; it returns the offset
// it read up to and how many records it read (markers included).
func (m *stateMover) scanChangelog(ctx context.Context, k partKey, from, upTo int64, apply func(key string, value []byte)) (hi, n int64, err error) {
	topic, _, err := m.ensureChangelog(ctx, k.op)
	if err != nil {
		return 0, 0, err
	}
	src, err := NewSource(m.mem, SourceOptions{Brokers: m.c.opts.Brokers, Subscribe: []string{topic},
		StartingOffsets: OffsetSpec{Kind: "earliest"}, EndingOffsets: OffsetSpec{Kind: "latest"},
		FailOnDataLoss: true, PollTimeout: 120e9, BatchRows: 8192, Logger: m.c.opts.Logger})
	if err != nil {
		return 0, 0, err
	}
	defer src.Close()
	src.hop = true // read committed, up to the last stable offset
	start, err := src.listOffsets(ctx, true, []string{topic})
	if err != nil {
		return 0, 0, err
	}
	end, err := src.listOffsets(ctx, false, []string{topic})
	if err != nil {
		return 0, 0, err
	}
	lo, _ := start.get(topic, k.part)
	hi, ok := end.get(topic, k.part)
	if upTo >= 0 {
		if upTo > hi {
			return 0, 0, fmt.Errorf("kafka: changelog %s-%d ends at %d, before %d", topic, k.part, hi, upTo)
		}
		hi = upTo
	}
	if from >= 0 {
		// The tail must be whole: a start past from lost records (deleted
		// or compacted away with their partition's head) and an end before
		// it is not the changelog the snapshot was taken from.
		if !ok || from < lo || from > hi {
			return 0, 0, fmt.Errorf("%w: %s-%d holds [%d, %d), the snapshot is at %d", errTailGone, topic, k.part, lo, hi, from)
		}
		lo = from
	}
	if !ok || hi <= lo {
		return hi, 0, nil
	}
	rd, err := newReader(src, []*partitionRange{{topic: topic, partition: k.part, next: lo, end: hi}})
	if err != nil {
		return 0, 0, err
	}
	defer rd.Close()
	for {
		rec, err := rd.Next(ctx)
		if errors.Is(err, io.EOF) {
			return hi, n, nil
		}
		if err != nil {
			return 0, 0, fmt.Errorf("kafka: changelog %s-%d: %w", topic, k.part, err)
		}
		n += rec.NumRows()
		if err := applyChangelogRecords(rec.Column(0), rec.Column(1), apply); err != nil {
			rec.Release()
			return 0, 0, fmt.Errorf("kafka: changelog %s-%d: %w", topic, k.part, err)
		}
		rec.Release()
	}
}

// applyChangelogRecords calls apply for each state record of a batch of
// changelog records (key and value columns), skipping the epochs'
// markers; keys and values are copied (the batch is released after).
func applyChangelogRecords(keyCol, valCol arrow.Array, apply func(key string, value []byte)) error {
	keys, ok1 := keyCol.(*array.Binary)
	vals, ok2 := valCol.(*array.Binary)
	if !ok1 || !ok2 {
		return errors.New("unexpected Kafka row types")
	}
	for i := 0; i < keys.Len(); i++ {
		key := keys.Value(i)
		if string(key) == string(changelogMarkerKey) {
			continue // an epoch's marker
		}
		if keys.IsNull(i) || len(key) == 0 || key[0] != changelogKeyPrefix {
			return errors.New("a record without a state key")
		}
		sk := string(key[1:]) // copied: the record is released after
		if vals.IsNull(i) {
			apply(sk, nil)
			continue
		}
		v := vals.Value(i)
		if len(v) == 0 || v[0] != changelogKeyPrefix {
			return errors.New("a record without a state value")
		}
		apply(sk, append(make([]byte, 0, len(v)-1), v[1:]...))
	}
	return nil
}
