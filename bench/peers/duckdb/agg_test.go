package duckdbpeer

import (
	"context"
	"flag"
	"fmt"
	"os"
	"runtime"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/bench/gen"
)

// The hash-aggregation benchmark of the Foundation issue:
// SUM(float64), COUNT(*) GROUP BY int64 key over 10M rows with 1e3, 1e5 and
// 1e6 distinct keys.
var (
	aggRows    = flag.Int("agg.rows", 10_000_000, "rows of the hash-aggregation data set")
	aggKeyList = flag.String("agg.keys", "1000,100000,1000000", "comma-separated distinct-key counts of the hash-aggregation benchmark")
)

// aggSeed fixes the data set; every peer and every run sees the same rows.
const aggSeed = 20240601

// aggRelTol is the relative tolerance on sums: engines add in different
// orders, so float sums may differ in their last bits.
const aggRelTol = 1e-9

// aggData is one data set of the benchmark, shared by the peers of one
// BenchmarkAgg/keys=N, with engine state that is expensive to build (DuckDB's
// loaded table, the Arrow batches) made on first use and kept for the other
// peers and runs.
type aggData struct {
	nKeys int
	keys  []int64
	vals  []float64
	ref   map[int64]gen.AggGroup

	duck *duckTable
	recs []arrow.Record
}

func newAggData(nKeys int) *aggData {
	keys, vals := gen.AggData(*aggRows, nKeys, aggSeed)
	return &aggData{nKeys: nKeys, keys: keys, vals: vals, ref: gen.AggReference(keys, vals)}
}

// records returns the data set as 64K-row Arrow batches, built once.
func (d *aggData) records() []arrow.Record {
	if d.recs == nil {
		d.recs = gen.AggRecords(memory.DefaultAllocator, d.keys, d.vals, gen.DefaultBatchRows)
	}
	return d.recs
}

func (d *aggData) close() {
	if d.duck != nil {
		d.duck.close()
		d.duck = nil
	}
	for _, r := range d.recs {
		r.Release()
	}
	d.recs = nil
}

// aggPeer is one engine measured under BenchmarkAgg/keys=N/<name>. bench runs
// b.Loop over one query whose answer it checks, untimed, every iteration.
type aggPeer struct {
	name  string
	bench func(b *testing.B, d *aggData) (iters int)
}

// aggPeers lists the engines in the order they run; arrowstream_test.go adds
// Arrowstream's hash aggregate.
var aggPeers = []aggPeer{
	{"duckdb-1thread", func(b *testing.B, d *aggData) int { return benchDuckAgg(b, d, 1) }},
	{"duckdb-allthreads", func(b *testing.B, d *aggData) int { return benchDuckAgg(b, d, runtime.NumCPU()) }},
}

func aggKeyCounts(tb testing.TB) []int {
	var out []int
	for _, f := range strings.Split(*aggKeyList, ",") {
		n, err := strconv.Atoi(strings.TrimSpace(f))
		if err != nil || n < 1 {
			tb.Fatalf("-agg.keys: bad key count %q", f)
		}
		out = append(out, n)
	}
	return out
}

// BenchmarkAgg measures SUM(v), COUNT(*) GROUP BY k for every peer on the
// same data, one data set per key count. Run it with -cpu 1 (see the package
// comment); the ratios are printed at the end of the run.
func BenchmarkAgg(b *testing.B) {
	if p := runtime.GOMAXPROCS(0); p != 1 {
		b.Logf("GOMAXPROCS=%d: run with -cpu 1 to compare one core with one core", p)
	}
	for _, n := range aggKeyCounts(b) {
		b.Run(fmt.Sprintf("keys=%d", n), func(b *testing.B) {
			d := newAggData(n)
			defer d.close()
			for _, p := range aggPeers {
				b.Run(p.name, func(b *testing.B) {
					iters := p.bench(b, d)
					if b.Failed() || iters == 0 {
						return
					}
					rate := float64(len(d.keys)) * float64(iters) / b.Elapsed().Seconds()
					b.ReportMetric(rate, "rows/s")
					aggFigures.add(n, p.name, rate)
				})
			}
		})
	}
}

// aggFigures collects rows/s per (key count, peer) for the summary table.
var aggFigures figures

type figures struct {
	mu   sync.Mutex
	keys []int
	rate map[int]map[string][]float64
}

func (f *figures) add(keys int, peer string, rate float64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.rate == nil {
		f.rate = map[int]map[string][]float64{}
	}
	if f.rate[keys] == nil {
		f.rate[keys] = map[string][]float64{}
		f.keys = append(f.keys, keys)
	}
	f.rate[keys][peer] = append(f.rate[keys][peer], rate)
}

// median returns the median of the figures of (keys, peer), in M rows/s,
// and whether there are any. With -count > 1 that is the median of runs.
func (f *figures) median(keys int, peer string) (float64, bool) {
	r := slices.Clone(f.rate[keys][peer])
	if len(r) == 0 {
		return 0, false
	}
	slices.Sort(r)
	return r[len(r)/2] / 1e6, true
}

// summary formats the figures as a table: per key count, DuckDB's and
// Arrowstream's one-core throughput and their ratio, with and without the
// time DuckDB's driver spends handing out result rows.
func (f *figures) summary() string {
	f.mu.Lock()
	defer f.mu.Unlock()
	if len(f.keys) == 0 {
		return ""
	}
	var sb strings.Builder
	fmt.Fprintf(&sb, "\nhash aggregation, %d rows, SUM(float64), COUNT(*) GROUP BY int64; M rows/s (median of -count runs), GOMAXPROCS=%d, NumCPU=%d\n",
		*aggRows, runtime.GOMAXPROCS(0), runtime.NumCPU())
	fmt.Fprintf(&sb, "%8s %15s %13s %12s %13s %17s %18s\n",
		"keys", "duckdb-1thread", "(excl. fetch)", "arrowstream", "ratio", "(excl. fetch)", "duckdb-allthreads")
	cell := func(v float64, ok bool) string {
		if !ok {
			return "-"
		}
		return fmt.Sprintf("%.1f", v)
	}
	ratio := func(a, b float64, ok bool) string {
		if !ok {
			return "-"
		}
		return fmt.Sprintf("%.2fx", a/b)
	}
	for _, k := range f.keys {
		d1, ok1 := f.median(k, "duckdb-1thread")
		dn, okn := f.median(k, "duckdb-1thread-nofetch")
		as, oka := f.median(k, "arrowstream")
		da, okd := f.median(k, "duckdb-allthreads")
		fmt.Fprintf(&sb, "%8d %15s %13s %12s %13s %17s %18s\n", k, cell(d1, ok1), cell(dn, okn), cell(as, oka),
			ratio(as, d1, ok1 && oka), ratio(as, dn, okn && oka), cell(da, okd))
	}
	sb.WriteString("ratio = arrowstream / duckdb-1thread; (excl. fetch) leaves out reading DuckDB's result rows through the driver\n")
	return sb.String()
}

func TestMain(m *testing.M) {
	code := m.Run()
	if s := aggFigures.summary(); s != "" {
		fmt.Print(s)
	}
	os.Exit(code)
}

// checkAgg compares an engine's result columns with the reference.
func checkAgg(d *aggData, keys []int64, sums []float64, counts []int64) error {
	got, err := gen.AggGroups(keys, sums, counts)
	if err != nil {
		return err
	}
	return gen.CheckAgg(d.ref, got, aggRelTol)
}

// duckDB returns the data set loaded into DuckDB, loading it on first use.
func (d *aggData) duckDB(tb testing.TB) *duckTable {
	tb.Helper()
	if d.duck == nil {
		t, err := loadDuck(d.keys, d.vals)
		if err != nil {
			tb.Fatalf("loading DuckDB: %v", err)
		}
		d.duck = t
	}
	return d.duck
}

// benchDuckAgg times duckAggQuery on DuckDB with the given number of
// threads, checking every answer, untimed, against the reference.
func benchDuckAgg(b *testing.B, d *aggData, threads int) int {
	t := d.duckDB(b)
	if err := t.setThreads(threads); err != nil {
		b.Fatalf("SET threads = %d: %v", threads, err)
	}
	ctx := context.Background()
	r := &aggResult{
		keys:   make([]int64, 0, d.nKeys),
		sums:   make([]float64, 0, d.nKeys),
		counts: make([]int64, 0, d.nKeys),
	}
	var fetch time.Duration
	iters := 0
	for b.Loop() {
		f, err := t.query(ctx, r)
		if err != nil {
			b.Fatalf("%s: %v", duckAggQuery, err)
		}
		b.StopTimer()
		if err := checkAgg(d, r.keys, r.sums, r.counts); err != nil {
			b.Fatalf("DuckDB (threads=%d) gave a wrong answer: %v", threads, err)
		}
		fetch += f
		iters++
		b.StartTimer()
	}
	// How much of the timed query is reading result rows out through the
	// driver (one cgo call and three boxed values per row) rather than
	// aggregating: a few percent with 1e6 result rows, nothing with 1e3. The
	// rate without it is recorded too, as DuckDB's engine-only figure.
	b.ReportMetric(fetch.Seconds()*1e3/float64(iters), "fetch-ms/op")
	if agg := (b.Elapsed() - fetch).Seconds(); agg > 0 {
		aggFigures.add(d.nKeys, fmt.Sprintf("duckdb-%dthread-nofetch", threads), float64(len(d.keys))*float64(iters)/agg)
	}
	return iters
}

// TestDuckDBAgg runs the benchmark's DuckDB path on a small data set, so that
// `go test` in this module checks the loading, the query and the checker.
func TestDuckDBAgg(t *testing.T) {
	keys, vals := gen.AggData(200_000, 1000, aggSeed)
	d := &aggData{nKeys: 1000, keys: keys, vals: vals, ref: gen.AggReference(keys, vals)}
	defer d.close()
	tbl := d.duckDB(t)
	r := &aggResult{}
	for _, threads := range []int{1, runtime.NumCPU()} {
		if err := tbl.setThreads(threads); err != nil {
			t.Fatal(err)
		}
		if _, err := tbl.query(context.Background(), r); err != nil {
			t.Fatal(err)
		}
		if err := checkAgg(d, r.keys, r.sums, r.counts); err != nil {
			t.Fatalf("threads=%d: %v", threads, err)
		}
	}
	// The check must be able to fail.
	r.counts[len(r.counts)/2]++
	if err := checkAgg(d, r.keys, r.sums, r.counts); err == nil {
		t.Fatal("a wrong count passed the check")
	}
}
