package stateful

import (
	"fmt"
	"runtime"
	"runtime/debug"
	"sync"
	"sync/atomic"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// codecPair encodes a partial-state row's key and value.
type codecPair struct{ key, val *rowCodec }

// splitByPartition gathers, for each of n partitions, the rows of recs
// whose key (encoded by codec) hashes to it. The records are owned by the
// caller.
func splitByPartition(mem memory.Allocator, scheme partitioning, codec *rowCodec, recs []arrow.Record, n int) ([][]arrow.Record, error) {
	byPart := make([][]arrow.Record, n)
	idx := make([][]int32, n)
	fail := func(err error) ([][]arrow.Record, error) {
		for _, part := range byPart {
			releaseRecords(part)
		}
		return nil, err
	}
	for _, rec := range recs {
		if err := codec.encode(rec); err != nil {
			return fail(err)
		}
		for p := range idx {
			idx[p] = idx[p][:0]
		}
		for i := 0; i < int(rec.NumRows()); i++ {
			p := scheme.of(codec, i, n)
			idx[p] = append(idx[p], int32(i))
		}
		for p, rows := range idx {
			if len(rows) == 0 {
				continue
			}
			part, err := vector.TakeRecord(mem, rec, rows)
			if err != nil {
				return fail(err)
			}
			byPart[p] = append(byPart[p], part)
		}
	}
	return byPart, nil
}

// parallelMinRows is the epoch size, in rows reaching a stateful
// operator, below which its partitions run one after another on the
// calling goroutine instead of on GOMAXPROCS workers. Handing a partition
// to a worker costs CPU the epoch does not otherwise spend: the
// goroutine's start wakes an idle thread (a futex call), which spins in
// the scheduler before and after its work, and while two threads run,
// the kernel's page-table shootdowns and the first touches of fresh
// memory cost more (a 10K-event Nexmark epoch used 25–40 % less CPU with
// GOMAXPROCS=1 than with 2; docs/performance.md "Fewer thread wake-ups
// per epoch"). An epoch this small is a few ms of partition work at most,
// where the parallel run saves little time; larger ones run in parallel
// for their latency.
const parallelMinRows = 16384

// runPartitions runs work for every partition that has rows: in parallel
// (at most GOMAXPROCS at a time, as Spark runs one task per shuffle
// partition) when they hold parallelMinRows rows or more, else one after
// another on the caller, turning a panic into that partition's error. It
// returns one error slot per partition.
func runPartitions(opID int, byPart [][]arrow.Record, work func(p int) error) []error {
	return runPartitionsAbove(opID, byPart, parallelMinRows, work)
}

// runPartitionsAbove is runPartitions with minRows as the parallel
// threshold (tests force either path).
func runPartitionsAbove(opID int, byPart [][]arrow.Record, minRows int64, work func(p int) error) []error {
	workers := runtime.GOMAXPROCS(0)
	if partitionRows(byPart) < minRows {
		workers = 1
	}
	return runEachPartitionOn(opID, len(byPart), workers, func(p int) bool { return len(byPart[p]) > 0 }, work)
}

// partitionRows is the rows of every partition's records.
func partitionRows(byPart [][]arrow.Record) int64 {
	var n int64
	for _, part := range byPart {
		for _, rec := range part {
			n += rec.NumRows()
		}
	}
	return n
}

// runEachPartition runs work for every partition p < n for which active(p)
// holds, as runPartitions does. The active partitions are listed first
// (active is never called while work runs); then at most GOMAXPROCS workers,
// the calling goroutine one of them, take the next partition in turn. A
// goroutine per partition, most of them parked on a semaphore, made an epoch
// of 200 partitions with a few rows each pay 200 goroutine starts, parks
// and wake-ups: a large share of a small epoch's CPU.
//
// An epoch in which no partition is active (an empty epoch) allocates
// only the error slots; one in which a single partition is (a small one)
// runs it on the caller, without a worker closure, counter or goroutine.
func runEachPartition(opID, n int, active func(p int) bool, work func(p int) error) []error {
	return runEachPartitionOn(opID, n, runtime.GOMAXPROCS(0), active, work)
}

// runEachPartitionOn is runEachPartition with at most maxWorkers workers
// (1: every partition on the caller, in order).
func runEachPartitionOn(opID, n, maxWorkers int, active func(p int) bool, work func(p int) error) []error {
	errs := make([]error, n)
	var parts []int32
	for p := 0; p < n; p++ {
		if active(p) {
			if parts == nil {
				parts = make([]int32, 0, n-p)
			}
			parts = append(parts, int32(p))
		}
	}
	workers := min(maxWorkers, len(parts))
	if workers <= 1 {
		for _, p := range parts {
			runPartition(opID, int(p), errs, work)
		}
		return errs
	}
	var next atomic.Int64
	drain := func() {
		for {
			i := next.Add(1) - 1
			if i >= int64(len(parts)) {
				return
			}
			runPartition(opID, int(parts[i]), errs, work)
		}
	}
	var wg sync.WaitGroup
	for w := 1; w < workers; w++ {
		wg.Add(1)
		go func() {
			defer wg.Done()
			drain()
		}()
	}
	drain()
	wg.Wait()
	return errs
}

// runPartition runs work(p) into errs[p], a panic turned into the
// partition's error.
func runPartition(opID, p int, errs []error, work func(p int) error) {
	defer func() {
		if r := recover(); r != nil {
			errs[p] = fmt.Errorf("arrowstream: state partition %d of operator %d panicked: %v\n%s", p, opID, r, debug.Stack())
		}
	}()
	errs[p] = work(p)
}

// partialStateSpec is the aggregation over partial-state input whose first
// nKeys columns are the grouping keys.
func partialStateSpec(partial *arrow.Schema, nKeys int, aggs []vector.AggregateCall, mode vector.AggMode) vector.AggregateSpec {
	keys := make([]vector.NamedExpr, nKeys)
	for i := range keys {
		name := partial.Field(i).Name
		keys[i] = vector.NamedExpr{Name: name, Expr: &vector.ColumnAt{Index: i, Name: name}}
	}
	return vector.AggregateSpec{GroupBy: keys, Aggregates: aggs, Mode: mode}
}

// finalizePartial turns partial-state records (owned; consumed) into final
// rows with spec in AggFinal mode.
func finalizePartial(mem memory.Allocator, partial *arrow.Schema, spec vector.AggregateSpec, recs []arrow.Record) (vector.Operator, error) {
	scan, err := vector.NewScan(partial, recs...)
	releaseRecords(recs)
	if err != nil {
		return nil, err
	}
	op, err := vector.NewHashAggregate(vector.ForOperator(mem, finalizeAggName), scan, spec)
	if err != nil {
		scan.Close()
		return nil, err
	}
	return op, nil
}
