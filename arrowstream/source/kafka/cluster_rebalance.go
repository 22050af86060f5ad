package kafka

import (
	"sort"
	"strings"
	"time"
)

// Rebalance is one rebalance of a table's group as this instance saw it
// (system.cluster_rebalances, the web UI's cluster view): the partitions
// the group gave it and took from it, and how long its processing of the
// table paused.
type Rebalance struct {
	Table, Group string
	// Start is when this instance first heard of the rebalance (its first
	// revoke, loss or assignment callback).
	Start time.Time
	// Generation is the group generation the rebalance ended in.
	Generation int32
	// Assigned, Revoked and Lost name partitions ("topic-3"). Lost
	// partitions were taken without a revoke (this member's session
	// expired).
	Assigned, Revoked, Lost []string
	// Owned is how many partitions the instance owned afterwards.
	Owned int
	// Paused is from Start until the instance next claimed or committed
	// input of the table (processing resumed); zero with Resumed false
	// while it has not (no data since, or still rebalancing).
	Paused  time.Duration
	Resumed bool
}

// maxRebalances bounds the rebalances kept per group (the newest stay).
const maxRebalances = 32

// rebalanceLog is a group's recent rebalances; its methods run under the
// Cluster's mutex, which outlives a query's membership (a restarted
// query keeps the history).
type rebalanceLog struct {
	entries []Rebalance
	open    bool // the last entry has not resumed yet
}

// noteRebalance records a callback: it opens an entry, or adds to the
// open one (a cooperative rebalance revokes in one round and assigns in
// the next).
func (c *Cluster) noteRebalance(gm *groupMember, how string, tps map[string][]int32, gen int32, owned int) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.signalRebalancedLocked()
	l := c.rebalances[gm.group]
	if l == nil {
		l = &rebalanceLog{}
		c.rebalances[gm.group] = l
	}
	if !l.open {
		if len(l.entries) == maxRebalances {
			copy(l.entries, l.entries[1:])
			l.entries = l.entries[:maxRebalances-1]
		}
		l.entries = append(l.entries, Rebalance{Table: gm.table, Group: gm.group, Start: c.opts.Now()})
		l.open = true
	}
	e := &l.entries[len(l.entries)-1]
	names := splitTPs(tps)
	switch how {
	case "assigned":
		e.Assigned = append(e.Assigned, names...)
	case "revoked":
		e.Revoked = append(e.Revoked, names...)
	default:
		e.Lost = append(e.Lost, names...)
	}
	if gen >= 0 {
		e.Generation = gen
	}
	e.Owned = owned
}

// noteResumed closes the group's open rebalance: processing resumed.
func (c *Cluster) noteResumed(group string) {
	c.mu.Lock()
	defer c.mu.Unlock()
	l := c.rebalances[group]
	if l == nil || !l.open {
		return
	}
	e := &l.entries[len(l.entries)-1]
	e.Paused, e.Resumed, l.open = c.opts.Now().Sub(e.Start), true, false
}

// Rebalances returns the recent rebalances of every table's group seen
// by this instance, oldest first per table.
func (c *Cluster) Rebalances() []Rebalance {
	c.mu.Lock()
	defer c.mu.Unlock()
	var out []Rebalance
	for _, l := range c.rebalances {
		for _, e := range l.entries {
			e.Assigned = append([]string(nil), e.Assigned...)
			e.Revoked = append([]string(nil), e.Revoked...)
			e.Lost = append([]string(nil), e.Lost...)
			out = append(out, e)
		}
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].Table != out[j].Table {
			return out[i].Table < out[j].Table
		}
		return out[i].Start.Before(out[j].Start)
	})
	return out
}

func splitTPs(tps map[string][]int32) []string {
	s := formatTPs(tps)
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}
