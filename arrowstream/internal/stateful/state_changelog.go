package stateful

import (
	"fmt"

	"github.com/arrowstream/arrowstream/checkpoint"
)

// changelogState is the write side of an operator that keeps its state
// live and hands the stores only the epoch's changes
// (checkpoint.ChangelogWriter): no per-key map insert, no second decoded
// copy in the store. It counts the keys of each partition, which the
// stores report as their length without a copy to count.
type changelogState struct {
	writers []checkpoint.ChangelogWriter // the epoch's stores; nil: Put/Delete
	// batchers are the writers as ChangelogBatchers when all are (nil:
	// logBatches log entry by entry).
	batchers []checkpoint.ChangelogBatcher
	rows     []int64 // live keys by partition
	// upBytes and ups are the key and value bytes and the count of the
	// upserts each partition logged (since the counts were last reset):
	// their mean entry size times the live keys is the live bytes the
	// partition declares (finish), which its snapshot schedule weighs
	// the replay against (checkpoint.LiveBytesSetter).
	upBytes, ups []int64
}

// bind takes the epoch's stores when every one of them takes a changelog
// (the memory provider's do; other providers keep Put/Delete). rows are
// the partitions' key counts when the live state was (re)built.
func (c *changelogState) bind(s *statePartitions) {
	c.writers = c.writers[:0]
	for _, st := range s.stores {
		w, ok := st.(checkpoint.ChangelogWriter)
		if !ok {
			c.writers, c.batchers = nil, nil
			return
		}
		c.writers = append(c.writers, w)
	}
	c.bindBatchers()
	if len(c.rows) != len(c.writers) {
		c.rows = nil // counted again by recount
	}
	c.sizeUpserts()
}

// sizeUpserts sizes the upsert counts to the writers. bind calls it
// before the partitions run in parallel: each then writes its own element
// only (noteUpserts); sizing them there lazily raced.
func (c *changelogState) sizeUpserts() {
	if len(c.ups) != len(c.writers) {
		c.ups = make([]int64, len(c.writers))
		c.upBytes = make([]int64, len(c.writers))
	}
}

// on reports whether the epoch writes changelogs.
func (c *changelogState) on() bool { return len(c.writers) > 0 }

// recount sets the key counts from the stores (after a rebuild read them).
func (c *changelogState) recount(s *statePartitions) {
	c.rows = make([]int64, len(s.stores))
	for p, st := range s.stores {
		c.rows[p] = int64(st.Len())
	}
}

// upsert logs key=value in partition p; added says the key is new.
func (c *changelogState) upsert(p int, key, value []byte, added bool) {
	c.writers[p].LogUpsert(key, value)
	if added {
		c.rows[p]++
	}
	c.noteUpserts(p, 1, len(key)+len(value))
}

// noteUpserts counts n upserts of bytes key and value bytes in partition
// p, for the live bytes finish declares.
func (c *changelogState) noteUpserts(p, n, bytes int) {
	c.ups[p] += int64(n)
	c.upBytes[p] += int64(bytes)
}

// remove logs the deletion of key from partition p.
func (c *changelogState) remove(p int, key []byte) {
	c.writers[p].LogDelete(key)
	c.rows[p]--
}

// finish declares every partition's key count, which also puts the
// partitions without changes in changelog mode (an empty delta), and,
// where the store weighs its snapshots by them
// (checkpoint.LiveBytesSetter), the live bytes of a partition that logged
// upserts: its live keys at the mean size of the entries it logged (an
// aggregation's keys and values are of about one size; the store compares
// with a factor of two). Without them an aggregation's partitions were
// snapshotted by the bytes of changes alone, whatever their size.
func (c *changelogState) finish(opID int) error {
	if len(c.rows) != len(c.writers) {
		return fmt.Errorf("arrowstream: state of operator %d: key counts for %d partitions, %d stores", opID, len(c.rows), len(c.writers))
	}
	sized := len(c.ups) == len(c.writers)
	for p, w := range c.writers {
		if c.rows[p] < 0 {
			return fmt.Errorf("arrowstream: state of operator %d partition %d: negative key count %d", opID, p, c.rows[p])
		}
		w.SetLiveRows(c.rows[p])
		if sized && c.ups[p] > 0 {
			if ls, ok := w.(checkpoint.LiveBytesSetter); ok {
				ls.SetLiveBytes(c.rows[p] * c.upBytes[p] / c.ups[p])
			}
		}
	}
	return nil
}

// logsChanges reports whether every one of the epoch's stores takes a
// changelog (checkpoint.ChangelogWriter): an operator whose state is live
// then logs its changes instead of Put/Delete, so that the stores keep no
// decoded copy of it. One epoch uses one path for all its partitions.
func logsChanges(stores []checkpoint.StateStore) bool {
	for _, st := range stores {
		if _, ok := st.(checkpoint.ChangelogWriter); !ok {
			return false
		}
	}
	return len(stores) > 0
}

// putState writes key=value to st: logged when log (see logsChanges),
// else Put.
func putState(st checkpoint.StateStore, log bool, key, value []byte) error {
	if log {
		st.(checkpoint.ChangelogWriter).LogUpsert(key, value)
		return nil
	}
	return st.Put(key, value)
}

// deleteState deletes key from st: logged when log, else Delete.
func deleteState(st checkpoint.StateStore, log bool, key []byte) error {
	if log {
		st.(checkpoint.ChangelogWriter).LogDelete(key)
		return nil
	}
	return st.Delete(key)
}
