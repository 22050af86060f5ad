package vector

import "sync"

// asyncUnmapBytes is the smallest mapping unmapped off the caller's
// goroutine. Unmapping costs the kernel about 0.1 ms of CPU per resident
// megabyte (measured: 13–24 ms for 160 MB), spent in one system call that
// cannot look at a context: a window operator over one partition of 20M
// rows spent 35–100 ms of CPU releasing its buffers in its last Next, and
// as long before it returned a cancel. Smaller mappings go at once.
const asyncUnmapBytes = 4 << 20

// unmapper unmaps large mappings on a goroutine of its own, so that the
// operator (or query) that frees them returns at once; the memory leaves
// the resident set moments later instead of before Free returns. The
// goroutine runs only while mappings are queued. The zero value is ready.
type unmapper struct {
	mu      sync.Mutex
	queue   [][]byte
	running bool
	idle    *sync.Cond // signalled when the goroutine stops (on mu)
}

// unmap returns mapping b to the OS: at once if it is small, else queued
// for the goroutine. b must not be used after.
func (u *unmapper) unmap(b []byte) {
	if len(b) < asyncUnmapBytes {
		sysUnmap(b)
		return
	}
	u.mu.Lock()
	u.queue = append(u.queue, b)
	start := !u.running
	u.running = true
	u.mu.Unlock()
	if start {
		go u.loop()
	}
}

func (u *unmapper) loop() {
	for {
		u.mu.Lock()
		if len(u.queue) == 0 {
			u.running = false
			if u.idle != nil {
				u.idle.Broadcast()
			}
			u.mu.Unlock()
			return
		}
		b := u.queue[len(u.queue)-1]
		u.queue[len(u.queue)-1] = nil
		u.queue = u.queue[:len(u.queue)-1]
		u.mu.Unlock()
		sysUnmap(b)
	}
}

// wait returns once every mapping queued so far is unmapped.
func (u *unmapper) wait() {
	u.mu.Lock()
	defer u.mu.Unlock()
	if u.idle == nil {
		u.idle = sync.NewCond(&u.mu)
	}
	for u.running {
		u.idle.Wait()
	}
}
