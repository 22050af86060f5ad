package checkpoint

import (
	"context"
	"encoding/binary"
	"fmt"
	"path/filepath"
	"testing"
)

// BenchmarkChangelogEpoch is one epoch of a changelog operator under
// group commit: rows upserts (16-byte keys, 24-byte values) logged over
// two partitions, encoded and appended to the state log: in state/_log
// (rows=N, a checkpoint of the older layout) and in the query's epoch log
// (epochlog/rows=N, what a new query writes). ns/op is per epoch;
// allocs/op shows what the changelog path allocates per epoch; cpu-ns/op
// is the process's CPU time per epoch.
func BenchmarkChangelogEpoch(b *testing.B) {
	for _, rows := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("rows=%d", rows), func(b *testing.B) { changelogEpoch(b, rows, false) })
	}
	for _, rows := range []int{1000, 10000, 100000} {
		b.Run(fmt.Sprintf("epochlog/rows=%d", rows), func(b *testing.B) { changelogEpoch(b, rows, true) })
	}
}

func changelogEpoch(b *testing.B, rows int, inEpochLog bool) {
	root := b.TempDir()
	w := &Writer{NoSync: true}
	prov := NewMemoryProvider(w, StoreOptions{MinDeltasForSnapshot: 1 << 30, MaxDeltasForSnapshot: 1 << 30, MinVersionsToRetain: 4})
	var ep *SegmentLog
	defer func() {
		prov.Close()
		if ep != nil {
			ep.Close()
		}
	}()
	stateDir := filepath.Join(root, "state")
	if inEpochLog {
		var err error
		if ep, err = OpenSegmentLog(filepath.Join(root, EpochLogDir), w, true); err != nil {
			b.Fatal(err)
		}
		l, err := OpenQueryStateLog(stateDir, ep, w)
		if err != nil {
			b.Fatal(err)
		}
		if err := prov.UseStateLog(stateDir, l); err != nil {
			b.Fatal(err)
		}
	} else if err := prov.OpenStateLog(stateDir); err != nil {
		b.Fatal(err)
	}
	var parts [2]StatePartition
	for i := range parts {
		p, err := prov.OpenPartition(filepath.Join(root, "state", "0", fmt.Sprint(i)))
		if err != nil {
			b.Fatal(err)
		}
		parts[i] = p
	}
	key, val := make([]byte, 16), make([]byte, 24)
	stores := make([]StateStore, len(parts))
	b.SetBytes(int64(rows * (len(key) + len(val))))
	b.ReportAllocs()
	b.ResetTimer()
	cpu0 := processCPU(b)
	for v := 0; v < b.N; v++ {
		for i, p := range parts {
			st, err := p.Begin(int64(v))
			if err != nil {
				b.Fatal(err)
			}
			stores[i] = st
		}
		for r := 0; r < rows; r++ {
			binary.LittleEndian.PutUint64(key, uint64(r))
			binary.LittleEndian.PutUint64(val, uint64(v+r))
			stores[r%2].(ChangelogWriter).LogUpsert(key, val)
		}
		for _, st := range stores {
			st.(ChangelogWriter).SetLiveRows(int64(rows / 2))
		}
		if err := prov.CommitGroup(context.Background(), stores); err != nil {
			b.Fatal(err)
		}
		if ep != nil {
			// The engine's epoch: its commit record follows.
			if err := ep.Flush(); err != nil {
				b.Fatal(err)
			}
		}
	}
	// CPU per epoch: on a loaded machine wall time says more about the
	// load than about the commit.
	b.ReportMetric(float64(processCPU(b)-cpu0)/float64(b.N), "cpu-ns/op")
}
