package kafka

import (
	"fmt"
	"log/slog"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Spark's special per-partition offsets in startingOffsets/endingOffsets.
const (
	offsetLatest   int64 = -1
	offsetEarliest int64 = -2
)

// OffsetSpec is startingOffsets or endingOffsets: "earliest", "latest", or
// a specific offset per partition (-2 earliest, -1 latest).
type OffsetSpec struct {
	// Kind is "earliest", "latest" or "specific".
	Kind string
	// Offsets holds the specific offsets (Kind "specific").
	Offsets PartitionOffsets
}

// SourceOptions configure the Kafka source. ParseSourceOptions builds them
// from Spark's option names.
type SourceOptions struct {
	// Brokers are the bootstrap servers (kafka.bootstrap.servers).
	Brokers []string
	// Control, when set, vets the address of every broker connection
	// (net.Dialer.Control; a session's access policy).
	Control func(network, address string, c syscall.RawConn) error
	// Exactly one of Subscribe, SubscribePattern and Assign is set.
	Subscribe        []string
	SubscribePattern *regexp.Regexp
	Assign           map[string][]int32
	// StartingOffsets apply when a query starts for the first time
	// (default latest); new partitions found later start from earliest.
	StartingOffsets OffsetSpec
	// EndingOffsets cap the stream (default latest: no cap).
	EndingOffsets OffsetSpec
	// MaxOffsetsPerTrigger bounds the offsets one epoch reads, split
	// across partitions in proportion to their backlog (0: no bound).
	MaxOffsetsPerTrigger int64
	// MinOffsetsPerTrigger holds an epoch back until this many offsets
	// are available after its start, or MaxTriggerDelay has passed since
	// the last epoch was let through (0: no minimum; Spark's
	// minOffsetsPerTrigger, trigger_delay.go). In cluster mode it counts
	// the offsets of this instance's own partitions.
	MinOffsetsPerTrigger int64
	// MaxTriggerDelay bounds how long MinOffsetsPerTrigger holds data
	// back (Spark's maxTriggerDelay; 0: 15 minutes).
	MaxTriggerDelay time.Duration
	// ClusterBatchHold caps how long a cluster input holds an epoch to
	// batch like a single instance (the option clusterBatchHold,
	// cluster_hold.go): 0 takes the session's arrowstream.cluster.batchHold
	// or DefaultClusterBatchHold, negative turns the hold off.
	ClusterBatchHold time.Duration
	// FailOnDataLoss fails the query when offsets it must read are gone
	// (aged out, a partition deleted); false logs a warning and goes on.
	FailOnDataLoss bool
	// IncludeHeaders adds the headers column.
	IncludeHeaders bool
	// PollTimeout bounds the wait for records that the offsets say exist
	// (kafkaConsumer.pollTimeoutMs, default 120s).
	PollTimeout time.Duration
	// BatchRows is the largest record Read's operator returns (default 8192).
	BatchRows int
	// FetchMaxBytes and FetchMaxPartitionBytes bound what one fetch of
	// an epoch's reader brings, over all its partitions and per partition
	// (Kafka's consumer settings kafka.fetch.max.bytes and
	// kafka.max.partition.fetch.bytes; 0: readerFetchMaxBytes, 256 KiB,
	// and readerFetchMaxPartitionBytes, 64 KiB).
	// A fetch is decoded at once, so its size is the reader's working
	// set; over a network with a long round trip a larger bound reads a
	// partition faster (reader.go).
	FetchMaxBytes, FetchMaxPartitionBytes int32
	// Logger receives data-loss warnings (default slog.Default()).
	Logger *slog.Logger
	// Cluster, when set, makes the source a member of its table's
	// consumer group: it reads only the partitions assigned to this
	// instance (cluster_source.go, docs/cluster.md).
	Cluster *Cluster
}

// unsupportedConsumerOptions are Kafka consumer settings the source
// manages itself (Spark rejects the same ones).
var unsupportedConsumerOptions = []string{
	"group.id", "auto.offset.reset", "key.deserializer", "value.deserializer",
	"enable.auto.commit", "interceptor.classes",
}

// SourceOptionKeys are the options ParseSourceOptions reads, including
// the consumer settings it refuses with a reason (the source manages
// them). Other kafka.* consumer settings are not supported.
func SourceOptionKeys() []string {
	keys := []string{"kafka.bootstrap.servers", "subscribe", "subscribePattern", "assign", "startingOffsets",
		"endingOffsets", "maxOffsetsPerTrigger", "minOffsetsPerTrigger", "maxTriggerDelay", "clusterBatchHold", "failOnDataLoss", "includeHeaders", "kafkaConsumer.pollTimeoutMs", "minPartitions",
		"kafka.fetch.max.bytes", "kafka.max.partition.fetch.bytes"}
	for _, name := range unsupportedConsumerOptions {
		keys = append(keys, "kafka."+name)
	}
	return keys
}

// ParseSourceOptions reads Spark's Kafka source options (keys are case
// insensitive). Errors name the option.
func ParseSourceOptions(opts map[string]string) (SourceOptions, error) {
	o := SourceOptions{
		StartingOffsets: OffsetSpec{Kind: "latest"},
		EndingOffsets:   OffsetSpec{Kind: "latest"},
		FailOnDataLoss:  true,
		PollTimeout:     120 * time.Second,
		BatchRows:       8192,
		MaxTriggerDelay: DefaultMaxTriggerDelay,
	}
	lower := make(map[string]string, len(opts))
	for k, v := range opts {
		lower[strings.ToLower(k)] = v
	}
	for _, name := range unsupportedConsumerOptions {
		if _, ok := lower["kafka."+name]; ok {
			return o, fmt.Errorf("kafka: option kafka.%s is not supported: the source manages it", name)
		}
	}
	servers := strings.TrimSpace(lower["kafka.bootstrap.servers"])
	if servers == "" {
		return o, fmt.Errorf("kafka: option kafka.bootstrap.servers must be specified")
	}
	for _, s := range strings.Split(servers, ",") {
		if s = strings.TrimSpace(s); s != "" {
			o.Brokers = append(o.Brokers, s)
		}
	}
	strategies := 0
	if v, ok := lower["subscribe"]; ok {
		strategies++
		for _, t := range strings.Split(v, ",") {
			if t = strings.TrimSpace(t); t != "" {
				o.Subscribe = append(o.Subscribe, t)
			}
		}
		if len(o.Subscribe) == 0 {
			return o, fmt.Errorf("kafka: option subscribe=%q: no topic to subscribe to", v)
		}
		sort.Strings(o.Subscribe)
	}
	if v, ok := lower["subscribepattern"]; ok {
		strategies++
		if strings.TrimSpace(v) == "" {
			return o, fmt.Errorf("kafka: option subscribePattern is empty")
		}
		re, err := regexp.Compile("^(?:" + v + ")$") // Java's Pattern.matcher(topic).matches()
		if err != nil {
			return o, fmt.Errorf("kafka: option subscribePattern=%q: %w", v, err)
		}
		o.SubscribePattern = re
	}
	if v, ok := lower["assign"]; ok {
		strategies++
		a, err := parseAssign(v)
		if err != nil {
			return o, fmt.Errorf("kafka: option assign=%q: %w", v, err)
		}
		o.Assign = a
	}
	if strategies != 1 {
		return o, fmt.Errorf("kafka: exactly one of the options subscribe, subscribePattern and assign must be specified (found %d)", strategies)
	}
	var err error
	if v, ok := lower["startingoffsets"]; ok {
		if o.StartingOffsets, err = parseOffsetSpec(v, true); err != nil {
			return o, fmt.Errorf("kafka: option startingOffsets=%q: %w", v, err)
		}
	}
	if v, ok := lower["endingoffsets"]; ok {
		if o.EndingOffsets, err = parseOffsetSpec(v, false); err != nil {
			return o, fmt.Errorf("kafka: option endingOffsets=%q: %w", v, err)
		}
	}
	if v, ok := lower["maxoffsetspertrigger"]; ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n <= 0 {
			return o, fmt.Errorf("kafka: option maxOffsetsPerTrigger=%q: must be a positive integer", v)
		}
		o.MaxOffsetsPerTrigger = n
	}
	if v, ok := lower["minoffsetspertrigger"]; ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n <= 0 {
			return o, fmt.Errorf("kafka: option minOffsetsPerTrigger=%q: must be a positive integer", v)
		}
		o.MinOffsetsPerTrigger = n
	}
	if v, ok := lower["maxtriggerdelay"]; ok {
		if o.MaxTriggerDelay, err = parseTriggerDelay(v); err != nil {
			return o, fmt.Errorf("kafka: option maxTriggerDelay=%q: %w", v, err)
		}
	}
	if v, ok := lower["clusterbatchhold"]; ok {
		if o.ClusterBatchHold, err = parseClusterBatchHold(v); err != nil {
			return o, fmt.Errorf("kafka: option clusterBatchHold=%q: %w", v, err)
		}
	}
	if o.MinOffsetsPerTrigger > 0 && o.MaxOffsetsPerTrigger > 0 && o.MinOffsetsPerTrigger > o.MaxOffsetsPerTrigger {
		return o, fmt.Errorf("kafka: option minOffsetsPerTrigger=%d is higher than maxOffsetsPerTrigger=%d", o.MinOffsetsPerTrigger, o.MaxOffsetsPerTrigger)
	}
	if v, ok := lower["failondataloss"]; ok {
		if o.FailOnDataLoss, err = strconv.ParseBool(strings.TrimSpace(v)); err != nil {
			return o, fmt.Errorf("kafka: option failOnDataLoss=%q: must be true or false", v)
		}
	}
	if v, ok := lower["includeheaders"]; ok {
		if o.IncludeHeaders, err = strconv.ParseBool(strings.TrimSpace(v)); err != nil {
			return o, fmt.Errorf("kafka: option includeHeaders=%q: must be true or false", v)
		}
	}
	if v, ok := lower["kafkaconsumer.polltimeoutms"]; ok {
		n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
		if err != nil || n <= 0 {
			return o, fmt.Errorf("kafka: option kafkaConsumer.pollTimeoutMs=%q: must be a positive integer", v)
		}
		o.PollTimeout = time.Duration(n) * time.Millisecond
	}
	if v, ok := lower["kafka.fetch.max.bytes"]; ok {
		if o.FetchMaxBytes, err = parseFetchBytes("kafka.fetch.max.bytes", v); err != nil {
			return o, err
		}
	}
	if v, ok := lower["kafka.max.partition.fetch.bytes"]; ok {
		if o.FetchMaxPartitionBytes, err = parseFetchBytes("kafka.max.partition.fetch.bytes", v); err != nil {
			return o, err
		}
	}
	if v, ok := lower["minpartitions"]; ok {
		// Accepted for compatibility and ignored: one reader per epoch
		// fetches every partition (documented).
		if n, err := strconv.Atoi(strings.TrimSpace(v)); err != nil || n <= 0 {
			return o, fmt.Errorf("kafka: option minPartitions=%q: must be a positive integer", v)
		}
	}
	return o, nil
}

// maxFetchBytes bounds the fetch settings: Kafka's protocol carries
// them as int32, and a fetch is decoded at once into memory.
const maxFetchBytes = 1 << 30

// parseFetchBytes reads a fetch size setting: a positive number of
// bytes up to 1 GiB.
func parseFetchBytes(name, v string) (int32, error) {
	n, err := strconv.ParseInt(strings.TrimSpace(v), 10, 64)
	if err != nil || n <= 0 || n > maxFetchBytes {
		return 0, fmt.Errorf("kafka: option %s=%q: must be a number of bytes from 1 to %d", name, v, maxFetchBytes)
	}
	return int32(n), nil
}

// parseAssign parses {"topicA":[0,1],"topicB":[2,4]}.
func parseAssign(v string) (map[string][]int32, error) {
	m, err := decodeJSONObject[[]int32](v)
	if err != nil {
		return nil, fmt.Errorf("want JSON like {\"topicA\":[0,1]}: %w", err)
	}
	if len(m) == 0 {
		return nil, fmt.Errorf("no topic partitions to assign")
	}
	for t, ps := range m {
		for _, p := range ps {
			if p < 0 {
				return nil, fmt.Errorf("topic %s: negative partition %d", t, p)
			}
		}
		sort.Slice(ps, func(i, j int) bool { return ps[i] < ps[j] })
	}
	return m, nil
}

// parseOffsetSpec parses earliest, latest or a JSON map of offsets.
func parseOffsetSpec(v string, starting bool) (OffsetSpec, error) {
	switch s := strings.ToLower(strings.TrimSpace(v)); s {
	case "latest":
		return OffsetSpec{Kind: "latest"}, nil
	case "earliest":
		if !starting {
			return OffsetSpec{}, fmt.Errorf("earliest is not a valid ending offset")
		}
		return OffsetSpec{Kind: "earliest"}, nil
	}
	po, err := ParsePartitionOffsets(v)
	if err != nil {
		return OffsetSpec{}, fmt.Errorf("want earliest, latest or JSON like {\"topic\":{\"0\":23,\"1\":-1}}: %w", err)
	}
	for t, ps := range po {
		for p, off := range ps {
			switch {
			case off == offsetEarliest && !starting:
				return OffsetSpec{}, fmt.Errorf("%s-%d: earliest (-2) is not a valid ending offset", t, p)
			case off < offsetEarliest:
				return OffsetSpec{}, fmt.Errorf("%s-%d: invalid offset %d", t, p, off)
			}
		}
	}
	return OffsetSpec{Kind: "specific", Offsets: po}, nil
}
