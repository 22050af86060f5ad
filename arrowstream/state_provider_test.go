package arrowstream

import (
	"context"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/internal/collectsink"
	"github.com/arrowstream/arrowstream/arrowstream/pebblestate"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// TestStateStoreProviderRestart runs a running count with each provider,
// restarts it on its checkpoint, and checks the answers, the provider's
// files and progress metrics, and that switching providers is refused.
func TestStateStoreProviderRestart(t *testing.T) {
	tests := []struct {
		provider  string
		viaConf   bool   // session conf instead of query option
		changelog string // stateStore.pebble.changelogCheckpointing ("": the default, on)
		files     string // a glob under <checkpoint>/state
		metric    string
	}{
		{"memory", false, "", "../epochlog/*.seg", ""}, // state records live in the epoch log
		{"pebble", false, "false", "0/0/*.pebble", "pebbleSstFileCount"},
		{"pebble", true, "false", "0/0/*.pebble", "pebbleCommitFlushLatencyMicros"},
		{"pebble", false, "true", "../epochlog/*.seg", "pebbleChangelogBytes"},
		{"pebble", false, "", "../epochlog/*.seg", "pebbleChangelogBytes"}, // changelogs by default
	}
	for _, tc := range tests {
		t.Run(tc.provider, func(t *testing.T) {
			ctx := context.Background()
			mem := poisonmem.New()
			defer mem.AssertSize(t, 0)
			conf := map[string]string{ConfShufflePartitions: "2"}
			if tc.viaConf {
				conf[ConfStateStoreProvider] = tc.provider
			}
			s := NewSession(SessionOptions{Allocator: mem, Conf: conf})
			pebblestate.Register(s)
			src := NewMemoryStream(mem, valueSchema)
			defer src.Close()
			s.RegisterStream("input", src)
			dir := t.TempDir()
			sink := &collectsink.Sink{}
			start := func(provider string) (*StreamingQuery, error) {
				w := s.ReadStream("input").GroupBy("value").Agg("count(*)").
					WriteStream().Sink(sink).OutputMode(Update).Option("checkpointLocation", dir)
				if !tc.viaConf || provider != tc.provider {
					w = w.Option(ConfStateStoreProvider, provider)
				}
				if tc.changelog != "" {
					w = w.Option(ConfPebbleChangelog, tc.changelog)
				}
				return w.Start(ctx)
			}
			q, err := start(tc.provider)
			if err != nil {
				t.Fatal(err)
			}
			addInts(t, src, 1, 1, 2)
			if err := q.ProcessAllAvailable(ctx); err != nil {
				t.Fatal(err)
			}
			q.Stop()
			other := map[string]string{"memory": "pebble", "pebble": "memory"}[tc.provider]
			q, err = start(other)
			if err == nil {
				err = q.AwaitTermination(ctx)
			}
			if err == nil || !strings.Contains(err.Error(), "state store provider") {
				t.Fatalf("restart with %s: %v, want a refusal", other, err)
			}
			q, err = start(tc.provider)
			if err != nil {
				t.Fatal(err)
			}
			addInts(t, src, 1, 3)
			if err := q.ProcessAllAvailable(ctx); err != nil {
				t.Fatal(err)
			}
			prog := q.LastProgress()
			q.Stop()
			got := vt.SortRows(sink.Last())
			want := []vt.Row{{int64(1), int64(3)}, {int64(3), int64(1)}}
			if !vt.RowsEqual(got, want) {
				t.Fatalf("after restart:\n%swant\n%s", vt.FormatRows(got), vt.FormatRows(want))
			}
			matches, _ := filepath.Glob(filepath.Join(dir, "state", tc.files))
			if len(matches) == 0 {
				ents, _ := os.ReadDir(filepath.Join(dir, "state"))
				t.Fatalf("no %s files in the state directory: %v", tc.files, ents)
			}
			if tc.metric != "" {
				if prog == nil || len(prog.StateOperators) == 0 {
					t.Fatalf("no state progress: %+v", prog)
				}
				if _, ok := prog.StateOperators[0].CustomMetrics[tc.metric]; !ok {
					t.Errorf("customMetrics lack %s: %v", tc.metric, prog.StateOperators[0].CustomMetrics)
				}
			}
		})
	}
}

func TestStateStoreProviderOptionErrors(t *testing.T) {
	tests := []struct {
		conf map[string]string
		want string
	}{
		{map[string]string{ConfStateStoreProvider: "rocksdb"}, "unknown state store provider"},
		{map[string]string{ConfStateStoreProvider: "pebble", ConfPebbleBlockCacheBytes: "lots"}, ConfPebbleBlockCacheBytes},
		{map[string]string{ConfStateStoreProvider: "pebble", ConfPebbleMemtableBytes: "100"}, ConfPebbleMemtableBytes},
		{map[string]string{ConfStateStoreProvider: "pebble", ConfPebbleChangelog: "yes please"}, ConfPebbleChangelog},
		{map[string]string{ConfStateStoreProvider: "pebble", ConfPebbleMinDeltasForSnapshot: "-1"}, ConfPebbleMinDeltasForSnapshot},
	}
	s := NewSession(SessionOptions{})
	pebblestate.Register(s)
	for _, tc := range tests {
		p, err := s.stateProvider(tc.conf, nil)
		if err == nil {
			p.Close()
			t.Errorf("%v: no error", tc.conf)
			continue
		}
		if !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%v: %v, want mention of %q", tc.conf, err, tc.want)
		}
	}
}

// TestStateStoreProviderSQLProperty selects the provider with a streaming
// table's property (SQL lower-cases property keys).
func TestStateStoreProviderSQLProperty(t *testing.T) {
	ctx := context.Background()
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	s := NewSession(SessionOptions{Allocator: mem, Conf: map[string]string{ConfShufflePartitions: "1"}})
	pebblestate.Register(s)
	s.RegisterSinkFormat("memory", func(context.Context, memory.Allocator, SinkInfo) (Sink, error) { return &collectsink.Sink{}, nil })
	src := NewMemoryStream(mem, valueSchema)
	defer src.Close()
	s.RegisterStream("input", src)
	dir := t.TempDir()
	res, err := s.SQL(ctx, "CREATE STREAMING TABLE counts TBLPROPERTIES ('outputMode' = 'complete', 'checkpointLocation' = '"+dir+
		"', 'stateStore.provider' = 'pebble') AS SELECT value, count(*) AS n FROM STREAM input GROUP BY value")
	if err != nil {
		t.Fatal(err)
	}
	res.Close()
	var q *StreamingQuery
	for _, a := range s.Streams().Active() {
		if a.Name() == "counts" {
			q = a
		}
	}
	if q == nil {
		t.Fatal("no query counts")
	}
	defer q.Stop()
	addInts(t, src, 1, 1)
	if err := q.ProcessAllAvailable(ctx); err != nil {
		t.Fatal(err)
	}
	// Pebble's working directory and its own metrics (its changelog, by
	// default, is in the epoch log as the memory provider's state is).
	if _, err := os.Stat(filepath.Join(dir, "state", "0", "0", "_local")); err != nil {
		t.Fatalf("the table property did not select the pebble provider: %v", err)
	}
	if p := q.LastProgress(); p == nil || len(p.StateOperators) == 0 || p.StateOperators[0].CustomMetrics["pebbleChangelogBytes"] == 0 {
		t.Fatalf("no pebbleChangelogBytes in the progress: %+v", p)
	}
}

// Without pebblestate.Register the session does not know "pebble": the
// arrowstream package does not link Pebble.
func TestStateStoreProviderNotRegistered(t *testing.T) {
	s := NewSession(SessionOptions{})
	p, err := s.stateProvider(map[string]string{ConfStateStoreProvider: "pebble"}, nil)
	if err == nil {
		p.Close()
		t.Fatal("pebble provider built without registration")
	}
	if !strings.Contains(err.Error(), "unknown state store provider (registered: memory)") {
		t.Fatalf("error %q does not list the registered providers", err)
	}
}
