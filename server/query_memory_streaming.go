package server

import (
	"fmt"
	"sync"

	"github.com/apache/arrow/go/v17/arrow/memory"
)

// StreamingAllocator gives a streaming query an accounting allocator on
// the server's allocator, bounded by Limits.QueryMemoryBytes and counted
// in the server's memory pool (Limits.ServerMemoryBytes), as a SQL
// query's is: what the query's epochs allocate (operators, the rows its
// table keeps) counts while it lives. Over a limit, the query is stopped
// with the MemoryLimitError (FAILED, RESOURCE_EXHAUSTED). It has the
// shape of arrowstream.StreamingAllocatorFunc:
// session.SetStreamingAllocator(srv.StreamingAllocator).
func (s *Server) StreamingAllocator(name string) (memory.Allocator, func(fail func(error))) {
	a := s.sql.newAllocator()
	a.noPanic = true
	a.streaming = true
	a.label = fmt.Sprintf(streamingQueryLabel, name)
	var mu sync.Mutex
	var failQuery func(error)
	var pending error
	a.cancel = func(cause error) {
		mu.Lock()
		defer mu.Unlock()
		if failQuery == nil {
			pending = cause // over a limit before the query started
			return
		}
		failQuery(cause)
	}
	bind := func(fail func(error)) {
		mu.Lock()
		defer mu.Unlock()
		failQuery = fail
		if pending != nil {
			fail(pending)
		}
	}
	return a, bind
}
