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
