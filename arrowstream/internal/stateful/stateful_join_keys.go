package stateful

import (
	"bytes"
	"context"
	"fmt"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"

	"github.com/arrowstream/arrowstream/vector"
)

// A side's join keys bound once and kept for the query's epochs. Each
// epoch with rows on a side evaluated its key expressions over the new
// rows; it bound them again, built the key record's schema (a name index
// map each) and a fresh row codec whose encoder and hash buffers then grew
// from empty: about a tenth of a Nexmark q3 epoch, whose sides bring a few
// hundred rows (BenchmarkEngineEpochs/q3/full profile, session 17). An
// Evaluator may keep scratch buffers between calls and serves one
// goroutine at a time (vector.Evaluator), and the new rows of both sides
// are loaded one after the other on the query's goroutine, so the kept
// evaluators, schema and codec are reused there. The restore path, whose
// partitions load in parallel, binds its own (encodeKeys).

// joinKeyEval is a side's join keys bound over its row schema, with the
// key record's schema and a key codec over it.
type joinKeyEval struct {
	evs    []vector.Evaluator
	schema *arrow.Schema
	codec  *rowCodec
}

// bindKeys binds side's join keys; the codec is made at the first encode
// (newKeyEvalCodec), from the types the keys evaluate to.
func (s *statefulJoin) bindKeys(side *joinSide) (*joinKeyEval, error) {
	ke := &joinKeyEval{evs: make([]vector.Evaluator, len(side.keys))}
	for k, e := range side.keys {
		ev, err := e.Bind(side.codec.schema, s.mem)
		if err != nil {
			return nil, err
		}
		ke.evs[k] = vector.Plain(ev, s.mem)
	}
	return ke, nil
}

// keptKeys returns side i's kept key evaluators, bound at first use.
func (s *statefulJoin) keptKeys(i int) (*joinKeyEval, error) {
	if s.keyEval[i] == nil {
		ke, err := s.bindKeys(s.sides[i])
		if err != nil {
			return nil, err
		}
		s.keyEval[i] = ke
	}
	return s.keyEval[i], nil
}

// codecFor returns the key codec for key columns cols, made again when
// their types differ from the kept schema's (the first encode, or an
// evaluator whose result type changed).
func (ke *joinKeyEval) codecFor(s *statefulJoin, cols []arrow.Array) (*rowCodec, error) {
	if ke.codec != nil && sameTypes(ke.schema, cols) {
		return ke.codec, nil
	}
	fields := make([]arrow.Field, len(cols))
	idx := make([]int, len(cols))
	for k, a := range cols {
		fields[k] = arrow.Field{Name: fmt.Sprintf("k%d", k), Type: a.DataType(), Nullable: true}
		idx[k] = k
	}
	schema := arrow.NewSchema(fields, nil)
	codec, err := newRowCodec(s.mem, schema, idx)
	if err != nil {
		return nil, err
	}
	if ke.codec != nil {
		ke.codec.enc.Release()
	}
	ke.schema, ke.codec = schema, codec
	return codec, nil
}

// sameTypes tells whether cols have the types of schema's fields.
func sameTypes(schema *arrow.Schema, cols []arrow.Array) bool {
	if schema.NumFields() != len(cols) {
		return false
	}
	for k, a := range cols {
		t, want := a.DataType(), schema.Field(k).Type
		// Parameterless types are singletons: comparing the interface
		// values is enough, and arrow.TypeEqual would reflect.
		if t != want && !arrow.TypeEqual(t, want) {
			return false
		}
	}
	return true
}

// release frees the codec's encoder buffers.
func (ke *joinKeyEval) release() {
	if ke != nil && ke.codec != nil {
		ke.codec.enc.Release()
		ke.codec = nil
	}
}

// encodeKeys evaluates the side's join keys over its rows, binding them
// for this call (the restore path: see above).
func (s *statefulJoin) encodeKeys(ctx context.Context, side *joinSide, r *sideRows) error {
	if r.rec.NumRows() == 0 {
		s.encodeNoKeys(r)
		return nil
	}
	ke, err := s.bindKeys(side)
	if err != nil {
		return err
	}
	defer ke.release()
	return s.encodeKeysWith(ctx, ke, r)
}

// encodeNoKeys gives r, which has no rows, its empty key slices. An epoch
// without rows on a side (most sides of an idle query) binds no key
// expressions and builds no key schema nor codec, which was half of the
// join's empty epoch.
func (s *statefulJoin) encodeNoKeys(r *sideRows) {
	r.keyNull, r.hashes = []bool{}, []uint64{}
	if s.fixedKeys {
		r.words = []uint64{}
	} else {
		r.keys = []string{}
	}
}

// encodeKeysWith evaluates bound keys ke over r's rows (at least one) and
// sets r's keys, key nulls and hashes.
func (s *statefulJoin) encodeKeysWith(ctx context.Context, ke *joinKeyEval, r *sideRows) error {
	return s.encodeKeysHashing(ctx, ke, r, true, nil)
}

// encodeKeysHashing is encodeKeysWith; without hashes it leaves r.hashes
// nil (the partition hash, Spark's Murmur3 of the key columns, is about
// half of the encoding: a row the max bound drops never needs it). With
// buf the key words, key nulls and hashes are buf's slices (an epoch's
// new rows: see joinKeyScratch), else fresh ones.
func (s *statefulJoin) encodeKeysHashing(ctx context.Context, ke *joinKeyEval, r *sideRows, hashes bool, buf *joinKeyScratch) error {
	n := int(r.rec.NumRows())
	keyCols := make([]arrow.Array, len(ke.evs))
	defer func() {
		for _, c := range keyCols {
			if c != nil {
				c.Release()
			}
		}
	}()
	for k, ev := range ke.evs {
		a, err := ev.Eval(ctx, r.rec)
		if err != nil {
			return err
		}
		keyCols[k] = a
	}
	codec, err := ke.codecFor(s, keyCols)
	if err != nil {
		return err
	}
	keyRec := array.NewRecord(ke.schema, keyCols, int64(n))
	defer keyRec.Release()
	// The codec outlives the key columns: it must not keep them.
	defer func() { codec.last = nil }()
	r.hashes = nil
	if buf != nil {
		r.keyNull = bools(&buf.keyNull, n)
		if hashes {
			r.hashes = uint64s(&buf.hashes, n)
		}
		if s.fixedKeys {
			r.words = uint64s(&buf.words, n)
		}
	} else {
		r.keyNull = make([]bool, n)
		if hashes {
			r.hashes = make([]uint64, n)
		}
		if s.fixedKeys {
			r.words = make([]uint64, n)
		}
	}
	if !s.fixedKeys {
		r.keys = make([]string, n)
	}
	if err := codec.encode(keyRec); err != nil {
		return err
	}
	if s.fixedKeys {
		if !codec.enc.IsFixed() {
			return fmt.Errorf("arrowstream: stream-stream join key of %s is not fixed-width", vector.TypeName(keyCols[0].DataType()))
		}
		copy(r.words, codec.enc.Fixed())
	} else {
		shareKeyRuns(codec, r.keys)
	}
	for i := range r.hashes {
		r.hashes[i] = s.state.scheme.hash(codec, i)
	}
	s.rowsHashed.Add(int64(len(r.hashes)))
	for k, c := range keyCols {
		if c.NullN() == 0 || s.nullSafe[k] {
			continue
		}
		for i := 0; i < n; i++ {
			if c.IsNull(i) {
				r.keyNull[i] = true
			}
		}
	}
	return nil
}

// encodeNewKeys is encodeKeys for an epoch's new rows of side, with the
// side's kept evaluators and codec.
func (s *statefulJoin) encodeNewKeys(ctx context.Context, side *joinSide, r *sideRows) error {
	return s.encodeNewKeysHashing(ctx, side, r, true)
}

// encodeNewKeysHashing is encodeNewKeys, without the partition hashes
// unless hashes.
func (s *statefulJoin) encodeNewKeysHashing(ctx context.Context, side *joinSide, r *sideRows, hashes bool) error {
	if r.rec.NumRows() == 0 {
		s.encodeNoKeys(r)
		return nil
	}
	i := 0
	if side == s.sides[1] {
		i = 1
	}
	ke, err := s.keptKeys(i)
	if err != nil {
		return err
	}
	return s.encodeKeysHashing(ctx, ke, r, hashes, &s.scratch.newKeys[i])
}

// shareKeyRuns sets keys[i] to the encoded key of row i of codec's last
// encode. The keys share one string (one allocation, not one per row),
// built without a second copy (strings.Builder), and a key equal to the
// previous row's is that row's string, not a copy: rows often come in
// runs of one key (q5 joins on the window, and an evicting epoch's
// counts come window by window), so the string holds each run's key
// once, and the kept state with it.
func shareKeyRuns(codec *rowCodec, keys []string) {
	// Passes over the rows compare each key with the previous one (a few
	// bytes): sizing, copying the runs' keys, slicing them. A fixed-width
	// encoding's at is one scratch buffer: the previous key is copied.
	fixed := codec.enc.IsFixed()
	var scratch [16]byte
	keep := func(k []byte) []byte {
		if fixed {
			return append(scratch[:0], k...)
		}
		return k
	}
	size := 0
	var prev []byte
	for i := range keys {
		k := codec.at(i)
		if i == 0 || !bytes.Equal(k, prev) {
			size += len(k)
		}
		prev = keep(k)
	}
	var sb strings.Builder
	sb.Grow(size)
	for i := range keys {
		k := codec.at(i)
		if i == 0 || !bytes.Equal(k, prev) {
			sb.Write(k)
		}
		prev = keep(k)
	}
	all, off := sb.String(), 0
	for i := range keys {
		k := codec.at(i)
		if i > 0 && bytes.Equal(k, prev) {
			keys[i] = keys[i-1]
		} else {
			keys[i] = all[off : off+len(k)]
			off += len(k)
		}
		prev = keep(k)
	}
}

// The max bound's side of Nexmark q7 brings 10K bids an epoch of which
// a handful can join: dropUnpartnered asks, for each row not stored,
// whether the other side has its key. With one integral key column the
// row codec's word of a key is the column's value (vector.KeyEncoder's
// fixed path: the value sign-extended to 64 bits, 0 for a null), so the
// rows are asked straight from the key column's values: no key record,
// no codec, no copy of the words into fresh slices, which were half of
// the join's epoch (their pages faulted in each epoch). The rows kept
// are encoded afterwards as any (encodeNewKeys).

// fixedPartneredKeep evaluates side i's single join key over r's rows
// (r.unstored marked, keys not encoded) and returns the rows to keep:
// stored, or their key's word in set, as partneredKeep over the codec's
// words would. The slice is the join's scratch (valid until the next
// call), nil when every row is kept. ok is false, and nothing is
// returned, when the key column is not of a type read here (the caller
// encodes the keys).
func (s *statefulJoin) fixedPartneredKeep(ctx context.Context, i int, r *sideRows, set map[uint64]struct{}) (keep []int32, ok bool, err error) {
	ke, err := s.keptKeys(i)
	if err != nil {
		return nil, false, err
	}
	if len(ke.evs) != 1 {
		return nil, false, nil
	}
	col, err := ke.evs[0].Eval(ctx, r.rec)
	if err != nil {
		return nil, false, err
	}
	defer col.Release()
	n := int(r.rec.NumRows())
	if col.Len() != n {
		return nil, false, fmt.Errorf("arrowstream: join key of %d rows over %d rows", col.Len(), n)
	}
	buf := int32s(&s.scratch.partnered, n)[:0]
	switch c := col.(type) {
	case *array.Int64:
		keep = keepPartnered(c.Int64Values(), col, r.unstored, set, buf)
	case *array.Timestamp:
		keep = keepPartnered(c.TimestampValues(), col, r.unstored, set, buf)
	case *array.Int32:
		keep = keepPartnered(c.Int32Values(), col, r.unstored, set, buf)
	case *array.Date32:
		keep = keepPartnered(c.Date32Values(), col, r.unstored, set, buf)
	case *array.Int16:
		keep = keepPartnered(c.Int16Values(), col, r.unstored, set, buf)
	case *array.Int8:
		keep = keepPartnered(c.Int8Values(), col, r.unstored, set, buf)
	default:
		return nil, false, nil
	}
	if len(keep) == n {
		return nil, true, nil
	}
	return keep, true, nil
}

// keepPartnered appends to keep the rows j of vals (the key column col's
// values) not unstored or whose word is in set, and returns it. A set of
// a few keys (q7: the window maxima of an epoch or two) is scanned, not
// hashed into, for each row.
func keepPartnered[T ~int8 | ~int16 | ~int32 | ~int64](vals []T, col arrow.Array, unstored []bool, set map[uint64]struct{}, keep []int32) []int32 {
	var few [8]uint64
	small := len(set) <= len(few)
	words := few[:0]
	if small {
		for w := range set {
			words = append(words, w)
		}
	}
	nulls := col.NullN() > 0
	for j, v := range vals {
		if !unstored[j] {
			keep = append(keep, int32(j))
			continue
		}
		w := uint64(int64(v))
		if nulls && col.IsNull(j) {
			w = 0 // the codec's word of a null key
		}
		if small {
			for _, x := range words {
				if x == w {
					keep = append(keep, int32(j))
					break
				}
			}
		} else if _, ok := set[w]; ok {
			keep = append(keep, int32(j))
		}
	}
	return keep
}
