package vector

import (
	"encoding/binary"
	"fmt"
	"slices"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// collect_set(x), as Spark's CollectSet: the distinct non-null values of
// each group, in the iteration order of the Scala 2.13 mutable.HashSet
// Spark collects them into. That order is a fact of the result (Spark's
// golden files print it), so it is reproduced rather than left to chance:
// the set is a chained hash table whose buckets are walked in index order,
// each bucket's chain sorted by the improved hash (h ^ h>>>16 of Scala's
// ##), equal hashes in insertion order. The order thus depends only on the
// hashes, the insertion order of colliding values and the table's length,
// which scalaSetLen models (see there).
//
// The values are appended to one store of slots, each owned by a group, as
// collect_list's are; a set of (group, value) keys drops repeats. The
// partial state is the list of a group's values; merging adds them in
// order.
type collectSetAcc struct {
	elem   arrow.DataType
	merge  bool // the input is partial state lists
	window bool // evaluated as a window function: Spark's buffer only grows by add
	vals   byValues
	owners []int32 // the group of each slot
	hashes []int32 // the improved Scala hash of each slot's value
	nslots int
	set    *bytesTable
	cnt    []int32 // the distinct values of each group
	tail   []bool  // a repeated value came after the group's last new one
	// gen is each group's generation, part of its set keys: reset (a live
	// aggregation's deleted group) starts a new one, so the old keys,
	// which the table cannot delete, no longer count as repeats.
	gen []uint32

	rows, slots, groups, kg []int32  // scratch
	h                       []int32  // scratch: hashes of the rows being added
	w                       []uint64 // scratch: equality words of fixed-width rows
	nan                     []bool   // scratch: floating NaN rows (never equal)
	key                     []byte   // scratch
}

// collectSetTypeOK reports whether collect_set reproduces Spark's order for
// elements of type t.
func collectSetTypeOK(t arrow.DataType) bool {
	switch t.ID() {
	case arrow.BOOL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.DATE32,
		arrow.FLOAT32, arrow.FLOAT64, arrow.STRING, arrow.BINARY:
		return true
	case arrow.TIMESTAMP:
		return t.(*arrow.TimestampType).Unit == arrow.Microsecond
	}
	return false
}

func bindCollectSet(elem arrow.DataType, merge bool) (*collectSetAcc, error) {
	v, ok := newByValues(elem)
	if !ok || !collectSetTypeOK(elem) {
		return nil, fmt.Errorf("collect_set of %s is not supported (numbers other than decimals, strings, binaries, booleans, dates and timestamps are): %w", TypeName(elem), ErrType)
	}
	return &collectSetAcc{elem: elem, merge: merge, vals: v, set: newBytesTable()}, nil
}

func (c *collectSetAcc) setWindow() { c.window = true }

func (c *collectSetAcc) resize(n int) {
	if n > len(c.cnt) {
		c.cnt = append(c.cnt, make([]int32, n-len(c.cnt))...)
		c.tail = append(c.tail, make([]bool, n-len(c.tail))...)
		c.gen = append(c.gen, make([]uint32, n-len(c.gen))...)
	}
}

func (c *collectSetAcc) heapBytes() int64 {
	return c.vals.heapBytes() + c.set.heapBytes() + sliceBytes(c.owners) + sliceBytes(c.hashes) +
		sliceBytes(c.cnt) + sliceBytes(c.tail) + sliceBytes(c.gen) + sliceBytes(c.rows) + sliceBytes(c.slots) +
		sliceBytes(c.groups) + sliceBytes(c.kg) + sliceBytes(c.h) + sliceBytes(c.w) + sliceBytes(c.nan) + sliceBytes(c.key)
}

func (c *collectSetAcc) resultType() arrow.DataType { return ListOf(c.elem) }

func (c *collectSetAcc) stateTypes() []arrow.DataType { return []arrow.DataType{c.resultType()} }

func (c *collectSetAcc) update(gids []int32, args []arrow.Array) error {
	arg := args[0]
	rows, groups := c.rows[:0], c.groups[:0]
	if !c.merge {
		if arg.DataType().ID() == arrow.NULL {
			return nil
		}
		bm, off := validity(arg)
		for i, g := range gids {
			if bm == nil || bitSet(bm, off+i) {
				rows, groups = append(rows, int32(i)), append(groups, g)
			}
		}
		c.rows, c.groups = rows, groups
		return c.add(arg, rows, groups)
	}
	l, ok := arg.(*array.List)
	if !ok {
		return fmt.Errorf("vector: collect_set state of %s: %w", TypeName(arg.DataType()), ErrType)
	}
	offs := l.Offsets()
	child := l.ListValues()
	cbm, coff := validity(child)
	for i, g := range gids {
		if l.IsNull(i) {
			continue
		}
		for r := offs[i]; r < offs[i+1]; r++ {
			if cbm == nil || bitSet(cbm, coff+int(r)) {
				rows, groups = append(rows, r), append(groups, g)
			}
		}
	}
	c.rows, c.groups = rows, groups
	return c.add(child, rows, groups)
}

// add inserts rows of src into groups, in order, keeping new values.
func (c *collectSetAcc) add(src arrow.Array, rows, groups []int32) error {
	if len(rows) == 0 {
		return nil
	}
	if err := c.hashRows(src, rows); err != nil {
		return err
	}
	str, isStr := src.(interface{ ValueBytes() []byte })
	var soffs []int32
	if isStr {
		switch a := src.(type) {
		case *array.String:
			soffs = a.ValueOffsets()
		case *array.Binary:
			soffs = a.ValueOffsets()
		default:
			return fmt.Errorf("vector: collect_set of %s: %w", TypeName(src.DataType()), ErrType)
		}
	}
	keep, kgroups := c.slots[:0], c.kg[:0]
	for j, r := range rows {
		g := groups[j]
		h := c.h[j]
		if !isStr && c.nan[j] {
			// NaN is not == to itself in Scala: every NaN is a new element.
			keep, kgroups = append(keep, r), append(kgroups, g)
			c.hashes = append(c.hashes, h)
			c.cnt[g]++
			c.tail[g] = false
			continue
		}
		key := binary.LittleEndian.AppendUint32(c.key[:0], uint32(g))
		key = binary.LittleEndian.AppendUint32(key, c.gen[g])
		if isStr {
			key = append(key, str.ValueBytes()[soffs[r]:soffs[r+1]]...)
		} else {
			key = binary.LittleEndian.AppendUint64(key, c.w[j])
		}
		c.key = key
		if _, added := c.set.insertKey(fmix64(uint64(uint32(h))<<32|uint64(uint32(g))), key); added {
			keep, kgroups = append(keep, r), append(kgroups, g)
			c.hashes = append(c.hashes, h)
			c.cnt[g]++
			c.tail[g] = false
		} else {
			c.tail[g] = true
		}
	}
	c.slots, c.kg = keep, kgroups
	if len(keep) == 0 {
		return nil
	}
	slots := make([]int32, len(keep))
	for j := range slots {
		slots[j] = int32(c.nslots + j)
	}
	c.nslots += len(keep)
	c.owners = append(c.owners, kgroups...)
	c.vals.resize(c.nslots)
	c.vals.copyRows(src, keep, slots)
	return nil
}

// scalaSetLen is the length of the table of a Scala 2.13 mutable.HashSet
// holding n values. Built by add alone (a window's buffer), the table
// doubles when an add finds size+1 >= 0.75*length, repeats included, so a
// repeat after the n-th value counts (tail). Built by merging partial sets
// (a grouped aggregate's final buffer), the merge sizes the table for the
// set merged in and adds without growing: for a group whose values came in
// one partial set that is sizeHint(n). Up to 10 values both give 16 on
// every path, so small sets' order does not depend on Spark's partitioning.
func scalaSetLen(n int, tail, window bool) int {
	if window {
		maxd := n - 1
		if tail {
			maxd = n
		}
		l := 16
		for int(float64(l)*0.75) <= maxd+1 {
			l *= 2
		}
		return l
	}
	return max(16, scalaTableSizeFor(int(float64(n+1)/0.75)))
}

// scalaTableSizeFor is mutable.HashSet's tableSizeFor.
func scalaTableSizeFor(capacity int) int {
	c := max(capacity-1, 4)
	hb := 1
	for hb*2 <= c {
		hb *= 2
	}
	return min(hb*2, 1<<30)
}

// setOrder returns the slots of group g ordered as Spark iterates them.
func (c *collectSetAcc) setOrder(slots []int32, g int32) {
	mask := uint32(scalaSetLen(int(c.cnt[g]), c.tail[g], c.window) - 1)
	slices.SortStableFunc(slots, func(a, b int32) int {
		ha, hb := c.hashes[a], c.hashes[b]
		ia, ib := uint32(ha)&mask, uint32(hb)&mask
		if ia != ib {
			if ia < ib {
				return -1
			}
			return 1
		}
		if ha != hb {
			if ha < hb {
				return -1
			}
			return 1
		}
		return 0
	})
}

// lists builds the sets of groups gids, each in Spark's order.
func (c *collectSetAcc) lists(mem memory.Allocator, gids []int32) arrow.Array {
	order, counts := groupSlotOrder(c.owners, gids)
	for i, g := range gids {
		c.setOrder(order[counts[i]:counts[i+1]], g)
	}
	return listsFromOrder(mem, c.resultType(), c.vals, order, counts)
}

func (c *collectSetAcc) final(mem memory.Allocator, lo, hi int, _ []int64) (arrow.Array, error) {
	return c.lists(mem, groupRange(lo, hi)), nil
}

func (c *collectSetAcc) state(mem memory.Allocator, lo, hi int, _ []int64) ([]arrow.Array, error) {
	return []arrow.Array{c.lists(mem, groupRange(lo, hi))}, nil
}

// stateAt returns the sets of groups gids as partial state lists (a live
// aggregation's state; merging them back adds the values in this order).
func (c *collectSetAcc) stateAt(mem memory.Allocator, gids []int32, _ []int64) ([]arrow.Array, error) {
	return []arrow.Array{c.lists(mem, gids)}, nil
}

// reset empties groups gids: their slots lose their owner (the values stay
// in the store until the accumulator is dropped) and a new generation
// makes their old set keys unreachable.
func (c *collectSetAcc) reset(gids []int32) {
	drop := make(map[int32]bool, len(gids))
	for _, g := range gids {
		drop[g] = true
		c.cnt[g], c.tail[g] = 0, false
		c.gen[g]++
	}
	for s, g := range c.owners {
		if g >= 0 && drop[g] {
			c.owners[s] = -1
		}
	}
}
