package kafka

import "testing"

// TestRateLimit follows Spark's KafkaMicroBatchStream.rateLimit: shares in
// proportion to the backlog, floored, a share below one rounded up.
func TestRateLimit(t *testing.T) {
	cases := []struct {
		name        string
		limit       int64
		from, until PartitionOffsets
		want        string
	}{
		{"under the limit", 100, PartitionOffsets{"t": {0: 0, 1: 5}}, PartitionOffsets{"t": {0: 10, 1: 20}}, `{"t":{"0":10,"1":20}}`},
		{"proportional", 30, PartitionOffsets{"t": {0: 0, 1: 0}}, PartitionOffsets{"t": {0: 100, 1: 200}}, `{"t":{"0":10,"1":20}}`},
		{"floored", 10, PartitionOffsets{"t": {0: 0, 1: 0, 2: 0}}, PartitionOffsets{"t": {0: 100, 1: 100, 2: 100}}, `{"t":{"0":3,"1":3,"2":3}}`},
		{"small partition not starved", 10, PartitionOffsets{"t": {0: 0, 1: 0}}, PartitionOffsets{"t": {0: 1000, 1: 1}}, `{"t":{"0":9,"1":1}}`},
		{"caught-up partition", 5, PartitionOffsets{"a": {0: 7}, "b": {0: 0}}, PartitionOffsets{"a": {0: 7}, "b": {0: 50}}, `{"a":{"0":7},"b":{"0":5}}`},
		{"several topics", 4, PartitionOffsets{"a": {0: 0}, "b": {0: 10}}, PartitionOffsets{"a": {0: 40}, "b": {0: 50}}, `{"a":{"0":2},"b":{"0":12}}`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := string(rateLimit(c.limit, c.from, c.until).Encode()); got != c.want {
				t.Fatalf("got %s, want %s", got, c.want)
			}
		})
	}
}
