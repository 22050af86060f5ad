package kafka

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kmsg"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/vector"
)

// Cluster mode (docs/cluster.md). The source reads only the partitions
// its table's consumer group assigns to this instance, and the group's
// committed offsets are the one truth about who read what:
//
//   - Planning an epoch takes, for every owned partition, the range from
//     the group's committed offset to the partition's end. The offset the
//     engine records is {"v":1,"from":{...},"end":{...}}: self-contained,
//     so a replay reads the same ranges whatever the previous epoch was.
//   - Read claims the ranges before reading them: one OffsetCommit, under
//     the member's generation, sets each partition's committed offset to
//     the range's end, with this instance's id and claim end recorded in
//     the metadata (claimHistory). A range is claimed only while this
//     instance owns the partition and the committed offset still equals
//     the range's start; the coordinator refuses a commit from a stale
//     generation, and revocation waits for a claim in flight. So each
//     offset is claimed by exactly one instance.
//   - Which ranges the epoch reads (claimed now or before) is written to
//     the checkpoint before the data is read. A replay of the epoch reads
//     exactly those; without the file, the epoch's sink cannot have
//     committed, and the ranges are decided again: a range this instance
//     claimed before a crash (its id in the history reaches the range's
//     end) is read, a range it did not claim is claimed again or, if
//     another instance moved on, skipped.
//
// The local checkpoint's offsets therefore never decide where a partition
// starts: restart and rebalance take the same path, from the group.

// clusterOffset is the engine offset of an epoch in cluster mode: the
// ranges [from, end) of the partitions the epoch reads.
type clusterOffset struct {
	From PartitionOffsets
	End  PartitionOffsets
	// Retry counts the plans of the same ranges after an epoch that read
	// none of them (cluster_replan.go); 0 is not encoded.
	Retry int64
}

func (o clusterOffset) encode() stream.Offset {
	var b bytes.Buffer
	b.WriteString(`{"v":1,"from":`)
	b.Write(o.From.Encode())
	b.WriteString(`,"end":`)
	b.Write(o.End.Encode())
	if o.Retry > 0 {
		b.WriteString(`,"retry":`)
		b.WriteString(strconv.FormatInt(o.Retry, 10))
	}
	b.WriteByte('}')
	return stream.Offset(b.Bytes())
}

func decodeClusterOffset(o stream.Offset) (clusterOffset, error) {
	var raw struct {
		V     int             `json:"v"`
		From  json.RawMessage `json:"from"`
		End   json.RawMessage `json:"end"`
		Retry int64           `json:"retry"`
	}
	if err := json.Unmarshal(o, &raw); err != nil || raw.V != 1 || raw.From == nil || raw.End == nil {
		return clusterOffset{}, fmt.Errorf("kafka: offset %s is not a cluster-mode offset (was this checkpoint written outside cluster mode?)", o)
	}
	from, err := ParsePartitionOffsets(string(raw.From))
	if err != nil {
		return clusterOffset{}, fmt.Errorf("kafka: offset %s: %w", o, err)
	}
	end, err := ParsePartitionOffsets(string(raw.End))
	if err != nil {
		return clusterOffset{}, fmt.Errorf("kafka: offset %s: %w", o, err)
	}
	return clusterOffset{From: from, End: end, Retry: raw.Retry}, nil
}

// ClusterPartitioned implements stream.PartitionedSource: in cluster mode
// the instances read disjoint partitions.
func (s *Source) ClusterPartitioned() bool { return s.cluster != nil }

// clusterSetCheckpointDir joins the table's group. The table is the name
// of the query's checkpoint directory (<root>/<table>/sources/<i>).
func (s *Source) clusterSetCheckpointDir(dir string) error {
	if s.member != nil {
		return nil
	}
	if s.opts.Subscribe == nil {
		return fmt.Errorf("kafka: cluster mode reads topics by subscribe only (subscribePattern and assign are not supported: the group assigns partitions)")
	}
	queryDir := filepath.Dir(filepath.Dir(dir))
	table := filepath.Base(queryDir)
	if i := filepath.Base(dir); i != "0" {
		table += "-" + i
	}
	if s.groupTable != "" {
		table = s.groupTable
	}
	id, err := loadInstanceID(dir)
	if err != nil {
		return err
	}
	gm, err := s.cluster.join(table, id, s.opts.Subscribe, nil) // --cluster brokers are the operator's, not SQL's: not vetted
	if err != nil {
		return err
	}
	// A hop's downstream commits its offsets in transactions, not by
	// claims: its committed offsets are always fetched.
	gm.uncached = s.hop
	if s.watch != nil {
		gm.setWatcher(s.watch)
	}
	s.member, s.dir = gm, dir
	if !s.hop {
		s.read = s.cluster.reads.register(queryDir, id)
	}
	return nil
}

// clusterLatest lists the end offsets of the owned partitions.
func (s *Source) clusterLatest(ctx context.Context) (PartitionOffsets, error) {
	if s.member == nil {
		return nil, errors.New("kafka: cluster-mode source used outside a query (no checkpoint directory)")
	}
	ver := s.member.assignVer.Load() // before ownedNow: a change after it lists again
	if cached, ok := s.idle.cached(s.now(), ver); ok {
		return cached, nil
	}
	if cached, ok := s.watchedCache(s.now(), ver); ok {
		return cached, nil
	}
	owned := s.member.ownedNow()
	out := PartitionOffsets{}
	if len(owned) == 0 {
		return out, nil
	}
	topics := make([]string, 0, len(owned))
	for t := range owned {
		topics = append(topics, t)
	}
	s.member.listings.Add(1)
	ends, err := s.listOffsets(ctx, false, topics)
	if err != nil {
		return nil, err
	}
	for t, ps := range owned {
		for _, p := range ps {
			if off, ok := ends.get(t, p); ok {
				out.set(t, p, off)
			}
		}
	}
	if s.opts.EndingOffsets.Kind == "specific" {
		for t, ps := range out {
			for p, off := range ps {
				if limit, ok := s.opts.EndingOffsets.Offsets.get(t, p); ok && limit >= 0 && limit < off {
					out.set(t, p, limit)
				}
			}
		}
	}
	if !s.hop {
		owning := 0
		for _, ps := range owned {
			owning += len(ps)
		}
		s.hold.listed(owning, countOffsets(ends), s.idle.last, out, s.idle.assign == ver)
	}
	s.idle.listed(s.now(), ver, out)
	s.afterListing(ver, out)
	return out, nil
}

// committedOffsets fetches the group's committed offsets and their claim
// histories.
func (gm *groupMember) committedOffsets(ctx context.Context) (PartitionOffsets, map[string]map[int32]claimHistory, error) {
	gm.offsetFetches.Add(1)
	resp, err := gm.admin.FetchOffsets(ctx, gm.group)
	if errors.Is(err, kerr.GroupIDNotFound) {
		return PartitionOffsets{}, map[string]map[int32]claimHistory{}, nil // nothing committed yet
	}
	if err != nil {
		return nil, nil, fmt.Errorf("kafka: cluster group %s: fetch committed offsets: %w", gm.group, err)
	}
	offs := PartitionOffsets{}
	hists := map[string]map[int32]claimHistory{}
	for t, ps := range resp {
		for p, r := range ps {
			if r.Err != nil {
				if errors.Is(r.Err, kerr.UnknownTopicOrPartition) {
					continue
				}
				return nil, nil, fmt.Errorf("kafka: cluster group %s: committed offset of %s-%d: %w", gm.group, t, p, r.Err)
			}
			if r.At < 0 {
				continue
			}
			offs.set(t, p, r.At)
			if hists[t] == nil {
				hists[t] = map[int32]claimHistory{}
			}
			hists[t][p] = parseClaimHistory(r.Metadata)
		}
	}
	return offs, hists, nil
}

// clusterLatestFrom plans the next epoch: [committed, end) of every owned
// partition with data, or start itself when there is none (no epoch).
func (s *Source) clusterLatestFrom(ctx context.Context, start stream.Offset, latest PartitionOffsets) (stream.Offset, error) {
	if len(latest) == 0 {
		s.idleCall()
		return s.noNewEpoch(start), nil
	}
	s.member.plans.Add(1)
	committed, _, err := s.member.cachedCommitted(ctx)
	if err != nil {
		return nil, err
	}
	// Partitions the group never committed start at startingOffsets,
	// resolved now and committed at once (a claim of nothing), so that the
	// start does not move with "latest" while no data arrives.
	fresh := PartitionOffsets{}
	for t, ps := range latest {
		for p := range ps {
			if _, ok := committed.get(t, p); !ok {
				fresh.set(t, p, 0)
			}
		}
	}
	if len(fresh) > 0 {
		starts, err := s.clusterStarts(ctx, fresh, latest)
		if err != nil {
			return nil, err
		}
		ranges := map[string]map[int32][2]int64{}
		for t, ps := range starts {
			for p, off := range ps {
				if ranges[t] == nil {
					ranges[t] = map[int32][2]int64{}
				}
				ranges[t][p] = [2]int64{-1, off}
			}
		}
		done, err := s.member.claim(ctx, ranges)
		if err != nil {
			return nil, err
		}
		for t, ps := range done {
			for p, off := range ps {
				committed.set(t, p, off)
			}
		}
	}
	from, until := PartitionOffsets{}, PartitionOffsets{}
	for t, ps := range latest {
		for p, end := range ps {
			begin, ok := committed.get(t, p)
			if !ok || begin >= end {
				continue
			}
			from.set(t, p, begin)
			until.set(t, p, end)
		}
	}
	if len(until) == 0 {
		s.idleCall()
		return s.noNewEpoch(start), nil
	}
	if s.delay.hold(s.now(), from, until) {
		// Held for minOffsetsPerTrigger: list less often meanwhile; the
		// local hop downstream waits for it (hop_pace.go).
		s.idle.holding(s.delay.deadline())
		s.read.holding(s.delay.deadline())
		return s.noNewEpoch(start), nil
	}
	if held, until := s.hold.hold(s.now(), s.maxHold()); held {
		// Held to batch like a single instance (cluster_hold.go), paced
		// as for minOffsetsPerTrigger.
		s.idle.holding(until)
		s.read.holding(until)
		return s.noNewEpoch(start), nil
	}
	s.idle.released()
	if s.opts.MaxOffsetsPerTrigger > 0 {
		until = rateLimit(s.opts.MaxOffsetsPerTrigger, from, until)
	}
	plan := clusterOffset{From: from, End: until}
	if !s.replan(start, &plan) {
		return start, nil // the ranges start could not read: not yet (cluster_replan.go)
	}
	s.read.planned(s.now()) // the local hop downstream waits for this epoch (hop_pace.go)
	return plan.encode(), nil
}

// idleCall tells the trigger delay of a planning that found nothing
// waiting on this instance's partitions. As Spark's delayBatch, which
// runs at every latestOffset whatever it finds, an expired delay then
// restarts: the first records after an idle spell wait for
// minOffsetsPerTrigger, or for maxTriggerDelay from this call, instead
// of going through at once in a small epoch (at k instances, each
// instance's share of a burst started with one).
func (s *Source) idleCall() {
	s.delay.hold(s.now(), nil, nil)
	s.hold.idle(s.now())
	s.read.holding(time.Time{}) // nothing held for the hop downstream to wait on
}

// sameAs reports whether o and p hold the same ranges.
func (o clusterOffset) sameAs(p clusterOffset) bool {
	return sameOffsets(o.From, p.From) && sameOffsets(o.End, p.End)
}

func sameOffsets(a, b PartitionOffsets) bool {
	if countOffsets(a) != countOffsets(b) {
		return false
	}
	for t, ps := range a {
		for p, off := range ps {
			if o, ok := b.get(t, p); !ok || o != off {
				return false
			}
		}
	}
	return true
}

// noNewEpoch is the planned offset when no owned partition has data: the
// start again (the engine runs no epoch), or an empty plan at the very
// beginning.
func (s *Source) noNewEpoch(start stream.Offset) stream.Offset {
	if start == nil {
		return clusterOffset{From: PartitionOffsets{}, End: PartitionOffsets{}}.encode()
	}
	return start
}

// clusterStarts resolves startingOffsets for partitions without a
// committed offset.
func (s *Source) clusterStarts(ctx context.Context, fresh, latest PartitionOffsets) (PartitionOffsets, error) {
	out := PartitionOffsets{}
	switch s.opts.StartingOffsets.Kind {
	case "latest":
		for t, ps := range fresh {
			for p := range ps {
				off, _ := latest.get(t, p)
				out.set(t, p, off)
			}
		}
		return out, nil
	}
	earliest, err := s.listOffsets(ctx, true, fresh.topics())
	if err != nil {
		return nil, err
	}
	for t, ps := range fresh {
		for p := range ps {
			off, _ := earliest.get(t, p)
			if s.opts.StartingOffsets.Kind == "specific" {
				if spec, ok := s.opts.StartingOffsets.Offsets.get(t, p); ok && spec >= 0 {
					off = spec
				} else if ok && spec == offsetLatest {
					off, _ = latest.get(t, p)
				}
			}
			out.set(t, p, off)
		}
	}
	return out, nil
}

// claimsDir holds the decision of the epoch being run.
const claimsDir = "claims"

// clusterRead decides the ranges of the epoch ending at end (claiming
// them as needed), records the decision, and reads them.
func (s *Source) clusterRead(ctx context.Context, end stream.Offset) (vector.Operator, error) {
	if s.member == nil {
		return nil, errors.New("kafka: cluster-mode source used outside a query (no checkpoint directory)")
	}
	if s.mover != nil {
		return s.clusterReadMoving(ctx, end)
	}
	s.hold.readStarted(s.now()) // the epoch's duration, for the batch hold (cluster_hold.go)
	planned, err := decodeClusterOffset(end)
	if err != nil {
		return nil, err
	}
	sum := sha256.Sum256(end)
	path := filepath.Join(s.dir, claimsDir, hex.EncodeToString(sum[:12]))
	gen := s.member.generation()
	var decided clusterOffset
	if b, err := checkpoint.ReadSealedFile(path); err == nil {
		if decided, err = decodeClusterOffset(b); err != nil {
			return nil, fmt.Errorf("kafka: claims %s: %w", path, err)
		}
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, fmt.Errorf("kafka: claims: %w", err)
	} else {
		if decided, err = s.decide(ctx, planned); err != nil {
			return nil, err
		}
		// The decision is written only when it differs from the plan.
		// When this instance holds every planned range (claimed now or
		// before), a replay without the file decides the same: decide
		// finds this instance's claim history at each range's end, reads
		// the range and claims nothing (TestClusterReplayOfClaimedEpoch).
		// That saves a sealed file write per epoch, the usual case.
		if !decided.sameAs(planned) {
			if err := s.recordDecision(path, decided); err != nil {
				return nil, err
			}
		}
	}
	ranges, err := s.planRanges(ctx, decided.From, decided.End)
	if err != nil {
		return nil, err
	}
	s.noteDecided(end, planned, decided, gen)
	s.consumed = decided.End
	s.noteReadUpTo(decided.End)
	s.read.record(decided)
	if len(ranges) == 0 {
		return vector.NewScan(s.schema)
	}
	return newReader(s, ranges)
}

// decide returns the planned ranges this instance may read: those it
// claimed already (a replay) and those it claims now.
func (s *Source) decide(ctx context.Context, planned clusterOffset) (clusterOffset, error) {
	committed, hists, err := s.member.cachedCommitted(ctx)
	if err != nil {
		return clusterOffset{}, err
	}
	out := clusterOffset{From: PartitionOffsets{}, End: PartitionOffsets{}}
	want := map[string]map[int32][2]int64{}
	for t, ps := range planned.End {
		for p, to := range ps {
			from, ok := planned.From.get(t, p)
			if !ok {
				return clusterOffset{}, fmt.Errorf("kafka: cluster offset has an end but no start for %s-%d", t, p)
			}
			if h := hists[t][p]; h != nil {
				if last, ok := h[s.member.instance]; ok && last >= to {
					out.From.set(t, p, from) // claimed before a crash
					out.End.set(t, p, to)
					continue
				}
			}
			if c, ok := committed.get(t, p); ok && c == from {
				if want[t] == nil {
					want[t] = map[int32][2]int64{}
				}
				want[t][p] = [2]int64{from, to}
			}
		}
	}
	claimed, err := s.member.claim(ctx, want)
	if err != nil {
		return clusterOffset{}, err
	}
	for t, ps := range claimed {
		for p, to := range ps {
			out.From.set(t, p, want[t][p][0])
			out.End.set(t, p, to)
		}
	}
	return out, nil
}

// recordDecision writes the epoch's decision and removes earlier ones
// (an epoch is decided only once the previous one committed).
func (s *Source) recordDecision(path string, d clusterOffset) error {
	dir := filepath.Dir(path)
	w := &checkpoint.Writer{}
	if err := w.MkdirAll(dir); err != nil {
		return fmt.Errorf("kafka: claims: %w", err)
	}
	if err := w.WriteSealedFile(path, d.encode(), false); err != nil {
		return fmt.Errorf("kafka: claims %s: %w", path, err)
	}
	entries, err := os.ReadDir(dir)
	if err != nil {
		return fmt.Errorf("kafka: claims: %w", err)
	}
	for _, e := range entries {
		if e.Name() != filepath.Base(path) && !strings.HasPrefix(e.Name(), ".") {
			_ = os.Remove(filepath.Join(dir, e.Name())) // stale decisions only cost space
		}
	}
	return nil
}

// claim commits the ends of the wanted ranges ([from, to); from -1 for a
// partition never committed) for the partitions this instance owns and
// whose committed offset is still from (both checked under mu, after
// fetching the offsets again), and returns those the coordinator
// accepted. A refusal for a rebalance or a
// stale generation leaves the partition unclaimed; an error whose outcome
// is unknown (the request failed) fails the claim, so that the epoch is
// decided again.
func (gm *groupMember) claim(ctx context.Context, want map[string]map[int32][2]int64) (PartitionOffsets, error) {
	out := PartitionOffsets{}
	if len(want) == 0 {
		return out, nil
	}
	gm.mu.Lock()
	defer gm.mu.Unlock()
	memberID, gen := gm.client.GroupMetadata()
	if memberID == "" || gen < 0 {
		return out, nil
	}
	if f, ok := gm.cluster.opts.Faults.(ClaimFaults); ok {
		gen = f.ClaimGeneration(gm.group, gen, claimedOffsets(want))
	}
	committed, hists, err := gm.cachedCommittedLocked(ctx)
	if err != nil {
		return nil, err
	}
	ids, err := gm.topicIDs(ctx, want)
	if err != nil {
		return nil, err
	}
	req := kmsg.NewPtrOffsetCommitRequest()
	req.Group, req.Generation, req.MemberID = gm.group, gen, memberID
	n := 0
	metas := map[string]map[int32]string{}
	for t, ps := range want {
		rt := kmsg.NewOffsetCommitRequestTopic()
		rt.Topic, rt.TopicID = t, ids[t] // v10+ names topics by id
		for p, r := range ps {
			if !gm.owned[t][p] {
				continue
			}
			if c, ok := committed.get(t, p); (ok && c != r[0]) || (!ok && r[0] != -1) {
				continue // another instance moved on
			}
			meta := hists[t][p].encode()
			if r[0] != -1 {
				// A claim of nothing (a partition's start) is not in the
				// history: no data of it can be missing from the hop
				// (hop_watermark.go reads the history as claims of data).
				meta = hists[t][p].with(gm.instance, r[1]).encode()
			}
			if metas[t] == nil {
				metas[t] = map[int32]string{}
			}
			metas[t][p] = meta
			rp := kmsg.NewOffsetCommitRequestTopicPartition()
			rp.Partition, rp.Offset, rp.LeaderEpoch, rp.Metadata = p, r[1], -1, &meta
			rt.Partitions = append(rt.Partitions, rp)
			n++
		}
		if len(rt.Partitions) > 0 {
			req.Topics = append(req.Topics, rt)
		}
	}
	if n == 0 {
		return out, nil
	}
	resp, err := req.RequestWith(ctx, gm.client)
	if err != nil {
		gm.invalidateCacheLocked() // the outcome is unknown
		return nil, fmt.Errorf("kafka: cluster group %s: claim offsets: %w", gm.group, err)
	}
	var refused []string
	for _, rt := range resp.Topics {
		if rt.Topic == "" {
			for t, id := range ids {
				if id == rt.TopicID {
					rt.Topic = t
				}
			}
		}
		for _, rp := range rt.Partitions {
			if err := kerr.ErrorForCode(rp.ErrorCode); err != nil {
				refused = append(refused, fmt.Sprintf("%s-%d: %v", rt.Topic, rp.Partition, err))
				continue
			}
			end := want[rt.Topic][rp.Partition][1]
			out.set(rt.Topic, rp.Partition, end)
			gm.noteClaimLocked(rt.Topic, rp.Partition, end, parseClaimHistory(metas[rt.Topic][rp.Partition]))
		}
	}
	if len(out) > 0 {
		gm.cluster.noteResumed(gm.group) // processing runs again
	}
	if answered := len(refused) + countOffsets(out); answered != n {
		gm.invalidateCacheLocked() // a partition without an answer: unknown
	}
	if len(refused) > 0 {
		gm.invalidateCacheLocked()
		gm.logger.Info("cluster: claim refused (a rebalance is under way; the partitions are planned again)", "refused", strings.Join(refused, "; "), "generation", gen)
	}
	return out, nil
}

// claimedOffsets is how many offsets the wanted ranges cover (ClaimFaults).
func claimedOffsets(want map[string]map[int32][2]int64) int64 {
	n := int64(0)
	for _, ps := range want {
		for _, r := range ps {
			if r[0] >= 0 {
				n += r[1] - r[0]
			}
		}
	}
	return n
}

// countOffsets is the number of partitions in po.
func countOffsets(po PartitionOffsets) int {
	n := 0
	for _, ps := range po {
		n += len(ps)
	}
	return n
}

// topicIDs returns the ids of the wanted topics (OffsetCommit v10 names
// topics by id), from a cache filled on first use.
func (gm *groupMember) topicIDs(ctx context.Context, want map[string]map[int32][2]int64) (map[string][16]byte, error) {
	var missing []string
	for t := range want {
		if _, ok := gm.ids[t]; !ok {
			missing = append(missing, t)
		}
	}
	if len(missing) > 0 {
		details, err := gm.admin.ListTopics(ctx, missing...)
		if err != nil {
			return nil, fmt.Errorf("kafka: cluster group %s: topic ids of %s: %w", gm.group, strings.Join(missing, ","), err)
		}
		if gm.ids == nil {
			gm.ids = map[string][16]byte{}
		}
		for _, d := range details {
			if d.Err == nil {
				gm.ids[d.Topic] = d.ID
			}
		}
	}
	return gm.ids, nil
}
