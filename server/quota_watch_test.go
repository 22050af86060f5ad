package server

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"
)

// TestQuotaVerdict: over a growth quota the table in scope that grew most
// since the previous round is chosen; at or under the limit none is.
func TestQuotaVerdict(t *testing.T) {
	tables := []tableUsage{
		{id: "a", name: "a", owner: "alice", u: usage{stateBytes: 100, checkpointBytes: 1000}},
		{id: "b", name: "b", owner: "bob", u: usage{stateBytes: 50, checkpointBytes: 300}},
		{id: "c", name: "c", u: usage{stateBytes: 10, checkpointBytes: 10}},
	}
	prev := map[string]usage{"a": {stateBytes: 100, checkpointBytes: 1000}, "b": {stateBytes: 20, checkpointBytes: 100}, "c": {}}
	for _, tc := range []struct {
		l      Limits
		victim string // "" none
		flag   string
	}{
		{Limits{MaxCheckpointBytes: 1310}, "", ""},
		{Limits{MaxCheckpointBytes: 1309}, "b", "--max-checkpoint-bytes)"}, // b grew 200, c 10, a 0
		{Limits{MaxStateBytes: 159}, "b", "--max-state-bytes)"},
		{Limits{MaxStateBytes: 160}, "", ""},
		{Limits{MaxCheckpointBytesPerUser: 999}, "a", "--max-checkpoint-bytes-per-user)"}, // alice's a alone is over
		{Limits{MaxCheckpointBytesPerUser: 1000}, "", ""},                                 // c has no owner
		{Limits{MaxStateBytesPerUser: 40}, "a", "--max-state-bytes-per-user)"},            // alice before bob
	} {
		q := newQuotas(tc.l, nil)
		v, err := q.verdict(tables, prev)
		switch {
		case tc.victim == "" && v != nil:
			t.Errorf("%+v: stopped %s: %v", tc.l, v.name, err)
		case tc.victim != "" && (v == nil || v.name != tc.victim):
			t.Errorf("%+v: stopped %v, want %s", tc.l, v, tc.victim)
		case tc.victim != "":
			if st, _ := status.FromError(err); st.Code() != codes.ResourceExhausted || !strings.Contains(st.Message(), tc.flag) ||
				!strings.Contains(st.Message(), `table "`+tc.victim+`" stopped`) {
				t.Errorf("%+v: error %v, want ResourceExhausted naming %s and the table", tc.l, err, tc.flag)
			}
		}
	}
}

// failingQueries is a QueryFailer over fixed states; FailQuery marks the
// query FAILED.
type failingQueries struct {
	mu     sync.Mutex
	states []QueryState
	failed map[string]error
}

func (f *failingQueries) Queries() []QueryState {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]QueryState(nil), f.states...)
}

func (f *failingQueries) FailQuery(id string, cause error) bool {
	f.mu.Lock()
	defer f.mu.Unlock()
	for i := range f.states {
		if f.states[i].ID == id && f.states[i].Status == "ACTIVE" {
			f.states[i].Status, f.states[i].Exception = "FAILED", cause.Error()
			f.failed[id] = cause
			return true
		}
	}
	return false
}

// TestQuotaWatchStopsGrowth: the watch stops tables, one per round, until
// the sum is back under the limit, and stops when its context ends.
func TestQuotaWatchStopsGrowth(t *testing.T) {
	f := &failingQueries{failed: map[string]error{},
		states: []QueryState{stateWith("a", 100), stateWith("b", 50), stateWith("c", 10)}}
	q := newQuotas(Limits{MaxStateBytes: 50}, f)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan struct{})
	go func() {
		defer close(done)
		q.watch(ctx, f, time.Millisecond, func(string, ...any) {})
	}()
	waitFor(t, time.Minute, "two tables stopped", func() bool {
		f.mu.Lock()
		defer f.mu.Unlock()
		return len(f.failed) == 2
	})
	cancel()
	<-done
	if f.failed["c"] != nil || f.failed["a"] == nil || f.failed["b"] == nil {
		t.Fatalf("stopped %v, want a and b (c alone is under the limit)", f.failed)
	}
	var ae error = f.failed["a"]
	if !strings.Contains(ae.Error(), "RESOURCE_EXHAUSTED") || errors.Is(ae, context.Canceled) {
		t.Fatalf("cause %v", ae)
	}
}

// TestCheckpointQuotaRefusal: new tables are refused while the running
// ones' checkpoints hold the limit (the files under CheckpointDir), per
// server and per user.
func TestCheckpointQuotaRefusal(t *testing.T) {
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "a", "offsets"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, "a", "offsets", "0"), make([]byte, 300), 0o644); err != nil {
		t.Fatal(err)
	}
	queries := fixedQueries{{ID: "a", Name: "a", Status: "ACTIVE", CheckpointDir: filepath.Join(dir, "a")}}
	for _, tc := range []struct {
		l       Limits
		user    string
		refused string
	}{
		{Limits{MaxCheckpointBytes: 300}, "bob", "--max-checkpoint-bytes)"},
		{Limits{MaxCheckpointBytes: 301}, "bob", ""},
		{Limits{MaxCheckpointBytesPerUser: 300}, "alice", "--max-checkpoint-bytes-per-user)"},
		{Limits{MaxCheckpointBytesPerUser: 300}, "bob", ""},
	} {
		q := newQuotas(tc.l, queries)
		q.created("alice", "a")
		err := q.admitTable(tc.user, "new")
		switch {
		case tc.refused == "" && err != nil:
			t.Errorf("%+v, %s: refused: %v", tc.l, tc.user, err)
		case tc.refused != "" && (err == nil || !strings.Contains(err.Error(), tc.refused)):
			t.Errorf("%+v, %s: %v, want a refusal naming %s", tc.l, tc.user, err, tc.refused)
		}
	}
}
