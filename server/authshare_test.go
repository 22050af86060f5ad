package server

import (
	"reflect"
	"strings"
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream"
)

func TestParseGrants(t *testing.T) {
	cases := []struct {
		in   []string
		want map[string][]string
		bad  bool
	}{
		{nil, nil, false},
		{[]string{"alice=*"}, map[string][]string{"alice": {"*"}}, false},
		{[]string{"bob=b,a", "bob=system.streaming_queries"}, map[string][]string{"bob": {"a", "b", "system.streaming_queries"}}, false},
		{[]string{"a=x;b=y"}, map[string][]string{"a": {"x"}, "b": {"y"}}, false},
		{[]string{"nobody="}, map[string][]string{"nobody": {}}, false},
		{[]string{"=x"}, nil, true},
		{[]string{"x"}, nil, true},
	}
	for _, c := range cases {
		got, err := ParseGrants(c.in)
		if (err != nil) != c.bad {
			t.Errorf("ParseGrants(%q) error %v, want bad=%v", c.in, err, c.bad)
			continue
		}
		if !c.bad && !reflect.DeepEqual(got, c.want) {
			t.Errorf("ParseGrants(%q) = %v, want %v", c.in, got, c.want)
		}
	}
}

func TestSharedAuthenticator(t *testing.T) {
	a, err := NewAuthenticator(AuthConfig{Users: map[string]string{"u": "p", "v": "q"}, ReadGrants: map[string][]string{"u": {"*"}, "v": {"t"}}}, nil)
	if err != nil {
		t.Fatal(err)
	}
	tok, err := a.Login(t.Context(), "u", "p")
	if err != nil {
		t.Fatal(err)
	}
	if user, ok := a.CheckToken(tok); !ok || user != "u" {
		t.Errorf("CheckToken = %q, %v", user, ok)
	}
	if _, err := a.Login(t.Context(), "u", "wrong"); err == nil {
		t.Error("a wrong password logged in")
	}
	if !a.Unrestricted("u") || a.Unrestricted("v") || !a.MayRead("v", "T") || a.MayRead("v", "other") {
		t.Error("grants not applied")
	}
	if _, err := NewAuthenticator(AuthConfig{}, nil); err == nil {
		t.Error("an authenticator without users was built")
	}
	if _, err := NewAuthenticator(AuthConfig{Users: map[string]string{"u": "p"}, ReadGrants: map[string][]string{"ghost": {"*"}}}, nil); err == nil {
		t.Error("grants for an unknown user were accepted")
	}
}

func TestConcurrentQueryQuota(t *testing.T) {
	q := newQuotas(Limits{MaxConcurrentQueries: 3, MaxConcurrentQueriesPerUser: 2}, nil)
	r1, err := q.acquire("a")
	if err != nil {
		t.Fatal(err)
	}
	r2, _ := q.acquire("a")
	if _, err := q.acquire("a"); err == nil {
		t.Error("a third statement of one user was admitted")
	}
	r3, err := q.acquire("b")
	if err != nil {
		t.Fatal(err)
	}
	if _, err := q.acquire("c"); err == nil {
		t.Error("a fourth statement on the server was admitted")
	}
	r1()
	r1() // idempotent
	if r, err := q.acquire("a"); err != nil {
		t.Errorf("after a release: %v", err)
	} else {
		r()
	}
	r2()
	r3()
	if q.running != 0 || len(q.perUser) != 0 {
		t.Errorf("counts not back to zero: %d %v", q.running, q.perUser)
	}
}

func TestCreatedTable(t *testing.T) {
	cases := map[string]string{
		"CREATE STREAMING TABLE foo AS SELECT 1":   "foo",
		"create streaming table `a b` AS SELECT 1": "a b",
		"SELECT 1":                  "",
		"CREATE TABLE t USING rate": "",
		"not sql":                   "",
	}
	for in, want := range cases {
		if got := createdTable(in); got != want {
			t.Errorf("createdTable(%q) = %q, want %q", in, got, want)
		}
	}
}

// fixedQueries lists fixed query states.
type fixedQueries []QueryState

func (f fixedQueries) Queries() []QueryState { return f }

func stateWith(name string, stateBytes int64) QueryState {
	p := &arrowstream.StreamingQueryProgress{StateOperators: []arrowstream.StateOperatorProgress{{MemoryUsedBytes: stateBytes}}}
	return QueryState{ID: name, Name: name, Status: "ACTIVE", Recent: []*arrowstream.StreamingQueryProgress{p}}
}

// TestStreamingTableQuotas checks each admission quota against a fixed
// set of running tables: a (alice's, 100 state bytes), b (bob's, 50), c
// (nobody's, 10) and a failed one that does not count.
func TestStreamingTableQuotas(t *testing.T) {
	queries := fixedQueries{stateWith("a", 100), stateWith("b", 50), stateWith("c", 10), {ID: "d", Name: "d", Status: "FAILED"}}
	cases := []struct {
		l       Limits
		user    string
		refused string // the flag the refusal names; "" admits
	}{
		{Limits{}, "alice", ""},
		{Limits{MaxStreamingTables: 3}, "alice", "--max-streaming-tables"},
		{Limits{MaxStreamingTables: 4}, "alice", ""},
		{Limits{MaxStreamingTablesPerUser: 1}, "alice", "--max-streaming-tables-per-user"},
		{Limits{MaxStreamingTablesPerUser: 1}, "carol", ""},
		{Limits{MaxStateBytes: 160}, "carol", "--max-state-bytes"},
		{Limits{MaxStateBytes: 161}, "carol", ""},
		{Limits{MaxStateBytesPerUser: 100}, "alice", "--max-state-bytes-per-user"},
		{Limits{MaxStateBytesPerUser: 100}, "bob", ""},
	}
	for _, c := range cases {
		q := newQuotas(c.l, queries)
		q.created("alice", "A")
		q.created("bob", "b")
		err := q.admitTable(c.user, "new")
		switch {
		case c.refused == "" && err != nil:
			t.Errorf("%+v, user %s: refused: %v", c.l, c.user, err)
		case c.refused != "" && (err == nil || !strings.Contains(err.Error(), c.refused+")")):
			t.Errorf("%+v, user %s: %v, want a refusal naming %s", c.l, c.user, err, c.refused)
		}
	}
}
