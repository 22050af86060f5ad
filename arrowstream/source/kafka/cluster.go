package kafka

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/arrowstream/arrowstream/checkpoint"
)

// ClusterOptions configure cluster mode (arrowstream serve --cluster):
// instances with the same Name share each streaming table that reads
// Kafka through one consumer group per table.
type ClusterOptions struct {
	// Name is the cluster's name; a table's group is <Name>-<table>.
	Name string
	// Brokers hold the groups (the bootstrap servers of the Kafka cluster
	// the tables read).
	Brokers []string
	// Address is this instance's Flight SQL address, carried in its group
	// join metadata (system.cluster_members, multi-endpoint FlightInfo).
	Address string
	// SessionTimeout is how long the group waits for a silent member
	// (kill -9) before giving its partitions to others (default 10s).
	SessionTimeout time.Duration
	// Logger receives rebalances (default slog.Default()).
	Logger *slog.Logger
	// TxnTimeout is the transaction timeout a repartition hop's upstream
	// writer starts with (default max(SessionTimeout, 10s)); it doubles
	// after each transaction the broker aborted for its age (hop_fence.go).
	TxnTimeout time.Duration
	// IdleTimeout: an input partition of a repartition hop whose claims
	// and marks did not move for this long is idle and does not hold the
	// downstream watermark back (Flink's idleness; default 30s).
	IdleTimeout time.Duration
	// Now is the clock of idleness (default time.Now).
	Now func() time.Time
	// Faults, when set, injects failures around the Kafka transactions
	// of repartition hops (tests of exactly once; nil in production).
	Faults TxnFaults
	// HopPaceMaxDelay bounds how long a hop's downstream epoch waits for
	// the next commit of its own instance's upstream stage, so that one
	// downstream epoch reads a round of every instance's writes
	// (hop_pace.go; default DefaultHopPaceMaxDelay, negative: no pacing,
	// an epoch at every commit seen).
	HopPaceMaxDelay time.Duration
	// ListWhileIdle: an idle input source lists its partitions' ends on
	// the idle backoff (every 100 ms) instead of waiting on a long-poll
	// fetch (cluster_watch.go); for tests of the listing schedule, and a
	// broker that does not hold fetches.
	ListWhileIdle bool
}

// TxnFaults injects failures around an epoch's Kafka transaction: the
// upstream stage's (stage "repartition": the hop's rows and marks) and
// the downstream stage's (stage "changelog": state changes and hop
// offsets). Tests use it to crash an epoch on either side of the commit.
type TxnFaults interface {
	// BeforeTxnCommit is called once the epoch's transaction holds
	// everything, before it commits: an error aborts it (the local
	// state may already have committed).
	BeforeTxnCommit(table, stage string, epoch int64) error
	// AfterTxnCommit is called once the transaction committed, before
	// the epoch commits locally (offset and commit logs): an error fails
	// the epoch with its Kafka side committed.
	AfterTxnCommit(table, stage string, epoch int64) error
}

// TxnBeginFaults is optionally implemented by a TxnFaults: BeforeTxnBegin
// is called before an epoch's transaction begins, with nothing of it in
// Kafka yet (the downstream's local state already committed; the
// upstream's rows not yet read); an error fails the epoch. Tests use it
// to hold an instance there, as a slow one, or to fence its producer.
type TxnBeginFaults interface {
	BeforeTxnBegin(table, stage string, epoch int64) error
}

// TxnReadFaults is optionally implemented by a TxnFaults: WhileReading is
// called by a hop's upstream writer once per epoch, after it encoded the
// epoch's first record of rows and before it reads on. Tests hold it
// there as an epoch slow to read.
type TxnReadFaults interface {
	WhileReading(table, stage string, epoch int64)
}

// ClaimFaults is optionally implemented by a TxnFaults: ClaimGeneration
// is called before an instance claims input ranges in group (offsets:
// how many offsets the claim covers, 0 for a claim of partitions'
// starts) and returns the generation the claim is sent with. Tests send
// a stale one, which the coordinator refuses as it refuses a claim that
// races a rebalance.
type ClaimFaults interface {
	ClaimGeneration(group string, generation int32, offsets int64) int32
}

// Cluster is this instance's membership in a cluster: it makes the Kafka
// sources of streaming queries cluster members and lists the members of
// every table's group. Safe for concurrent use.
type Cluster struct {
	opts ClusterOptions

	mu         sync.Mutex
	members    map[string]*groupMember  // by group id, while their query runs
	rebalances map[string]*rebalanceLog // by group id, kept across restarts

	reads stageReads          // upstream stages' epoch ranges, for their hop sinks' marks
	paces map[string]*hopPace // by hop topic: the local upstream's commits (hop_pace.go)
	// restores counts what state partitions' restores read (Restores).
	restores restoreCounters
	// changed is closed at the next rebalance callback (Rebalanced).
	changed chan struct{}
}

// NewCluster checks opts and returns the membership (it connects only
// when a query starts).
func NewCluster(opts ClusterOptions) (*Cluster, error) {
	if opts.Name == "" {
		return nil, errors.New("kafka: cluster name is empty")
	}
	if strings.ContainsAny(opts.Name, " \t\n/") {
		return nil, fmt.Errorf("kafka: cluster name %q: spaces and slashes are not allowed", opts.Name)
	}
	if len(opts.Brokers) == 0 {
		return nil, fmt.Errorf("kafka: cluster %s: no brokers", opts.Name)
	}
	if opts.SessionTimeout <= 0 {
		opts.SessionTimeout = 10 * time.Second
	}
	if opts.Logger == nil {
		opts.Logger = slog.Default()
	}
	if opts.IdleTimeout <= 0 {
		opts.IdleTimeout = 30 * time.Second
	}
	if opts.Now == nil {
		opts.Now = time.Now
	}
	if opts.HopPaceMaxDelay == 0 {
		opts.HopPaceMaxDelay = DefaultHopPaceMaxDelay
	}
	return &Cluster{opts: opts, members: map[string]*groupMember{}, rebalances: map[string]*rebalanceLog{}}, nil
}

// Name returns the cluster's name.
func (c *Cluster) Name() string { return c.opts.Name }

// Address returns this instance's advertised Flight SQL address.
func (c *Cluster) Address() string { return c.opts.Address }

// GroupID is the consumer group of a table's query.
func (c *Cluster) GroupID(table string) string { return c.opts.Name + "-" + table }

// Runs reports whether table's query runs here as a cluster member.
func (c *Cluster) Runs(table string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	_, ok := c.members[c.GroupID(table)]
	return ok
}

// Member is one instance in one table's group (system.cluster_members).
type Member struct {
	Table      string
	Group      string
	MemberID   string
	ClientHost string
	Address    string // its Flight SQL address
	Partitions []string
	Self       bool // this instance
}

// Members describes the groups of the tables whose queries run here.
func (c *Cluster) Members(ctx context.Context) ([]Member, error) {
	c.mu.Lock()
	gms := make([]*groupMember, 0, len(c.members))
	for _, gm := range c.members {
		gms = append(gms, gm)
	}
	c.mu.Unlock()
	sort.Slice(gms, func(i, j int) bool { return gms[i].group < gms[j].group })
	var out []Member
	for _, gm := range gms {
		ms, err := gm.describe(ctx)
		if err != nil {
			return nil, err
		}
		out = append(out, ms...)
	}
	return out, nil
}

// TableMembers describes the group of one table (nil when its query does
// not run here).
func (c *Cluster) TableMembers(ctx context.Context, table string) ([]Member, error) {
	c.mu.Lock()
	gm := c.members[c.GroupID(table)]
	c.mu.Unlock()
	if gm == nil {
		return nil, nil
	}
	return gm.describe(ctx)
}

func (c *Cluster) register(gm *groupMember) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, ok := c.members[gm.group]; ok {
		return fmt.Errorf("kafka: cluster %s: group %s is already used by another query of this instance (one Kafka source per streaming table in cluster mode)", c.opts.Name, gm.group)
	}
	c.members[gm.group] = gm
	return nil
}

func (c *Cluster) unregister(gm *groupMember) {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.members[gm.group] == gm {
		delete(c.members, gm.group)
	}
}

// groupMember is one query's membership: a franz-go group consumer
// (cooperative-sticky) that never fetches (the source reads by offset
// with its own consumers) and the partitions it owns now.
type groupMember struct {
	cluster  *Cluster
	group    string
	table    string
	instance string // stable id of this query's checkpoint
	logger   *slog.Logger
	client   *kgo.Client
	admin    *kadm.Client

	// mu orders claims against revocation: a claim checks ownership and
	// commits under mu, and the revoke callback takes mu, so a partition
	// handed to another member is never claimed here afterwards.
	mu    sync.Mutex
	owned map[string]map[int32]bool
	ids   map[string][16]byte // topic ids (under mu)

	// cache holds the committed offsets while the assignment is stable
	// (cluster_offset_cache.go); cacheVer counts its invalidations and
	// this member's claims (both under mu).
	cache    *offsetCache
	cacheVer uint64
	uncached bool // set before use: never cache (a hop's downstream)
	// offsetFetches counts OffsetFetch requests (tests, metrics).
	offsetFetches atomic.Int64
	// plans counts the epochs planned over owned partitions, with data
	// or not (tests: fetches per poll).
	plans atomic.Int64
	// listings counts the end-offset listings of the member's source
	// (tests: polls per listing).
	listings atomic.Int64
	// assignVer counts assignment changes (the idle backoff lists again
	// after one).
	assignVer atomic.Uint64
	// watch, when set, is woken after each assignment change (the
	// source's watcher wakes the query: cluster_watch.go); under mu.
	watch *endWatcher
}

// instanceFile holds the instance id in the source's checkpoint directory.
const instanceFile = "cluster-instance"

// loadInstanceID reads the id of this checkpoint's member or makes one.
func loadInstanceID(dir string) (string, error) {
	path := filepath.Join(dir, instanceFile)
	if b, err := checkpoint.ReadSealedFile(path); err == nil {
		id := strings.TrimSpace(string(b))
		if id == "" {
			return "", fmt.Errorf("kafka: %s is empty", path)
		}
		return id, nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return "", fmt.Errorf("kafka: cluster instance id: %w", err)
	}
	var raw [8]byte
	if _, err := rand.Read(raw[:]); err != nil {
		return "", fmt.Errorf("kafka: cluster instance id: %w", err)
	}
	id := hex.EncodeToString(raw[:])
	w := &checkpoint.Writer{}
	if err := w.MkdirAll(dir); err != nil {
		return "", fmt.Errorf("kafka: cluster instance id: %w", err)
	}
	if err := w.WriteSealedFile(path, []byte(id), false); err != nil {
		if errors.Is(err, checkpoint.ErrExists) {
			return loadInstanceID(dir)
		}
		return "", fmt.Errorf("kafka: cluster instance id %s: %w", path, err)
	}
	return id, nil
}

// join starts membership of table's group for topics.
func (c *Cluster) join(table, instance string, topics []string, dial []kgo.Opt) (*groupMember, error) {
	gm := &groupMember{cluster: c, group: c.GroupID(table), table: table, instance: instance,
		logger: c.opts.Logger.With("cluster", c.opts.Name, "group", c.GroupID(table), "instance", instance),
		owned:  map[string]map[int32]bool{}}
	opts := append([]kgo.Opt{
		kgo.SeedBrokers(c.opts.Brokers...),
		kgo.ConsumerGroup(gm.group),
		kgo.ConsumeTopics(topics...),
		kgo.Balancers(&addressBalancer{inner: kgo.CooperativeStickyBalancer(), addr: c.opts.Address}),
		kgo.DisableAutoCommit(),
		kgo.SessionTimeout(c.opts.SessionTimeout),
		kgo.HeartbeatInterval(max(c.opts.SessionTimeout/10, 100*time.Millisecond)),
		kgo.RebalanceTimeout(max(c.opts.SessionTimeout, 10*time.Second)),
		kgo.ClientID("arrowstream-" + c.opts.Name),
		kgo.MetadataMinAge(100 * time.Millisecond),
		kgo.DisableClientMetrics(), // a membership, not a data path: nothing worth pushing
		kgo.OnPartitionsAssigned(gm.assigned),
		kgo.OnPartitionsRevoked(gm.revoked),
		kgo.OnPartitionsLost(gm.lost),
	}, dial...)
	cl, err := kgo.NewClient(opts...)
	if err != nil {
		return nil, fmt.Errorf("kafka: cluster %s: group %s: %w", c.opts.Name, gm.group, err)
	}
	// The membership never fetches: pausing the topics keeps the group
	// consumer from buffering records nobody reads.
	cl.PauseFetchTopics(topics...)
	gm.client, gm.admin = cl, kadm.NewClient(cl)
	// Registered once complete: system.cluster_members reads it from
	// other goroutines.
	if err := c.register(gm); err != nil {
		cl.Close()
		return nil, err
	}
	gm.logger.Info("cluster: joining the table's consumer group", "topics", strings.Join(topics, ","), "address", c.opts.Address)
	return gm, nil
}

func (gm *groupMember) assigned(_ context.Context, cl *kgo.Client, tps map[string][]int32) {
	gm.mu.Lock()
	for t, ps := range tps {
		if gm.owned[t] == nil {
			gm.owned[t] = map[int32]bool{}
		}
		for _, p := range ps {
			gm.owned[t][p] = true
		}
	}
	gm.invalidateCacheLocked()
	gm.assignVer.Add(1)
	n := gm.ownedCountLocked()
	w := gm.watch
	gm.mu.Unlock()
	if w != nil {
		w.assignChanged()
	}
	_, gen := cl.GroupMetadata() // the callback may run before join returns
	gm.cluster.noteRebalance(gm, "assigned", tps, gen, n)
	gm.logger.Info("cluster: rebalance: partitions assigned", "partitions", formatTPs(tps), "owned", n, "generation", gen)
}

func (gm *groupMember) revoked(_ context.Context, cl *kgo.Client, tps map[string][]int32) {
	_, gen := cl.GroupMetadata()
	gm.drop(tps, "revoked", gen)
}

func (gm *groupMember) lost(_ context.Context, cl *kgo.Client, tps map[string][]int32) {
	_, gen := cl.GroupMetadata()
	gm.drop(tps, "lost", gen)
}

// drop forgets partitions; it waits for a claim in flight (mu).
func (gm *groupMember) drop(tps map[string][]int32, how string, gen int32) {
	gm.mu.Lock()
	for t, ps := range tps {
		for _, p := range ps {
			delete(gm.owned[t], p)
		}
	}
	gm.invalidateCacheLocked()
	gm.assignVer.Add(1)
	n := gm.ownedCountLocked()
	w := gm.watch
	gm.mu.Unlock()
	if w != nil {
		w.assignChanged()
	}
	gm.cluster.noteRebalance(gm, how, tps, gen, n)
	gm.logger.Info("cluster: rebalance: partitions "+how, "partitions", formatTPs(tps), "owned", n)
}

func (gm *groupMember) ownedCountLocked() int {
	n := 0
	for _, ps := range gm.owned {
		n += len(ps)
	}
	return n
}

// ownedNow returns a copy of the partitions owned now.
func (gm *groupMember) ownedNow() map[string][]int32 {
	gm.mu.Lock()
	defer gm.mu.Unlock()
	out := map[string][]int32{}
	for t, ps := range gm.owned {
		for p := range ps {
			out[t] = append(out[t], p)
		}
		sort.Slice(out[t], func(i, j int) bool { return out[t][i] < out[t][j] })
	}
	return out
}

// describe lists the group's members.
func (gm *groupMember) describe(ctx context.Context) ([]Member, error) {
	described, err := gm.admin.DescribeGroups(ctx, gm.group)
	if err != nil {
		return nil, fmt.Errorf("kafka: cluster %s: describe group %s: %w", gm.cluster.opts.Name, gm.group, err)
	}
	self, _ := gm.client.GroupMetadata()
	var out []Member
	for _, g := range described.Sorted() {
		if errors.Is(g.Err, kerr.GroupIDNotFound) {
			// The group has not formed yet (its first member is still
			// joining; a broker may not know the id until then): it has
			// no members, which is what a reader should see.
			continue
		}
		if g.Err != nil {
			return nil, fmt.Errorf("kafka: cluster %s: describe group %s: %w", gm.cluster.opts.Name, gm.group, g.Err)
		}
		for _, m := range g.Members {
			mem := Member{Table: gm.table, Group: gm.group, MemberID: m.MemberID, ClientHost: m.ClientHost, Self: m.MemberID == self}
			if c, ok := m.Join.AsConsumer(); ok {
				mem.Address, _, _ = unwrapAddress(c.UserData)
			}
			if a, ok := m.Assigned.AsConsumer(); ok {
				for _, t := range a.Topics {
					for _, p := range t.Partitions {
						mem.Partitions = append(mem.Partitions, fmt.Sprintf("%s-%d", t.Topic, p))
					}
				}
			}
			sort.Strings(mem.Partitions)
			out = append(out, mem)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].MemberID < out[j].MemberID })
	return out, nil
}

// leave closes the group client (the group rebalances the partitions to
// the remaining members at once).
func (gm *groupMember) leave() {
	gm.client.Close()
	gm.cluster.unregister(gm)
	gm.logger.Info("cluster: left the table's consumer group")
}

func formatTPs(tps map[string][]int32) string {
	var parts []string
	for t, ps := range tps {
		for _, p := range ps {
			parts = append(parts, fmt.Sprintf("%s-%d", t, p))
		}
	}
	sort.Strings(parts)
	return strings.Join(parts, ",")
}
