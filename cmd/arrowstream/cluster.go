package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"log/slog"
	"net"
	"strings"
	"time"

	"github.com/arrowstream/arrowstream/arrowstream/source/kafka"
	"github.com/arrowstream/arrowstream/server"
)

// clusterFlags are serve's cluster-mode flags (docs/cluster.md).
type clusterFlags struct {
	brokers        string
	name           string
	advertise      string
	sessionTimeout time.Duration
	hopMaxDelay    time.Duration
}

func addClusterFlags(fs *flag.FlagSet) *clusterFlags {
	c := &clusterFlags{}
	fs.StringVar(&c.brokers, "cluster", "", "cluster mode: Kafka bootstrap `brokers` (host:port,...) holding the consumer group of each streaming table;\ninstances with the same --cluster-name share every streaming table that reads Kafka (docs/cluster.md)")
	fs.StringVar(&c.name, "cluster-name", "", "cluster mode: the cluster's `name` (a table's consumer group is <name>-<table>)")
	fs.StringVar(&c.advertise, "cluster-advertise", "", "cluster mode: the Flight SQL `address` other instances and clients reach this one at (default: --addr)")
	fs.DurationVar(&c.sessionTimeout, "cluster-session-timeout", 10*time.Second, "cluster mode: how long a silent instance keeps its partitions before the others take them over")
	fs.DurationVar(&c.hopMaxDelay, "cluster-hop-max-delay", kafka.DefaultHopPaceMaxDelay, "cluster mode: how long a repartition hop's downstream epoch may wait for this instance's upstream commit, so that it reads every instance's writes of a round at once (0: no waiting)")
	return c
}

// enabled reports whether cluster mode was asked for.
func (c *clusterFlags) enabled() bool { return c != nil && (c.brokers != "" || c.name != "") }

// validate checks the cluster flags against the Flight SQL address.
func (c *clusterFlags) validate(flightAddr string) error {
	if !c.enabled() {
		return nil
	}
	if c.brokers == "" || c.name == "" {
		return errors.New("--cluster and --cluster-name go together")
	}
	if c.sessionTimeout <= 0 {
		return errors.New("--cluster-session-timeout must be positive")
	}
	if c.hopMaxDelay < 0 {
		return errors.New("--cluster-hop-max-delay must not be negative (0: no waiting)")
	}
	addr := c.address(flightAddr)
	if addr == "" {
		return errors.New("cluster mode needs a Flight SQL address (--addr or --cluster-advertise): the other instances gather this one's partitions through it")
	}
	host, port, err := net.SplitHostPort(addr)
	if err != nil {
		return fmt.Errorf("--cluster-advertise %q: %w", addr, err)
	}
	if port == "0" || host == "" || host == "0.0.0.0" || host == "::" {
		return fmt.Errorf("cluster mode: the advertised Flight SQL address %q must name a host and a fixed port others can reach (set --addr host:port or --cluster-advertise)", addr)
	}
	return nil
}

func (c *clusterFlags) address(flightAddr string) string {
	if c.advertise != "" {
		return c.advertise
	}
	return flightAddr
}

// membership returns the instance's cluster membership (nil without
// cluster mode).
func (c *clusterFlags) membership(flightAddr string, logger *slog.Logger) (*kafka.Cluster, error) {
	if !c.enabled() {
		return nil, nil
	}
	var brokers []string
	for _, b := range strings.Split(c.brokers, ",") {
		if b = strings.TrimSpace(b); b != "" {
			brokers = append(brokers, b)
		}
	}
	pace := c.hopMaxDelay
	if pace == 0 {
		pace = -1 // no pacing (ClusterOptions' 0 is the default)
	}
	return kafka.NewCluster(kafka.ClusterOptions{Name: c.name, Brokers: brokers, Address: c.address(flightAddr),
		SessionTimeout: c.sessionTimeout, HopPaceMaxDelay: pace, Logger: logger})
}

// clusterLister presents the membership to system.cluster_members.
type clusterLister struct{ c *kafka.Cluster }

func (l clusterLister) ClusterMembers(ctx context.Context) ([]server.ClusterMember, error) {
	ms, err := l.c.Members(ctx)
	if err != nil {
		return nil, err
	}
	out := make([]server.ClusterMember, len(ms))
	for i, m := range ms {
		out[i] = server.ClusterMember{Table: m.Table, Group: m.Group, MemberID: m.MemberID, Address: m.Address,
			ClientHost: m.ClientHost, Partitions: m.Partitions, Self: m.Self}
	}
	return out, nil
}

// ClusterRebalances implements server.ClusterRebalanceLister.
func (l clusterLister) ClusterRebalances(context.Context) ([]server.ClusterRebalance, error) {
	rs := l.c.Rebalances()
	out := make([]server.ClusterRebalance, len(rs))
	for i, r := range rs {
		out[i] = server.ClusterRebalance{Table: r.Table, Group: r.Group, Start: r.Start, Generation: r.Generation,
			Assigned: r.Assigned, Revoked: r.Revoked, Lost: r.Lost, Owned: r.Owned, Paused: r.Paused, Resumed: r.Resumed}
	}
	return out, nil
}

// TableLocations implements server.ClusterLocator.
func (l clusterLister) TableLocations(ctx context.Context, table string) ([]string, bool, error) {
	if !l.c.Runs(table) {
		return nil, false, nil
	}
	addrs, err := tableAddresses(ctx, l.c, table)
	return addrs, err == nil, err
}
