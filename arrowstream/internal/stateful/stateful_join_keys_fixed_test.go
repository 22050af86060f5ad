package stateful

import (
	"context"
	"fmt"
	"math"
	"math/rand"
	"runtime"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// fixedKeyTestRecord is n rows of (k dt, t timestamp): small keys of both
// signs, the type's extremes, nulls.
func fixedKeyTestRecord(mem memory.Allocator, rng *rand.Rand, dt arrow.DataType, n int) arrow.Record {
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: dt, Nullable: true}, {Name: "t", Type: vector.Timestamp, Nullable: true}}, nil)
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for j := 0; j < n; j++ {
		v := rng.Int63n(81) - 40
		switch rng.Intn(30) {
		case 0:
			v = math.MinInt64
		case 1:
			v = math.MaxInt64
		}
		kb := b.Field(0)
		if rng.Intn(9) == 0 {
			kb.AppendNull()
		} else {
			switch kb := kb.(type) {
			case *array.Int64Builder:
				kb.Append(v)
			case *array.TimestampBuilder:
				kb.Append(arrow.Timestamp(v))
			case *array.Int32Builder:
				kb.Append(int32(v))
			case *array.Date32Builder:
				kb.Append(arrow.Date32(int32(v)))
			case *array.Int16Builder:
				kb.Append(int16(v))
			case *array.Int8Builder:
				kb.Append(int8(v))
			case *array.Float64Builder:
				kb.Append(float64(v))
			default:
				panic(fmt.Sprintf("no test values of %s", dt))
			}
		}
		b.Field(1).(*array.TimestampBuilder).Append(arrow.Timestamp(j))
	}
	return b.NewRecord()
}

// TestFixedPartneredKeepMatchesCodec: the max bound's side asks its rows'
// partners from the integral key column's values (fixedPartneredKeep);
// the rows kept are those partneredKeep keeps over the row codec's words
// (the generic path, the oracle) for every integral type (sign
// extension, extremes), null keys (the codec's word 0, in the set or
// not), sets scanned (up to 8 keys) and hashed, sliced records. A
// float key and a key of two columns are not read there (ok false: the
// caller encodes them).
func TestFixedPartneredKeepMatchesCodec(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	types := []arrow.DataType{arrow.PrimitiveTypes.Int64, vector.Timestamp, arrow.PrimitiveTypes.Int32,
		arrow.FixedWidthTypes.Date32, arrow.PrimitiveTypes.Int16, arrow.PrimitiveTypes.Int8, arrow.PrimitiveTypes.Float64}
	for _, dt := range types {
		for seed := int64(1); seed <= 12; seed++ {
			t.Run(fmt.Sprintf("%s/seed%d", dt, seed), func(t *testing.T) {
				rng := rand.New(rand.NewSource(seed))
				n := 1 + rng.Intn(3000)
				full := fixedKeyTestRecord(mem, rng, dt, n+7)
				defer full.Release()
				rec := full.NewSlice(int64(rng.Intn(7)), int64(n+7-rng.Intn(7)))
				defer rec.Release()
				n = int(rec.NumRows())
				codec, err := newValueCodec(mem, rec.Schema(), []int{0, 1})
				if err != nil {
					t.Fatal(err)
				}
				keys := []vector.Expr{vector.Col("k")}
				if seed == 12 {
					keys = append(keys, vector.Col("t"))
				}
				side := &joinSide{name: "bids", schema: rec.Schema(), codec: codec, keys: keys}
				s := &statefulJoin{mem: mem, keep: mem, fixedKeys: true, nullSafe: []bool{false, false}, sides: [2]*joinSide{side, side}}
				defer s.Close()

				// The oracle's words: the row codec's.
				enc, err := vector.NewKeyEncoder(mem, []arrow.DataType{dt})
				if err != nil {
					t.Fatal(err)
				}
				defer enc.Release()
				if err := enc.Encode([]arrow.Array{rec.Column(0)}); err != nil {
					t.Fatal(err)
				}
				words := enc.Fixed()
				set := map[uint64]struct{}{}
				size := []int{0, 1, 3, 8, 9, 40}[rng.Intn(6)]
				for len(set) < size {
					switch rng.Intn(4) {
					case 0:
						set[0] = struct{}{}
					case 1:
						set[rng.Uint64()] = struct{}{}
					default:
						set[words[rng.Intn(n)]] = struct{}{}
					}
				}
				r := &sideRows{rec: rec, unstored: make([]bool, n)}
				for j := range r.unstored {
					r.unstored[j] = rng.Intn(10) != 0
				}
				want := partneredKeep(r, words, set)
				for round := 0; round < 2; round++ { // the second with the scratch grown
					got, ok, err := s.fixedPartneredKeep(ctx, 0, r, set)
					if err != nil {
						t.Fatal(err)
					}
					if dt == arrow.PrimitiveTypes.Float64 || len(keys) > 1 {
						if ok || got != nil {
							t.Fatalf("ok %v and %d rows for a key of %s over %d columns, want it left to the codec", ok, len(got), dt, len(keys))
						}
						return
					}
					if !ok {
						t.Fatalf("a key of %s not read from its column", dt)
					}
					if (got == nil) != (want == nil) || !slices.Equal(got, want) {
						t.Fatalf("kept %d rows %v…, the codec's words keep %d %v…", len(got), got[:min(len(got), 8)], len(want), want[:min(len(want), 8)])
					}
				}
			})
		}
	}
}

// TestDropUnpartneredReusesScratch: the max bound's side of an epoch
// (10K rows, nearly all unstored, a small other side) is dropped to its
// partnered rows without slices of all its rows made afresh: the kept
// rows' keys only. Before, each epoch made the key words, key nulls and
// kept-row list of every row (about 130 KB, their pages faulted in:
// half of Nexmark q7's join).
func TestDropUnpartneredReusesScratch(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	codec, err := newValueCodec(mem, pruneTestSchema, []int{0, 1})
	if err != nil {
		t.Fatal(err)
	}
	side := &joinSide{name: "bids", schema: pruneTestSchema, codec: codec, keys: []vector.Expr{vector.Col("v")}}
	other := &joinSide{name: "max", schema: pruneTestSchema, codec: codec, keys: []vector.Expr{vector.Col("v")}}
	s := &statefulJoin{mem: mem, keep: mem, fixedKeys: true, nullSafe: []bool{false},
		sides: [2]*joinSide{side, other}, state: statePartitions{scheme: partitionMurmur3}}
	defer s.Close()
	rng := rand.New(rand.NewSource(1))
	const n = 10_000
	epoch := func() (allocated uint64, kept int) {
		fv, ft := []*int64{new(int64), new(int64)}, []*int64{new(int64), new(int64)}
		*fv[0], *fv[1] = 7, 11
		frec := pruneTestRecord(mem, fv, ft)
		defer frec.Release()
		fr := &sideRows{rec: frec, excluded: make([]bool, 2)}
		if err := s.encodeKeys(ctx, other, fr); err != nil {
			t.Fatal(err)
		}
		vals, times := make([]*int64, n), make([]*int64, n)
		r := &sideRows{excluded: make([]bool, n), unstored: make([]bool, n)}
		for j := range vals {
			v, tm := rng.Int63n(1000), int64(j)
			vals[j], times[j] = &v, &tm
			r.unstored[j] = rng.Intn(50) != 0
		}
		r.rec = pruneTestRecord(mem, vals, times)
		defer r.release()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		if err := s.dropUnpartnered(ctx, 0, r, fr); err != nil {
			t.Fatal(err)
		}
		runtime.ReadMemStats(&after)
		return after.TotalAlloc - before.TotalAlloc, int(r.rec.NumRows())
	}
	epoch() // the first grows the scratch
	for round := 0; round < 3; round++ {
		bytes, kept := epoch()
		if kept == 0 || kept == n {
			t.Fatalf("%d of %d rows kept: the test should drop some", kept, n)
		}
		// The kept rows' keys, key nulls, hashes and flags (about 20
		// bytes a row), their record, the other side's key set.
		if limit := uint64(64*kept + 16<<10); bytes > limit {
			t.Fatalf("dropUnpartnered allocated %d bytes for %d rows (%d kept), want at most %d", bytes, n, kept, limit)
		}
	}
}

// BenchmarkDropUnpartnered: the max bound's side of a Nexmark q7 epoch
// (10K bids, 1 in 50 stored, two window maxima on the other side)
// dropped to its partnered rows:
//
//	go test -run '^$' -bench DropUnpartnered -benchmem ./arrowstream/internal/stateful/
func BenchmarkDropUnpartnered(b *testing.B) {
	mem := memory.NewGoAllocator()
	ctx := context.Background()
	codec, err := newValueCodec(mem, pruneTestSchema, []int{0, 1})
	if err != nil {
		b.Fatal(err)
	}
	side := &joinSide{name: "bids", schema: pruneTestSchema, codec: codec, keys: []vector.Expr{vector.Col("v")}}
	other := &joinSide{name: "max", schema: pruneTestSchema, codec: codec, keys: []vector.Expr{vector.Col("v")}}
	s := &statefulJoin{mem: mem, keep: mem, fixedKeys: true, nullSafe: []bool{false},
		sides: [2]*joinSide{side, other}, state: statePartitions{scheme: partitionMurmur3}}
	defer s.Close()
	fv, ft := []*int64{new(int64), new(int64)}, []*int64{new(int64), new(int64)}
	*fv[0], *fv[1] = 7, 11
	frec := pruneTestRecord(mem, fv, ft)
	defer frec.Release()
	fr := &sideRows{rec: frec, excluded: make([]bool, 2)}
	if err := s.encodeKeys(ctx, other, fr); err != nil {
		b.Fatal(err)
	}
	const n = 10_000
	rng := rand.New(rand.NewSource(1))
	vals, times := make([]*int64, n), make([]*int64, n)
	unstored := make([]bool, n)
	for j := range vals {
		v, tm := rng.Int63n(100_000), int64(j)
		vals[j], times[j] = &v, &tm
		unstored[j] = rng.Intn(50) != 0
	}
	rec := pruneTestRecord(mem, vals, times)
	defer rec.Release()
	for b.Loop() {
		rec.Retain()
		r := &sideRows{rec: rec, excluded: make([]bool, n), unstored: unstored}
		if err := s.dropUnpartnered(ctx, 0, r, fr); err != nil {
			b.Fatal(err)
		}
		r.release()
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*n), "ns/row")
}

// TestFirstEndMatchesFloorMod: the max bound's first window end at or
// above lo, kept from the last row's (firstEnd), equals the division's
// answer for rows in time order, out of order, on the edges of a slide
// (lo at an end, one past it, a slide below it and one above that) and
// far apart (the difference overflowing int64).
func TestFirstEndMatchesFloorMod(t *testing.T) {
	rng := rand.New(rand.NewSource(1))
	for round := 0; round < 200; round++ {
		slide := []int64{1, 2, 7, 1000, 2_000_000, 10_000_000}[rng.Intn(6)]
		align := rng.Int63n(slide)
		var f firstEnd
		lo := rng.Int63n(1<<40) - 1<<39
		for k := 0; k < 500; k++ {
			want := lo + floorMod(align-lo, slide)
			if got := f.at(lo, align, slide); got != want {
				t.Fatalf("slide %d align %d: first end at or above %d is %d, want %d", slide, align, lo, got, want)
			}
			switch rng.Intn(8) {
			case 0:
				lo = want - slide // a slide below the end
			case 1:
				lo = want - slide + 1
			case 2:
				lo = want + 1
			case 3:
				lo = want
			case 4:
				lo -= rng.Int63n(3 * slide) // a straggler
			case 5:
				lo = []int64{math.MinInt64 / 2, math.MaxInt64 / 2, 0}[rng.Intn(3)]
			default:
				lo += rng.Int63n(slide/3 + 1)
			}
		}
	}
}
