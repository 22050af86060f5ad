package stateful

// timed is a value and its event time (µs).
type timed[T any] struct {
	at int64
	v  T
}

// timeHeap is a min-heap of values by event time: the ordered index from
// which eviction pops what is due and touches nothing else (docs/design.md,
// ordered eviction). Typed, not container/heap, so that a push boxes
// nothing; the live aggregation, deduplication and session window indexes
// share it.
type timeHeap[T any] []timed[T]

// push adds v at time at.
func (h *timeHeap[T]) push(at int64, v T) {
	*h = append(*h, timed[T]{at: at, v: v})
	x := *h
	for i := len(x) - 1; i > 0; {
		p := (i - 1) / 2
		if x[p].at <= x[i].at {
			break
		}
		x[p], x[i] = x[i], x[p]
		i = p
	}
}

// pop removes and returns the earliest entry; the heap must not be empty.
func (h *timeHeap[T]) pop() timed[T] {
	x := *h
	top := x[0]
	last := len(x) - 1
	x[0] = x[last]
	x[last] = timed[T]{} // drop references held by the value
	x = x[:last]
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(x) && x[l].at < x[m].at {
			m = l
		}
		if r < len(x) && x[r].at < x[m].at {
			m = r
		}
		if m == i {
			break
		}
		x[m], x[i] = x[i], x[m]
		i = m
	}
	*h = x
	return top
}

// due reports whether the earliest entry is at or below limit.
func (h timeHeap[T]) due(limit int64) bool { return len(h) > 0 && h[0].at <= limit }

// chunkedHeapLen is the entries of one chunk of a chunkedTimeHeap (8
// KiB of the session index's 32-byte entries).
const (
	chunkedHeapShift = 8
	chunkedHeapLen   = 1 << chunkedHeapShift
)

// chunkedTimeHeap is a timeHeap whose entries live in fixed chunks that
// are never copied nor moved: an index that grows with the state (the
// session window's end index grows through a run) takes one chunk of
// fresh memory at a time instead of a doubled array and a copy of the
// old one each time it outgrows it (every allocated byte is a page
// first touched, at 13–17 µs a page on these machines: PERF_NOTES.md).
// Chunks emptied by pops are kept for the pushes that follow.
type chunkedTimeHeap[T any] struct {
	chunks [][]timed[T]
	n      int
}

func (h *chunkedTimeHeap[T]) at(i int) *timed[T] {
	return &h.chunks[i>>chunkedHeapShift][i&(chunkedHeapLen-1)]
}

// len is the number of entries.
func (h *chunkedTimeHeap[T]) len() int { return h.n }

// capacity is the number of entries its chunks hold.
func (h *chunkedTimeHeap[T]) capacity() int { return len(h.chunks) * chunkedHeapLen }

// push adds v at time at.
func (h *chunkedTimeHeap[T]) push(at int64, v T) {
	if h.n == h.capacity() {
		h.chunks = append(h.chunks, make([]timed[T], chunkedHeapLen))
	}
	i := h.n
	h.n++
	*h.at(i) = timed[T]{at: at, v: v}
	for i > 0 {
		p := (i - 1) / 2
		x, y := h.at(p), h.at(i)
		if x.at <= y.at {
			break
		}
		*x, *y = *y, *x
		i = p
	}
}

// pop removes and returns the earliest entry; the heap must not be empty.
func (h *chunkedTimeHeap[T]) pop() timed[T] {
	top := *h.at(0)
	h.n--
	last := h.at(h.n)
	*h.at(0) = *last
	*last = timed[T]{} // drop references held by the value
	for i := 0; ; {
		l, r, m := 2*i+1, 2*i+2, i
		if l < h.n && h.at(l).at < h.at(m).at {
			m = l
		}
		if r < h.n && h.at(r).at < h.at(m).at {
			m = r
		}
		if m == i {
			break
		}
		x, y := h.at(m), h.at(i)
		*x, *y = *y, *x
		i = m
	}
	return top
}

// due reports whether the earliest entry is at or below limit.
func (h *chunkedTimeHeap[T]) due(limit int64) bool { return h.n > 0 && h.at(0).at <= limit }
