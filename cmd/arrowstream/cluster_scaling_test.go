package main

import (
	"context"
	"errors"
	"fmt"
	"maps"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
	"github.com/twmb/franz-go/pkg/kgo"
	"google.golang.org/grpc/metadata"

	"github.com/arrowstream/arrowstream/internal/testutil"
)

// scalingEnv turns on TestClusterScaling (a measurement, not a check).
const scalingEnv = "ARROWSTREAM_CLUSTER_SCALING"

// TestClusterScaling measures cluster mode's scaling efficiency: the same
// input (scalingEvents events over 12 partitions) read by a table on 1, 2
// and 3 `serve` instances, as events per CPU-second of the instances
// (user + system time from /proc while the input is processed), each
// relative to the single instance; for a passthrough table and for a
// count by key through the repartition hop (both stages run on every
// instance; the hop's transactions, changelog and state count). It logs
// the figures and asserts nothing about speed. Run it with
// ARROWSTREAM_CLUSTER_SCALING=<events>; ARROWSTREAM_CLUSTER_SCALING_QUERIES
// picks the tables (passthrough,hop by default), and
// ARROWSTREAM_CLUSTER_SCALING_MODE the measurements (live, backlog,
// catchup or several: live,backlog; see scalingModeEnv).
func TestClusterScaling(t *testing.T) {
	if os.Getenv(scalingEnv) == "" {
		t.Skipf("a measurement: set %s=1 to run it", scalingEnv)
	}
	events := 200000
	if n, err := strconv.Atoi(os.Getenv(scalingEnv)); err == nil && n > 1 {
		events = n
	}
	kinds := []string{"passthrough", "hop"}
	if v := os.Getenv(scalingEnv + "_QUERIES"); v != "" {
		kinds = strings.Split(v, ",")
	}
	modes := scalingModes(t)
	counts := scalingInstanceCounts(t)
	bins := scalingBinaries(t)
	ports := freePorts(t, 1+6*len(kinds)*len(bins)*len(modes))
	brokers := fmt.Sprintf("127.0.0.1:%d", ports[0])
	broker := startKfakeProcess(t, ports[0])
	cl, err := kgo.NewClient(kgo.SeedBrokers(brokers), kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.ProducerBatchMaxBytes(1<<20))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	adm := kadm.NewClient(cl)
	next := 1
	// nsPerEvent[mode][bin][kind][k]: for the hop's cost per event (the
	// count's CPU-ns per event minus the passthrough's, same round).
	nsPerEvent := map[string]map[string]map[string]map[int]float64{}
	for _, kind := range kinds {
		var table, count, tables string
		switch kind {
		case "passthrough":
			table, count = "passthrough", "SELECT count(*) FROM passthrough"
			tables = `CREATE STREAMING TABLE passthrough TBLPROPERTIES ('outputMode' = 'append'%s) AS SELECT CAST(value AS STRING) AS v FROM STREAM events;`
		case "hop":
			// 1,000 keys, not the input's partitioning: every row crosses
			// the hop; 6 hop partitions, as the acceptance tests.
			table, count = "counts", "SELECT CAST(coalesce(sum(n), 0) AS BIGINT) FROM counts"
			tables = `SET spark.sql.shuffle.partitions = 6;
CREATE STREAMING TABLE counts TBLPROPERTIES ('outputMode' = 'complete'%s) AS
  SELECT u, count(*) AS n FROM (SELECT CAST(CAST(substring(CAST(value AS STRING), 2) AS INT) %% 1000 AS INT) AS u FROM STREAM events) GROUP BY u;`
		default:
			t.Fatalf("%s_QUERIES: unknown table kind %q (passthrough, hop)", scalingEnv, kind)
		}
		for _, mode := range modes {
			for bi, b := range bins {
				bin := b.path
				rate := map[int]float64{}
				for _, k := range counts {
					if os.Getenv(scalingProcsEnv) != "" || b.shareCores {
						// Each instance gets its share of the cores, as on a
						// machine of its own: k processes of GOMAXPROCS =
						// cores keep idle Ps spinning for work on cores the
						// others use.
						t.Setenv("GOMAXPROCS", strconv.Itoa(max(1, runtime.NumCPU()/k)))
					} else {
						// Unset (another binary of the run may have set
						// it): each build picks its own, and serve shares
						// the cores among the instances of a host only
						// when the operator did not set it.
						t.Setenv("GOMAXPROCS", "")
						os.Unsetenv("GOMAXPROCS")
					}
					topic := fmt.Sprintf("%s%d-%d-%s", kind, k, bi, mode)
					createTopic(t, cl, topic)
					init := filepath.Join(t.TempDir(), "tables.sql")
					props := ""
					if b.trigger != "" {
						props = fmt.Sprintf(", 'trigger' = '%s'", b.trigger)
					}
					sqlText := fmt.Sprintf("CREATE TABLE events USING kafka OPTIONS ('kafka.bootstrap.servers' '%s', 'subscribe' '%s', 'startingOffsets' 'earliest'%s);\n%s\n", brokers, topic, b.options, fmt.Sprintf(tables, props))
					if err := os.WriteFile(init, []byte(sqlText), 0o644); err != nil {
						t.Fatal(err)
					}
					var insts []*clusterInstance
					for range k {
						ci := &clusterInstance{dir: t.TempDir(), addr: fmt.Sprintf("127.0.0.1:%d", ports[next])}
						next++
						if mode == scalingCatchUp {
							// Stopped while the input is produced: a session
							// timeout longer than the production keeps the
							// groups as they are.
							ci.p = startProcess(t, bin, "serve", "--checkpoint", ci.dir, "--addr", ci.addr, "--http", "", "--status", "off",
								"--cluster", brokers, "--cluster-name", topic, "--cluster-session-timeout", "60s", "--init", init)
						} else {
							ci.startIn(t, bin, brokers, topic, init)
						}
						insts = append(insts, ci)
					}
					waitGroupOf(t, insts[0], table, k)
					if mode != scalingLive && kind == "hop" {
						// The hop's group too: in backlog mode nothing may
						// rebalance while the input is read.
						waitGroupOf(t, insts[0], table+"-repartition-0", k)
					}
					if d, err := time.ParseDuration(os.Getenv(scalingIdleEnv)); err == nil && d > 0 {
						idle := cpuSeconds(t, insts)
						time.Sleep(d) // a measurement window, not a wait for progress
						t.Logf("%s%s, %d instance(s): idle, %.1f CPU-ms per second per instance",
							b.label, table, k, (cpuSeconds(t, insts)-idle)*1000/d.Seconds()/float64(k))
					}
					// The warm-up input, not counted: every instance's
					// first epochs (its heap grown, its buffers faulted in,
					// its tables sized) are paid once per process, not per
					// event; a long-running job has paid them long before.
					warm := scalingWarmUp(t)
					if warm > 0 {
						warmUp(t, cl, adm, insts, topic, table, count, kind == "hop", warm)
					}
					var backlog []*kgo.Record
					if mode != scalingLive {
						// Built before the measurement: the whole input is
						// then produced at once.
						backlog = scalingRecords(topic, warm, warm+events)
					}
					epochsBefore := stageEpochs(t, insts)
					stopPerf := perfRecord(t, insts, kind, k)
					stopStat := perfStat(t, insts, fmt.Sprintf("%s%s, %s, %d instance(s):", b.label, table, mode, k), events)
					before, brokerBefore := cpuSeconds(t, insts), processCPU(t, broker.Pid)
					volBefore, involBefore := contextSwitches(insts)
					start := time.Now()
					if mode != scalingLive {
						if mode == scalingCatchUp {
							stopInstances(t, insts)
						}
						if err := cl.ProduceSync(context.Background(), backlog...).FirstErr(); err != nil {
							t.Fatal(err)
						}
						backlog = nil
						if mode == scalingCatchUp {
							continueInstances(t, insts)
						}
					} else {
						// Live: the input arrives in chunks of 10,000 events,
						// each produced once the previous one is acknowledged,
						// while the instances read it.
						for i := warm; i < warm+events; i += 10000 {
							if err := cl.ProduceSync(context.Background(), scalingRecords(topic, i, min(i+10000, warm+events))...).FirstErr(); err != nil {
								t.Fatal(err)
							}
						}
					}
					produced := time.Since(start)
					// Completion is watched at the broker (its CPU is not
					// counted): the instances are asked for their count
					// only once the groups' committed offsets have reached
					// the ends of the input (and of the hop), usually once.
					// The count probes' own cost, measured right after on
					// the idle instances, is taken off: the figure is the
					// instances' CPU for the input alone (until session
					// 19 a probe every 200 ms cost 2–3%).
					deadline := time.Now().Add(testutil.Scaled(5 * time.Minute))
					probes := 0
					for {
						if time.Now().After(deadline) {
							t.Fatalf("%s, %d instances: the input was not processed in time", table, k)
						}
						if consumedAtBroker(t, adm, topic, table, kind == "hop") {
							probes++
							if localCount(t, insts, count) >= warm+events {
								break
							}
						}
						time.Sleep(50 * time.Millisecond)
					}
					cpuEnd := cpuSeconds(t, insts)
					brokerCPU := processCPU(t, broker.Pid) - brokerBefore
					vol, invol := contextSwitches(insts)
					stopPerf()
					stopStat()
					// Ten probes: /proc counts CPU time in 10 ms ticks.
					probeBefore := cpuSeconds(t, insts)
					for range 10 {
						localCount(t, insts, count)
					}
					probeCost := (cpuSeconds(t, insts) - probeBefore) / 10
					cpu := cpuEnd - before - float64(probes)*probeCost
					t.Logf("%s%s, %s, %d instance(s): %d count probe(s) during the measurement, %.1f CPU-ms each on the instances (taken off)",
						b.label, table, mode, k, probes, probeCost*1000)
					rate[k] = float64(events) / cpu
					t.Logf("%s%s, %s, %d instance(s): %d events in %.1f s wall (produced in %.1f s), %.2f CPU-s: %.0f events per CPU-second (%.0f CPU-ns per event), efficiency %.2f× the single instance; the kfake broker (not counted) %.2f CPU-s; after a warm-up of %d events (not counted)",
						b.label, table, mode, k, events, time.Since(start).Seconds(), produced.Seconds(), cpu, rate[k], 1e9/rate[k], rate[k]/rate[1], brokerCPU, warm)
					setNsPerEvent(nsPerEvent, mode, b.label, kind, k, 1e9/rate[k])
					if epochs := stageEpochs(t, insts); len(epochs) > 0 {
						var parts []string
						for _, name := range slices.Sorted(maps.Keys(epochs)) {
							parts = append(parts, fmt.Sprintf("%s %v", name, epochsSince(epochs[name], epochsBefore[name])))
						}
						t.Logf("%s%s, %s, %d instance(s): epochs per instance: %s", b.label, table, mode, k, strings.Join(parts, "; "))
					}
					t.Logf("%s%s, %s, %d instance(s): %d voluntary and %d involuntary context switches", b.label, table, mode, k, vol-volBefore, invol-involBefore)
					logStageEpochs(t, insts, epochsBefore, start, fmt.Sprintf("%s%s, %s, %d instance(s):", b.label, table, mode, k))
					if k > 1 {
						t.Logf("%s%s, %s, %d instance(s): GOMAXPROCS %s", b.label, table, mode, k, strings.Join(sharedCores(insts), ", "))
					}
					for _, ci := range insts {
						ci.p.interrupt(t)
					}
				}
			}
		}
	}
	logHopCost(t, nsPerEvent)
}

// Measurement modes of TestClusterScaling.
const (
	// scalingLive: the instances read the input while it is produced in
	// chunks of 10,000 events; the CPU counts from the first record
	// produced until all are processed, so it includes every process's
	// per-wall-second cost for as long as the input takes to arrive.
	scalingLive = "live"
	// scalingBacklog: the instances have joined (both groups of a
	// stateful table assigned) and idle, then the whole input is produced
	// at once; the CPU counts from the first record produced until all
	// are processed: throughput while catching up on a backlog, which is
	// what scaling out is for.
	scalingBacklog = "backlog"
	// scalingCatchUp: as backlog, but the instances are stopped
	// (SIGSTOP) while the input is produced and continued once all of
	// it is in the topic: pure catch-up, no epoch planned before the
	// whole input is there (a stopped process uses no CPU, so the figure
	// still counts from the first record produced).
	scalingCatchUp = "catchup"
)

// scalingModeEnv picks the measurements: live (the default), backlog,
// catchup, or a comma-separated list of them (each run for every table kind and
// binary, in that order).
const scalingModeEnv = "ARROWSTREAM_CLUSTER_SCALING_MODE"

func scalingModes(t *testing.T) []string {
	t.Helper()
	v := os.Getenv(scalingModeEnv)
	if v == "" {
		return []string{scalingLive}
	}
	var out []string
	for _, m := range strings.Split(v, ",") {
		m = strings.TrimSpace(m)
		if m != scalingLive && m != scalingBacklog && m != scalingCatchUp {
			t.Fatalf("%s: unknown mode %q (%s, %s, %s)", scalingModeEnv, m, scalingLive, scalingBacklog, scalingCatchUp)
		}
		out = append(out, m)
	}
	return out
}

// scalingInstancesEnv picks the instance counts measured (a list with
// 1, the reference: 1,3 leaves out the two instances to run more rounds
// in the same time); 1,2,3 by default.
const scalingInstancesEnv = "ARROWSTREAM_CLUSTER_SCALING_INSTANCES"

func scalingInstanceCounts(t *testing.T) []int {
	t.Helper()
	v := os.Getenv(scalingInstancesEnv)
	if v == "" {
		return []int{1, 2, 3}
	}
	var out []int
	for _, f := range strings.Split(v, ",") {
		k, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || k < 1 || k > 3 || slices.Contains(out, k) {
			t.Fatalf("%s: %q is not a list of distinct instance counts 1 to 3", scalingInstancesEnv, v)
		}
		out = append(out, k)
	}
	slices.Sort(out)
	if out[0] != 1 {
		t.Fatalf("%s: %q lacks 1, the single instance that efficiency is relative to", scalingInstancesEnv, v)
	}
	return out
}

// scalingRecords returns events from to to of the scaling input: value
// "e<i>" in partition i mod clusterPartitions.
func scalingRecords(topic string, from, to int) []*kgo.Record {
	recs := make([]*kgo.Record, 0, to-from)
	for j := from; j < to; j++ {
		recs = append(recs, &kgo.Record{Topic: topic, Partition: int32(j % clusterPartitions), Value: []byte("e" + strconv.Itoa(j))})
	}
	return recs
}

func setNsPerEvent(m map[string]map[string]map[string]map[int]float64, mode, label, kind string, k int, ns float64) {
	if m[mode] == nil {
		m[mode] = map[string]map[string]map[int]float64{}
	}
	if m[mode][label] == nil {
		m[mode][label] = map[string]map[int]float64{}
	}
	if m[mode][label][kind] == nil {
		m[mode][label][kind] = map[int]float64{}
	}
	m[mode][label][kind][k] = ns
}

// logHopCost logs the repartition hop's cost per event: the count's
// CPU-ns per event minus the passthrough's, same mode, binary and
// instance count of the run (the difference of two noisy figures: the
// hop, the aggregation and its state, against reading and writing the
// rows).
func logHopCost(t *testing.T, m map[string]map[string]map[string]map[int]float64) {
	t.Helper()
	for _, mode := range slices.Sorted(maps.Keys(m)) {
		for _, label := range slices.Sorted(maps.Keys(m[mode])) {
			hop, pass := m[mode][label]["hop"], m[mode][label]["passthrough"]
			if hop == nil || pass == nil {
				continue
			}
			var parts []string
			for k := 1; k <= 3; k++ {
				h, okH := hop[k]
				p, okP := pass[k]
				if okH && okP {
					parts = append(parts, fmt.Sprintf("%d instance(s) %.0f", k, h-p))
				}
			}
			t.Logf("%s%s: the hop's cost (count minus passthrough), CPU-ns per event: %s", label, mode, strings.Join(parts, ", "))
		}
	}
}

// stageEpochs returns, per query name, each instance's last batch id
// (system.query_progress; -1 when it has none): the epochs a stage ran
// in a window are the difference of two calls.
func stageEpochs(t *testing.T, insts []*clusterInstance) map[string][]int64 {
	t.Helper()
	out := map[string][]int64{}
	for i, ci := range insts {
		ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(time.Minute))
		recs, err := readSQL(ctx, ci.addr, "SELECT name, max(batch_id) FROM system.query_progress WHERE name IS NOT NULL GROUP BY name")
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			names, ids := r.Column(0).(*array.String), r.Column(1).(*array.Int64)
			for j := 0; j < int(r.NumRows()); j++ {
				name := names.Value(j)
				if out[name] == nil {
					out[name] = make([]int64, len(insts))
					for x := range out[name] {
						out[name][x] = -1
					}
				}
				out[name][i] = ids.Value(j)
			}
		}
		releaseRecords(recs)
	}
	return out
}

// epochsSince is after - before per instance.
func epochsSince(after, before []int64) []int64 {
	out := make([]int64, len(after))
	for i, a := range after {
		b := int64(-1)
		if i < len(before) {
			b = before[i]
		}
		out[i] = a - b
	}
	return out
}

// scalingProcsEnv, when set, starts each of k instances with GOMAXPROCS
// = cores/k (at least 1).
const scalingProcsEnv = "ARROWSTREAM_CLUSTER_SCALING_SHARE_CORES"

// scalingIdleEnv, a duration, makes TestClusterScaling first measure
// the instances' CPU while they wait for input for that long (the cost
// every instance pays per second whatever its share).
const scalingIdleEnv = "ARROWSTREAM_CLUSTER_SCALING_IDLE"

// scalingWarmUpEnv, a number of events, makes TestClusterScaling first
// produce that many events and wait until they are processed before each
// measurement, which then counts the next ARROWSTREAM_CLUSTER_SCALING
// events only: the instances' steady state, as a long-running job runs,
// without each process's first epochs (0, the default, counts them).
const scalingWarmUpEnv = "ARROWSTREAM_CLUSTER_SCALING_WARMUP"

func scalingWarmUp(t *testing.T) int {
	t.Helper()
	v := os.Getenv(scalingWarmUpEnv)
	if v == "" {
		return 0
	}
	n, err := strconv.Atoi(v)
	if err != nil || n < 0 {
		t.Fatalf("%s: %q is not a number of events", scalingWarmUpEnv, v)
	}
	return n
}

// warmUp produces events 0 to n of the scaling input at once and waits
// until the instances have processed them (committed at the broker and
// counted by the table).
func warmUp(t *testing.T, cl *kgo.Client, adm *kadm.Client, insts []*clusterInstance, topic, table, count string, hop bool, n int) {
	t.Helper()
	if err := cl.ProduceSync(context.Background(), scalingRecords(topic, 0, n)...).FirstErr(); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(testutil.Scaled(5 * time.Minute))
	for !consumedAtBroker(t, adm, topic, table, hop) || localCount(t, insts, count) < n {
		if time.Now().After(deadline) {
			t.Fatalf("%s: the warm-up's %d events were not processed in time", table, n)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// scalingBinsEnv lists binaries to compare in one run (label=path,...;
// e.g. a build of main and of a branch, alternated table by table so
// that both see the same load); by default the test builds this tree's.
// A path may end in ?option=value&... (URL query syntax): more options
// of the Kafka input table for that entry, e.g.
// branch-min=/tmp/as?minOffsetsPerTrigger=50000&maxTriggerDelay=500ms;
// trigger=<interval> sets the tables' trigger instead.
const scalingBinsEnv = "ARROWSTREAM_CLUSTER_SCALING_BINS"

type scalingBinary struct {
	label, path string
	options     string // ", 'key' 'value'..." appended to the input table's OPTIONS
	trigger     string // the tables' trigger (TBLPROPERTIES), from ?trigger=...
	// shareCores: ?gomaxprocs=share starts this binary's k instances
	// with GOMAXPROCS = cores/k, as scalingProcsEnv does for all.
	shareCores bool
}

func scalingBinaries(t *testing.T) []scalingBinary {
	t.Helper()
	v := os.Getenv(scalingBinsEnv)
	if v == "" {
		return []scalingBinary{{path: buildBinary(t)}}
	}
	var out []scalingBinary
	for _, item := range strings.Split(v, ",") {
		label, path, ok := strings.Cut(item, "=")
		if !ok || path == "" {
			t.Fatalf("%s: %q is not label=path", scalingBinsEnv, item)
		}
		b := scalingBinary{label: label + ": ", path: path}
		if p, query, ok := strings.Cut(path, "?"); ok {
			opts, err := url.ParseQuery(query)
			if err != nil {
				t.Fatalf("%s: options of %q: %v", scalingBinsEnv, item, err)
			}
			b.path = p
			keys := slices.Sorted(maps.Keys(opts))
			for _, k := range keys {
				if k == "trigger" {
					b.trigger = opts.Get(k)
					continue
				}
				if k == "gomaxprocs" {
					if opts.Get(k) != "share" {
						t.Fatalf("%s: %q: gomaxprocs=%q (only share: cores / instances)", scalingBinsEnv, item, opts.Get(k))
					}
					b.shareCores = true
					continue
				}
				b.options += fmt.Sprintf(", '%s' '%s'", k, opts.Get(k))
			}
		}
		out = append(out, b)
	}
	return out
}

// scalingPerfEnv names a directory: TestClusterScaling then records a
// CPU profile of each instance with perf(1) while the input is processed
// (<dir>/<table kind>-<k>-<i>.data; read it with perf report -i), at
// 499 Hz or the frequency in <scalingPerfEnv>_FREQ.
const scalingPerfEnv = "ARROWSTREAM_CLUSTER_SCALING_PERF"

// perfRecord starts perf record on the instances when scalingPerfEnv is
// set, and returns what stops it.
func perfRecord(t *testing.T, insts []*clusterInstance, kind string, k int) func() {
	t.Helper()
	dir := os.Getenv(scalingPerfEnv)
	if dir == "" {
		return func() {}
	}
	var cmds []*exec.Cmd
	for i, ci := range insts {
		out := filepath.Join(dir, fmt.Sprintf("%s-%d-%d.data", kind, k, i))
		freq := "499"
		if f := os.Getenv(scalingPerfEnv + "_FREQ"); f != "" {
			freq = f
		}
		c := exec.Command("perf", "record", "-g", "-F", freq, "-o", out, "-p", strconv.Itoa(ci.p.cmd.Process.Pid))
		if err := c.Start(); err != nil {
			t.Logf("perf record: %v (no profile)", err)
			continue
		}
		cmds = append(cmds, c)
	}
	return func() {
		for _, c := range cmds {
			_ = c.Process.Signal(os.Interrupt)
			_ = c.Wait()
		}
	}
}

// scalingPerfStatEnv, when set, counts the instances' system calls and
// context switches with perf-stat(1) while the input is processed, and
// logs them per event: figures that do not depend on how fast the shared
// cores ran, where the CPU-seconds spread with the load (session 37).
const scalingPerfStatEnv = "ARROWSTREAM_CLUSTER_SCALING_PERF_STAT"

// perfStat starts perf stat on the instances when scalingPerfStatEnv is
// set, and returns what stops it and logs the counts per event.
func perfStat(t *testing.T, insts []*clusterInstance, label string, events int) func() {
	t.Helper()
	if os.Getenv(scalingPerfStatEnv) == "" {
		return func() {}
	}
	pids := make([]string, len(insts))
	for i, ci := range insts {
		pids[i] = strconv.Itoa(ci.p.cmd.Process.Pid)
	}
	out := filepath.Join(t.TempDir(), "perf-stat.csv")
	c := exec.Command("perf", "stat", "-x", ",", "-o", out, "-e", "raw_syscalls:sys_enter,context-switches", "-p", strings.Join(pids, ","))
	if err := c.Start(); err != nil {
		t.Logf("perf stat: %v (no counts)", err)
		return func() {}
	}
	return func() {
		_ = c.Process.Signal(os.Interrupt)
		_ = c.Wait()
		data, err := os.ReadFile(out)
		if err != nil {
			t.Logf("perf stat: %v", err)
			return
		}
		var parts []string
		for _, line := range strings.Split(string(data), "\n") {
			f := strings.Split(line, ",")
			if len(f) < 3 {
				continue
			}
			n, err := strconv.ParseFloat(f[0], 64)
			if err != nil {
				continue
			}
			parts = append(parts, fmt.Sprintf("%s %.0f (%.4f per event)", f[2], n, n/float64(events)))
		}
		t.Logf("%s perf stat: %s", label, strings.Join(parts, ", "))
	}
}

// createTopic creates a topic of clusterPartitions partitions (the
// broker does not create topics for consumers).
func createTopic(t *testing.T, cl *kgo.Client, topic string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(time.Minute))
	defer cancel()
	resp, err := kadm.NewClient(cl).CreateTopic(ctx, clusterPartitions, 1, nil, topic)
	if err == nil {
		err = resp.Err
	}
	if err != nil && !errors.Is(err, kerr.TopicAlreadyExists) {
		t.Fatalf("create topic %s: %v", topic, err)
	}
}

// consumedAtBroker reports whether the group of table in cluster name
// has committed every partition of the input topic (named as the
// cluster) up to its end, and, for a table through the hop, the hop's
// group every hop partition up to its last stable offset: all the input
// was claimed (and crossed the hop). The instances are not asked.
func consumedAtBroker(t *testing.T, adm *kadm.Client, name, table string, hop bool) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(time.Minute))
	defer cancel()
	caughtUp := func(group, topic string, stable bool) bool {
		committed, err := adm.FetchOffsets(ctx, group)
		if err != nil {
			return false
		}
		list := adm.ListEndOffsets
		if stable {
			list = adm.ListCommittedOffsets
		}
		ends, err := list(ctx, topic)
		if err != nil {
			return false
		}
		ok := true
		ends.Each(func(e kadm.ListedOffset) {
			if e.Err != nil {
				ok = false
				return
			}
			if c, found := committed.Lookup(e.Topic, e.Partition); e.Offset > 0 && (!found || c.At < e.Offset) {
				ok = false
			}
		})
		return ok
	}
	if !caughtUp(name+"-"+table, name, false) {
		return false
	}
	hopTopic := name + "-" + table + "-repartition-0"
	return !hop || caughtUp(hopTopic, hopTopic, true)
}

// waitGroupOf waits until the input group of table has n members with
// partitions (a stateful table's hop group is another).
func waitGroupOf(t *testing.T, ci *clusterInstance, table string, n int) {
	t.Helper()
	deadline := time.Now().Add(testutil.Scaled(2 * time.Minute))
	for {
		ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(time.Minute))
		recs, err := readSQL(ctx, ci.addr, "SELECT count(*) FROM system.cluster_members WHERE num_partitions > 0 AND table_name = '"+table+"'")
		cancel()
		got := int64(-1)
		if err == nil && len(recs) > 0 && recs[0].NumRows() == 1 {
			got = recs[0].Column(0).(*array.Int64).Value(0)
		}
		releaseRecords(recs)
		if got == int64(n) {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("the group did not reach %d members with partitions (last %d, err %v)", n, got, err)
		}
		time.Sleep(200 * time.Millisecond)
	}
}

// localCount sums a count query over the instances' own rows.
func localCount(t *testing.T, insts []*clusterInstance, query string) int {
	t.Helper()
	total := 0
	for _, ci := range insts {
		ctx, cancel := context.WithTimeout(context.Background(), testutil.Scaled(time.Minute))
		ctx = metadata.AppendToOutgoingContext(ctx, clusterLocalHeader, "1")
		recs, err := readSQL(ctx, ci.addr, query)
		cancel()
		if err != nil {
			t.Fatal(err)
		}
		for _, r := range recs {
			total += int(r.Column(0).(*array.Int64).Value(0))
		}
		releaseRecords(recs)
	}
	return total
}

// cpuSeconds is the user + system CPU time of the instances' processes.
func cpuSeconds(t *testing.T, insts []*clusterInstance) float64 {
	t.Helper()
	total := 0.0
	for _, ci := range insts {
		total += processCPU(t, ci.p.cmd.Process.Pid)
	}
	return total
}

// processCPU is the user + system CPU time of a process, in seconds.
func processCPU(t *testing.T, pid int) float64 {
	t.Helper()
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		t.Skipf("no /proc: %v", err)
	}
	// Fields after the command name (which may hold spaces): utime and
	// stime are the 14th and 15th fields of the line.
	rest := string(b[strings.LastIndexByte(string(b), ')')+2:])
	f := strings.Fields(rest)
	ut, _ := strconv.ParseFloat(f[11], 64)
	st, _ := strconv.ParseFloat(f[12], 64)
	return (ut + st) / 100 // USER_HZ
}

// sharedCores returns each instance's GOMAXPROCS as its last "share its
// cores" log line says ("default" without one: serve left it alone).
func sharedCores(insts []*clusterInstance) []string {
	out := make([]string, len(insts))
	for i, ci := range insts {
		ci.p.mu.Lock()
		text := ci.p.out.String()
		ci.p.mu.Unlock()
		out[i] = "default"
		for _, line := range strings.Split(text, "\n") {
			if strings.Contains(line, "share its cores") {
				if _, v, ok := strings.Cut(line, "gomaxprocs="); ok {
					out[i], _, _ = strings.Cut(v, " ")
				}
			}
		}
	}
	return out
}
