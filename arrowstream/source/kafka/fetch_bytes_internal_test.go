package kafka

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestReaderFetchBytesOptions: a reader's consumer fetches 64 KiB by
// default (readerFetchMaxBytes) and what kafka.fetch.max.bytes and
// kafka.max.partition.fetch.bytes say when they are set.
func TestReaderFetchBytesOptions(t *testing.T) {
	for _, c := range []struct {
		name          string
		opts          map[string]string
		total, perPar int32
	}{
		{"default", nil, readerFetchMaxBytes, readerFetchMaxBytes},
		{"both", map[string]string{"kafka.fetch.max.bytes": "52428800", "KAFKA.MAX.PARTITION.FETCH.BYTES": "1048576"}, 50 << 20, 1 << 20},
		// franz-go caps a partition's bound at the whole fetch's.
		{"total only", map[string]string{"kafka.fetch.max.bytes": "4096"}, 4096, 4096},
		// A partition's bound alone raises the whole fetch's to it.
		{"partition only", map[string]string{"kafka.max.partition.fetch.bytes": "8388608"}, 8 << 20, 8 << 20},
	} {
		t.Run(c.name, func(t *testing.T) {
			raw := map[string]string{"kafka.bootstrap.servers": "127.0.0.1:1", "subscribe": "t"}
			for k, v := range c.opts {
				raw[k] = v
			}
			o, err := ParseSourceOptions(raw)
			if err != nil {
				t.Fatal(err)
			}
			s, err := NewSource(memory.NewGoAllocator(), o)
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			cl, err := kgo.NewClient(s.consumerOpts()...)
			if err != nil {
				t.Fatal(err)
			}
			defer cl.Close()
			if got := cl.OptValue(kgo.FetchMaxBytes); got != c.total {
				t.Errorf("fetch max bytes %v, want %d", got, c.total)
			}
			if got := cl.OptValue(kgo.FetchMaxPartitionBytes); got != c.perPar {
				t.Errorf("fetch max partition bytes %v, want %d", got, c.perPar)
			}
		})
	}
}
