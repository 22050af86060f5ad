package kafka_test

import (
	"runtime/debug"
	"runtime/metrics"
	"syscall"
	"testing"
)

// BenchmarkKafkaRead reads the benchmark's 200K records (100-byte values,
// 4 partitions, snappy batches) through the source as one epoch per
// iteration, with the heap returned to the OS before each (as a cluster
// instance's large held epoch meets it: debug.FreeOSMemory), and reports
// per record the Go heap allocated (heap-B/rec), the minor page faults
// (faults/rec) and the process's CPU (cpu-ns/rec). The kfake broker runs
// in the process: its fetch responses are counted too, the same for any
// reader.
//
//	go test -run '^$' -bench BenchmarkKafkaRead -benchtime 10x ./arrowstream/source/kafka/
func BenchmarkKafkaRead(b *testing.B) {
	src, start, end := openBenchSource(b, benchCluster(b))
	sourceRead(b, src, start, end) // the kept client connected
	heap := []metrics.Sample{{Name: "/gc/heap/allocs:bytes"}}
	var alloc, faults, cpu, rows int64
	for b.Loop() {
		b.StopTimer()
		debug.FreeOSMemory()
		metrics.Read(heap)
		a0, f0, c0 := heap[0].Value.Uint64(), minorFaults(), cpuTime()
		b.StartTimer()
		rows += sourceRead(b, src, start, end)
		b.StopTimer()
		metrics.Read(heap)
		alloc += int64(heap[0].Value.Uint64() - a0)
		faults += minorFaults() - f0
		cpu += int64(cpuTime() - c0)
		b.StartTimer()
	}
	b.ReportMetric(float64(alloc)/float64(rows), "heap-B/rec")
	b.ReportMetric(float64(faults)/float64(rows), "faults/rec")
	b.ReportMetric(float64(cpu)/float64(rows), "cpu-ns/rec")
}

// minorFaults is the process's minor page faults so far.
func minorFaults() int64 {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return int64(ru.Minflt)
}
