package kafka

import (
	"context"
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
)

// Install registers the "kafka" source and sink formats with sess.
func Install(sess stream.FormatRegistrar) {
	install(sess, nil)
}

// InstallCluster registers the formats as Install does, with the sources
// of streaming queries made members of cluster c: each reads the
// partitions the table's consumer group assigns to this instance.
func InstallCluster(sess stream.FormatRegistrar, c *Cluster) {
	install(sess, c)
	// Stateful queries cross instances through repartition hops.
	if r, ok := sess.(interface{ SetRepartitioner(stream.Repartitioner) }); ok {
		r.SetRepartitioner(c)
	}
}

func install(sess stream.FormatRegistrar, cluster *Cluster) {
	sess.RegisterSourceFormat("kafka", func(mem memory.Allocator, schema *arrow.Schema, opts map[string]string) (stream.Source, error) {
		o, err := ParseSourceOptions(opts)
		if err != nil {
			return nil, err
		}
		if cluster != nil {
			if o.Subscribe == nil {
				return nil, fmt.Errorf("kafka: cluster %s: a Kafka table reads its topics with the option subscribe in cluster mode (the consumer group assigns the partitions; subscribePattern and assign are not supported)", cluster.Name())
			}
			o.Cluster = cluster
		}
		if c, ok := sess.(dialController); ok {
			o.Control = c.DialControl()
		}
		// A declared source comes back with the schema it reported first
		// (arrowstream.SourceFormat): only that schema is accepted.
		if schema != nil && !schema.Equal(Schema(o.IncludeHeaders)) {
			return nil, errUserSchema
		}
		src, err := NewSource(mem, o)
		if err != nil || cluster == nil || cluster.opts.ListWhileIdle {
			return src, err
		}
		// An idle cluster instance waits on a long-poll fetch instead of
		// listing (cluster_watch.go).
		return newWatchedSource(src), nil
	})
	stream.DeclareSourceOptions(sess, "kafka", SourceOptionKeys())
	sess.RegisterSinkFormat("kafka", func(ctx context.Context, mem memory.Allocator, info stream.SinkInfo) (stream.Sink, error) {
		o, err := ParseSinkOptions(info.Options)
		if err != nil {
			return nil, err
		}
		if c, ok := sess.(dialController); ok {
			o.Control = c.DialControl()
		}
		return NewSink(mem, info.Schema, o)
	})
	stream.DeclareSinkOptions(sess, "kafka", SinkOptionKeys())
}
