package kafka

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/vector"
)

// ErrDataLoss reports offsets a query must read that Kafka no longer has
// (aged out by retention, deleted records, a deleted partition) while
// failOnDataLoss is true.
var ErrDataLoss = errors.New("kafka: data loss")

// initialOffsetsFile holds the resolved startingOffsets in the source's
// checkpoint directory (Spark's sources/<i>/0).
const initialOffsetsFile = "0"

// Source is the Kafka streaming source. The engine calls it from one
// goroutine at a time. It implements arrowstream.Source,
// AdmissionControlSource (maxOffsetsPerTrigger), CheckpointedSource and
// InitialOffsetSource (startingOffsets are resolved once per query and
// kept in its checkpoint), DescribedSource and MetricsSource (metrics.go).
type Source struct {
	mem    memory.Allocator
	opts   SourceOptions
	schema *arrow.Schema
	logger *slog.Logger
	client *kgo.Client // metadata and offset listing
	admin  *kadm.Client

	initial PartitionOffsets // resolved startingOffsets, nil until known
	latest  PartitionOffsets // from the last LatestOffset, reused by LatestOffsetFrom

	// For Metrics (metrics.go): the end offsets the source last listed and
	// the end of the last range it read.
	available, consumed PartitionOffsets

	// Cluster mode (cluster_source.go): the membership of the table's
	// group, once SetCheckpointDir joined it, and the source's checkpoint
	// directory (its claim decisions).
	cluster *Cluster
	member  *groupMember
	dir     string
	// groupTable, when set, names the table whose group the source joins
	// (SetClusterTable); hop marks the downstream source of a repartition
	// hop (hop_source.go): it reads committed transactions only.
	groupTable string
	hop        bool
	// read tells the stage's hop sink which ranges the epoch read
	// (hop_mark.go); nil outside an upstream stage in cluster mode.
	read *stageRead
	// mover, on a hop's downstream source whose state moves between
	// instances, commits the hop offsets with the state's changelog
	// (state_move.go) instead of claiming them before reading.
	mover *stateMover
	// readUpTo: in cluster mode, the offset each partition was last read
	// up to (per-partition progress, cluster_metrics.go).
	readUpTo PartitionOffsets
	// idle: in cluster mode, the end-offset listing backs off while
	// nothing arrives (cluster_idle.go).
	idle idleBackoff
	// kept is the readers' consumer client, kept across epochs
	// (reader_client.go).
	kept keptConsumer
	// pool is the memory the readers' consumers decode fetches into,
	// reused from fetch to fetch (reader_pool.go).
	pool *fetchPool
	// delay holds epochs back for minOffsetsPerTrigger (trigger_delay.go).
	delay triggerDelay
	// hold: in cluster mode, an input holds epochs back to batch like a
	// single instance (cluster_hold.go); confHold is the session's cap
	// (SetClusterConf; 0: unset, negative: off).
	hold     clusterHold
	confHold time.Duration
	// short: in cluster mode, the last epoch that read less than it
	// planned (cluster_replan.go).
	short shortRead
	// now is the clock of the trigger delay and the listing schedule
	// (time.Now; a scripted clock in tests).
	now func() time.Time
	// watch: the long-poll fetch of a cluster input source that wakes the
	// idle query (cluster_watch.go); nil otherwise.
	watch *endWatcher
}

// SetClusterTable implements stream.ClusterTableSource: the source joins
// the group of table rather than of its query's checkpoint directory.
func (s *Source) SetClusterTable(table string) { s.groupTable = table }

// NewSource returns a source; it connects to Kafka only when first used.
func NewSource(mem memory.Allocator, opts SourceOptions) (*Source, error) {
	if len(opts.Brokers) == 0 {
		return nil, fmt.Errorf("kafka: option kafka.bootstrap.servers must be specified")
	}
	if opts.BatchRows <= 0 {
		opts.BatchRows = 8192
	}
	if opts.PollTimeout <= 0 {
		opts.PollTimeout = 120e9
	}
	if opts.MaxTriggerDelay <= 0 {
		opts.MaxTriggerDelay = DefaultMaxTriggerDelay
	}
	logger := opts.Logger
	if logger == nil {
		logger = slog.Default()
	}
	// Offsets and topics are listed once per trigger and must be current
	// (new topics for subscribePattern, deleted partitions): the cached
	// metadata kadm uses may be at most a few milliseconds old, except in
	// cluster mode (listingMetadataMinAge).
	// No KIP-714 client metrics: a push per interval from every source
	// of every instance, for nothing arrowstream reads.
	cl, err := kgo.NewClient(append([]kgo.Opt{kgo.SeedBrokers(opts.Brokers...), kgo.MetadataMinAge(listingMetadataMinAge(opts)), kgo.DisableClientMetrics()}, dialOpts(opts.Control)...)...)
	if err != nil {
		return nil, fmt.Errorf("kafka: client for %s: %w", strings.Join(opts.Brokers, ","), err)
	}
	return &Source{mem: mem, opts: opts, schema: Schema(opts.IncludeHeaders), logger: logger, client: cl, admin: kadm.NewClient(cl), cluster: opts.Cluster,
		delay: triggerDelay{min: opts.MinOffsetsPerTrigger, maxDelay: opts.MaxTriggerDelay}, now: time.Now,
		pool: newFetchPool(defaultFetchPoolBytes)}, nil
}

// Schema implements arrowstream.Source.
func (s *Source) Schema() *arrow.Schema { return s.schema }

// Description implements arrowstream.DescribedSource (Spark's form).
func (s *Source) Description() string {
	switch {
	case s.opts.SubscribePattern != nil:
		return fmt.Sprintf("KafkaV2[SubscribePattern[%s]]", strings.TrimSuffix(strings.TrimPrefix(s.opts.SubscribePattern.String(), "^(?:"), ")$"))
	case s.opts.Assign != nil:
		var tps []string
		for t, ps := range s.opts.Assign {
			for _, p := range ps {
				tps = append(tps, fmt.Sprintf("%s-%d", t, p))
			}
		}
		sort.Strings(tps)
		return fmt.Sprintf("KafkaV2[Assign[%s]]", strings.Join(tps, ", "))
	}
	return fmt.Sprintf("KafkaV2[Subscribe[%s]]", strings.Join(s.opts.Subscribe, ","))
}

// SetCheckpointDir implements arrowstream.CheckpointedSource: the initial
// offsets are read from dir, or resolved from startingOffsets and written
// there, so that a query restarted before its first epoch committed reads
// from the same place.
func (s *Source) SetCheckpointDir(dir string) error {
	if s.cluster != nil {
		return s.clusterSetCheckpointDir(dir)
	}
	path := filepath.Join(dir, initialOffsetsFile)
	if b, err := checkpoint.ReadSealedFile(path); err == nil {
		po, err := parseInitialOffsets(b)
		if err != nil {
			return fmt.Errorf("kafka: initial offsets %s: %w", path, err)
		}
		s.initial = po
		return nil
	} else if !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("kafka: initial offsets: %w", err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), s.opts.PollTimeout)
	defer cancel()
	po, err := s.resolveStart(ctx)
	if err != nil {
		return err
	}
	w := &checkpoint.Writer{}
	if err := w.MkdirAll(dir); err != nil {
		return fmt.Errorf("kafka: initial offsets: %w", err)
	}
	data := append([]byte("v1\n"), po.Encode()...)
	if err := w.WriteSealedFile(path, data, false); err != nil {
		if errors.Is(err, checkpoint.ErrExists) {
			return s.SetCheckpointDir(dir)
		}
		return fmt.Errorf("kafka: initial offsets %s: %w", path, err)
	}
	s.initial = po
	return nil
}

func parseInitialOffsets(b []byte) (PartitionOffsets, error) {
	text, ok := strings.CutPrefix(string(b), "v1\n")
	if !ok {
		return nil, fmt.Errorf("unsupported format (want v1)")
	}
	return ParsePartitionOffsets(strings.TrimSpace(text))
}

// InitialOffset implements arrowstream.InitialOffsetSource.
func (s *Source) InitialOffset() stream.Offset {
	if s.initial == nil {
		return nil
	}
	return s.initial.Encode()
}

// LatestOffset implements arrowstream.Source: the end offsets of every
// partition, capped by endingOffsets.
func (s *Source) LatestOffset(ctx context.Context) (stream.Offset, error) {
	if s.cluster != nil {
		latest, err := s.clusterLatest(ctx)
		if err != nil {
			return nil, err
		}
		s.latest, s.available = latest, latest
		return latest.Encode(), nil
	}
	if err := s.ensureInitial(ctx); err != nil {
		return nil, err
	}
	latest, err := s.fetchLatest(ctx)
	if err != nil {
		return nil, err
	}
	s.latest = latest
	s.available = latest
	// An empty map is an offset too: partitions that vanish must reach
	// Read, which reports them as lost.
	return latest.Encode(), nil
}

// LatestOffsetFrom implements arrowstream.AdmissionControlSource: at most
// maxOffsetsPerTrigger offsets after start.
func (s *Source) LatestOffsetFrom(ctx context.Context, start stream.Offset) (stream.Offset, error) {
	latest := s.latest
	s.latest = nil
	if latest == nil {
		if _, err := s.LatestOffset(ctx); err != nil {
			return nil, err
		}
		latest, s.latest = s.latest, nil
	}
	if s.cluster != nil {
		return s.clusterLatestFrom(ctx, start, latest)
	}
	if s.opts.MaxOffsetsPerTrigger <= 0 && s.opts.MinOffsetsPerTrigger <= 0 {
		return latest.Encode(), nil
	}
	from, err := decodeOffset(start)
	if err != nil {
		return nil, err
	}
	if from == nil {
		from = s.initial
	}
	from = from.clone()
	var fresh []string
	for t, ps := range latest {
		for p := range ps {
			if _, ok := from.get(t, p); !ok {
				fresh = append(fresh, t)
			}
		}
	}
	if len(fresh) > 0 {
		earliest, err := s.listOffsets(ctx, true, fresh)
		if err != nil {
			return nil, err
		}
		for t, ps := range latest {
			for p := range ps {
				if _, ok := from.get(t, p); !ok {
					off, _ := earliest.get(t, p)
					from.set(t, p, off)
				}
			}
		}
	}
	// Every planning consults the delay, also when nothing is waiting
	// (Spark's delayBatch runs at every latestOffset): an expired delay
	// restarts then, so the first records after an idle spell wait for
	// the minimum too.
	if s.delay.hold(s.now(), from, latest) {
		return start, nil
	}
	if s.opts.MaxOffsetsPerTrigger <= 0 {
		return latest.Encode(), nil
	}
	return rateLimit(s.opts.MaxOffsetsPerTrigger, from, latest).Encode(), nil
}

// Commit implements arrowstream.Source. Kafka keeps the data by its own
// retention; the source commits nothing to Kafka (as Spark's).
func (s *Source) Commit(context.Context, stream.Offset) error { return nil }

// Close implements arrowstream.Source.
func (s *Source) Close() error {
	// A closed source holds no input the local hop downstream would wait
	// for (hop_pace.go); a restarted stage tells its own.
	s.read.holding(time.Time{})
	if s.watch != nil {
		s.watch.close()
	}
	if s.member != nil {
		s.member.leave()
		s.member = nil
	}
	s.closeConsumer()
	s.client.Close()
	return nil
}

// ensureInitial resolves startingOffsets when no checkpoint directory gave
// them (a source used outside a query).
func (s *Source) ensureInitial(ctx context.Context) error {
	if s.initial != nil {
		return nil
	}
	po, err := s.resolveStart(ctx)
	if err != nil {
		return err
	}
	s.initial = po
	return nil
}

// reportDataLoss fails with ErrDataLoss when failOnDataLoss is set, and
// otherwise logs a warning.
func (s *Source) reportDataLoss(format string, args ...any) error {
	msg := fmt.Sprintf(format, args...)
	if s.opts.FailOnDataLoss {
		return fmt.Errorf("%w: %s. Some data may have been lost because they are not available in Kafka any more; either the data was aged out by Kafka or the topic may have been deleted before all the data in the topic was processed. If you don't want your streaming query to fail on such cases, set the source option failOnDataLoss to false", ErrDataLoss, msg)
	}
	s.logger.Warn("kafka: data loss (failOnDataLoss=false, continuing)", "source", s.Description(), "detail", msg)
	return nil
}

// topicsToList returns the topics whose partitions the source reads.
func (s *Source) topicsToList(ctx context.Context) ([]string, error) {
	switch {
	case s.opts.Subscribe != nil:
		return s.opts.Subscribe, nil
	case s.opts.Assign != nil:
		ts := make([]string, 0, len(s.opts.Assign))
		for t := range s.opts.Assign {
			ts = append(ts, t)
		}
		sort.Strings(ts)
		return ts, nil
	}
	details, err := s.admin.ListTopics(ctx)
	if err != nil {
		return nil, fmt.Errorf("kafka: list topics: %w", err)
	}
	var ts []string
	for _, t := range details.Names() {
		if s.opts.SubscribePattern.MatchString(t) {
			ts = append(ts, t)
		}
	}
	sort.Strings(ts)
	return ts, nil
}

// listOffsets lists the start (earliest) or end offsets of the topics'
// partitions, restricted to the assignment. Unknown topics have no
// partitions.
func (s *Source) listOffsets(ctx context.Context, earliest bool, topics []string) (PartitionOffsets, error) {
	out := PartitionOffsets{}
	if len(topics) == 0 {
		return out, nil
	}
	var listed kadm.ListedOffsets
	var err error
	switch {
	case earliest:
		listed, err = s.admin.ListStartOffsets(ctx, topics...)
	case s.hop:
		// A hop reads committed transactions only: up to the last stable
		// offset, which a commit marker may end.
		listed, err = s.admin.ListCommittedOffsets(ctx, topics...)
	default:
		listed, err = s.admin.ListEndOffsets(ctx, topics...)
	}
	if err != nil && !onlyUnknownTopics(err) {
		return nil, fmt.Errorf("kafka: list offsets of %s: %w", strings.Join(topics, ","), err)
	}
	for t, ps := range listed {
		for p, lo := range ps {
			if lo.Err != nil {
				if errors.Is(lo.Err, kerr.UnknownTopicOrPartition) {
					continue
				}
				return nil, fmt.Errorf("kafka: list offsets of %s-%d: %w", t, p, lo.Err)
			}
			if s.opts.Assign != nil && !assigned(s.opts.Assign[t], p) {
				continue
			}
			out.set(t, p, lo.Offset)
		}
	}
	return out, nil
}

// onlyUnknownTopics reports whether every failed piece of a listing
// failed with UNKNOWN_TOPIC_OR_PARTITION: a topic deleted between the
// metadata the client holds and the request. Its partitions are then gone,
// as for the per-partition error in listOffsets (whether that is data loss
// is decided by the caller, by failOnDataLoss).
func onlyUnknownTopics(err error) bool {
	var se *kadm.ShardErrors
	if !errors.As(err, &se) || len(se.Errs) == 0 {
		return false
	}
	for _, e := range se.Errs {
		if !errors.Is(e.Err, kerr.UnknownTopicOrPartition) {
			return false
		}
	}
	return true
}

func assigned(ps []int32, p int32) bool {
	for _, q := range ps {
		if q == p {
			return true
		}
	}
	return false
}

// fetchLatest lists the end offsets, capped by endingOffsets.
func (s *Source) fetchLatest(ctx context.Context) (PartitionOffsets, error) {
	topics, err := s.topicsToList(ctx)
	if err != nil {
		return nil, err
	}
	latest, err := s.listOffsets(ctx, false, topics)
	if err != nil {
		return nil, err
	}
	if s.opts.EndingOffsets.Kind == "specific" {
		for t, ps := range latest {
			for p, off := range ps {
				if limit, ok := s.opts.EndingOffsets.Offsets.get(t, p); ok && limit >= 0 && limit < off {
					latest.set(t, p, limit)
				}
			}
		}
	}
	return latest, nil
}

// resolveStart turns startingOffsets into offsets of the partitions that
// exist now.
func (s *Source) resolveStart(ctx context.Context) (PartitionOffsets, error) {
	topics, err := s.topicsToList(ctx)
	if err != nil {
		return nil, err
	}
	spec := s.opts.StartingOffsets
	switch spec.Kind {
	case "earliest":
		return s.listOffsets(ctx, true, topics)
	case "latest":
		return s.listOffsets(ctx, false, topics)
	}
	// Specific offsets: the topics are those of the JSON (Spark requires
	// every partition of the subscription to be named).
	var specTopics []string
	for t := range spec.Offsets {
		specTopics = append(specTopics, t)
	}
	sort.Strings(specTopics)
	earliest, err := s.listOffsets(ctx, true, specTopics)
	if err != nil {
		return nil, err
	}
	end, err := s.listOffsets(ctx, false, specTopics)
	if err != nil {
		return nil, err
	}
	current, err := s.listOffsets(ctx, true, topics)
	if err != nil {
		return nil, err
	}
	for t, ps := range current {
		for p := range ps {
			if _, ok := spec.Offsets.get(t, p); !ok {
				return nil, fmt.Errorf("kafka: option startingOffsets: partition %s-%d is not specified; specific offsets must name every partition of the subscription", t, p)
			}
		}
	}
	out := PartitionOffsets{}
	for t, ps := range spec.Offsets {
		for p, off := range ps {
			lo, ok := earliest.get(t, p)
			if !ok {
				return nil, fmt.Errorf("kafka: option startingOffsets: partition %s-%d does not exist", t, p)
			}
			hi, _ := end.get(t, p)
			switch off {
			case offsetEarliest:
				off = lo
			case offsetLatest:
				off = hi
			}
			out.set(t, p, off)
		}
	}
	return out, nil
}

// Read implements arrowstream.Source: the records with start[p] <= offset
// < end[p] of every partition of end. Partitions new since start are read
// from their earliest offset.
func (s *Source) Read(ctx context.Context, start, end stream.Offset) (vector.Operator, error) {
	if s.cluster != nil {
		return s.clusterRead(ctx, end)
	}
	from, err := decodeOffset(start)
	if err != nil {
		return nil, err
	}
	if from == nil {
		if err := s.ensureInitial(ctx); err != nil {
			return nil, err
		}
		from = s.initial
	}
	until, err := decodeOffset(end)
	if err != nil {
		return nil, err
	}
	ranges, err := s.planRanges(ctx, from, until)
	if err != nil {
		return nil, err
	}
	s.consumed = until
	if len(ranges) == 0 {
		return vector.NewScan(s.schema)
	}
	return newReader(s, ranges)
}

// partitionRange is the half-open offset range [next, end) still to read.
type partitionRange struct {
	topic     string
	partition int32
	next, end int64
	started   bool  // a record of the range arrived
	done      int64 // the range's end, once it finished (next, end are -1)
}

// planRanges checks from → until for lost data and returns the ranges to
// fetch.
func (s *Source) planRanges(ctx context.Context, from, until PartitionOffsets) ([]*partitionRange, error) {
	for _, t := range from.topics() {
		for _, p := range sortedPartitions(from[t]) {
			if _, ok := until.get(t, p); !ok {
				if err := s.reportDataLoss("partition %s-%d was deleted; offsets from %d were not read", t, p, from[t][p]); err != nil {
					return nil, err
				}
			}
		}
	}
	var topics []string
	for _, t := range until.topics() {
		topics = append(topics, t)
	}
	earliest, err := s.listOffsets(ctx, true, topics)
	if err != nil {
		return nil, err
	}
	var ranges []*partitionRange
	for _, t := range topics {
		for _, p := range sortedPartitions(until[t]) {
			end := until[t][p]
			begin, ok := from.get(t, p)
			lo, exists := earliest.get(t, p)
			if !exists {
				if err := s.reportDataLoss("partition %s-%d does not exist any more; offsets [%d, %d) cannot be read", t, p, begin, end); err != nil {
					return nil, err
				}
				continue
			}
			if !ok {
				begin = lo // a partition new since start
			}
			if end < begin {
				if err := s.reportDataLoss("partition %s-%d's offset went back from %d to %d (was the topic recreated?)", t, p, begin, end); err != nil {
					return nil, err
				}
				continue
			}
			if begin < lo {
				if err := s.reportDataLoss("offsets [%d, %d) of %s-%d were deleted from Kafka (its log now starts at %d)", begin, min(lo, end), t, p, lo); err != nil {
					return nil, err
				}
				begin = lo
			}
			if begin < end {
				ranges = append(ranges, &partitionRange{topic: t, partition: p, next: begin, end: end})
			}
		}
	}
	return ranges, nil
}
