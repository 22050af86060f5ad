package server

import (
	"context"
	"fmt"
	"sort"
	"strings"
	"time"

	"google.golang.org/grpc/codes"
)

// QueryFailer is a QueryLister that can stop a running query as failed
// (ManagerQueries is one). The server stops a streaming table with it when
// the table's growth breaks a state or checkpoint quota.
type QueryFailer interface {
	QueryLister
	// FailQuery stops the active query with the given id, with cause as
	// its exception; false when no such query runs.
	FailQuery(id string, cause error) bool
}

// FailQuery implements QueryFailer.
func (l *managerLister) FailQuery(id string, cause error) bool {
	q := l.m.Get(id)
	if q == nil {
		return false
	}
	q.Fail(cause)
	return true
}

// quotaWatchInterval is how often running tables are measured against the
// state and checkpoint quotas.
const quotaWatchInterval = time.Second

// watchesGrowth reports whether a limit bounds running tables' growth.
func (l Limits) watchesGrowth() bool {
	return l.MaxStateBytes > 0 || l.MaxStateBytesPerUser > 0 || l.MaxCheckpointBytes > 0 || l.MaxCheckpointBytesPerUser > 0
}

// tableUsage is one running table's usage and owner.
type tableUsage struct {
	id, name, owner string
	u               usage
}

// watch measures the running tables every interval until ctx ends and
// stops, one per round, a table that takes the state or checkpoint bytes
// past a quota (quotaVerdict says which).
func (q *quotas) watch(ctx context.Context, f QueryFailer, interval time.Duration, log func(msg string, args ...any)) {
	t := time.NewTicker(interval)
	defer t.Stop()
	prev := map[string]usage{}
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		tables := q.runningTables()
		victim, cause := q.verdict(tables, prev)
		prev = map[string]usage{}
		for _, tu := range tables {
			prev[tu.id] = tu.u
		}
		if victim != nil && f.FailQuery(victim.id, cause) {
			log("streaming table stopped by a quota", "table", victim.name, "owner", victim.owner, "err", cause)
		}
	}
}

// runningTables measures the active streaming tables.
func (q *quotas) runningTables() []tableUsage {
	q.mu.Lock()
	owners := make(map[string]string, len(q.owners))
	for k, v := range q.owners {
		owners[k] = v
	}
	q.mu.Unlock()
	needDisk := q.l.MaxCheckpointBytes > 0 || q.l.MaxCheckpointBytesPerUser > 0
	var out []tableUsage
	for _, st := range q.queries.Queries() {
		if st.Status != "ACTIVE" {
			continue
		}
		tu := tableUsage{id: st.ID, name: st.Name, owner: owners[strings.ToLower(st.Name)], u: usage{tables: 1}}
		if n := len(st.Recent); n > 0 && st.Recent[n-1] != nil {
			for _, op := range st.Recent[n-1].StateOperators {
				tu.u.stateBytes += op.MemoryUsedBytes
			}
		}
		if needDisk && st.CheckpointDir != "" {
			tu.u.checkpointBytes = dirBytes(st.CheckpointDir)
		}
		out = append(out, tu)
	}
	return out
}

// verdict returns the table to stop and why, or nil when every quota
// holds. Over a quota (the sum of the tables in its scope strictly past
// the limit) the table stopped is the one in scope that grew most since
// the previous round (prev), the largest on a tie: the table whose growth
// broke the quota, not one that sat still.
func (q *quotas) verdict(tables []tableUsage, prev map[string]usage) (*tableUsage, error) {
	l := q.l
	type check struct {
		limit  int64
		perUsr bool
		what   string
		bytes  func(usage) int64
		flag   string
	}
	checks := []check{
		{l.MaxCheckpointBytes, false, "checkpoint", func(u usage) int64 { return u.checkpointBytes }, "Limits.MaxCheckpointBytes, --max-checkpoint-bytes"},
		{l.MaxCheckpointBytesPerUser, true, "checkpoint", func(u usage) int64 { return u.checkpointBytes }, "Limits.MaxCheckpointBytesPerUser, --max-checkpoint-bytes-per-user"},
		{l.MaxStateBytes, false, "state", func(u usage) int64 { return u.stateBytes }, "Limits.MaxStateBytes, --max-state-bytes"},
		{l.MaxStateBytesPerUser, true, "state", func(u usage) int64 { return u.stateBytes }, "Limits.MaxStateBytesPerUser, --max-state-bytes-per-user"},
	}
	for _, c := range checks {
		if c.limit <= 0 {
			continue
		}
		scopes := map[string][]*tableUsage{}
		for i := range tables {
			key := ""
			if c.perUsr {
				if tables[i].owner == "" {
					continue // not created through this server: no owner to bound
				}
				key = tables[i].owner
			}
			scopes[key] = append(scopes[key], &tables[i])
		}
		keys := make([]string, 0, len(scopes))
		for k := range scopes {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			in := scopes[k]
			var sum int64
			for _, tu := range in {
				sum += c.bytes(tu.u)
			}
			if sum <= c.limit {
				continue
			}
			sort.SliceStable(in, func(i, j int) bool {
				gi, gj := c.bytes(in[i].u)-c.bytes(prev[in[i].id]), c.bytes(in[j].u)-c.bytes(prev[in[j].id])
				if gi != gj {
					return gi > gj
				}
				return c.bytes(in[i].u) > c.bytes(in[j].u)
			})
			v := in[0]
			scope := "the streaming tables hold"
			if c.perUsr {
				scope = fmt.Sprintf("user %q's streaming tables hold", k)
			}
			return v, statusf(codes.ResourceExhausted,
				"RESOURCE_EXHAUSTED: streaming table %q stopped: %s %d bytes of %s, over the limit of %d (%s); this table holds %d and grew most",
				v.name, scope, sum, c.what, c.limit, c.flag, c.bytes(v.u))
		}
	}
	return nil, nil
}
