package server

import (
	"reflect"
	"testing"
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
