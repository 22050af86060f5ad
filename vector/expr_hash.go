package vector

import (
	"context"
	"encoding/binary"
	"fmt"
	"math"
	"math/bits"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/bitutil"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// Hash is hash(args...), Spark's Murmur3Hash: Murmur3_x86_32 with seed 42,
// chained over the arguments (each argument's hash is the seed of the
// next), never NULL. Per type, as Spark: boolean and int and date hash as a
// 4-byte int (true = 1), bigint and timestamp as an 8-byte long, double as
// the bits of the value with -0.0 hashed as 0.0 (NaN canonical), string and
// binary as their bytes with Spark's legacy tail handling
// (hashUnsafeBytes), decimal(p<=18) as the unscaled long and wider decimals
// as the bytes of the unscaled big-endian two's complement. A NULL argument
// leaves the running hash unchanged.
func Hash(args ...Expr) Expr { return &FuncExpr{Name: "hash", Args: args, bind: bindHash} }

const hashSeed = 42

func bindHash(f *FuncExpr, in *arrow.Schema, mem memory.Allocator, args []Evaluator) (Evaluator, error) {
	if len(args) == 0 {
		return nil, fmt.Errorf("hash requires at least one argument: %w", ErrArgumentCount)
	}
	for k, a := range args {
		if !hashable(Unwrap(a.DataType())) {
			return nil, fnErrArgType(f.Args[k].String(), a.DataType(), "of an atomic type")
		}
	}
	return fnFoldConstant(f, in, mem, &hashEval{args: args, mem: mem}, args...)
}

func hashable(dt arrow.DataType) bool {
	switch dt.ID() {
	case arrow.NULL, arrow.BOOL, arrow.INT8, arrow.INT16, arrow.INT32, arrow.INT64, arrow.FLOAT32, arrow.FLOAT64,
		arrow.STRING, arrow.BINARY, arrow.DATE32, arrow.TIMESTAMP, arrow.DECIMAL128:
		return true
	}
	return false
}

type hashEval struct {
	args []Evaluator
	mem  memory.Allocator
}

func (h *hashEval) DataType() arrow.DataType { return Int32 }

func (h *hashEval) Eval(ctx context.Context, rec arrow.Record) (arrow.Array, error) {
	n := int(rec.NumRows())
	buf, out := fnFixedBuf[int32](h.mem, n)
	for i := range out {
		out[i] = hashSeed
	}
	for _, a := range h.args {
		if c, ok := a.(ConstantEvaluator); ok {
			if c.Value() == nil {
				continue
			}
			// A constant is hashed as a one-row column against every seed.
			one, err := MakeConstantArray(h.mem, c.DataType(), c.Value(), 1)
			if err != nil {
				buf.Release()
				return nil, err
			}
			hashConstant(one, out)
			one.Release()
			continue
		}
		arr, err := a.Eval(ctx, rec)
		if err != nil {
			buf.Release()
			return nil, err
		}
		if d, ok := arr.(*array.Dictionary); ok && !IsStringLike(d.DataType()) {
			plain, err := DecodeDictionary(h.mem, d)
			arr.Release()
			if err != nil {
				buf.Release()
				return nil, err
			}
			arr = plain
		}
		hashColumn(arr, out)
		arr.Release()
	}
	return fnNewArray(Int32, n, []*memory.Buffer{nil, buf}, nil, 0), nil
}

// hashConstant folds the single value of one into every running hash.
func hashConstant(one arrow.Array, out []int32) {
	tmp := []int32{0}
	for i := range out {
		tmp[0] = out[i]
		hashColumn(one, tmp)
		out[i] = tmp[0]
	}
}

// hashColumn folds every non-null value of arr into out[i].
func hashColumn(arr arrow.Array, out []int32) {
	var valid []byte
	off := arr.Data().Offset()
	if arr.NullN() != 0 {
		valid = arr.NullBitmapBytes()
	}
	isValid := func(i int) bool { return valid == nil || bitutil.BitIsSet(valid, off+i) }
	switch a := arr.(type) {
	case *array.Null:
	case *array.Boolean:
		for i := range out {
			if isValid(i) {
				v := int32(0)
				if a.Value(i) {
					v = 1
				}
				out[i] = murmurInt(v, out[i])
			}
		}
	case *array.Int8:
		hashInts(a.Int8Values(), out, valid, off)
	case *array.Int16:
		hashInts(a.Int16Values(), out, valid, off)
	case *array.Int32:
		hashInts(a.Int32Values(), out, valid, off)
	case *array.Date32:
		hashInts(fnRawValues[int32](a), out, valid, off)
	case *array.Int64:
		hashLongs(a.Int64Values(), out, valid, off)
	case *array.Timestamp:
		hashLongs(fnRawValues[int64](a), out, valid, off)
	case *array.Float32:
		for i, v := range a.Float32Values() {
			if isValid(i) {
				b := int32(math.Float32bits(v))
				if v == 0 {
					b = 0
				} else if v != v {
					b = 0x7fc00000
				}
				out[i] = murmurInt(b, out[i])
			}
		}
	case *array.Float64:
		for i, v := range a.Float64Values() {
			if isValid(i) {
				out[i] = murmurLong(doubleHashBits(v), out[i])
			}
		}
	case *array.String, *array.Binary:
		offs, data := fnBinaryView(arr)
		for i := range out {
			if isValid(i) {
				out[i] = murmurBytes(data[offs[i]:offs[i+1]], out[i])
			}
		}
	case *array.Dictionary:
		idx, _ := DictionaryIndices(a)
		offs, data := fnBinaryView(a.Dictionary())
		for i, k := range idx {
			if k >= 0 {
				out[i] = murmurBytes(data[offs[k]:offs[k+1]], out[i])
			}
		}
	case *array.Decimal128:
		prec := a.DataType().(*arrow.Decimal128Type).Precision
		for i := range out {
			if !isValid(i) {
				continue
			}
			n := a.Value(i)
			if prec <= 18 {
				out[i] = murmurLong(int64(n.LowBits()), out[i])
			} else {
				out[i] = murmurBytes(javaBigIntegerBytes(n.HighBits(), n.LowBits()), out[i])
			}
		}
	}
}

// doubleHashBits is Spark's double hashing input: 0 for ±0.0, the
// canonical NaN, otherwise the IEEE bits.
func doubleHashBits(v float64) int64 {
	switch {
	case v == 0:
		return 0
	case v != v:
		return 0x7ff8000000000000
	}
	return int64(math.Float64bits(v))
}

func hashInts[T int8 | int16 | int32](vals []T, out []int32, valid []byte, off int) {
	if valid == nil {
		for i, v := range vals {
			out[i] = murmurInt(int32(v), out[i])
		}
		return
	}
	for i, v := range vals {
		if bitutil.BitIsSet(valid, off+i) {
			out[i] = murmurInt(int32(v), out[i])
		}
	}
}

func hashLongs(vals []int64, out []int32, valid []byte, off int) {
	if valid == nil {
		for i, v := range vals {
			out[i] = murmurLong(v, out[i])
		}
		return
	}
	for i, v := range vals {
		if bitutil.BitIsSet(valid, off+i) {
			out[i] = murmurLong(v, out[i])
		}
	}
}

// javaBigIntegerBytes is BigInteger.toByteArray of a 128-bit value: the
// minimal big-endian two's complement.
func javaBigIntegerBytes(hi int64, lo uint64) []byte {
	var b [16]byte
	binary.BigEndian.PutUint64(b[:8], uint64(hi))
	binary.BigEndian.PutUint64(b[8:], lo)
	k := 0
	for k < 15 {
		if b[k] == 0 && b[k+1]&0x80 == 0 || b[k] == 0xff && b[k+1]&0x80 != 0 {
			k++
			continue
		}
		break
	}
	return b[k:]
}

// Murmur3_x86_32 as Spark's Murmur3_x86_32 class.

const (
	murmurC1 = 0xcc9e2d51
	murmurC2 = 0x1b873593
)

func mixK1(k1 uint32) uint32 {
	k1 *= murmurC1
	k1 = bits.RotateLeft32(k1, 15)
	return k1 * murmurC2
}

func mixH1(h1, k1 uint32) uint32 {
	h1 ^= k1
	h1 = bits.RotateLeft32(h1, 13)
	return h1*5 + 0xe6546b64
}

func fmix(h1 uint32, length uint32) int32 {
	h1 ^= length
	h1 ^= h1 >> 16
	h1 *= 0x85ebca6b
	h1 ^= h1 >> 13
	h1 *= 0xc2b2ae35
	h1 ^= h1 >> 16
	return int32(h1)
}

func murmurInt(v, seed int32) int32 {
	return fmix(mixH1(uint32(seed), mixK1(uint32(v))), 4)
}

func murmurLong(v int64, seed int32) int32 {
	h1 := mixH1(uint32(seed), mixK1(uint32(v)))
	h1 = mixH1(h1, mixK1(uint32(uint64(v)>>32)))
	return fmix(h1, 8)
}

// murmurBytes is Spark's hashUnsafeBytes: little-endian 4-byte words, then
// each remaining byte (sign-extended) as a word of its own.
func murmurBytes(b []byte, seed int32) int32 {
	h1 := uint32(seed)
	n := len(b) &^ 3
	for i := 0; i < n; i += 4 {
		h1 = mixH1(h1, mixK1(binary.LittleEndian.Uint32(b[i:])))
	}
	for _, c := range b[n:] {
		h1 = mixH1(h1, mixK1(uint32(int32(int8(c)))))
	}
	return fmix(h1, uint32(len(b)))
}
