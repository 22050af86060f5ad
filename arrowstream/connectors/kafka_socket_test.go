package connectors_test

import (
	"strings"
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/arrowstream/connectors"
)

// TestInstallAllKafkaSocket: the kafka and socket formats are installed,
// check their options when a table is declared, and do not connect yet.
func TestInstallAllKafkaSocket(t *testing.T) {
	s := arrowstream.NewSession(arrowstream.SessionOptions{})
	connectors.InstallAll(s)
	// Nothing listens on these ports: declaring a table must not connect.
	if err := s.RegisterSource("k", "kafka", nil, map[string]string{"kafka.bootstrap.servers": "127.0.0.1:1", "subscribe": "t"}); err != nil {
		t.Fatal(err)
	}
	if err := s.RegisterSource("l", "socket", nil, map[string]string{"host": "127.0.0.1", "port": "1", "includeTimestamp": "true"}); err != nil {
		t.Fatal(err)
	}
	if got := s.ReadStream("k").Schema().NumFields(); got != 7 {
		t.Fatalf("kafka table has %d columns", got)
	}
	if got := s.ReadStream("l").Schema().NumFields(); got != 2 {
		t.Fatalf("socket table has %d columns", got)
	}
	err := s.RegisterSource("bad", "kafka", nil, map[string]string{"subscribe": "t"})
	if err == nil || !strings.Contains(err.Error(), "table bad") || !strings.Contains(err.Error(), "kafka.bootstrap.servers") {
		t.Fatalf("error %v", err)
	}
}
