package stateful

import (
	"fmt"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
)

// groupLive is flatMapGroupsWithState's state kept in memory between
// epochs: per partition every key's state and a heap of the keys by
// timeout, so that an epoch touches only the keys with rows and the keys
// whose timeout is due, instead of scanning every key for timeouts. The
// stores are written with the epoch's changes only and read only to
// rebuild this after a start, a restart or an aborted epoch.
type groupLive struct {
	// version is the state version it mirrors; -1 while an epoch changes
	// it (until its commit).
	version int64
	parts   []groupLivePart
}

// groupLivePart is one partition's keys.
type groupLivePart struct {
	keys     map[string]*groupEntry
	timeouts timeHeap[string] // keys by timeout (ms); stale entries skipped
	bytes    int64            // approximate memory of keys and values
}

// groupEntryOverhead approximates a key's memory besides its bytes (map
// slot, entry, heap entry).
const groupEntryOverhead = 96

// groupEntry is one key's state.
type groupEntry struct {
	exists    bool
	timeoutMs int64 // stream.NoTimeoutSet when none
	value     []byte
	// heapAt is the time of the key's entry in the timeout heap
	// (stream.NoTimeoutSet: none), so that a key has one live entry.
	heapAt int64
}

// set records key's state after a call and indexes its timeout.
func (p *groupLivePart) set(key string, exists bool, timeoutMs int64, value []byte) {
	e := p.keys[key]
	if e == nil {
		e = &groupEntry{heapAt: stream.NoTimeoutSet}
		p.keys[key] = e
		p.bytes += int64(len(key)) + groupEntryOverhead
	}
	p.bytes += int64(len(value) - len(e.value))
	e.exists, e.timeoutMs, e.value = exists, timeoutMs, append(e.value[:0:0], value...)
	if timeoutMs != stream.NoTimeoutSet && e.heapAt != timeoutMs {
		p.timeouts.push(timeoutMs, key)
		e.heapAt = timeoutMs
	}
}

// remove forgets key's state.
func (p *groupLivePart) remove(key string) {
	if e := p.keys[key]; e != nil {
		p.bytes -= int64(len(key)+len(e.value)) + groupEntryOverhead
		delete(p.keys, key)
	}
}

// expired pops the keys whose timeout is strictly below threshold (ms).
func (p *groupLivePart) expired(threshold int64) []string {
	var out []string
	for p.timeouts.due(threshold - 1) {
		t := p.timeouts.pop()
		e := p.keys[t.v]
		if e == nil || e.heapAt != t.at {
			continue // the key was removed or its timeout changed
		}
		e.heapAt = stream.NoTimeoutSet
		if e.timeoutMs != stream.NoTimeoutSet && e.timeoutMs < threshold {
			out = append(out, t.v)
		} else if e.timeoutMs != stream.NoTimeoutSet {
			p.timeouts.push(e.timeoutMs, t.v)
			e.heapAt = e.timeoutMs
		}
	}
	return out
}

// loadLive makes the live state mirror version, rebuilding it from the
// open stores when it does not.
func (g *statefulGroupState) loadLive(version int64) error {
	if g.live != nil && g.live.version == version && len(g.live.parts) == len(g.state.stores) {
		return nil
	}
	g.live = nil
	live := &groupLive{version: version, parts: make([]groupLivePart, len(g.state.stores))}
	for p, st := range g.state.stores {
		part := &live.parts[p]
		part.keys = make(map[string]*groupEntry, st.Len())
		var bad error
		err := st.Scan(func(k, v []byte) bool {
			exists, t, value, err := decodeGroupState(v)
			if err != nil {
				bad = err
				return false
			}
			part.set(string(k), exists, t, value)
			return true
		})
		if err == nil {
			err = bad
		}
		if err != nil {
			return fmt.Errorf("arrowstream: rebuild the state of operator %d partition %d from version %d: %w", g.state.opID, p, version, err)
		}
	}
	g.live = live
	return nil
}

// liveBytes approximates the live state's memory.
func (l *groupLive) liveBytes() int64 {
	var n int64
	for i := range l.parts {
		n += l.parts[i].bytes + int64(cap(l.parts[i].timeouts))*24
	}
	return n
}
