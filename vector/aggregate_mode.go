package vector

import (
	"bytes"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// mode(x), as Spark's Mode: the most frequent non-null value of each
// group, NULL for a group without any. Spark counts the values in an
// OpenHashMap; on a tie, mode(x) returns the first of the most frequent
// values in that map's iteration order, which modeHashOrder reproduces.
// mode(x, true) and mode() WITHIN GROUP (ORDER BY x) break ties by the
// lowest value, WITHIN GROUP (ORDER BY x DESC) by the highest
// (AggMostFrequentLow, AggMostFrequentHigh).
//
// Each distinct (group, value) pair is an entry: its value is kept in a
// store of slots (entry i in slot i), with its count and the Java
// hashCode of Spark's boxed value. The partial state is the list of a
// group's values and the list of their counts.
type modeAcc struct {
	elem   arrow.DataType
	kind   modeKind
	tie    int  // 0: hash order; -1: lowest; +1: highest
	merge  bool // the input is partial state
	window bool // a window's buffer: the values were added one by one
	vals   byValues
	set    *bytesTable
	owner  []int32 // the group of each entry
	// setEntry maps the set's numbering (values other than NaN, in the
	// order the set took them) to the entries (which hold NaNs too).
	setEntry []int32
	count    []int64  // the count of each entry
	jhash    []int32  // the Java hashCode of each entry's value
	word     []uint64 // the value of a fixed-width entry (ordering)
	sarena   []byte   // the bytes of string entries
	soffs    []int32  // entry i's bytes: sarena[soffs[i]:soffs[i+1]]
	ngroup   int

	key                []byte  // scratch
	rows, slots, fresh []int32 // scratch
}

type modeKind uint8

const (
	modeInt modeKind = iota
	modeFloat
	modeBool
	modeBytes
)

func modeKindOf(t arrow.DataType) (modeKind, bool) {
	switch t.ID() {
	case arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.DATE32, arrow.INTERVAL_MONTHS, arrow.DURATION:
		return modeInt, true
	case arrow.TIMESTAMP:
		return modeInt, t.(*arrow.TimestampType).Unit == arrow.Microsecond
	case arrow.FLOAT32, arrow.FLOAT64:
		return modeFloat, true
	case arrow.BOOL:
		return modeBool, true
	case arrow.STRING:
		return modeBytes, true
	case arrow.NULL:
		return modeInt, true
	}
	return 0, false
}

func bindMode(elem arrow.DataType, tie int, merge bool) (*modeAcc, error) {
	k, ok := modeKindOf(elem)
	v, ok2 := newByValues(elem)
	if !ok || !ok2 {
		return nil, fmt.Errorf("mode of %s is not supported (numbers other than decimals, strings, booleans, dates, timestamps and intervals are): %w", TypeName(elem), ErrType)
	}
	return &modeAcc{elem: elem, kind: k, tie: tie, merge: merge, vals: v, set: newBytesTable(), soffs: []int32{0}}, nil
}

func isMode(f AggFunc) bool {
	return f == AggMostFrequent || f == AggMostFrequentLow || f == AggMostFrequentHigh
}

func modeTie(f AggFunc) int {
	switch f {
	case AggMostFrequentLow:
		return -1
	case AggMostFrequentHigh:
		return 1
	}
	return 0
}

func (m *modeAcc) setWindow() { m.window = true }

func (m *modeAcc) resize(n int) { m.ngroup = max(m.ngroup, n) }

func (m *modeAcc) heapBytes() int64 {
	return m.vals.heapBytes() + m.set.heapBytes() + sliceBytes(m.owner) + sliceBytes(m.setEntry) + sliceBytes(m.count) +
		sliceBytes(m.jhash) + sliceBytes(m.word) + sliceBytes(m.sarena) + sliceBytes(m.soffs) +
		sliceBytes(m.key) + sliceBytes(m.rows) + sliceBytes(m.slots) + sliceBytes(m.fresh)
}

func (m *modeAcc) stateTypes() []arrow.DataType {
	return []arrow.DataType{ListOf(m.elem), ListOf(Int64)}
}

func (m *modeAcc) update(gids []int32, args []arrow.Array) error {
	if !m.merge {
		return m.add(args[0], gids, nil)
	}
	vl, ok1 := args[0].(*array.List)
	cl, ok2 := args[1].(*array.List)
	if !ok1 || !ok2 {
		return fmt.Errorf("vector: mode state of %s: %w", typeList([]arrow.DataType{args[0].DataType(), args[1].DataType()}), ErrType)
	}
	offs := vl.Offsets()
	counts := cl.ListValues().(*array.Int64).Int64Values()
	coffs := cl.Offsets()
	if len(gids) == 0 {
		return nil
	}
	// A null list spans no values, so the lists' values are contiguous.
	n := int(offs[len(gids)] - offs[0])
	groups, cnt := make([]int32, 0, n), make([]int64, 0, n)
	for i, g := range gids {
		for r := offs[i]; r < offs[i+1]; r++ {
			groups = append(groups, g)
			cnt = append(cnt, counts[coffs[i]+(r-offs[i])])
		}
	}
	child := array.NewSlice(vl.ListValues(), int64(offs[0]), int64(offs[len(offs)-1]))
	defer child.Release()
	return m.add(child, groups, cnt)
}

// add counts the valid rows of col (row i in group gids[i], counted cnt[i]
// times, once when cnt is nil).
func (m *modeAcc) add(col arrow.Array, gids []int32, cnt []int64) error {
	if col.DataType().ID() == arrow.NULL {
		return nil
	}
	words, jh, err := modeWords(col)
	if err != nil {
		return err
	}
	var soffs []int32
	var sbytes []byte
	if s, ok := col.(*array.String); ok {
		soffs, sbytes = s.ValueOffsets(), s.ValueBytes()
	}
	bm, off := validity(col)
	fresh, slots := m.fresh[:0], m.slots[:0]
	for i, g := range gids {
		if bm != nil && !bitSet(bm, off+i) {
			continue
		}
		n := int64(1)
		if cnt != nil {
			n = cnt[i]
		}
		key := binary.LittleEndian.AppendUint32(m.key[:0], uint32(g))
		isNaN := false
		if soffs != nil {
			key = append(key, sbytes[soffs[i]:soffs[i+1]]...)
		} else {
			key = binary.LittleEndian.AppendUint64(key, words[i])
			isNaN = m.kind == modeFloat && math.IsNaN(math.Float64frombits(words[i]))
		}
		m.key = key
		if !isNaN { // NaN is not == to itself in Scala: every NaN is its own key
			se, added := m.set.insertKey(fmix64(uint64(uint32(jh[i]))<<32|uint64(uint32(g))), key)
			if !added {
				// The set numbers only what it holds; the entries also hold
				// NaNs, so the set's number is mapped to the entry.
				m.count[m.setEntry[se]] += n
				continue
			}
			m.setEntry = append(m.setEntry, int32(len(m.owner)))
		}
		e := int32(len(m.owner))
		m.owner = append(m.owner, g)
		m.count = append(m.count, n)
		m.jhash = append(m.jhash, jh[i])
		if soffs != nil {
			m.word = append(m.word, 0)
			m.sarena = append(m.sarena, sbytes[soffs[i]:soffs[i+1]]...)
		} else {
			m.word = append(m.word, words[i])
		}
		m.soffs = append(m.soffs, int32(len(m.sarena)))
		fresh, slots = append(fresh, int32(i)), append(slots, e)
	}
	m.fresh, m.slots = fresh, slots
	if len(fresh) > 0 {
		m.vals.resize(len(m.owner))
		m.vals.copyRows(col, fresh, slots)
	}
	return nil
}

// modeWords returns each row's value as an ordering word (integers as
// int64, floating values as float64 bits, booleans as 0/1) and the Java
// hashCode of Spark's boxed value.
func modeWords(col arrow.Array) ([]uint64, []int32, error) {
	n := col.Len()
	w, h := make([]uint64, n), make([]int32, n)
	switch a := col.(type) {
	case *array.Boolean:
		for i := range n {
			h[i] = 1237
			if a.Value(i) {
				w[i], h[i] = 1, 1231
			}
		}
	case *array.Float32:
		for i, x := range a.Float32Values() {
			w[i], h[i] = math.Float64bits(float64(x)), javaFloatHash(x)
		}
	case *array.Float64:
		for i, x := range a.Float64Values() {
			w[i], h[i] = math.Float64bits(x), javaDoubleHash(x)
		}
	case *array.String:
		offs, b := a.ValueOffsets(), a.ValueBytes()
		for i := range n {
			h[i] = murmurBytes(b[offs[i]:offs[i+1]], 42)
		}
	default:
		fw, ok := col.DataType().(arrow.FixedWidthDataType)
		if !ok {
			return nil, nil, fmt.Errorf("vector: mode of %s: %w", TypeName(col.DataType()), ErrType)
		}
		buf, off := col.Data().Buffers()[1].Bytes(), col.Data().Offset()
		switch fw.BitWidth() {
		case 8:
			for i, x := range castSlice[int8](buf)[off : off+n] {
				w[i], h[i] = uint64(int64(x)), int32(x)
			}
		case 16:
			for i, x := range castSlice[int16](buf)[off : off+n] {
				w[i], h[i] = uint64(int64(x)), int32(x)
			}
		case 32:
			for i, x := range castSlice[int32](buf)[off : off+n] {
				w[i], h[i] = uint64(int64(x)), x
			}
		case 64:
			for i, x := range castSlice[int64](buf)[off : off+n] {
				w[i], h[i] = uint64(x), javaLongHash(x)
			}
		default:
			return nil, nil, fmt.Errorf("vector: mode of %s: %w", TypeName(col.DataType()), ErrType)
		}
	}
	return w, h, nil
}

// less orders entries a and b as Spark's PhysicalDataType ordering does.
func (m *modeAcc) less(a, b int32) bool {
	switch m.kind {
	case modeInt:
		return int64(m.word[a]) < int64(m.word[b])
	case modeBool:
		return m.word[a] < m.word[b]
	case modeFloat:
		x, y := math.Float64frombits(m.word[a]), math.Float64frombits(m.word[b])
		return sparkLess(x, y)
	}
	return bytes.Compare(m.sarena[m.soffs[a]:m.soffs[a+1]], m.sarena[m.soffs[b]:m.soffs[b+1]]) < 0
}

// entries returns the entries of groups [0, ngroup) in creation order,
// grouped: group g's are out[start[g]:start[g+1]].
func (m *modeAcc) entries(ngroup int) (out []int32, start []int32) {
	start = make([]int32, ngroup+1)
	for _, g := range m.owner {
		if int(g) < ngroup {
			start[g+1]++
		}
	}
	for i := 1; i <= ngroup; i++ {
		start[i] += start[i-1]
	}
	out = make([]int32, start[ngroup])
	next := append([]int32(nil), start[:ngroup]...)
	for e, g := range m.owner {
		if int(g) < ngroup {
			out[next[g]] = int32(e)
			next[g]++
		}
	}
	return out, start
}

// pick returns the result entry among es (one group's, in creation
// order), or -1 when there is none.
func (m *modeAcc) pick(es []int32) int32 {
	if len(es) == 0 {
		return -1
	}
	if m.tie == 0 {
		es = modeHashOrder(m.jhash, es, !m.window)
	}
	best := es[0]
	for _, e := range es[1:] {
		c, bc := m.count[e], m.count[best]
		switch {
		case c > bc:
			best = e
		case c == bc && m.tie < 0 && m.less(e, best):
			best = e
		case c == bc && m.tie > 0 && m.less(best, e):
			best = e
		}
	}
	return best
}

func (m *modeAcc) final(mem memory.Allocator, lo, hi int, _ []int64) (arrow.Array, error) {
	if m.elem.ID() == arrow.NULL {
		return array.MakeArrayOfNull(mem, arrow.Null, hi-lo), nil
	}
	es, start := m.entries(hi)
	slots := make([]int32, hi-lo)
	valid := make([]bool, hi-lo)
	m.vals.resize(max(len(m.owner), 1))
	for g := lo; g < hi; g++ {
		if e := m.pick(es[start[g]:start[g+1]]); e >= 0 {
			slots[g-lo], valid[g-lo] = e, true
		}
	}
	return m.vals.build(mem, slots, valid), nil
}

func (m *modeAcc) state(mem memory.Allocator, lo, hi int, _ []int64) ([]arrow.Array, error) {
	es, start := m.entries(hi)
	order := es[start[lo]:start[hi]]
	offs := make([]int32, hi-lo+1)
	counts := make([]int64, len(order))
	for g := lo; g < hi; g++ {
		offs[g-lo+1] = start[g+1] - start[lo]
	}
	for i, e := range order {
		counts[i] = m.count[e]
	}
	var values arrow.Array
	if m.elem.ID() == arrow.NULL {
		values = array.MakeArrayOfNull(mem, arrow.Null, 0)
	} else {
		m.vals.resize(max(len(m.owner), 1))
		values = m.vals.build(mem, order, nil)
	}
	defer values.Release()
	cb := array.NewInt64Builder(mem)
	defer cb.Release()
	cb.AppendValues(counts, nil)
	cvals := cb.NewArray()
	defer cvals.Release()
	return []arrow.Array{listOver(mem, ListOf(m.elem), offs, values), listOver(mem, ListOf(Int64), offs, cvals)}, nil
}

// listOver makes a list column of the given offsets over values.
func listOver(mem memory.Allocator, t arrow.DataType, offs []int32, values arrow.Array) arrow.Array {
	buf := memory.NewResizableBuffer(mem)
	buf.Resize(len(offs) * 4)
	copy(castSlice[int32](buf.Bytes()), offs)
	data := array.NewData(t, len(offs)-1, []*memory.Buffer{nil, buf}, []arrow.ArrayData{values.Data()}, 0, 0)
	buf.Release()
	defer data.Release()
	return array.MakeFromData(data)
}

// modeHashOrder returns entries es (one group's, in insertion order) in
// the iteration order of Spark's OpenHashMap (an OpenHashSet of capacity
// 64, load factor 0.7, positions murmur3(hashCode) & mask, probing by 1,
// 2, 3, ...; doubled when the size passes the threshold, moving the keys
// in position order). merged: a grouped aggregate's final map, built by
// merging a partial map (filled in insertion order) in its iteration
// order; a window's map is filled directly.
func modeHashOrder(jhash []int32, es []int32, merged bool) []int32 {
	out := openHashOrder(jhash, es)
	if merged {
		out = openHashOrder(jhash, out)
	}
	return out
}

func openHashOrder(jhash []int32, es []int32) []int32 {
	capacity := 64
	table := make([]int32, capacity)
	for i := range table {
		table[i] = -1
	}
	insert := func(table []int32, e int32) {
		mask := len(table) - 1
		pos := int(murmurInt(jhash[e], 0)) & mask
		for d := 1; table[pos] >= 0; d++ {
			pos = (pos + d) & mask
		}
		table[pos] = e
	}
	size := 0
	for _, e := range es {
		insert(table, e)
		size++
		if size > int(0.7*float64(len(table))) {
			bigger := make([]int32, 2*len(table))
			for i := range bigger {
				bigger[i] = -1
			}
			for _, old := range table {
				if old >= 0 {
					insert(bigger, old)
				}
			}
			table = bigger
		}
	}
	out := make([]int32, 0, len(es))
	for _, e := range table {
		if e >= 0 {
			out = append(out, e)
		}
	}
	return out
}
