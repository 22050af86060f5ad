package kafka

import (
	"context"
	"fmt"
	"net"
)

// Instances that share one machine's cores (several `serve` processes on
// one host, as in the acceptance and scaling tests) each run the Go
// scheduler over all the cores by default: k processes keep k times the
// cores' worth of Ps, and every wake-up of one may start a spinning
// thread looking for work on cores the others use. The membership can
// tell how many instances advertise this instance's host, so that the
// process can take its share of the cores (cmd/arrowstream,
// cluster_cores.go). The Go API leaves GOMAXPROCS to the program.

// Rebalanced returns a channel closed at the next rebalance callback of
// any of this instance's groups (a partition assigned, revoked or lost):
// the membership may have changed.
func (c *Cluster) Rebalanced() <-chan struct{} {
	c.mu.Lock()
	defer c.mu.Unlock()
	if c.changed == nil {
		c.changed = make(chan struct{})
	}
	return c.changed
}

// signalRebalancedLocked wakes the waiters of Rebalanced (c.mu held).
func (c *Cluster) signalRebalancedLocked() {
	if c.changed != nil {
		close(c.changed)
		c.changed = nil
	}
}

// ColocatedInstances is the number of instances, this one included, in
// the groups of the tables whose queries run here whose advertised Flight
// SQL address names this instance's host (the host part compared as
// written: "127.0.0.1:1001" and "127.0.0.1:1002" share a host,
// "localhost:1001" and "127.0.0.1:1002" do not). It fails while a group
// rebalances (the coordinator describes no members, or members without
// their metadata, until it is over), rather than count a part of them.
func (c *Cluster) ColocatedInstances(ctx context.Context) (int, error) {
	c.mu.Lock()
	groups := make([]string, 0, len(c.members))
	for g := range c.members {
		groups = append(groups, g)
	}
	c.mu.Unlock()
	ms, err := c.Members(ctx)
	if err != nil {
		return 0, err
	}
	if err := settled(groups, ms); err != nil {
		return 0, fmt.Errorf("kafka: cluster %s: %w", c.opts.Name, err)
	}
	return colocated(ms, c.opts.Address), nil
}

// settled checks that every one of groups lists this instance, and every
// member its address.
func settled(groups []string, ms []Member) error {
	self := map[string]bool{}
	for _, g := range groups {
		self[g] = false
	}
	for _, m := range ms {
		if m.Address == "" {
			return fmt.Errorf("group %s is rebalancing (member %s has no address yet)", m.Group, m.MemberID)
		}
		self[m.Group] = self[m.Group] || m.Self
	}
	for g, ok := range self {
		if !ok {
			return fmt.Errorf("group %s is rebalancing (this instance is not among its members yet)", g)
		}
	}
	return nil
}

// colocated counts the distinct addresses among members whose host is
// self's host, self included.
func colocated(ms []Member, self string) int {
	host, _, err := net.SplitHostPort(self)
	if err != nil {
		return 1
	}
	seen := map[string]bool{self: true}
	for _, m := range ms {
		if h, _, err := net.SplitHostPort(m.Address); err == nil && h == host {
			seen[m.Address] = true
		}
	}
	return len(seen)
}
