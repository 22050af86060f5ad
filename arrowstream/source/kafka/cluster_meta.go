package kafka

import (
	"encoding/binary"
	"fmt"
	"sort"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kgo"
	"github.com/twmb/franz-go/pkg/kmsg"
)

// claimHistory is what a cluster member writes as the metadata of each
// committed group offset: for every instance that claimed offsets of the
// partition, the end of its last claim. A restarted instance reads it to
// learn whether an epoch it planned before crashing had claimed its range
// (the claim is the group commit; see cluster_source.go), even after
// other instances moved the partition's offset on.
type claimHistory map[string]int64

// claimHistoryPrefix marks the metadata as ours (version 1).
const claimHistoryPrefix = "arrowstream.claims.v1;"

// maxClaimHistory bounds the instances remembered per partition, so that
// the metadata stays below Kafka's offset.metadata.max.bytes (4096 by
// default): the entries with the lowest offsets (the oldest claims) go
// first. An instance evicted while it held a claimed, uncommitted epoch
// would skip that range on restart (docs/cluster.md, limits).
const maxClaimHistory = 32

// parseClaimHistory decodes metadata; foreign or empty metadata is an
// empty history (a group offset committed by another tool).
func parseClaimHistory(meta string) claimHistory {
	h := claimHistory{}
	rest, ok := strings.CutPrefix(meta, claimHistoryPrefix)
	if !ok {
		return h
	}
	for _, e := range strings.Split(rest, ",") {
		id, off, ok := strings.Cut(e, "=")
		if !ok || id == "" {
			continue
		}
		n, err := strconv.ParseInt(off, 10, 64)
		if err != nil {
			continue
		}
		h[id] = n
	}
	return h
}

// encode returns the metadata text, instances in order.
func (h claimHistory) encode() string {
	ids := make([]string, 0, len(h))
	for id := range h {
		ids = append(ids, id)
	}
	if len(ids) > maxClaimHistory {
		sort.Slice(ids, func(i, j int) bool { return h[ids[i]] > h[ids[j]] })
		ids = ids[:maxClaimHistory]
	}
	sort.Strings(ids)
	var b strings.Builder
	b.WriteString(claimHistoryPrefix)
	for i, id := range ids {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(id)
		b.WriteByte('=')
		b.WriteString(strconv.FormatInt(h[id], 10))
	}
	return b.String()
}

// with returns a copy of h where instance's last claim ends at end.
func (h claimHistory) with(instance string, end int64) claimHistory {
	out := make(claimHistory, len(h)+1)
	for k, v := range h {
		out[k] = v
	}
	out[instance] = end
	return out
}

// addressMagic starts the user data that addressBalancer wraps.
const addressMagic = "ASA1"

// addressBalancer is a group balancer that adds the member's Flight SQL
// address to its join metadata (ConsumerMemberMetadata.UserData) and
// otherwise defers to inner (cooperative-sticky): every member, and
// system.cluster_members, can then read where each member serves its
// partitions from the group's description alone.
type addressBalancer struct {
	inner kgo.GroupBalancer
	addr  string
}

// ProtocolName implements kgo.GroupBalancer: a distinct name, so that a
// consumer that does not wrap its metadata cannot join the group.
func (b *addressBalancer) ProtocolName() string { return "arrowstream-" + b.inner.ProtocolName() }

// IsCooperative implements kgo.GroupBalancer.
func (b *addressBalancer) IsCooperative() bool { return b.inner.IsCooperative() }

// ParseSyncAssignment implements kgo.GroupBalancer.
func (b *addressBalancer) ParseSyncAssignment(assignment []byte) (map[string][]int32, error) {
	return b.inner.ParseSyncAssignment(assignment)
}

// JoinGroupMetadata implements kgo.GroupBalancer.
func (b *addressBalancer) JoinGroupMetadata(interests []string, current map[string][]int32, generation int32) []byte {
	raw := b.inner.JoinGroupMetadata(interests, current, generation)
	var m kmsg.ConsumerMemberMetadata
	if err := m.ReadFrom(raw); err != nil {
		return raw // cannot happen: inner encoded it
	}
	m.UserData = wrapAddress(b.addr, m.UserData)
	return m.AppendTo(nil)
}

// MemberBalancer implements kgo.GroupBalancer: inner balances members
// whose metadata is unwrapped again.
func (b *addressBalancer) MemberBalancer(members []kmsg.JoinGroupResponseMember) (kgo.GroupMemberBalancer, map[string]struct{}, error) {
	stripped := make([]kmsg.JoinGroupResponseMember, len(members))
	for i, mem := range members {
		stripped[i] = mem
		var m kmsg.ConsumerMemberMetadata
		if err := m.ReadFrom(mem.ProtocolMetadata); err != nil {
			return nil, nil, fmt.Errorf("kafka: cluster member %s: join metadata: %w", mem.MemberID, err)
		}
		_, inner, ok := unwrapAddress(m.UserData)
		if !ok {
			return nil, nil, fmt.Errorf("kafka: cluster member %s does not carry an arrowstream address in its join metadata", mem.MemberID)
		}
		m.UserData = inner
		stripped[i].ProtocolMetadata = m.AppendTo(nil)
	}
	return b.inner.MemberBalancer(stripped)
}

// wrapAddress prefixes user data with the magic and the address.
func wrapAddress(addr string, userData []byte) []byte {
	out := make([]byte, 0, len(addressMagic)+binary.MaxVarintLen64+len(addr)+len(userData))
	out = append(out, addressMagic...)
	out = binary.AppendUvarint(out, uint64(len(addr)))
	out = append(out, addr...)
	return append(out, userData...)
}

// unwrapAddress splits wrapped user data; ok is false when it is not ours.
func unwrapAddress(b []byte) (addr string, inner []byte, ok bool) {
	rest, found := strings.CutPrefix(string(b), addressMagic)
	if !found {
		return "", nil, false
	}
	n, k := binary.Uvarint([]byte(rest))
	if k <= 0 || n > uint64(len(rest)-k) {
		return "", nil, false
	}
	// A length written in more bytes than its shortest varint is not
	// what wrapAddress writes: refuse it, so every accepted prefix is
	// the one this package produced (and re-encodes to itself).
	if k != len(binary.AppendUvarint(nil, n)) {
		return "", nil, false
	}
	start := len(addressMagic) + k
	return string(b[start : start+int(n)]), b[start+int(n):], true
}

// MemberAddress returns the Flight SQL address in a member's join
// metadata (a ConsumerMemberMetadata whose user data addressBalancer
// wrapped).
func MemberAddress(protocolMetadata []byte) (string, bool) {
	var m kmsg.ConsumerMemberMetadata
	if err := m.ReadFrom(protocolMetadata); err != nil {
		return "", false
	}
	addr, _, ok := unwrapAddress(m.UserData)
	return addr, ok
}
