package kafka

import (
	"context"
	"errors"
	"fmt"
	"io"

	"github.com/apache/arrow/go/v17/arrow/array"
)

// readChangelog reads a state partition's changelog from its start to
// upTo (negative: its last stable offset; committed transactions only)
// and returns the state it holds, the last value of each key, deleted
// keys left out, and the offset it read up to (under mu).
func (m *stateMover) readChangelog(ctx context.Context, k partKey, upTo int64) (map[string][]byte, int64, error) {
	topic, _, err := m.ensureChangelog(ctx, k.op)
	if err != nil {
		return nil, 0, err
	}
	src, err := NewSource(m.mem, SourceOptions{Brokers: m.c.opts.Brokers, Subscribe: []string{topic},
		StartingOffsets: OffsetSpec{Kind: "earliest"}, EndingOffsets: OffsetSpec{Kind: "latest"},
		FailOnDataLoss: true, PollTimeout: 120e9, BatchRows: 8192, Logger: m.c.opts.Logger})
	if err != nil {
		return nil, 0, err
	}
	defer src.Close()
	src.hop = true // read committed, up to the last stable offset
	start, err := src.listOffsets(ctx, true, []string{topic})
	if err != nil {
		return nil, 0, err
	}
	end, err := src.listOffsets(ctx, false, []string{topic})
	if err != nil {
		return nil, 0, err
	}
	lo, _ := start.get(topic, k.part)
	hi, ok := end.get(topic, k.part)
	if upTo >= 0 {
		if upTo > hi {
			return nil, 0, fmt.Errorf("kafka: changelog %s-%d ends at %d, before %d", topic, k.part, hi, upTo)
		}
		hi = upTo
	}
	out := map[string][]byte{}
	if !ok || hi <= lo {
		return out, hi, nil
	}
	rd, err := newReader(src, []*partitionRange{{topic: topic, partition: k.part, next: lo, end: hi}})
	if err != nil {
		return nil, 0, err
	}
	defer rd.Close()
	for {
		rec, err := rd.Next(ctx)
		if errors.Is(err, io.EOF) {
			return out, hi, nil
		}
		if err != nil {
			return nil, 0, fmt.Errorf("kafka: changelog %s-%d: %w", topic, k.part, err)
		}
		keys, ok1 := rec.Column(0).(*array.Binary)
		vals, ok2 := rec.Column(1).(*array.Binary)
		if !ok1 || !ok2 {
			rec.Release()
			return nil, 0, fmt.Errorf("kafka: changelog %s-%d: unexpected Kafka row types", topic, k.part)
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			key := keys.Value(i)
			if string(key) == string(changelogMarkerKey) {
				continue // an epoch's marker
			}
			if keys.IsNull(i) || len(key) == 0 || key[0] != changelogKeyPrefix {
				rec.Release()
				return nil, 0, fmt.Errorf("kafka: changelog %s-%d: a record without a state key", topic, k.part)
			}
			sk := string(key[1:]) // copied: the record is released below
			if vals.IsNull(i) {
				delete(out, sk)
				continue
			}
			v := vals.Value(i)
			if len(v) == 0 || v[0] != changelogKeyPrefix {
				rec.Release()
				return nil, 0, fmt.Errorf("kafka: changelog %s-%d: a record without a state value", topic, k.part)
			}
			out[sk] = append([]byte(nil), v[1:]...)
		}
		rec.Release()
	}
}
