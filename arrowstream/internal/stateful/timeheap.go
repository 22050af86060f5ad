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
