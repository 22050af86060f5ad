package kafka

import (
	"bytes"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strconv"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
)

// PartitionOffsets maps topic → partition → offset: Spark's
// KafkaSourceOffset, the next offset to read in each partition.
type PartitionOffsets map[string]map[int32]int64

// ParsePartitionOffsets decodes Spark's JSON form {"t":{"0":23,"1":7}}.
func ParsePartitionOffsets(s string) (PartitionOffsets, error) {
	raw, err := decodeJSONObject[map[string]int64](s)
	if err != nil {
		return nil, err
	}
	po := make(PartitionOffsets, len(raw))
	for t, ps := range raw {
		m := make(map[int32]int64, len(ps))
		for k, off := range ps {
			p, err := strconv.ParseInt(k, 10, 32)
			if err != nil || p < 0 {
				return nil, fmt.Errorf("topic %s: partition %q is not a partition number", t, k)
			}
			m[int32(p)] = off
		}
		po[t] = m
	}
	return po, nil
}

// decodeJSONObject decodes one JSON object and nothing after it.
func decodeJSONObject[V any](s string) (map[string]V, error) {
	dec := json.NewDecoder(bytes.NewReader([]byte(s)))
	var m map[string]V
	if err := dec.Decode(&m); err != nil {
		return nil, err
	}
	if m == nil {
		return nil, fmt.Errorf("not a JSON object")
	}
	if dec.More() {
		return nil, fmt.Errorf("unexpected data after the JSON object")
	}
	return m, nil
}

// Encode returns the offsets as Spark's JSON with topics and partitions
// in order, so equal offsets encode to equal bytes (the engine compares
// offsets bytewise).
func (po PartitionOffsets) Encode() stream.Offset {
	topics := po.topics()
	var b []byte
	b = append(b, '{')
	for i, t := range topics {
		if i > 0 {
			b = append(b, ',')
		}
		tb, _ := json.Marshal(t)
		b = append(b, tb...)
		b = append(b, ':', '{')
		for j, p := range sortedPartitions(po[t]) {
			if j > 0 {
				b = append(b, ',')
			}
			b = append(b, '"')
			b = strconv.AppendInt(b, int64(p), 10)
			b = append(b, '"', ':')
			b = strconv.AppendInt(b, po[t][p], 10)
		}
		b = append(b, '}')
	}
	b = append(b, '}')
	return stream.Offset(b)
}

func (po PartitionOffsets) topics() []string {
	ts := make([]string, 0, len(po))
	for t := range po {
		ts = append(ts, t)
	}
	sort.Strings(ts)
	return ts
}

func sortedPartitions(m map[int32]int64) []int32 {
	ps := make([]int32, 0, len(m))
	for p := range m {
		ps = append(ps, p)
	}
	sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	return ps
}

// get returns the offset of a partition.
func (po PartitionOffsets) get(t string, p int32) (int64, bool) {
	off, ok := po[t][p]
	return off, ok
}

func (po PartitionOffsets) set(t string, p int32, off int64) {
	m := po[t]
	if m == nil {
		m = map[int32]int64{}
		po[t] = m
	}
	m[p] = off
}

// clone copies po.
func (po PartitionOffsets) clone() PartitionOffsets {
	out := make(PartitionOffsets, len(po))
	for t, ps := range po {
		for p, off := range ps {
			out.set(t, p, off)
		}
	}
	return out
}

// decodeOffset parses an engine offset (nil: none).
func decodeOffset(o stream.Offset) (PartitionOffsets, error) {
	if o == nil {
		return nil, nil
	}
	po, err := ParsePartitionOffsets(string(o))
	if err != nil {
		return nil, fmt.Errorf("kafka: offset %s: %w", o, err)
	}
	return po, nil
}

// rateLimit bounds the step from → until to limit offsets in all, split
// in proportion to each partition's backlog as Spark does: a partition's
// share is floored, except that a share below one is rounded up so that
// small partitions are not starved. from holds every partition of until
// (new partitions at their first offset).
func rateLimit(limit int64, from, until PartitionOffsets) PartitionOffsets {
	var total float64
	for t, ps := range until {
		for p, end := range ps {
			if begin, ok := from.get(t, p); ok && end > begin {
				total += float64(end - begin)
			}
		}
	}
	if total <= float64(limit) {
		return until
	}
	out := make(PartitionOffsets, len(until))
	for t, ps := range until {
		for p, end := range ps {
			begin, ok := from.get(t, p)
			if !ok || end <= begin {
				out.set(t, p, end)
				continue
			}
			share := float64(limit) * (float64(end-begin) / total)
			step := int64(math.Floor(share))
			if share < 1 {
				step = int64(math.Ceil(share))
			}
			off := end
			if step < math.MaxInt64-begin {
				off = min(end, begin+step)
			}
			out.set(t, p, off)
		}
	}
	return out
}
