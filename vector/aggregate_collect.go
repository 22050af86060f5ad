package vector

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// collect_list(x) (array_agg(x)), as Spark's CollectList: the non-null
// values of each group in input order, an empty array for a group
// without any. The values are appended to one store of slots, each slot
// owned by a group; a result gathers each group's slots in order into a
// list column. The partial state is that list; merging appends the
// elements of each state list to its group, in order.
type collectAcc struct {
	elem   arrow.DataType
	merge  bool
	vals   byValues // by slot
	owners []int32  // the group of each slot; -1 once the group was reset
	nslots int
	rows   []int32 // scratch
	slots  []int32 // scratch
	ngroup int
}

func bindCollectList(elem arrow.DataType, merge bool) (*collectAcc, error) {
	v, ok := newByValues(elem)
	if !ok || elem.ID() == arrow.NULL {
		return nil, fmt.Errorf("collect_list of %s is not supported (numbers, strings, binaries, booleans, dates, timestamps, decimals and intervals are): %w", TypeName(elem), ErrType)
	}
	return &collectAcc{elem: elem, merge: merge, vals: v}, nil
}

func (c *collectAcc) resize(n int) { c.ngroup = max(c.ngroup, n) }

func (c *collectAcc) heapBytes() int64 {
	return c.vals.heapBytes() + sliceBytes(c.owners) + sliceBytes(c.rows) + sliceBytes(c.slots)
}

func (c *collectAcc) resultType() arrow.DataType { return ListOf(c.elem) }

func (c *collectAcc) stateTypes() []arrow.DataType { return []arrow.DataType{c.resultType()} }

// add appends rows of src (valid ones) to the groups of groups, in order.
func (c *collectAcc) add(src arrow.Array, rows, groups []int32) {
	slots := c.slots[:0]
	for j := range rows {
		slots = append(slots, int32(c.nslots+j))
	}
	c.nslots += len(rows)
	c.owners = append(c.owners, groups...)
	c.vals.resize(c.nslots)
	c.vals.copyRows(src, rows, slots)
	c.slots = slots
}

func (c *collectAcc) update(gids []int32, args []arrow.Array) error {
	arg := args[0]
	rows, groups := c.rows[:0], c.slots[:0:0]
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
		c.add(arg, rows, groups)
		c.rows = rows
		return nil
	}
	l, ok := arg.(*array.List)
	if !ok {
		return fmt.Errorf("vector: collect_list state of %s: %w", TypeName(arg.DataType()), ErrType)
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
	c.add(child, rows, groups)
	c.rows = rows
	return nil
}

// lists builds the lists of groups gids.
func (c *collectAcc) lists(mem memory.Allocator, gids []int32) arrow.Array {
	order, counts := groupSlotOrder(c.owners, gids)
	return listsFromOrder(mem, c.resultType(), c.vals, order, counts)
}

// groupSlotOrder lists the value slots of groups gids, group by group and
// in slot order within a group: the slots of gids[i] are
// order[counts[i]:counts[i+1]]. owners gives each slot's group.
func groupSlotOrder(owners, gids []int32) (order, counts []int32) {
	pos := make(map[int32]int, len(gids))
	for i, g := range gids {
		pos[g] = i
	}
	counts = make([]int32, len(gids)+1)
	for _, g := range owners {
		if i, ok := pos[g]; ok && g >= 0 {
			counts[i+1]++
		}
	}
	for i := 1; i < len(counts); i++ {
		counts[i] += counts[i-1]
	}
	order = make([]int32, counts[len(gids)])
	next := append([]int32(nil), counts[:len(gids)]...)
	for s, g := range owners {
		if i, ok := pos[g]; ok && g >= 0 {
			order[next[i]] = int32(s)
			next[i]++
		}
	}
	return order, counts
}

// listsFromOrder builds a list array of type typ whose list i holds the
// values of slots order[counts[i]:counts[i+1]].
func listsFromOrder(mem memory.Allocator, typ arrow.DataType, vals byValues, order, counts []int32) arrow.Array {
	values := vals.build(mem, order, nil)
	defer values.Release()
	offBuf := memory.NewResizableBuffer(mem)
	offBuf.Resize(len(counts) * 4)
	copy(castSlice[int32](offBuf.Bytes()), counts)
	data := array.NewData(typ, len(counts)-1, []*memory.Buffer{nil, offBuf}, []arrow.ArrayData{values.Data()}, 0, 0)
	offBuf.Release()
	defer data.Release()
	return array.MakeFromData(data)
}

func (c *collectAcc) final(mem memory.Allocator, lo, hi int, _ []int64) (arrow.Array, error) {
	return c.lists(mem, groupRange(lo, hi)), nil
}

func (c *collectAcc) state(mem memory.Allocator, lo, hi int, _ []int64) ([]arrow.Array, error) {
	return []arrow.Array{c.lists(mem, groupRange(lo, hi))}, nil
}

func (c *collectAcc) stateAt(mem memory.Allocator, gids []int32, _ []int64) ([]arrow.Array, error) {
	return []arrow.Array{c.lists(mem, gids)}, nil
}

// reset drops the slots of groups gids (their values stay in the store
// until the accumulator is dropped).
func (c *collectAcc) reset(gids []int32) {
	drop := make(map[int32]bool, len(gids))
	for _, g := range gids {
		drop[g] = true
	}
	for s, g := range c.owners {
		if drop[g] {
			c.owners[s] = -1
		}
	}
}
