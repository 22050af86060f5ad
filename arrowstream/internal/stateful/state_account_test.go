package stateful

import (
	"encoding/binary"
	"errors"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
)

// limitedReserver is a vector.MemoryReserver with a limit, as the
// server's query allocator is (an Arrow allocator besides).
type limitedReserver struct {
	memory.Allocator
	limit int64
	held  atomic.Int64
	ops   []string // operators labelled (ForOperator)
}

var errOverLimit = errors.New("over the limit")

func (r *limitedReserver) Reserve(n int64) error {
	if v := r.held.Add(n); n > 0 && v > r.limit {
		r.held.Add(-n)
		return errOverLimit
	}
	return nil
}

// MemoryLimit tells the limit, as the server's query allocator does
// (memoryLimiter).
func (r *limitedReserver) MemoryLimit() int64 { return r.limit }

func (r *limitedReserver) ForOperator(name string) memory.Allocator {
	r.ops = append(r.ops, name)
	return r
}

// TestStateAccountReserves: an account grows and shrinks its
// reservation to the estimate it is given, through the allocator
// labelled with the state's name; a refusal leaves the reservation as it
// was and names the state; release returns everything.
func TestStateAccountReserves(t *testing.T) {
	r := &limitedReserver{Allocator: memory.NewGoAllocator(), limit: 1000}
	a := newStateAccount(r, "stream-stream join state")
	if len(r.ops) != 1 || r.ops[0] != "stream-stream join state" {
		t.Fatalf("labelled %v, want the state's name", r.ops)
	}
	for _, n := range []int64{100, 900, 300, 1000, 0, 700} {
		if err := a.set(n); err != nil {
			t.Fatalf("set(%d): %v", n, err)
		}
		if a.bytes() != n || r.held.Load() != n {
			t.Fatalf("set(%d): account %d, reserver %d", n, a.bytes(), r.held.Load())
		}
	}
	err := a.set(1001)
	if !errors.Is(err, errOverLimit) || !strings.Contains(err.Error(), "stream-stream join state would grow to 1001 bytes") {
		t.Fatalf("set(1001) = %v, want the limit's error naming the state", err)
	}
	if a.bytes() != 700 || r.held.Load() != 700 {
		t.Fatalf("after a refusal: account %d, reserver %d, want 700", a.bytes(), r.held.Load())
	}
	a.release()
	if a.bytes() != 0 || r.held.Load() != 0 {
		t.Fatalf("after release: account %d, reserver %d", a.bytes(), r.held.Load())
	}
	// Over an allocator that enforces nothing the account only counts.
	plain := newStateAccount(memory.NewGoAllocator(), "x")
	if err := plain.set(1 << 40); err != nil || plain.bytes() != 1<<40 {
		t.Fatalf("unlimited: %v, %d", err, plain.bytes())
	}
}

// heapGrowth returns the live heap bytes build leaves (after a full
// collection), keeping what it returns alive until measured.
func heapGrowth(build func() any) int64 {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	keep := build()
	runtime.GC()
	runtime.ReadMemStats(&after)
	runtime.KeepAlive(keep)
	return int64(after.HeapAlloc) - int64(before.HeapAlloc)
}

// estimateFactor bounds estimate/measured (and its inverse) in
// TestStateEstimateTracksHeap: the estimates count structures by
// constants per entry, not the allocator's size classes and map load.
const estimateFactor = 2.0

// TestStateEstimateTracksHeap: the maintained estimates the accounts
// reserve (dedup keys, flatMapGroupsWithState entries, a join side's
// batches and key index) are within estimateFactor of the heap the
// structures really hold, measured with runtime.ReadMemStats for a large
// state (100K keys; ARROWSTREAM_STATE_ESTIMATE_KEYS sets another count).
func TestStateEstimateTracksHeap(t *testing.T) {
	n := 100_000 // ARROWSTREAM_STATE_ESTIMATE_KEYS raises it (400K: the run in the docs)
	if v, err := strconv.Atoi(os.Getenv("ARROWSTREAM_STATE_ESTIMATE_KEYS")); err == nil && v > 0 {
		n = v
	}
	key := func(i int) []byte {
		var b [12]byte
		binary.LittleEndian.PutUint64(b[:], uint64(i)*0x9e3779b97f4a7c15)
		return b[:10]
	}
	cases := []struct {
		name  string
		build func() (any, int64) // the structure and its estimate
	}{
		{"dedup", func() (any, int64) {
			p := &dedupPart{seen: map[string]int64{}}
			for i := range n {
				p.add(key(i), int64(i), true)
			}
			return p, p.bytes
		}},
		{"dedup_no_eviction", func() (any, int64) {
			p := &dedupPart{seen: map[string]int64{}}
			for i := range n {
				p.add(key(i), 0, false)
			}
			return p, p.bytes
		}},
		{"flatMapGroupsWithState", func() (any, int64) {
			l := &groupLive{parts: []groupLivePart{{keys: map[string]*groupEntry{}}}}
			value := make([]byte, 24)
			for i := range n {
				l.parts[0].set(string(key(i)), true, int64(i), value)
			}
			return l, l.liveBytes()
		}},
		{"join_side", func() (any, int64) {
			side := newJoinSideLive[uint64]()
			mem := memory.NewGoAllocator()
			const batch = 4096
			for from := 0; from < n; from += batch {
				m := min(batch, n-from)
				keys, vs := make([]uint64, m), make([]int64, m)
				for i := range keys {
					keys[i] = uint64(from+i) * 0x9e3779b97f4a7c15
					vs[i] = int64(from + i)
				}
				side.add(neverEvictBatch(mem, uint64(from), keys, make([]bool, m), vs))
			}
			return side, side.bytes
		}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var est int64
			measured := heapGrowth(func() any {
				s, e := tc.build()
				est = e
				return s
			})
			ratio := float64(est) / float64(measured)
			t.Logf("%d keys: estimate %d bytes, heap %d bytes (estimate/heap %.2f)", n, est, measured, ratio)
			if measured <= 0 || ratio > estimateFactor || ratio < 1/estimateFactor {
				t.Errorf("estimate %d bytes against %d measured: off by more than %.1f×", est, measured, estimateFactor)
			}
		})
	}
}

// TestOperatorsReportReservedState: an operator's progress reports what
// its account holds (customMetrics stateHeapBytesReserved), and Close
// returns its reservation.
func TestOperatorsReportReservedState(t *testing.T) {
	r := &limitedReserver{Allocator: memory.NewGoAllocator(), limit: 1 << 40}
	g := &statefulGroupState{acct: newStateAccount(r, "flatMapGroupsWithState state")}
	g.live = &groupLive{parts: []groupLivePart{{keys: map[string]*groupEntry{}}}}
	for i := range 1000 {
		g.live.parts[0].set(fmt.Sprint(i), true, stream.NoTimeoutSet, []byte("state"))
	}
	if err := g.acct.set(g.live.liveBytes()); err != nil {
		t.Fatal(err)
	}
	g.Committed(StateCommit{})
	got := g.Report()
	if got.CustomMetrics[heapMetric] != g.live.liveBytes() || got.MemoryUsedBytes < got.CustomMetrics[heapMetric] {
		t.Fatalf("progress memoryUsedBytes %d, %s %d; the live state holds %d", got.MemoryUsedBytes, heapMetric, got.CustomMetrics[heapMetric], g.live.liveBytes())
	}
	g.Close()
	if r.held.Load() != 0 {
		t.Fatalf("after Close %d bytes stay reserved", r.held.Load())
	}
}

// BenchmarkDedupLiveAccounted measures a dedup partition taking 4096 new
// keys per batch, with and without the account's update after each
// batch (the hook the operator runs once per epoch, per batch here to
// bound its cost from above) and the growth meter noted after every key
// (as the operator's partition loop does since session 13).
func BenchmarkDedupLiveAccounted(b *testing.B) {
	keys := make([][]byte, 4096)
	for i := range keys {
		keys[i] = binary.LittleEndian.AppendUint64(nil, uint64(i)*0x9e3779b97f4a7c15)
	}
	for _, accounted := range []bool{false, true} {
		b.Run(fmt.Sprintf("accounted=%v", accounted), func(b *testing.B) {
			r := &limitedReserver{Allocator: memory.NewGoAllocator(), limit: 1 << 50}
			a := newStateAccount(r, "deduplication state")
			l := &dedupLive{parts: make([]dedupPart, 1)}
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				if i%64 == 0 {
					l.parts[0] = dedupPart{seen: make(map[string]int64, len(keys))}
					if accounted {
						a.release()
					}
				}
				p := &l.parts[0]
				meter := newGrowthMeter(&a, p.bytes, 1)
				for j, k := range keys {
					k[0] = byte(i)
					k[1] = byte(i >> 8)
					p.add(k, int64(j), false)
					if accounted {
						if err := meter.note(p.bytes); err != nil {
							b.Fatal(err)
						}
					}
				}
				if accounted {
					if err := a.set(l.bytes()); err != nil {
						b.Fatal(err)
					}
				}
			}
		})
	}
}

// BenchmarkJoinLiveHeap measures the join's per-epoch account update:
// the sum of every partition's two sides (200 partitions).
func BenchmarkJoinLiveHeap(b *testing.B) {
	s := &statefulJoin{parts: make([]*joinPart, 200)}
	for p := range s.parts {
		lp := &joinLivePart[uint64]{}
		lp.sides[0], lp.sides[1] = newJoinSideLive[uint64](), newJoinSideLive[uint64]()
		s.parts[p] = &joinPart{words: lp}
	}
	r := &limitedReserver{Allocator: memory.NewGoAllocator(), limit: 1 << 50}
	s.acct = newStateAccount(r, "stream-stream join state")
	var n int64
	for b.Loop() {
		n++
		s.parts[n%200].words.sides[0].bytes = n
		if err := s.acct.set(s.liveHeap()); err != nil {
			b.Fatal(err)
		}
	}
}
