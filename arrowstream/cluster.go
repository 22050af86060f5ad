package arrowstream

import (
	"fmt"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
)

// clusterRefusal is the error for a streaming source that a session in
// cluster mode cannot run: every instance would read all of it. what
// names the source (its table or format).
func clusterRefusal(cluster, what string, src Source) error {
	if ps, ok := src.(stream.PartitionedSource); ok && ps.ClusterPartitioned() {
		return nil
	}
	return fmt.Errorf("arrowstream: cluster mode (cluster %q): the streaming source %s is not partitioned across the cluster's instances: every instance would read all of it, so the union of their tables would hold its rows once per instance; in cluster mode a streaming table reads Kafka topics (format kafka with subscribe), or run it on a single instance without --cluster (docs/cluster.md)", cluster, what)
}

// clusterStateCheck refuses a stateful streaming query in cluster mode
// when the session has no repartition hop (SetRepartitioner; the Kafka
// package's InstallCluster installs one): each instance would aggregate
// (deduplicate, join) only the rows of its own partitions, and a key whose
// rows land in partitions of several instances would be counted once per
// instance.
func (s *Session) clusterStateCheck(query string, stateful bool) error {
	if s.cluster == "" || !stateful {
		return nil
	}
	return fmt.Errorf("arrowstream: cluster mode (cluster %q): streaming query %s keeps state (an aggregation, deduplication, stream-stream join or flatMapGroupsWithState); each instance would see only its own partitions' rows, and this session has no repartition hop to move keyed rows between instances (install the cluster with kafka.InstallCluster; docs/cluster.md)", s.cluster, query)
}

// clusterConfSource is a cluster source that reads the query's settings
// (the Kafka input's arrowstream.cluster.batchHold).
type clusterConfSource interface {
	SetClusterConf(conf map[string]string) error
}

// clusterSourceConf gives a query's sources its settings before it
// starts; a setting a source cannot take refuses the query.
func clusterSourceConf(conf map[string]string, sources []stream.Source) error {
	for _, src := range sources {
		if cs, ok := src.(clusterConfSource); ok {
			if err := cs.SetClusterConf(conf); err != nil {
				return fmt.Errorf("arrowstream: %w", err)
			}
		}
	}
	return nil
}
