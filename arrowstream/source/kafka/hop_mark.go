package kafka

import (
	"context"
	"errors"
	"fmt"
	"math"
	"path/filepath"
	"strconv"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// Input-partition marks (docs/cluster.md, "Event time across
// instances"). The downstream watermark must wait for every input
// partition, including a range that an instance claimed and has not
// written yet (it died, or it is writing now): otherwise rows it writes
// later fall below a watermark moved by the others and are dropped as
// late. So, in the same Kafka transaction as an epoch's rows, the
// upstream writer commits, for each input partition the epoch read, the
// end of the range it wrote, as the offset of that partition in its
// marks group <hop topic>-in-<source instance>, with the epoch's largest
// event time in the commit's metadata. The input group's claim history
// (cluster_meta.go) says how far each instance claimed; an instance
// whose claim reaches beyond what its marks say it wrote holds a range
// not in the hop yet. hop_watermark.go turns both into the watermark.
// Marks live in Kafka (transactional group offsets), not in the hop's
// records, so a downstream instance that starts or restarts knows every
// writer's progress at once, including that of a dead one.

// hopMarkPrefix starts the metadata of a mark (version 1).
const hopMarkPrefix = "arrowstream.wm.v1;"

// encodeHopMark is the metadata of a mark: the largest event time
// (microseconds) of the epoch's rows, or none (math.MinInt64).
func encodeHopMark(maxUs int64) string {
	if maxUs == math.MinInt64 {
		return hopMarkPrefix
	}
	return hopMarkPrefix + strconv.FormatInt(maxUs, 10)
}

// parseHopMark decodes a mark's metadata: the event time and whether
// there is one. Metadata that is not a mark is an error naming it.
func parseHopMark(meta string) (maxUs int64, ok bool, err error) {
	rest, found := strings.CutPrefix(meta, hopMarkPrefix)
	if !found {
		return 0, false, fmt.Errorf("kafka: repartition mark metadata %.40q is not %s...", meta, hopMarkPrefix)
	}
	if rest == "" {
		return 0, false, nil
	}
	v, err := strconv.ParseInt(rest, 10, 64)
	if err != nil || v == math.MinInt64 {
		return 0, false, fmt.Errorf("kafka: repartition mark metadata %.40q: bad event time", meta)
	}
	return v, true, nil
}

// HopMarksGroup is the group holding the marks of the upstream source
// instance of hop topic.
func HopMarksGroup(topic, instance string) string { return topic + "-in-" + instance }

// stageRead is what the source of an upstream stage read in its current
// epoch, for the stage's hop sink (same process, same checkpoint).
type stageRead struct {
	mu       sync.Mutex
	instance string        // the source's cluster instance id
	decided  clusterOffset // the ranges of the epoch read last
	set      bool
	pace     *hopPace // the stage's hop sink's pace (nil: none linked; hop_pace.go)
}

// record notes the ranges of the epoch being run (nil-safe).
func (r *stageRead) record(d clusterOffset) {
	if r == nil {
		return
	}
	r.mu.Lock()
	r.decided, r.set = d, true
	r.mu.Unlock()
}

// ranges returns the source instance and the ranges its last epoch read.
func (r *stageRead) ranges() (string, clusterOffset, bool) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.instance, r.decided, r.set
}

// stageReads registers the sources of upstream stages by their stage's
// checkpoint directory.
type stageReads struct {
	mu     sync.Mutex
	stages map[string]*stageRead
	paces  map[string]*hopPace // linked by the hop sinks, by the same directory
}

// register returns the record of the stage whose checkpoint is dir.
func (s *stageReads) register(dir, instance string) *stageRead {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.stages == nil {
		s.stages = map[string]*stageRead{}
	}
	r := &stageRead{instance: instance, pace: s.paces[filepath.Clean(dir)]}
	s.stages[filepath.Clean(dir)] = r
	return r
}

func (s *stageReads) lookup(dir string) *stageRead {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.stages[filepath.Clean(dir)]
}

// epochMaxEvent returns the largest event time of the epoch's rows
// (math.MinInt64: none).
func (s *hopSink) epochMaxEvent() int64 { return s.epochEvent }

// commitInputMarks adds the marks group of the stage's source instance
// to the open transaction and commits, for every input partition the
// epoch read, the end of its range with the epoch's largest event time.
func (s *hopSink) commitInputMarks(ctx context.Context, epoch int64) error {
	if s.spec.EventTimeColumn < 0 {
		return nil
	}
	read := s.reads.lookup(s.spec.CheckpointDir)
	if read == nil {
		// A sink used without the stage's cluster source (tests): no
		// input partition to mark. Safe: the downstream counts a claim
		// without a mark as a missing range and waits.
		return nil
	}
	instance, decided, ok := read.ranges()
	if !ok || len(decided.End) == 0 {
		return nil // the epoch read no input partition
	}
	ids, err := s.inputTopicIDs(ctx, decided.End.topics())
	if err != nil {
		return err
	}
	id, pepoch, err := s.client.ProducerID(ctx)
	if err != nil {
		return fmt.Errorf("producer id: %w", err)
	}
	group := HopMarksGroup(s.topic, instance)
	add := kmsg.NewPtrAddOffsetsToTxnRequest()
	add.TransactionalID, add.ProducerID, add.ProducerEpoch, add.Group = s.group, id, pepoch, group
	addResp, err := add.RequestWith(ctx, s.client)
	if err != nil {
		return fmt.Errorf("add the input marks to the transaction: %w", err)
	}
	if err := kerr.ErrorForCode(addResp.ErrorCode); err != nil {
		return fmt.Errorf("add the input marks to the transaction: %w", err)
	}
	meta := encodeHopMark(s.epochMaxEvent())
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = s.group, group, id, pepoch
	req.Generation, req.MemberID = -1, ""
	for _, t := range decided.End.topics() {
		rt := kmsg.NewTxnOffsetCommitRequestTopic()
		rt.Topic, rt.TopicID = t, ids[t]
		for _, p := range sortedPartitions(decided.End[t]) {
			rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
			rp.Partition, rp.Offset, rp.LeaderEpoch, rp.Metadata = p, decided.End[t][p], -1, &meta
			rt.Partitions = append(rt.Partitions, rp)
		}
		req.Topics = append(req.Topics, rt)
	}
	resp, err := req.RequestWith(ctx, s.client)
	if err != nil {
		return fmt.Errorf("commit the input marks: %w", err)
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				return fmt.Errorf("commit the input mark of %s-%d: %w", t.Topic, p.Partition, err)
			}
		}
	}
	return nil
}

// inputTopicIDs returns the ids of the input topics (TxnOffsetCommit
// v6+ names topics by id), cached.
func (s *hopSink) inputTopicIDs(ctx context.Context, topics []string) (map[string][16]byte, error) {
	var missing []string
	for _, t := range topics {
		if _, ok := s.inputIDs[t]; !ok {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		details, err := s.admin.ListTopics(ctx, missing...)
		if err != nil {
			return nil, fmt.Errorf("input topics %v: %w", missing, err)
		}
		for _, t := range missing {
			d, ok := details[t]
			if !ok || d.Err != nil {
				return nil, fmt.Errorf("input topic %s: %w", t, errors.Join(errors.New("not found"), d.Err))
			}
			s.inputIDs[t] = d.ID
		}
	}
	return s.inputIDs, nil
}
