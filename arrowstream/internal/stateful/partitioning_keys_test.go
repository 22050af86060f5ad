package stateful

import (
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/vector"
)

// TestHashOnlyKeys: with stream.ConfClusterStatePartitionKeys the state
// partition of a key is the hop's: Murmur3 of the listed key columns only
// (here the string key, not the window), whatever the other columns hold;
// an empty list puts every key in partition 0; bad lists are refused.
func TestHashOnlyKeys(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{{Name: "w", Type: vector.Timestamp, Nullable: true}, {Name: "u", Type: vector.String, Nullable: true}}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	us := []string{"a", "b", "c", "a", "b", "zz", "", "c"}
	for i, u := range us {
		b.Field(0).(*array.TimestampBuilder).Append(arrow.Timestamp(i * 1_000_000))
		b.Field(1).(*array.StringBuilder).Append(u)
	}
	rec := b.NewRecord()
	defer rec.Release()

	// The hop's partition of each row: Murmur3 of u alone.
	want := make([]int32, len(us))
	if err := vector.HashRows([]arrow.Array{rec.Column(1)}, want); err != nil {
		t.Fatal(err)
	}
	c, err := newRowCodec(mem, schema, []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := c.hashOnlyFrom(map[string]string{stream.ConfClusterStatePartitionKeys: "1"}); err != nil {
		t.Fatal(err)
	}
	if err := c.encode(rec); err != nil {
		t.Fatal(err)
	}
	const n = 6
	for i := range us {
		hop := ((want[i] % n) + n) % n
		if got := partitionMurmur3.of(c, i, n); got != int(hop) {
			t.Errorf("row %d (u %q): state partition %d, hop partition %d", i, us[i], got, hop)
		}
	}
	// Rows of one u share a partition although their windows differ.
	if partitionMurmur3.of(c, 0, n) != partitionMurmur3.of(c, 3, n) {
		t.Errorf("u %q in two partitions", us[0])
	}

	// No hashed key (a global or window-only aggregation): partition 0.
	g, err := newRowCodec(mem, schema, []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := g.hashOnlyFrom(map[string]string{stream.ConfClusterStatePartitionKeys: ""}); err != nil {
		t.Fatal(err)
	}
	if err := g.encode(rec); err != nil {
		t.Fatal(err)
	}
	for i := range us {
		if p := partitionMurmur3.of(g, i, n); p != 0 {
			t.Errorf("row %d without hashed keys: partition %d, want 0", i, p)
		}
	}

	// Without the setting every key column is hashed, as before.
	a, err := newRowCodec(mem, schema, []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := a.hashOnlyFrom(map[string]string{}); err != nil || a.hashKeys != nil {
		t.Fatalf("no setting: err %v, hash keys %v", err, a.hashKeys)
	}

	for _, bad := range []string{"2", "-1", "x", "0,,1"} {
		if err := a.hashOnlyFrom(map[string]string{stream.ConfClusterStatePartitionKeys: bad}); err == nil {
			t.Errorf("%s = %q: accepted", stream.ConfClusterStatePartitionKeys, bad)
		}
	}
}
