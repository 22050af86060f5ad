package chaos

import (
	"context"
	"fmt"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/arrowstream/pebblestate"
	"github.com/arrowstream/arrowstream/arrowstream/source/kafka"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/memsink"
)

// kafkaWorkload: Records values ("0", "1", ...) in a 4-partition topic of
// an in-process Kafka cluster (kfake, in the harness process, so that it
// outlives the killed workers), read by the Kafka source about 200 epochs
// long (maxOffsetsPerTrigger) and projected into a persisted memory-sink
// table.
type kafkaWorkload struct {
	records int64
}

const kafkaTopic = "chaos"

func (w *kafkaWorkload) Name() string   { return "kafka" }
func (w *kafkaWorkload) Records() int64 { return w.records }

// Prepare starts the cluster and produces the input; the workers get the
// broker addresses as the parameter "brokers".
func (w *kafkaWorkload) Prepare(ctx context.Context) (map[string]string, func(), error) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(4, kafkaTopic))
	if err != nil {
		return nil, nil, fmt.Errorf("chaos: start kfake: %w", err)
	}
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.RecordPartitioner(kgo.ManualPartitioner()))
	if err != nil {
		c.Close()
		return nil, nil, fmt.Errorf("chaos: kafka client: %w", err)
	}
	defer cl.Close()
	for from := int64(0); from < w.records; from += 5000 {
		var recs []*kgo.Record
		for v := from; v < min(from+5000, w.records); v++ {
			s := strconv.FormatInt(v, 10)
			recs = append(recs, &kgo.Record{Topic: kafkaTopic, Partition: int32(v % 4), Value: []byte(s)})
		}
		if err := cl.ProduceSync(ctx, recs...).FirstErr(); err != nil {
			c.Close()
			return nil, nil, fmt.Errorf("chaos: produce: %w", err)
		}
	}
	return map[string]string{"brokers": strings.Join(c.ListenAddrs(), ",")}, c.Close, nil
}

func (w *kafkaWorkload) Start(ctx context.Context, env Env) (Running, error) {
	if env.Params["brokers"] == "" {
		return nil, fmt.Errorf("chaos: workload kafka: no brokers (Prepare runs in the harness)")
	}
	sess := arrowstream.NewSession(arrowstream.SessionOptions{
		Allocator: env.Allocator, Logger: env.Logger, NoSync: env.NoSync, CheckpointHook: env.Hook,
		Conf: sessionConf(env.Conf, nil),
	})
	pebblestate.Register(sess)
	kafka.Install(sess)
	cat := memsink.NewCatalog()
	memsink.Install(sess, cat, memsink.Options{Persist: true, Writer: &checkpoint.Writer{Hook: env.Hook, NoSync: env.NoSync}, Logger: env.Logger})
	err := sess.RegisterSource("events", "kafka", nil, map[string]string{
		"kafka.bootstrap.servers": env.Params["brokers"], "subscribe": kafkaTopic, "startingOffsets": "earliest",
		"maxOffsetsPerTrigger": strconv.FormatInt(max(w.records/200, 50), 10),
	})
	if err != nil {
		return nil, err
	}
	q, err := sess.ReadStream("events").Select("CAST(value AS STRING) AS v", "partition").
		WriteStream().Format("memory").QueryName("kafka").OutputMode(arrowstream.Append).
		Option("checkpointLocation", filepath.Join(env.Dir, "checkpoints", "kafka")).Start(ctx)
	if err != nil {
		return nil, fmt.Errorf("chaos: start query kafka: %w", err)
	}
	return &kafkaRun{w: w, cat: cat, q: q}, nil
}

type kafkaRun struct {
	w   *kafkaWorkload
	cat *memsink.Catalog
	q   *arrowstream.StreamingQuery
}

func (r *kafkaRun) Done() (bool, error) {
	if !r.q.IsActive() {
		return false, fmt.Errorf("chaos: query kafka stopped: %w", r.q.Exception())
	}
	t, ok := r.cat.Lookup("kafka")
	return ok && t.Size().Rows >= r.w.records, nil
}

func (r *kafkaRun) Result() (Result, error) {
	out := Output{}
	if t, ok := r.cat.Lookup("kafka"); ok {
		snap := t.Snapshot()
		err := addRows(out, snap.Records(), "v", "")
		snap.Release()
		if err != nil {
			return nil, err
		}
	}
	return Result{"kafka": out}, nil
}

func (r *kafkaRun) Stop() error {
	err := r.q.Stop()
	if t, ok := r.cat.Drop("kafka"); ok {
		t.Close()
	}
	return err
}
