package kafka

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"strconv"
	"sync"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
)

// State that moves (docs/cluster.md). The downstream stage of a hop keeps
// the state of the keys of its hop partitions; state partition p holds
// exactly the keys of hop partition p (the state's partitioning hashes
// the columns the hop hashes, stream.ConfClusterStatePartitionKeys). Kafka
// is the truth about that state, as in Kafka Streams:
//
//   - Each epoch's changes of state partition p (the keys the operator
//     wrote or deleted) are produced to partition p of the compacted topic
//     <cluster>-<table>-changelog-<op>, in one transaction (transactional
//     id <cluster>-<table>-changelog-w-<instance>) that also commits the
//     hop offsets the epoch read to the hop's group, under the member's
//     generation (a member that lost a partition in a rebalance cannot
//     commit it: the coordinator refuses the stale generation and the
//     transaction aborts), and epoch+1 to the instance's bookkeeping
//     group of the same name. The epoch's input, its state changes and
//     the record that it happened become visible together.
//   - The downstream does not claim hop ranges before reading them (the
//     transaction commits them): an epoch reads [committed, end) of the
//     partitions it owns; a crash before the commit leaves the offsets
//     and the changelog as they were, and whoever owns the partition next
//     reads the range again over the state the changelog holds.
//   - Before an epoch processes a partition it owns, the partition's local
//     state must be the changelog's: it is when the changelog ends where
//     this instance's last write left it (kept in changelog-ends in the
//     source's checkpoint); otherwise it is rebuilt from the changelog
//     topic. A partition it does not own is emptied, so that a window
//     held by another instance is not emitted here too.
//   - A replay of an epoch whose transaction committed (a crash after it,
//     before the local commit) reads the same ranges (the claims file and
//     the bookkeeping's epoch agree), changes no partition and writes
//     nothing to Kafka: the sink gets the output it missed.
//
// The operators keep live state between epochs: a partition that must
// change under a running query fails the epoch's Begin once
// (errStateMoved), which aborts the epoch and makes the operators drop
// their live state; the query's restart policy runs the epoch again and
// the rebuilt state is the changelog's.

// errStateMoved fails the Begin of an epoch whose state partitions must
// change owner under live operator state (retryable: the restart applies
// the change).
var errStateMoved = errors.New("kafka: cluster: hop partitions changed owner: the epoch runs again over the moved state")

// ChangelogTopic is the changelog topic of stateful operator op of table
// in cluster name.
func ChangelogTopic(cluster, table string, op int) string {
	return cluster + "-" + table + "-changelog-" + strconv.Itoa(op)
}

// stateChange is one key's change in an epoch (value nil: deleted).
type stateChange struct {
	key, value []byte
}

// partKey names one state partition.
type partKey struct {
	op   int
	part int32
}

// partState is what a local state partition holds.
type partState uint8

const (
	partUnknown partState = iota // not decided since the process started
	partHeld                     // the changelog's state of an owned partition
	partDropped                  // emptied: not owned
)

// bookmark is the instance's last committed epoch (bookkeeping group),
// with what a replay of it needs to see the state the epoch saw: the
// partitions it restored (and up to which changelog offset) or emptied.
type bookmark struct {
	epoch    int64            // -1: none
	Hash     string           `json:"h,omitempty"` // the claims-file name of the epoch's ranges ("": none read)
	Restored map[string]int64 `json:"r,omitempty"` // "<op>/<p>": changelog end read
	Dropped  []string         `json:"d,omitempty"`
}

func (b bookmark) encode() string {
	raw, _ := json.Marshal(b)
	return string(raw)
}

func parseBookmark(epoch int64, meta string) bookmark {
	b := bookmark{}
	if json.Unmarshal([]byte(meta), &b) != nil {
		b = bookmark{}
	}
	b.epoch = epoch
	return b
}

// stateMover moves the downstream stage's state; one per query start.
type stateMover struct {
	c      *Cluster
	mem    memory.Allocator
	spec   stream.HopSpec
	src    *Source // the hop source (member, checkpoint directory)
	logger *slog.Logger

	mu      sync.Mutex
	ready   bool
	client  *kgo.Client // transactional producer
	outcome *txnOutcome // its logger: whether a commit was accepted
	admin   *kadm.Client
	txnID   string // transactional id and bookkeeping group
	bk      bookmark
	topics  map[int][16]byte      // changelog topics made, by operator
	ends    map[string]int64      // "<op>/<p>": changelog end after this instance's last write
	applied map[partKey]partState // what each local partition holds
	changed map[partKey]partState // applied before this epoch changed it (undone on abort)
	changes map[partKey][]stateChange
	open    int // stores the epoch opened and has not committed
	// restored and dropped: the partitions the epoch changed (bookmark).
	restored map[string]int64
	dropped  []string
	// live: the operators may hold live state (an epoch committed since
	// the last abort or the start), so a partition cannot change under
	// them without an abort.
	live bool

	// The epoch being run: the owned hop partitions it works on (nil:
	// not taken yet), the ranges it read and their claims-file name.
	owned  map[int32]bool
	ranges clusterOffset
	hash   string
	read   bool
}

func newStateMover(c *Cluster, mem memory.Allocator, spec stream.HopSpec, src *Source) *stateMover {
	logger := c.opts.Logger.With("cluster", c.opts.Name, "table", spec.Table)
	return &stateMover{c: c, mem: mem, spec: spec, src: src, logger: logger, outcome: newTxnOutcome(logger),
		bk: bookmark{epoch: -1}, topics: map[int][16]byte{}, ends: map[string]int64{},
		applied: map[partKey]partState{}, changed: map[partKey]partState{}, changes: map[partKey][]stateChange{},
		restored: map[string]int64{}}
}

// endsFile keeps, per changelog partition, where this instance's last
// write left the changelog (the local state is the changelog's while the
// changelog still ends there). It is a cache, written after the state
// and the transaction it describes are durable, and not synced: after a
// crash of the machine it may be older than the changelog (the partition
// is restored from the changelog) or damaged (read as absent: every
// partition is restored). It cost an fsync of the file and of its
// directory per downstream epoch.
const endsFile = "changelog-ends"

// setup makes the transactional client, fences an earlier run of this
// instance and reads its bookmark (under mu).
func (m *stateMover) setup(ctx context.Context) error {
	if m.ready {
		return nil
	}
	if m.src.member == nil || m.src.dir == "" {
		return errors.New("kafka: cluster state: the hop source has not joined its group")
	}
	m.txnID = m.c.opts.Name + "-" + m.spec.Table + "-changelog-w-" + m.src.member.instance
	if m.client == nil {
		cl, err := kgo.NewClient(
			kgo.SeedBrokers(m.c.opts.Brokers...),
			kgo.TransactionalID(m.txnID),
			kgo.TransactionTimeout(max(m.c.opts.SessionTimeout, 10e9)),
			kgo.RecordPartitioner(kgo.ManualPartitioner()),
			kgo.ProducerBatchMaxBytes(16<<20),
			kgo.MaxBufferedRecords(1<<18),
			kgo.ClientID("arrowstream-"+m.c.opts.Name),
			kgo.DisableClientMetrics(), // nothing reads them (a push per interval per instance)
			kgo.WithLogger(m.outcome),  // what EndTransaction did (txn_outcome.go)
		)
		if err != nil {
			return fmt.Errorf("kafka: cluster state of %s: %w", m.spec.Table, err)
		}
		m.client, m.admin = cl, kadm.NewClient(cl)
	}
	if err := m.loadEnds(); err != nil {
		return err
	}
	// The bookkeeping offset lives on partition 0 of the hop topic (it
	// exists: the hop source made it).
	bk, err := fetchBookmark(ctx, m.client, m.txnID, m.src.member, m.hopTopic())
	if err != nil {
		return fmt.Errorf("kafka: cluster state of %s: %w", m.spec.Table, err)
	}
	m.bk, m.ready = bk, true
	return nil
}

func (m *stateMover) hopTopic() string { return HopTopic(m.c.opts.Name, m.spec.Table, m.spec.Hop) }

func (m *stateMover) loadEnds() error {
	path := filepath.Join(m.src.dir, endsFile)
	b, err := checkpoint.ReadSealedFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return nil
	}
	ends := map[string]int64{}
	if err == nil {
		err = json.Unmarshal(b, &ends)
	}
	if err != nil {
		// Damaged (not synced, endsFile): nothing is known to be the
		// changelog's, so every partition is restored from it.
		m.logger.Warn("cluster: state: changelog ends unreadable; state partitions are restored from the changelog", "path", path, "err", err)
		return nil
	}
	m.ends = ends
	return nil
}

func (m *stateMover) saveEnds() error { return m.writeEnds(false) }

// writeEnds writes the ends file; sync: durably (a partition's end is
// forgotten before its local state changes, forgetEndLocked).
func (m *stateMover) writeEnds(sync bool) error {
	b, err := json.Marshal(m.ends)
	if err != nil {
		return err
	}
	w := &checkpoint.Writer{NoSync: !sync} // a cache (endsFile) unless an end is forgotten
	if err := w.WriteSealedFile(filepath.Join(m.src.dir, endsFile), b, true); err != nil {
		return fmt.Errorf("kafka: cluster state: %w", err)
	}
	return nil
}

func endsKey(k partKey) string { return strconv.Itoa(k.op) + "/" + strconv.Itoa(int(k.part)) }

// ownedLocked returns the hop partitions the epoch works on, taking them
// from the group on first use.
func (m *stateMover) ownedLocked() map[int32]bool {
	if m.owned == nil {
		m.owned = map[int32]bool{}
		for _, p := range m.src.member.ownedNow()[m.hopTopic()] {
			m.owned[p] = true
		}
	}
	return m.owned
}

// noteRead records the ranges the epoch reads (hop source, before the
// epoch's state is opened) and the owned partitions they were decided on.
func (m *stateMover) noteRead(owned map[int32]bool, ranges clusterOffset, hash string) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.owned, m.ranges, m.hash, m.read = owned, ranges, hash, true
}

// replayDone reports whether the epoch whose ranges' claims file is hash
// committed its transaction (a replay that must read exactly them).
func (m *stateMover) replayDone(ctx context.Context, hash string) (bool, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.setup(ctx); err != nil {
		return false, err
	}
	return m.bk.Hash == hash && hash != "", nil
}

// restore says how a state partition starts an epoch: as it is (change
// false), holding contents (nil: empty), or, with snapshot, holding the
// local snapshot (the inner store's state at the epoch's start) with the
// changelog's tail applied over it (tail: the last change of each key
// after the snapshot, nil for a deletion).
type restore struct {
	change   bool
	contents map[string][]byte
	snapshot bool
	tail     map[string][]byte
}

// restoreOf says how partition k must start the epoch reading version.
func (m *stateMover) restoreOf(k partKey, version int64) (restore, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*60e9)
	defer cancel()
	m.mu.Lock()
	defer m.mu.Unlock()
	if err := m.setup(ctx); err != nil {
		return restore{}, err
	}
	if m.bk.epoch >= version {
		// A replay of an epoch that committed: the state that epoch saw,
		// so that its output is the one the transaction stands for.
		contents, change, err := m.replayLocked(ctx, k)
		return restore{change: change, contents: contents}, err
	}
	want := partDropped
	if m.ownedLocked()[k.part] {
		want = partHeld
	}
	cur := m.applied[k]
	if cur == want {
		return restore{}, nil
	}
	// snapAt: where the changelog ended when the local state was last the
	// changelog's (this instance's last write, or its last restore), if
	// this instance has such a snapshot of k.
	snapAt, snap := int64(0), false
	if cur == partUnknown && want == partHeld {
		// The local state is the changelog's when the changelog ends where
		// this instance's last write left it.
		if end, ok := m.ends[endsKey(k)]; ok {
			now, err := m.changelogEnd(ctx, k)
			if err != nil {
				return restore{}, err
			}
			if now == end {
				m.applied[k] = partHeld
				return restore{}, nil
			}
			snapAt, snap = end, now > end
		}
	}
	if err := m.mayChangeLocked(); err != nil {
		return restore{}, err
	}
	if _, ok := m.changed[k]; !ok {
		m.changed[k] = cur
	}
	m.applied[k] = want
	if err := m.forgetEndLocked(k); err != nil {
		m.applied[k] = cur
		return restore{}, err
	}
	if want == partDropped {
		m.dropped = append(m.dropped, endsKey(k))
		m.logger.Debug("cluster: state partition not owned here: emptied", "operator", k.op, "partition", k.part)
		return restore{change: true}, nil
	}
	if snap {
		// The local snapshot plus the changelog's tail: only what other
		// owners wrote since this instance last held k is read.
		tail, upTo, n, err := m.readChangelogTail(ctx, k, snapAt)
		if err == nil {
			m.restored[endsKey(k)] = upTo
			m.c.restores.partitions.Add(1)
			m.c.restores.fromSnapshot.Add(1)
			m.c.restores.records.Add(n)
			m.logger.Info("cluster: state partition restored from its local snapshot and the changelog's tail", "operator", k.op, "partition", k.part,
				"snapshotAt", snapAt, "changelogEnd", upTo, "records", n, "keysChanged", len(tail))
			return restore{change: true, snapshot: true, tail: tail}, nil
		}
		if !errors.Is(err, errTailGone) {
			m.applied[k] = cur
			return restore{}, err
		}
		m.logger.Info("cluster: state partition: the local snapshot's tail is not in the changelog; restoring it whole", "operator", k.op, "partition", k.part, "err", err)
	}
	contents, upTo, n, err := m.readChangelog(ctx, k, -1)
	if err != nil {
		m.applied[k] = cur
		return restore{}, err
	}
	m.restored[endsKey(k)] = upTo
	m.c.restores.partitions.Add(1)
	m.c.restores.records.Add(n)
	m.logger.Info("cluster: state partition restored from its changelog", "operator", k.op, "partition", k.part, "keys", len(contents), "changelogEnd", upTo,
		"records", n)
	return restore{change: true, contents: contents}, nil
}

// forgetEndLocked drops partition k's changelog end from the ends file,
// synced, before the epoch changes k's local state: once the local store
// commits that change (emptied, or rebuilt) the end no longer describes
// it, and a start that found it there (a crash before the epoch's
// transaction saved the ends) would take the changed local state for the
// changelog's at that end, or lay the changelog's tail over it. A
// rebalance pays one fsync per moved partition; steady epochs none.
func (m *stateMover) forgetEndLocked(k partKey) error {
	if _, ok := m.ends[endsKey(k)]; !ok {
		return nil
	}
	delete(m.ends, endsKey(k))
	return m.writeEnds(true)
}

// mayChangeLocked refuses to change a partition under live operator
// state: the epoch fails (and aborts, which drops the live state) and its
// retry changes it.
func (m *stateMover) mayChangeLocked() error {
	if !m.live {
		return nil
	}
	m.live = false // the failed Begin aborts the epoch and the operators' live state
	m.resetEpochLocked()
	return errStateMoved
}

// replayLocked gives partition k the state the committed epoch being
// replayed saw: restored up to the same changelog offset, emptied, or the
// local version as is.
func (m *stateMover) replayLocked(ctx context.Context, k partKey) (map[string][]byte, bool, error) {
	key := endsKey(k)
	upTo, restored := m.bk.Restored[key]
	dropped := false
	for _, d := range m.bk.Dropped {
		dropped = dropped || d == key
	}
	if !restored && !dropped {
		return nil, false, nil
	}
	if err := m.mayChangeLocked(); err != nil {
		return nil, false, err
	}
	if _, ok := m.changed[k]; !ok {
		m.changed[k] = m.applied[k]
	}
	if err := m.forgetEndLocked(k); err != nil {
		return nil, false, err
	}
	if dropped {
		m.applied[k] = partDropped
		return nil, true, nil
	}
	contents, _, _, err := m.readChangelog(ctx, k, upTo)
	if err != nil {
		return nil, false, err
	}
	m.applied[k] = partHeld
	return contents, true, nil
}

// opened counts a store the epoch opened.
func (m *stateMover) opened() {
	m.mu.Lock()
	m.open++
	m.mu.Unlock()
}

// committed takes a partition's changes after its local commit and
// reports whether it was the epoch's last open store.
func (m *stateMover) committed(k partKey, changes []stateChange) bool {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.live = true
	if len(changes) > 0 {
		m.changes[k] = append(m.changes[k], changes...)
	}
	m.open--
	return m.open == 0
}

// aborted forgets the epoch: the operators dropped their live state and
// the partitions changed in it are as before.
func (m *stateMover) aborted() {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.live = false
	for k, prev := range m.changed {
		m.applied[k] = prev
		delete(m.ends, endsKey(k))
	}
	m.open = 0
	m.resetEpochLocked()
}

func (m *stateMover) resetEpochLocked() {
	clear(m.changed)
	clear(m.changes)
	clear(m.restored)
	m.dropped = nil
	m.owned, m.ranges, m.hash, m.read = nil, clusterOffset{}, "", false
}

// close releases the transactional client.
func (m *stateMover) close() {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.client != nil {
		m.client.Close()
		m.client = nil
	}
}
