package vector

import (
	"context"
	"fmt"
	"io"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
)

// startProbe takes ownership of a left batch and looks up all its keys at
// once: matchA[i], matchN[i] describe row i's build rows as the table's
// slots do (matchN[i] = 0: no match).
// startProbeReleasing is startProbe releasing rec unless it took it, by a
// defer: a query's allocator panics on an allocation far past its limit
// and the server recovers the panic, so the batch (perhaps a table's, not
// the query's) must not stay retained by the unwound frame.
func (j *HashJoin) startProbeReleasing(ctx context.Context, rec arrow.Record) (err error) {
	ok := false
	defer func() {
		if !ok {
			rec.Release()
		}
	}()
	err = j.startProbe(ctx, rec)
	ok = err == nil
	return err
}

func (j *HashJoin) startProbe(ctx context.Context, rec arrow.Record) error {
	n := int(rec.NumRows())
	j.matchA, j.matchN = grow(j.matchA, n), grow(j.matchN, n)
	switch {
	case j.buildN == 0 || j.neverMatch:
		clear(j.matchN)
	case len(j.leftKeys) == 0:
		for i := range j.matchN {
			j.matchA[i], j.matchN[i] = j.allA, j.allN
		}
	default:
		if err := j.lookup(ctx, rec); err != nil {
			return err
		}
	}
	if j.typ != InnerJoin && j.typ != RightOuterJoin {
		j.probeMatched = grow(j.probeMatched, n)
		clear(j.probeMatched)
	}
	j.probe, j.probeN, j.pos, j.posK = rec, n, 0, 0
	return nil
}

func (j *HashJoin) lookup(ctx context.Context, rec arrow.Record) error {
	keys, err := j.evalKeys(ctx, j.leftKeys, j.widenLeft, rec)
	if err != nil {
		return err
	}
	defer releaseArrays(keys)
	t := &j.table
	j.allOne = false
	if t.dense != nil {
		if words, ok := rawWords(keys[0]); ok {
			// A bigint or timestamp key without nulls is its own fixed
			// word: the encoder's copy and hashes are not needed.
			j.allOne = t.probeDense(words, j.matchA, j.matchN)
			return nil
		}
	}
	if d, ok := keys[0].(*array.Dictionary); ok && len(keys) == 1 {
		if done, err := j.lookupDictionary(d); done || err != nil {
			return err
		}
	}
	enc := j.probeEnc
	if err := enc.Encode(keys); err != nil {
		return err
	}
	j.allOne = j.probeEncoded(enc, j.matchA, j.matchN)
	j.exclude = j.keyExclusion(keys, enc, j.exclude)
	if j.exclude != nil {
		j.allOne = false
		for i, ex := range j.exclude {
			if ex {
				j.matchN[i] = 0
			}
		}
	}
	// A null fixed key has the word 0; null-safe joins send it to the null
	// slot instead of wherever 0 lives.
	if t.fixed && j.anyNullSafe && enc.AnyNull() {
		j.allOne = false
		ns := t.slots[t.nullSlot()]
		for i := range j.matchN {
			if enc.HasNull(i) {
				j.matchA[i], j.matchN[i] = ns.a, ns.n
			}
		}
	}
	return nil
}

// probeEncoded looks up the keys enc holds into outA, outN and reports
// whether every key had exactly one match.
func (j *HashJoin) probeEncoded(enc *KeyEncoder, outA, outN []int32) bool {
	t := &j.table
	switch {
	case t.dense != nil:
		return t.probeDense(enc.Fixed(), outA, outN)
	case t.fixed:
		j.pending = grow(j.pending, enc.Len())
		return t.probeFixed(enc.Fixed(), enc.Hashes(), outA, outN, j.pending)
	}
	return t.probeBytes(enc, outA, outN)
}

// chunk produces the output of the current batch's next rows: at most
// joinBatchRows candidate pairs, filtered by the residual condition, shaped
// by the join type. It returns nil when these rows produce nothing.
func (j *HashJoin) chunk(ctx context.Context) (arrow.Record, error) {
	if j.allOne && j.residual == nil && j.pos == 0 && j.probeN <= joinBatchRows {
		// Every left row has exactly one match: the output is the batch
		// beside the gathered build rows matchA.
		j.pos = j.probeN
		switch j.typ {
		case LeftAntiJoin:
			return nil, nil
		case LeftSemiJoin:
			return j.gather(j.schema, nil, nil, leftAll)
		}
		r := j.matchA[:j.probeN]
		j.markBuild(r)
		return j.gather(j.schema, nil, r, leftAll)
	}
	from := j.pos
	semiAnti := j.typ == LeftSemiJoin || j.typ == LeftAntiJoin
	j.expand(semiAnti && j.residual == nil, j.typ == LeftOuterJoin || j.typ == FullOuterJoin || j.typ == LeftAntiJoin)
	to := j.pos // rows [from, to) have had all their candidates
	cl, cr := j.candL, j.candR
	if j.residual != nil && len(cl) > 0 {
		cand, err := j.gather(j.joined, cl, cr, leftRows)
		if err != nil {
			return nil, err
		}
		kept, err := j.filterResidual(ctx, cand)
		if err != nil {
			cand.Release()
			return nil, err
		}
		if kept == len(cl) && (j.typ == InnerJoin || j.typ == RightOuterJoin) {
			j.markBuild(cr)
			return cand, nil // every candidate is output as it is
		}
		cand.Release()
		cl, cr = cl[:kept], cr[:kept]
	}
	j.markBuild(cr)
	switch j.typ {
	case InnerJoin, RightOuterJoin:
		return j.emit(cl, cr)
	case LeftOuterJoin, FullOuterJoin:
		for _, i := range cl {
			j.probeMatched[i] = true
		}
		ol, or := j.outL[:0], j.outR[:0]
		p := 0
		for i := int32(from); i < int32(to); i++ {
			for ; p < len(cl) && cl[p] == i; p++ {
				ol, or = append(ol, i), append(or, cr[p])
			}
			if !j.probeMatched[i] {
				ol, or = append(ol, i), append(or, -1)
			}
		}
		// The rest belong to row to, whose matches continue in the next
		// chunk.
		ol, or = append(ol, cl[p:]...), append(or, cr[p:]...)
		j.outL, j.outR = ol, or
		return j.emit(ol, or)
	case LeftSemiJoin:
		ol := j.outL[:0]
		for _, i := range cl {
			if !j.probeMatched[i] {
				j.probeMatched[i] = true
				ol = append(ol, i)
			}
		}
		j.outL = ol
		return j.emit(ol, nil)
	default: // LeftAntiJoin
		for _, i := range cl {
			j.probeMatched[i] = true
		}
		ol := j.outL[:0]
		for i := from; i < to; i++ {
			if !j.probeMatched[i] {
				ol = append(ol, int32(i))
			}
		}
		j.outL = ol
		return j.emit(ol, nil)
	}
}

// expand lists candidate pairs (candL, candR) from the resume point on,
// until the batch ends or joinBatchRows outputs are accounted for. With
// existsOnly a row yields at most one candidate (semi and anti joins need
// no more). With chargeMisses a row without candidates counts as one output
// (outer and anti joins emit it). A row whose candidates end is passed at
// once, so that it completes in the chunk that held its last candidate.
func (j *HashJoin) expand(existsOnly, chargeMisses bool) {
	cl, cr := j.candL[:0], j.candR[:0]
	if cap(cl) < joinBatchRows {
		cl, cr = make([]int32, 0, joinBatchRows), make([]int32, 0, joinBatchRows)
	}
	i, k, n := j.pos, j.posK, j.probeN
	matchA, matchN, rows := j.matchA[:n], j.matchN[:n], j.table.rows
	misses := 0
	for i < n && len(cl)+misses < joinBatchRows {
		c, a := matchN[i], matchA[i]
		switch {
		case c == 0:
			if chargeMisses {
				misses++
			}
			i++
		case c == 1:
			cl, cr = append(cl, int32(i)), append(cr, a)
			i++
		case existsOnly:
			cl, cr = append(cl, int32(i)), append(cr, rows[a])
			i++
		default:
			run := rows[int(a)+k : int(a)+int(c)]
			run = run[:min(len(run), joinBatchRows-len(cl)-misses)]
			for _, r := range run {
				cl, cr = append(cl, int32(i)), append(cr, r)
			}
			k += len(run)
			if k == int(c) {
				i, k = i+1, 0
			}
		}
	}
	j.pos, j.posK = i, k
	j.candL, j.candR = cl, cr
}

// filterResidual evaluates the residual condition over the candidate pairs
// in cand and compacts candL, candR to the pairs where it is true,
// returning how many remain.
func (j *HashJoin) filterResidual(ctx context.Context, cand arrow.Record) (int, error) {
	res, err := j.residual.Eval(ctx, cand)
	if err != nil {
		return 0, err
	}
	defer res.Release()
	b, ok := res.(*array.Boolean)
	if !ok || b.Len() != len(j.candL) {
		return 0, fmt.Errorf("vector: join condition returned %d values of %s for %d pairs", res.Len(), TypeName(res.DataType()), len(j.candL))
	}
	vals, off := bufferBytes(b.Data(), 1), b.Data().Offset()
	valid, _ := validBits(b)
	cl, cr := j.candL, j.candR
	w := 0
	for p := range cl {
		if bitutil.BitIsSet(vals, off+p) && (valid == nil || bitutil.BitIsSet(valid, off+p)) {
			cl[w], cr[w] = cl[p], cr[p]
			w++
		}
	}
	return w, nil
}

// markBuild records the build rows that matched, for right and full outer
// joins.
func (j *HashJoin) markBuild(rows []int32) {
	if j.buildMatched == nil {
		return
	}
	for _, r := range rows {
		j.buildMatched[r] = true
	}
}

// emit gathers the output record for pairs (l, r); r is nil for semi and
// anti joins. Nothing to emit gives nil.
func (j *HashJoin) emit(l, r []int32) (arrow.Record, error) {
	if len(l) == 0 {
		return nil, nil
	}
	return j.gather(j.schema, l, r, leftRows)
}

// leftMode says where gather takes the left columns from.
type leftMode int

const (
	leftRows leftMode = iota // the current batch's rows l
	leftAll                  // the whole current batch, as it is
	leftNull                 // nulls (unmatched build rows)
)

// gather builds a record of schema from the left columns as mode says and
// the build rows r (nil: no right columns); negative indices give nulls.
func (j *HashJoin) gather(schema *arrow.Schema, l, r []int32, mode leftMode) (arrow.Record, error) {
	var n int
	switch {
	case r != nil:
		n = len(r)
	case mode == leftAll:
		n = j.probeN
	default:
		n = len(l)
	}
	if mode == leftRows && isIota(l, j.probeN) {
		// Every left row once, in order: share the columns.
		mode = leftAll
	}
	cols := make([]arrow.Array, 0, schema.NumFields())
	switch mode {
	case leftNull:
		for _, f := range j.left.Schema().Fields() {
			cols = append(cols, array.MakeArrayOfNull(j.mem, f.Type, n))
		}
	case leftAll:
		for _, c := range j.probe.Columns() {
			c.Retain()
			cols = append(cols, c)
		}
	default:
		for _, c := range j.probe.Columns() {
			a, err := Take(j.mem, c, l)
			if err != nil {
				releaseArrays(cols)
				return nil, err
			}
			cols = append(cols, a)
		}
	}
	if r != nil {
		for _, c := range j.buildCols {
			var a arrow.Array
			var err error
			if c.Len() == 0 {
				a = array.MakeArrayOfNull(j.mem, c.DataType(), n)
			} else if a, err = Take(j.mem, c, r); err != nil {
				releaseArrays(cols)
				return nil, err
			}
			cols = append(cols, a)
		}
	}
	rec := array.NewRecord(schema, cols, int64(n))
	releaseArrays(cols)
	return rec, nil
}

// isIota reports whether idx is 0, 1, ..., n-1.
func isIota(idx []int32, n int) bool {
	if len(idx) != n {
		return false
	}
	for i, v := range idx {
		if v != int32(i) {
			return false
		}
	}
	return true
}

// rawWords returns the values of a bigint or timestamp column without nulls
// as the key encoder's fixed words (their two's-complement bits), without
// copying.
func rawWords(a arrow.Array) ([]uint64, bool) {
	if a.NullN() != 0 {
		return nil, false
	}
	var v []int64
	switch x := a.(type) {
	case *array.Int64:
		v = x.Int64Values()
	case *array.Timestamp:
		ts := x.TimestampValues()
		v = unsafe.Slice((*int64)(unsafe.SliceData(ts)), len(ts))
	default:
		return nil, false
	}
	return unsafe.Slice((*uint64)(unsafe.Pointer(unsafe.SliceData(v))), len(v)), true
}

// tail emits the build rows that never matched (right and full outer
// joins), then io.EOF.
func (j *HashJoin) tail() (arrow.Record, error) {
	if j.buildMatched == nil {
		return nil, io.EOF
	}
	or := j.outR[:0]
	for ; j.tailPos < j.buildN && len(or) < joinBatchRows; j.tailPos++ {
		if !j.buildMatched[j.tailPos] {
			or = append(or, int32(j.tailPos))
		}
	}
	j.outR = or
	if len(or) == 0 {
		return nil, io.EOF
	}
	return j.gather(j.schema, nil, or, leftNull)
}

// Close implements Operator: it releases the build side and the current
// batch and closes both inputs.
func (j *HashJoin) Close() error {
	if j.closed {
		return nil
	}
	j.closed = true
	j.heap.release()
	j.releaseProbe()
	releaseArrays(j.buildCols)
	j.buildCols = nil
	j.probeDict.release()
	if j.table.enc != nil {
		j.table.enc.Release()
	}
	j.table.release()
	j.buildMatched, j.probeMatched = nil, nil
	errL := j.left.Close()
	errR := j.right.Close()
	if errL != nil {
		return errL
	}
	return errR
}
