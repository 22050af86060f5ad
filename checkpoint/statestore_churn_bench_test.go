//go:build unix

package checkpoint

import (
	"context"
	"encoding/binary"
	"fmt"
	"syscall"
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// BenchmarkChurningStateSnapshots commits 200 changelog epochs shaped
// like a tumbling-window aggregation's: each upserts 5000 keys of a new
// window and deletes the 5000 of the window before (the live state stays
// one window, every key dies), with background maintenance waited for
// after every epoch. Every snapshot of such a state folds (its chain is
// mostly dead entries). The timer runs over the commits and the
// maintenance only (not the logging); cpu-ns/change is the process's CPU
// time (getrusage: the maintenance runs on other goroutines) over those
// same spans, divided by the upserts and deletes logged: on a shared
// machine, wall time measures the neighbours.
//
//	go test -run XXX -bench ChurningStateSnapshots -benchtime 3x -count 3 ./checkpoint/
func BenchmarkChurningStateSnapshots(b *testing.B) {
	const epochs, perEpoch = 200, 5000
	ctx := context.Background()
	var val [24]byte
	key := func(window, k int) []byte { return fmt.Appendf(nil, "w%06d-k%05d", window, k) }
	var cpu time.Duration
	for b.Loop() {
		p, err := OpenStorePartition(b.TempDir(), &Writer{NoSync: true}, StoreOptions{Allocator: memory.NewGoAllocator()})
		if err != nil {
			b.Fatal(err)
		}
		for e := range epochs {
			b.StopTimer()
			s, err := p.Begin(int64(e))
			if err != nil {
				b.Fatal(err)
			}
			cw := s.(ChangelogWriter)
			for k := range perEpoch {
				binary.LittleEndian.PutUint64(val[:], uint64(e*perEpoch+k))
				cw.LogUpsert(key(e, k), val[:])
				if e > 0 {
					cw.LogDelete(key(e-1, k))
				}
			}
			cw.SetLiveRows(perEpoch)
			b.StartTimer()
			start := processCPU(b)
			if _, err := s.Commit(ctx); err != nil {
				b.Fatal(err)
			}
			if err := p.WaitMaintenance(); err != nil {
				b.Fatal(err)
			}
			cpu += processCPU(b) - start
		}
		if err := p.Close(); err != nil {
			b.Fatal(err)
		}
	}
	changes := float64(b.N) * float64(epochs*perEpoch*2-perEpoch)
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/changes, "ns/change")
	b.ReportMetric(float64(cpu.Nanoseconds())/changes, "cpu-ns/change")
}

// processCPU is the process's user and system CPU time so far.
func processCPU(b *testing.B) time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		b.Fatal(err)
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}
