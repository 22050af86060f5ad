package kafka

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// changelogKeyPrefix starts every changelog record's key and value: a
// compacted topic needs a key (a global aggregation's state key is empty),
// and a value that is empty must not read as a tombstone.
const changelogKeyPrefix = 'k'

// changelogMarkerKey is the key of the record every epoch's transaction
// writes to one partition of the changelog (compaction keeps the last).
var changelogMarkerKey = []byte("m")

// resetClientLocked drops the transactional client; setup makes another.
func (m *stateMover) resetClientLocked() {
	if m.client != nil {
		m.client.Close()
	}
	m.client, m.admin, m.ready = nil, nil, false
	clear(m.topics)
}

// fetchBookmark initialises the transactional producer (fencing an
// earlier run of the instance and completing or aborting what it left
// open) and reads the instance's last committed epoch with RequireStable.
func fetchBookmark(ctx context.Context, cl *kgo.Client, group string, gm *groupMember, topic string) (bookmark, error) {
	if _, _, err := cl.ProducerID(ctx); err != nil {
		return bookmark{}, fmt.Errorf("init producer %s: %w", group, err)
	}
	ids, err := gm.topicIDs(ctx, map[string]map[int32][2]int64{topic: nil})
	if err != nil {
		return bookmark{}, err
	}
	req := kmsg.NewPtrOffsetFetchRequest()
	req.Group = group
	req.RequireStable = true
	rt := kmsg.NewOffsetFetchRequestTopic()
	rt.Topic, rt.Partitions = topic, []int32{0}
	req.Topics = []kmsg.OffsetFetchRequestTopic{rt}
	rg := kmsg.NewOffsetFetchRequestGroup()
	rg.Group = group
	rgt := kmsg.NewOffsetFetchRequestGroupTopic()
	rgt.Topic, rgt.TopicID, rgt.Partitions = topic, ids[topic], []int32{0}
	rg.Topics = []kmsg.OffsetFetchRequestGroupTopic{rgt}
	req.Groups = []kmsg.OffsetFetchRequestGroup{rg}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return bookmark{}, fmt.Errorf("fetch the bookmark of %s: %w", group, err)
	}
	if err := kerr.ErrorForCode(resp.ErrorCode); err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
		return bookmark{}, fmt.Errorf("fetch the bookmark of %s: %w", group, err)
	}
	bk := bookmark{epoch: -1}
	visit := func(code int16, off int64, meta *string) error {
		if err := kerr.ErrorForCode(code); err != nil {
			if errors.Is(err, kerr.GroupIDNotFound) || errors.Is(err, kerr.UnknownTopicOrPartition) {
				return nil
			}
			return err
		}
		if off-1 > bk.epoch {
			md := ""
			if meta != nil {
				md = *meta
			}
			bk = parseBookmark(off-1, md)
		}
		return nil
	}
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := visit(p.ErrorCode, p.Offset, p.Metadata); err != nil {
				return bookmark{}, fmt.Errorf("fetch the bookmark of %s: %w", group, err)
			}
		}
	}
	for _, g := range resp.Groups {
		if err := kerr.ErrorForCode(g.ErrorCode); err != nil && !errors.Is(err, kerr.GroupIDNotFound) {
			return bookmark{}, fmt.Errorf("fetch the bookmark of %s: %w", group, err)
		}
		for _, t := range g.Topics {
			for _, p := range t.Partitions {
				if err := visit(p.ErrorCode, p.Offset, p.Metadata); err != nil {
					return bookmark{}, fmt.Errorf("fetch the bookmark of %s: %w", group, err)
				}
			}
		}
	}
	return bk, nil
}

// ensureChangelog makes operator op's compacted changelog topic (under
// mu), with one partition per state partition.
func (m *stateMover) ensureChangelog(ctx context.Context, op int) (string, [16]byte, error) {
	topic := ChangelogTopic(m.c.opts.Name, m.spec.Table, op)
	if id, ok := m.topics[op]; ok {
		return topic, id, nil
	}
	compact := "compact"
	resp, err := m.admin.CreateTopic(ctx, int32(m.spec.Partitions), -1, map[string]*string{"cleanup.policy": &compact}, topic)
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) && !errors.Is(resp.Err, kerr.TopicAlreadyExists) {
		return "", [16]byte{}, fmt.Errorf("kafka: changelog topic %s: create: %w", topic, err)
	}
	details, err := m.admin.ListTopics(ctx, topic)
	if err != nil {
		return "", [16]byte{}, fmt.Errorf("kafka: changelog topic %s: %w", topic, err)
	}
	d, ok := details[topic]
	if !ok || d.Err != nil {
		return "", [16]byte{}, fmt.Errorf("kafka: changelog topic %s: not found after creating it", topic)
	}
	if len(d.Partitions) != m.spec.Partitions {
		return "", [16]byte{}, fmt.Errorf("kafka: changelog topic %s has %d partitions, the query has %d state partitions (spark.sql.shuffle.partitions changed?)", topic, len(d.Partitions), m.spec.Partitions)
	}
	m.topics[op] = d.ID
	return topic, d.ID, nil
}

// changelogEnd is the last stable offset of a changelog partition (under mu).
func (m *stateMover) changelogEnd(ctx context.Context, k partKey) (int64, error) {
	topic, _, err := m.ensureChangelog(ctx, k.op)
	if err != nil {
		return 0, err
	}
	listed, err := m.admin.ListCommittedOffsets(ctx, topic)
	if err != nil {
		return 0, fmt.Errorf("kafka: changelog topic %s: list offsets: %w", topic, err)
	}
	lo, ok := listed.Lookup(topic, k.part)
	if !ok {
		return 0, fmt.Errorf("kafka: changelog topic %s: no partition %d", topic, k.part)
	}
	if lo.Err != nil {
		return 0, fmt.Errorf("kafka: changelog topic %s partition %d: %w", topic, k.part, lo.Err)
	}
	return lo.Offset, nil
}

// changelogEnds lists the last stable offsets of the partitions keys,
// one listing per changelog topic (under mu). A partition whose topic
// could not be listed is missing from the result.
func (m *stateMover) changelogEnds(ctx context.Context, keys []partKey) map[partKey]int64 {
	out := make(map[partKey]int64, len(keys))
	byOp := map[int][]partKey{}
	for _, k := range keys {
		byOp[k.op] = append(byOp[k.op], k)
	}
	for op, ks := range byOp {
		topic, _, err := m.ensureChangelog(ctx, op)
		if err != nil {
			continue
		}
		listed, err := m.admin.ListCommittedOffsets(ctx, topic)
		if err != nil {
			continue
		}
		for _, k := range ks {
			if lo, ok := listed.Lookup(topic, k.part); ok && lo.Err == nil {
				out[k] = lo.Offset
			}
		}
	}
	return out
}

// commitEpoch writes the epoch's state changes, the hop offsets it read
// and the instance's bookmark in one transaction, or nothing when the
// epoch already committed (a replay). It returns whether it wrote.
func (m *stateMover) commitEpoch(ctx context.Context, epoch int64, op int) (wrote bool, err error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.setup(ctx); err != nil {
		return false, err
	}
	if m.bk.epoch >= epoch {
		m.logger.Info("cluster: state: epoch already committed by this instance; Kafka is not written again", "epoch", epoch)
		m.resetEpochLocked()
		return false, nil
	}
	if f, ok := m.c.opts.Faults.(TxnBeginFaults); ok {
		if err := f.BeforeTxnBegin(m.spec.Table, "changelog", epoch); err != nil {
			return false, fmt.Errorf("kafka: cluster state of %s: epoch %d: %w", m.spec.Table, epoch, err)
		}
	}
	if err := m.client.BeginTransaction(); err != nil {
		m.resetClientLocked()
		return false, fmt.Errorf("kafka: cluster state of %s: epoch %d: begin transaction: %w", m.spec.Table, epoch, err)
	}
	written, err := m.writeEpochLocked(ctx, epoch, op)
	if err != nil {
		m.src.member.invalidateCache() // the hop offsets may or may not have moved
		abortCtx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 30e9)
		defer cancel()
		aerr := m.client.AbortBufferedRecords(abortCtx)
		if aerr == nil {
			aerr = m.client.EndTransaction(abortCtx, kgo.TryAbort)
		}
		if aerr != nil || errors.Is(err, kerr.ProducerFenced) || errors.Is(err, kerr.InvalidProducerEpoch) {
			// A fenced or broken producer is made again (which fences
			// and aborts whatever it left open) at the next epoch.
			m.resetClientLocked()
		}
		return false, fmt.Errorf("kafka: cluster state of %s: epoch %d: %w", m.spec.Table, epoch, err)
	}
	m.bk = m.epochBookmarkLocked(epoch)
	m.src.member.cluster.noteResumed(m.src.member.group) // the downstream processes again
	// Where the changelog ends now, for the partitions written: the local
	// state is the changelog's while it still ends there. Held partitions
	// never written here take the end the restore read up to. One listing
	// per changelog topic serves every partition (a listing per partition
	// was a round trip per partition per epoch).
	need := make([]partKey, 0, len(written))
	for k := range written {
		need = append(need, k)
	}
	for k, st := range m.applied {
		if _, ok := m.ends[endsKey(k)]; st == partHeld && !ok && !written[k] {
			need = append(need, k)
		}
	}
	ends := m.changelogEnds(ctx, need)
	for _, k := range need {
		if end, ok := ends[k]; ok {
			m.ends[endsKey(k)] = end
		} else if written[k] {
			delete(m.ends, endsKey(k))
		}
	}
	if err := m.saveEnds(); err != nil {
		m.logger.Warn("cluster: state: changelog ends not saved (the next start restores from the changelog)", "err", err)
	}
	m.resetEpochLocked()
	if f := m.c.opts.Faults; f != nil {
		if err := f.AfterTxnCommit(m.spec.Table, "changelog", epoch); err != nil {
			return true, fmt.Errorf("kafka: cluster state of %s: epoch %d: %w", m.spec.Table, epoch, err)
		}
	}
	return true, nil
}

// writeEpochLocked produces the changes and commits the offsets inside
// the open transaction, then commits it. The hop offsets are committed
// under the member's generation, with the member's lock held, so that a
// partition revoked meanwhile fails the commit instead.
func (m *stateMover) writeEpochLocked(ctx context.Context, epoch int64, op int) (map[partKey]bool, error) {
	var (
		pmu      sync.Mutex
		firstErr error
	)
	promise := func(_ *kgo.Record, err error) {
		if err != nil {
			pmu.Lock()
			if firstErr == nil {
				firstErr = err
			}
			pmu.Unlock()
		}
	}
	written := map[partKey]bool{}
	keys := make([]partKey, 0, len(m.changes))
	for k := range m.changes {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		return keys[i].op < keys[j].op || keys[i].op == keys[j].op && keys[i].part < keys[j].part
	})
	owned := m.ownedLocked()
	for _, k := range keys {
		if m.applied[k] != partHeld || !owned[k.part] {
			return nil, fmt.Errorf("state partition %d of operator %d changed but is not owned here", k.part, k.op)
		}
		topic, _, err := m.ensureChangelog(ctx, k.op)
		if err != nil {
			return nil, err
		}
		for _, c := range m.changes[k] {
			key := make([]byte, 0, len(c.key)+1)
			key = append(append(key, changelogKeyPrefix), c.key...)
			var val []byte // nil: a tombstone
			if c.value != nil {
				val = make([]byte, 0, len(c.value)+1)
				val = append(append(val, changelogKeyPrefix), c.value...)
			}
			m.client.Produce(ctx, &kgo.Record{Topic: topic, Partition: k.part, Key: key, Value: val}, promise)
		}
		written[k] = true
	}
	// One marker record (not a state key: restores skip it) makes the
	// transaction one the client knows it has to end: offsets alone
	// added by hand would leave it open when the epoch aborts.
	topic, _, err := m.ensureChangelog(ctx, op)
	if err != nil {
		return nil, err
	}
	// On an owned partition when there is one, so that the partitions
	// of others do not move (their local copies stay current).
	marker := int32(0)
	for i, p := 0, int32(0); p < int32(m.spec.Partitions); p++ {
		if owned[p] && i == 0 {
			marker, i = p, 1
		}
	}
	m.client.Produce(ctx, &kgo.Record{Topic: topic, Partition: marker, Key: changelogMarkerKey, Value: []byte(m.src.member.instance)}, promise)
	written[partKey{op: op, part: marker}] = true
	if err := m.client.Flush(ctx); err != nil {
		return nil, fmt.Errorf("produce the changelog: %w", err)
	}
	pmu.Lock()
	err = firstErr
	pmu.Unlock()
	if err != nil {
		return nil, fmt.Errorf("produce the changelog: %w", err)
	}

	gm := m.src.member
	gm.mu.Lock()
	defer gm.mu.Unlock()
	memberID, gen := gm.client.GroupMetadata()
	hop := m.hopTopic()
	for p := range owned {
		if !gm.owned[hop][p] {
			return nil, fmt.Errorf("hop partition %s-%d was revoked during the epoch: %w", hop, p, errStateMoved)
		}
	}
	// Every owned partition is committed (those read at their range's
	// end, the others where they are), so that the generation check
	// fences the epoch's state changes even when it read nothing.
	committed, _, err := gm.committedOffsets(ctx)
	if err != nil {
		return nil, err
	}
	offsets := map[int32]int64{}
	for p := range owned {
		if end, ok := m.ranges.End.get(hop, p); ok && m.read {
			offsets[p] = end
		} else if c, ok := committed.get(hop, p); ok {
			offsets[p] = c
		}
	}
	id, pepoch, err := m.client.ProducerID(ctx)
	if err != nil {
		return nil, fmt.Errorf("producer id: %w", err)
	}
	ids, err := gm.topicIDs(ctx, map[string]map[int32][2]int64{hop: nil})
	if err != nil {
		return nil, err
	}
	if len(offsets) > 0 {
		meta := gm.instance
		if err := txnCommitOffsets(ctx, m.client, m.txnID, gm.group, id, pepoch, memberID, gen, hop, ids[hop], offsets, meta); err != nil {
			return nil, fmt.Errorf("commit the hop offsets (generation %d): %w", gen, err)
		}
	}
	if err := txnCommitOffsets(ctx, m.client, m.txnID, m.txnID, id, pepoch, "", -1, hop, ids[hop], map[int32]int64{0: epoch + 1}, m.epochBookmarkLocked(epoch).encode()); err != nil {
		return nil, fmt.Errorf("commit the instance's epoch: %w", err)
	}
	if f := m.c.opts.Faults; f != nil {
		if err := f.BeforeTxnCommit(m.spec.Table, "changelog", epoch); err != nil {
			return nil, err
		}
	}
	if err := commitTxn(ctx, m.client, m.outcome); err != nil {
		return nil, fmt.Errorf("commit transaction: %w", err)
	}
	gm.noteTxnCommitLocked(hop, offsets)
	return written, nil
}

// txnCommitOffsets adds group to the open transaction and commits offsets
// of topic's partitions there (TxnOffsetCommit; generation -1 and no
// member for a group without members).
func txnCommitOffsets(ctx context.Context, cl *kgo.Client, txnID, group string, pid int64, pepoch int16, memberID string, gen int32, topic string, topicID [16]byte, offsets map[int32]int64, meta string) error {
	add := kmsg.NewPtrAddOffsetsToTxnRequest()
	add.TransactionalID, add.ProducerID, add.ProducerEpoch, add.Group = txnID, pid, pepoch, group
	addResp, err := add.RequestWith(ctx, cl)
	if err != nil {
		return fmt.Errorf("add offsets to transaction: %w", err)
	}
	if err := kerr.ErrorForCode(addResp.ErrorCode); err != nil {
		return fmt.Errorf("add offsets to transaction: %w", err)
	}
	req := kmsg.NewPtrTxnOffsetCommitRequest()
	req.TransactionalID, req.Group, req.ProducerID, req.ProducerEpoch = txnID, group, pid, pepoch
	req.Generation, req.MemberID = gen, memberID
	rt := kmsg.NewTxnOffsetCommitRequestTopic()
	rt.Topic, rt.TopicID = topic, topicID
	for p, off := range offsets {
		rp := kmsg.NewTxnOffsetCommitRequestTopicPartition()
		rp.Partition, rp.Offset, rp.LeaderEpoch = p, off, -1
		md := meta
		rp.Metadata = &md
		rt.Partitions = append(rt.Partitions, rp)
	}
	req.Topics = []kmsg.TxnOffsetCommitRequestTopic{rt}
	resp, err := req.RequestWith(ctx, cl)
	if err != nil {
		return err
	}
	var refused []string
	for _, t := range resp.Topics {
		for _, p := range t.Partitions {
			if err := kerr.ErrorForCode(p.ErrorCode); err != nil {
				refused = append(refused, fmt.Sprintf("%s-%d: %v", topic, p.Partition, err))
			}
		}
	}
	if len(refused) > 0 {
		// A stale generation (the partitions moved) or any other refusal:
		// the transaction aborts and the epoch runs again.
		return fmt.Errorf("refused: %s: %w", strings.Join(refused, "; "), errStateMoved)
	}
	return nil
}

// epochBookmarkLocked is the bookmark of the epoch being committed.
func (m *stateMover) epochBookmarkLocked(epoch int64) bookmark {
	b := bookmark{epoch: epoch, Hash: m.hash, Dropped: append([]string(nil), m.dropped...)}
	if len(m.restored) > 0 {
		b.Restored = map[string]int64{}
		for k, v := range m.restored {
			b.Restored[k] = v
		}
	}
	return b
}
