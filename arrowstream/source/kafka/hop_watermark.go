package kafka

import (
	"context"
	"errors"
	"fmt"
	"math"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// The downstream watermark of a repartition hop (docs/cluster.md, "Event
// time across instances"): the minimum over every input partition of
// the hop's source topics of the event time that partition has reached
// in the hop, where a partition has reached only what every range
// claimed before its first unwritten claim carries. Per partition:
//
//   - The input group's committed offsets say how far each instance
//     claimed (claim history: instance -> end of its last claim); the
//     marks (hop_mark.go) say how far each instance's writer wrote and
//     the event time of that epoch.
//   - An instance whose claim ends beyond what it wrote holds a range
//     that is not in the hop yet (it is writing it, or it died and will
//     write it when it restarts). Everything below the smallest written
//     end of such instances is in the hop; the partition's event time is
//     the largest mark event time of the writes that end there or below.
//     With no such instance, every claimed range is in the hop and the
//     largest mark event time counts.
//   - A partition's event time never goes back (it is held at the last
//     value computed, not reset below it), and a partition nobody has
//     reported yet holds the watermark where it is.
//   - Idleness is per input partition: one whose committed offset and
//     marks did not move for the idle timeout does not hold the
//     watermark back (Flink's idleness). A partition with a missing range
//     while others read on is not idle.
//
// The view is fetched before the epoch's hop ranges are listed, so every
// row it counts was committed to the hop before the epoch's end offsets
// were taken. That alone does not make it a watermark: the row may sit
// unread in a hop partition another instance owns and that moves here
// later. The value computed here is therefore a candidate, released once
// the hop's group consumed every row it counts (hop_watermark_gate.go);
// a row is then late only relative to what was in the hop, and consumed,
// before it was read.

// inputPart is one partition of an input topic.
type inputPart struct {
	topic     string
	partition int32
}

// inputMark is a writer's mark of one input partition.
type inputMark struct {
	end     int64 // the end of the last range written
	maxUs   int64 // that epoch's largest event time
	hasTime bool
}

// markView is one fetch of the input group and the marks.
type markView struct {
	partitions map[string]int32                   // input topic -> partition count
	committed  map[inputPart]int64                // the input group's committed offsets
	claims     map[inputPart]claimHistory         // instance -> end of its last claim
	marks      map[string]map[inputPart]inputMark // instance -> its marks
}

// partWatermark is what the downstream remembers of one input partition.
type partWatermark struct {
	maxUs   int64 // the event time reached (valid when known)
	known   bool
	sig     [3]int64 // committed offset (or -1), largest mark end, instances with missing ranges
	changed time.Time
}

// hopWatermark folds successive mark views into the watermark.
type hopWatermark struct {
	idle  time.Duration
	parts map[inputPart]*partWatermark
}

func newHopWatermark(idle time.Duration) *hopWatermark {
	return &hopWatermark{idle: idle, parts: map[inputPart]*partWatermark{}}
}

// update folds v (fetched at now) in and returns the event time (µs)
// every active input partition has reached, or hold when one of them
// has not reported any yet (or no partition is known).
func (w *hopWatermark) update(v markView, now time.Time) (maxUs int64, hold bool) {
	all := map[inputPart]bool{}
	for t, n := range v.partitions {
		for p := int32(0); p < n; p++ {
			all[inputPart{t, p}] = true
		}
	}
	for ip := range v.committed {
		all[ip] = true
	}
	for ip := range all {
		pw := w.parts[ip]
		if pw == nil {
			pw = &partWatermark{changed: now}
			w.parts[ip] = pw
		}
		us, known, sig := partitionEventTime(v, ip)
		if known && (!pw.known || us > pw.maxUs) {
			pw.maxUs, pw.known = us, true
		}
		if sig != pw.sig {
			pw.sig, pw.changed = sig, now
		}
	}
	minUs, active := int64(math.MaxInt64), false
	maxIdle, anyKnown := int64(math.MinInt64), false
	for ip, pw := range w.parts {
		if !all[ip] {
			continue // a partition no longer listed (topic deleted)
		}
		if pw.known {
			maxIdle, anyKnown = max(maxIdle, pw.maxUs), true
		}
		if now.Sub(pw.changed) > w.idle {
			continue // idle: does not hold the watermark back
		}
		if !pw.known {
			return 0, true
		}
		minUs, active = min(minUs, pw.maxUs), true
	}
	switch {
	case active:
		return minUs, false
	case anyKnown: // every partition idle: the furthest any reached
		return maxIdle, false
	}
	return 0, true
}

// partitionEventTime computes the event time input partition ip has
// reached in the hop according to v, whether it is known, and the
// partition's progress signature (for idleness).
func partitionEventTime(v markView, ip inputPart) (int64, bool, [3]int64) {
	committed, ok := v.committed[ip]
	if !ok {
		committed = -1
	}
	limit, missing := int64(math.MaxInt64), int64(0)
	for inst, claimEnd := range v.claims[ip] {
		written := int64(-1)
		if m, ok := v.marks[inst][ip]; ok {
			written = m.end
		}
		if claimEnd > written {
			limit = min(limit, written)
			missing++
		}
	}
	us, known, top := int64(math.MinInt64), false, int64(-1)
	for _, ms := range v.marks {
		m, ok := ms[ip]
		if !ok {
			continue
		}
		top = max(top, m.end)
		if m.end > limit || !m.hasTime {
			continue
		}
		if !known || m.maxUs > us {
			us, known = m.maxUs, true
		}
	}
	return us, known, [3]int64{committed, top, missing}
}

// fetchMarkView reads the input group's committed offsets with their
// claim histories, the marks of every instance they name, and the
// partition counts of the input topics.
func fetchMarkView(ctx context.Context, admin *kadm.Client, inputGroup, hopTopic string) (markView, error) {
	v := markView{partitions: map[string]int32{}, committed: map[inputPart]int64{},
		claims: map[inputPart]claimHistory{}, marks: map[string]map[inputPart]inputMark{}}
	offs, err := admin.FetchOffsets(ctx, inputGroup)
	if err != nil {
		if errors.Is(err, kerr.GroupIDNotFound) {
			return v, nil
		}
		return v, fmt.Errorf("kafka: watermark of %s: offsets of group %s: %w", hopTopic, inputGroup, err)
	}
	instances := map[string]bool{}
	var topics []string
	for t, ps := range offs {
		topics = append(topics, t)
		for p, o := range ps {
			if o.Err != nil {
				return v, fmt.Errorf("kafka: watermark of %s: offset of %s-%d in group %s: %w", hopTopic, t, p, inputGroup, o.Err)
			}
			ip := inputPart{t, p}
			v.committed[ip] = o.At
			h := parseClaimHistory(o.Metadata)
			v.claims[ip] = h
			for inst := range h {
				instances[inst] = true
			}
		}
	}
	if len(topics) > 0 {
		details, err := admin.ListTopics(ctx, topics...)
		if err != nil {
			return v, fmt.Errorf("kafka: watermark of %s: input topics %v: %w", hopTopic, topics, err)
		}
		for _, t := range topics {
			if d, ok := details[t]; ok && d.Err == nil {
				v.partitions[t] = int32(len(d.Partitions))
			}
		}
	}
	if len(instances) == 0 {
		return v, nil
	}
	groups := make([]string, 0, len(instances))
	byGroup := map[string]string{}
	for inst := range instances {
		g := HopMarksGroup(hopTopic, inst)
		groups = append(groups, g)
		byGroup[g] = inst
	}
	for g, r := range admin.FetchManyOffsets(ctx, groups...) {
		if r.Err != nil {
			if errors.Is(r.Err, kerr.GroupIDNotFound) {
				continue // that instance has written nothing yet
			}
			return v, fmt.Errorf("kafka: watermark of %s: marks group %s: %w", hopTopic, g, r.Err)
		}
		inst := byGroup[g]
		ms := map[inputPart]inputMark{}
		for t, ps := range r.Fetched {
			for p, o := range ps {
				if o.Err != nil {
					return v, fmt.Errorf("kafka: watermark of %s: mark of %s-%d in group %s: %w", hopTopic, t, p, g, o.Err)
				}
				us, has, err := parseHopMark(o.Metadata)
				if err != nil {
					return v, fmt.Errorf("kafka: watermark of %s: mark of %s-%d in group %s: %w", hopTopic, t, p, g, err)
				}
				ms[inputPart{t, p}] = inputMark{end: o.At, maxUs: us, hasTime: has}
			}
		}
		v.marks[inst] = ms
	}
	return v, nil
}
