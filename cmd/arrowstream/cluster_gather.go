package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/flight"
	"github.com/apache/arrow/go/v17/arrow/flight/flightsql"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/metadata"

	"github.com/arrowstream/arrowstream/arrowstream/source/kafka"
	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/server"
	"github.com/arrowstream/arrowstream/vector"
)

// clusterLocalHeader, on a Flight SQL request, asks for this instance's
// rows of a cluster table only: what a gathering instance sends its peers
// (and what keeps a gather from recursing).
const clusterLocalHeader = server.ClusterLocalHeader

// gatherWait bounds how long a gather waits for the table's group to be
// described with every member's address (during a rebalance the group
// does not describe its members).
const gatherWait = 30 * time.Second

// clusterCatalog makes each streaming table whose query is a cluster
// member read as the union of every live instance's rows: the local
// memory-sink table plus, through Flight SQL, each other member's local
// rows. It is consulted before the memory-sink catalog; other tables fall
// through.
type clusterCatalog struct {
	c     *kafka.Cluster
	sinks *memsink.Catalog
}

// Table implements plan.Catalog.
func (cc clusterCatalog) Table(name string) (plan.Table, error) {
	if !cc.c.Runs(name) {
		return nil, fmt.Errorf("%w: %s", plan.ErrTableNotFound, name)
	}
	t, err := memsink.PlanCatalog{C: cc.sinks}.Table(name)
	if err != nil {
		return nil, err
	}
	local, ok := t.(plan.BatchTable)
	if !ok {
		return nil, fmt.Errorf("%w: %s", plan.ErrTableNotFound, name)
	}
	return &gatherTable{local: local, name: name, c: cc.c}, nil
}

// gatherTable is a cluster table read across the cluster.
type gatherTable struct {
	local plan.BatchTable
	name  string
	c     *kafka.Cluster
}

func (g *gatherTable) Schema() *arrow.Schema { return g.local.Schema() }
func (g *gatherTable) Streaming() bool       { return false }

// Scan implements plan.BatchTable: the local rows, then every other live
// member's. A request that carries clusterLocalHeader reads the local
// rows only.
func (g *gatherTable) Scan(ctx context.Context, mem memory.Allocator) (vector.Operator, error) {
	if server.ClusterLocal(ctx) {
		return g.local.Scan(ctx, mem)
	}
	all, err := tableAddresses(ctx, g.c, g.name)
	if err != nil {
		return nil, err
	}
	var peers []string
	for _, a := range all {
		if a != g.c.Address() {
			peers = append(peers, a)
		}
	}
	var recs []arrow.Record
	release := func() {
		for _, r := range recs {
			r.Release()
		}
	}
	for _, addr := range peers {
		got, err := fetchPeer(ctx, addr, g.name, mem)
		recs = append(recs, got...)
		if err != nil {
			release()
			return nil, fmt.Errorf("cluster-mode read of %s: rows of the instance at %s: %w", quoteIdent(g.name), addr, err)
		}
	}
	local, err := g.local.Scan(ctx, mem)
	if err != nil {
		release()
		return nil, err
	}
	remote, err := vector.NewScan(g.local.Schema(), recs...)
	release() // the scan retained them
	if err != nil {
		local.Close()
		return nil, fmt.Errorf("cluster-mode read of %s: %w", quoteIdent(g.name), err)
	}
	return vector.NewUnion(mem, local, remote)
}

// tableAddresses returns the Flight SQL addresses of every live member
// of table's group, this instance first, waiting out a rebalance (the
// group describes no addresses then).
func tableAddresses(ctx context.Context, c *kafka.Cluster, table string) ([]string, error) {
	deadline := time.Now().Add(gatherWait)
	for {
		ms, err := c.TableMembers(ctx, table)
		if err != nil {
			return nil, err
		}
		addrs := []string{c.Address()}
		complete := len(ms) > 0
		seen := map[string]bool{c.Address(): true}
		for _, m := range ms {
			if m.Address == "" {
				complete = false
				break
			}
			if !seen[m.Address] {
				seen[m.Address] = true
				addrs = append(addrs, m.Address)
			}
		}
		if complete {
			return addrs, nil
		}
		if time.Now().After(deadline) {
			return nil, fmt.Errorf("cluster-mode read of %s: its consumer group did not settle within %s (a rebalance is under way); try again", quoteIdent(table), gatherWait)
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(100 * time.Millisecond):
		}
	}
}

// fetchPeer reads a member's local rows of table through Flight SQL,
// forwarding the caller's authorization header. The records are the
// caller's (also those returned with an error).
func fetchPeer(ctx context.Context, addr, table string, mem memory.Allocator) ([]arrow.Record, error) {
	out := metadata.Pairs(clusterLocalHeader, "1")
	if md, ok := metadata.FromIncomingContext(ctx); ok {
		for _, v := range md.Get("authorization") {
			out.Append("authorization", v)
		}
	}
	ctx = metadata.NewOutgoingContext(ctx, out)
	client, err := flightsql.NewClientCtx(ctx, addr, nil, nil, grpc.WithTransportCredentials(insecure.NewCredentials()))
	if err != nil {
		return nil, err
	}
	defer client.Close()
	info, err := client.Execute(ctx, "SELECT * FROM "+quoteIdent(table))
	if err != nil {
		return nil, err
	}
	var recs []arrow.Record
	for _, ep := range info.Endpoint {
		stream, err := client.Client.DoGet(ctx, ep.Ticket)
		if err != nil {
			return recs, err
		}
		if mem == nil {
			mem = memory.DefaultAllocator
		}
		rd, err := flight.NewRecordReader(stream, ipc.WithAllocator(mem))
		if err != nil {
			return recs, err
		}
		for rd.Next() {
			r := rd.Record()
			r.Retain()
			recs = append(recs, r)
		}
		err = rd.Err()
		rd.Release()
		if err != nil && !errors.Is(err, context.Canceled) {
			return recs, err
		}
	}
	return recs, nil
}
