package arrowstream

import "github.com/apache/arrow/go/v17/arrow/memory"

// StreamingAllocatorFunc gives a streaming query its own allocator (a
// server's accounting allocator, so that its memory limits bound the
// query's epochs): mem serves the query's operators, state and output.
// bind is called once the query has started, with fail, which stops the
// query as failed with an error (StreamingQuery.Fail, run asynchronously):
// the allocator's owner calls fail when the query breaks a limit.
type StreamingAllocatorFunc func(queryName string) (mem memory.Allocator, bind func(fail func(error)))

// SetStreamingAllocator makes every streaming query started after it run
// on an allocator from f (nil: the session's allocator, the default).
func (s *Session) SetStreamingAllocator(f StreamingAllocatorFunc) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.streamAlloc = f
}

// queryAllocator returns the allocator of a new streaming query and the
// function to bind its failure to (nil without SetStreamingAllocator).
func (s *Session) queryAllocator(name string) (memory.Allocator, func(fail func(error))) {
	s.mu.Lock()
	f := s.streamAlloc
	s.mu.Unlock()
	if f == nil {
		return s.mem, nil
	}
	mem, bind := f(name)
	if mem == nil {
		mem = s.mem
	}
	return mem, bind
}
