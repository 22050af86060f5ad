package vector

import (
	"fmt"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// nestedMinMaxAcc is min and max of an orderable STRUCT or ARRAY (Spark
// orders structs field by field and arrays element by element, then the
// shorter first; a NULL field or element sorts first). Each group keeps
// its extreme value encoded with the value encoder (exact float bits) on
// the Go heap, so the accumulator holds no Arrow memory between batches.
// A batch is folded in two passes: the batch's own extreme row per group
// (compared in place), then that row against the group's kept value,
// decoded once per batch for the groups the batch touches. On a tie the
// kept value stays (Spark's Greatest/Least keep the earlier value). Nested
// values are rare in min/max, so rows are compared by the nested
// comparator rather than a typed kernel.
type nestedMinMaxAcc struct {
	isMax bool
	dt    arrow.DataType
	mem   memory.Allocator
	vals  [][]byte // encoded extreme per group; nil: none yet
	best  []int32  // scratch: the batch's extreme row per group, -1 none
	seen  []int32  // scratch: groups the batch touched
}

func newNestedMinMax(dt arrow.DataType, isMax bool, mem memory.Allocator) (*nestedMinMaxAcc, bool) {
	switch dt.ID() {
	case arrow.STRUCT, arrow.LIST:
	default:
		return nil, false
	}
	if checkOrderable(dt) != nil {
		return nil, false
	}
	return &nestedMinMaxAcc{isMax: isMax, dt: dt, mem: mem}, true
}

func (m *nestedMinMaxAcc) resize(n int) {
	m.vals = growZero(m.vals, n)
}

// better reports whether c (a three-way comparison of a candidate with
// the current extreme) makes the candidate the new extreme.
func (m *nestedMinMaxAcc) better(c int8) bool {
	if m.isMax {
		return c > 0
	}
	return c < 0
}

func (m *nestedMinMaxAcc) update(gids []int32, args []arrow.Array) error {
	arg := args[0]
	if arg.Len() == 0 {
		return nil
	}
	m.best = growFill(m.best[:0], len(m.vals), -1)
	m.seen = m.seen[:0]
	for i, g := range gids[:arg.Len()] {
		if arg.IsNull(i) {
			continue
		}
		b := m.best[g]
		switch {
		case b < 0:
			m.best[g] = int32(i)
			m.seen = append(m.seen, g)
		case m.better(cmpValueAt(arg, i, arg, int(b))):
			m.best[g] = int32(i)
		}
	}
	if len(m.seen) == 0 {
		return nil
	}
	// The kept values of the touched groups that have one, decoded.
	var keys [][]byte
	var keyOf []int32 // index in keys of each seen group, -1 none
	for _, g := range m.seen {
		if m.vals[g] == nil {
			keyOf = append(keyOf, -1)
			continue
		}
		keyOf = append(keyOf, int32(len(keys)))
		keys = append(keys, m.vals[g])
	}
	enc, err := NewValueEncoder(m.mem, []arrow.DataType{m.dt})
	if err != nil {
		return err
	}
	defer enc.Release()
	var kept arrow.Array
	if len(keys) > 0 {
		cols, err := enc.DecodeKeys(m.mem, keys)
		if err != nil {
			return fmt.Errorf("vector: min/max of %s: decoding a kept value: %w", TypeName(m.dt), err)
		}
		kept = cols[0]
		defer kept.Release()
	}
	if err := enc.Encode([]arrow.Array{arg}); err != nil {
		return err
	}
	for k, g := range m.seen {
		row := int(m.best[g])
		if j := keyOf[k]; j >= 0 && !m.better(cmpValueAt(arg, row, kept, int(j))) {
			continue
		}
		m.vals[g] = append([]byte(nil), enc.Key(row)...)
	}
	return nil
}

func (m *nestedMinMaxAcc) final(mem memory.Allocator, lo, hi int, rows []int64) (arrow.Array, error) {
	enc, err := NewValueEncoder(mem, []arrow.DataType{m.dt})
	if err != nil {
		return nil, err
	}
	defer enc.Release()
	keys := make([][]byte, 0, hi-lo)
	var present []int
	for g := lo; g < hi; g++ {
		if m.vals[g] != nil {
			keys = append(keys, m.vals[g])
			present = append(present, g-lo)
		}
	}
	cols, err := enc.DecodeKeys(mem, keys)
	if err != nil {
		return nil, fmt.Errorf("vector: min/max of %s: decoding a kept value: %w", TypeName(m.dt), err)
	}
	vals := cols[0]
	defer vals.Release()
	// Spread the present values over the groups, NULL where a group saw
	// none.
	idx := make([]int32, hi-lo)
	for i := range idx {
		idx[i] = -1
	}
	for j, p := range present {
		idx[p] = int32(j)
	}
	return Take(mem, vals, idx)
}

func (m *nestedMinMaxAcc) state(mem memory.Allocator, lo, hi int, rows []int64) ([]arrow.Array, error) {
	a, err := m.final(mem, lo, hi, rows)
	return []arrow.Array{a}, err
}

func (m *nestedMinMaxAcc) heapBytes() int64 {
	n := sliceBytes(m.vals) + sliceBytes(m.best) + sliceBytes(m.seen)
	for _, v := range m.vals {
		n += int64(cap(v))
	}
	return n
}
