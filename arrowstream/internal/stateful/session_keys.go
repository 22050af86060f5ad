package stateful

// sessionKeys numbers the grouping keys of one partition's merge (0, 1,
// … in first-seen order), so that the merge's phases find a row's key by
// its number instead of a string map per phase. A single fixed-width key
// (the common case: one integer column) is looked up by its word, without
// building a string per row.
type sessionKeys struct {
	fixed  map[uint64]int32
	str    map[string]int32
	nullID int32 // the number of the null fixed key, -1 until seen
	n      int32
}

// reset empties k (the zero value too) for another merge, keeping its maps' room: an epoch's
// merge numbered its keys into maps grown from empty, about a tenth of
// q11's merge (map growth and rehashing every epoch). Maps that numbered
// more than maxKeptSessionRefs keys are dropped instead, so that clearing
// them (a cost of their room, not of their keys) stays bounded and one
// large epoch does not hold them for good.
func (k *sessionKeys) reset() {
	if k.fixed == nil || k.n > maxKeptSessionRefs {
		*k = sessionKeys{fixed: map[uint64]int32{}, str: map[string]int32{}}
	} else {
		clear(k.fixed)
		clear(k.str)
	}
	k.nullID, k.n = -1, 0
}

// number appends to ids the number of each row's key of c's last encode
// (rows rows) and calls added(i) for each row whose key is new, in row
// order, after numbering it.
func (k *sessionKeys) number(c *rowCodec, rows int, ids []int32, added func(i int)) []int32 {
	switch {
	case len(c.cols) == 0: // every row has the empty key
		for i := 0; i < rows; i++ {
			if k.n == 0 {
				k.n = 1
				ids = append(ids, 0)
				added(i)
				continue
			}
			ids = append(ids, 0)
		}
	case c.enc.IsFixed():
		words := c.enc.Fixed()
		for i := 0; i < rows; i++ {
			if c.enc.HasNull(i) {
				if k.nullID < 0 {
					k.nullID = k.n
					k.n++
					ids = append(ids, k.nullID)
					added(i)
					continue
				}
				ids = append(ids, k.nullID)
				continue
			}
			id, ok := k.fixed[words[i]]
			if !ok {
				id = k.n
				k.n++
				k.fixed[words[i]] = id
				ids = append(ids, id)
				added(i)
				continue
			}
			ids = append(ids, id)
		}
	default:
		for i := 0; i < rows; i++ {
			key := c.enc.Key(i)
			id, ok := k.str[string(key)]
			if !ok {
				id = k.n
				k.n++
				k.str[string(key)] = id
				ids = append(ids, id)
				added(i)
				continue
			}
			ids = append(ids, id)
		}
	}
	return ids
}
