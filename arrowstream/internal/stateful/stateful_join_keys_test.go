package stateful

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"testing"
	"unsafe"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/vector"
)

// countingExpr counts the binds of an expression.
type countingExpr struct {
	vector.Expr
	binds *int
}

func (e countingExpr) Bind(in *arrow.Schema, mem memory.Allocator) (vector.Evaluator, error) {
	*e.binds++
	return e.Expr.Bind(in, mem)
}

// keysTestRecord is n rows of (a int64, b string, c int32), nulls in
// every column.
func keysTestRecord(mem memory.Allocator, rng *rand.Rand, schema *arrow.Schema, n int) arrow.Record {
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	for j := 0; j < n; j++ {
		if rng.Intn(9) == 0 {
			b.Field(0).AppendNull()
		} else {
			b.Field(0).(*array.Int64Builder).Append(rng.Int63n(50) - 25)
		}
		if rng.Intn(11) == 0 {
			b.Field(1).AppendNull()
		} else {
			b.Field(1).(*array.StringBuilder).Append(fmt.Sprintf("k%d", rng.Intn(30)))
		}
		if rng.Intn(13) == 0 {
			b.Field(2).AppendNull()
		} else {
			b.Field(2).(*array.Int32Builder).Append(rng.Int31n(20))
		}
	}
	return b.NewRecord()
}

// TestJoinKeysKeptAcrossEpochs: an epoch's new rows are keyed by the
// side's evaluators and codec bound once for the query (not bound again
// per epoch), with the keys, key nulls and hashes that binding afresh
// gives, over epochs of different sizes, fixed and byte keys, both
// partitioning schemes, null-safe keys; nothing leaks after Close.
func TestJoinKeysKeptAcrossEpochs(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "c", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	}, nil)
	codec, err := newValueCodec(mem, schema, []int{0, 1, 2})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		name     string
		keys     []string
		fixed    bool
		nullSafe []bool
		scheme   partitioning
	}{
		{"fixed", []string{"a"}, true, []bool{false}, partitionMurmur3},
		{"fixed-keyencoder", []string{"a"}, true, []bool{false}, partitionKeyEncoder},
		{"bytes", []string{"b"}, false, []bool{false}, partitionMurmur3},
		{"two", []string{"a", "b"}, false, []bool{false, true}, partitionMurmur3},
		{"three", []string{"c", "b", "a"}, false, []bool{true, false, false}, partitionKeyEncoder},
	} {
		t.Run(tc.name, func(t *testing.T) {
			rng := rand.New(rand.NewSource(int64(len(tc.name))))
			binds := 0
			side := &joinSide{name: "left", schema: schema, codec: codec}
			for _, k := range tc.keys {
				side.keys = append(side.keys, countingExpr{Expr: vector.Col(k), binds: &binds})
			}
			s := &statefulJoin{mem: mem, keep: mem, fixedKeys: tc.fixed, nullSafe: tc.nullSafe,
				sides: [2]*joinSide{side, {name: "right"}}, state: statePartitions{scheme: tc.scheme}}
			epochs := []int{7, 0, 300, 1, 64, 0, 1000, 5}
			withRows := 0
			for e, n := range epochs {
				rec := keysTestRecord(mem, rng, schema, n)
				kept := &sideRows{rec: rec}
				if err := s.encodeNewKeys(context.Background(), side, kept); err != nil {
					t.Fatal(err)
				}
				// The model: the keys bound for this call alone.
				fresh := &sideRows{rec: rec}
				before := binds
				if err := s.encodeKeys(context.Background(), side, fresh); err != nil {
					t.Fatal(err)
				}
				binds = before
				if n > 0 {
					withRows++
				}
				if !slices.Equal(kept.words, fresh.words) || !slices.Equal(kept.keys, fresh.keys) ||
					!slices.Equal(kept.keyNull, fresh.keyNull) || !slices.Equal(kept.hashes, fresh.hashes) {
					t.Fatalf("epoch %d (%d rows): kept keys differ from freshly bound ones:\nwords %v / %v\nkeys %q / %q\nnull %v / %v\nhash %v / %v",
						e, n, kept.words, fresh.words, kept.keys, fresh.keys, kept.keyNull, fresh.keyNull, kept.hashes, fresh.hashes)
				}
				if len(kept.hashes) != n || tc.fixed && len(kept.words) != n || !tc.fixed && len(kept.keys) != n {
					t.Fatalf("epoch %d: %d hashes, %d words, %d keys for %d rows", e, len(kept.hashes), len(kept.words), len(kept.keys), n)
				}
				if s.keyEval[0] != nil && s.keyEval[0].codec != nil && s.keyEval[0].codec.last != nil {
					t.Fatalf("epoch %d: the kept codec still refers to the epoch's key columns", e)
				}
				rec.Release()
			}
			if withRows == 0 || binds != len(tc.keys) {
				t.Fatalf("%d binds of %d key expressions over %d epochs with rows, want each bound once", binds, len(tc.keys), withRows)
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// TestJoinByteKeysShareRuns: byte keys (a window struct, a string, a
// single bigint kept as bytes) come in runs of one key; every row's key
// is its encoding (the model: a codec over the key columns, row by
// row), and a row whose key equals the previous row's holds the same
// string (no copy kept per row).
func TestJoinByteKeysShareRuns(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	win := arrow.StructOf(
		arrow.Field{Name: "start", Type: arrow.FixedWidthTypes.Timestamp_us, Nullable: true},
		arrow.Field{Name: "end", Type: arrow.FixedWidthTypes.Timestamp_us, Nullable: true})
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "w", Type: win, Nullable: true},
		{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	codec, err := newValueCodec(mem, schema, []int{0, 1, 2})
	if err != nil {
		t.Fatal(err)
	}
	rng := rand.New(rand.NewSource(5))
	for _, keys := range [][]string{{"w"}, {"b"}, {"a"}, {"w", "a"}} {
		t.Run(fmt.Sprint(keys), func(t *testing.T) {
			side := &joinSide{name: "left", schema: schema, codec: codec}
			for _, k := range keys {
				side.keys = append(side.keys, vector.Col(k))
			}
			s := &statefulJoin{mem: mem, keep: mem, nullSafe: make([]bool, len(keys)),
				sides: [2]*joinSide{side, {name: "right"}}, state: statePartitions{scheme: partitionMurmur3}}
			for e, n := range []int{1, 200, 3000, 0, 17} {
				rec := runsTestRecord(mem, rng, schema, n)
				got := &sideRows{rec: rec}
				if err := s.encodeNewKeys(context.Background(), side, got); err != nil {
					t.Fatal(err)
				}
				want := modelKeys(t, mem, rec, keys)
				if !slices.Equal(got.keys, want) {
					t.Fatalf("epoch %d: keys differ from their encodings:\n%q\n%q", e, got.keys, want)
				}
				shared := 0
				for i := 1; i < n; i++ {
					if want[i] != want[i-1] {
						continue
					}
					if unsafe.StringData(got.keys[i]) != unsafe.StringData(got.keys[i-1]) {
						t.Fatalf("epoch %d: row %d's key equals row %d's but is a copy of it", e, i, i-1)
					}
					shared++
				}
				if n > 100 && shared == 0 {
					t.Fatalf("epoch %d: no run of equal keys in %d rows", e, n)
				}
				rec.Release()
			}
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// runsTestRecord is n rows of (w window, b string, a int64) in runs of
// 1-40 rows of one value per column, nulls included.
func runsTestRecord(mem memory.Allocator, rng *rand.Rand, schema *arrow.Schema, n int) arrow.Record {
	b := array.NewRecordBuilder(mem, schema)
	defer b.Release()
	wb := b.Field(0).(*array.StructBuilder)
	for j := 0; j < n; {
		run := 1 + rng.Intn(40)
		start, null, str, a := rng.Int63n(5)*2_000_000, rng.Intn(10) == 0, fmt.Sprintf("k%d", rng.Intn(4)), rng.Int63n(3)
		for ; run > 0 && j < n; run, j = run-1, j+1 {
			if null {
				wb.AppendNull()
				b.Field(1).AppendNull()
				b.Field(2).AppendNull()
				continue
			}
			wb.Append(true)
			wb.FieldBuilder(0).(*array.TimestampBuilder).Append(arrow.Timestamp(start))
			wb.FieldBuilder(1).(*array.TimestampBuilder).Append(arrow.Timestamp(start + 10_000_000))
			b.Field(1).(*array.StringBuilder).Append(str)
			b.Field(2).(*array.Int64Builder).Append(a)
		}
	}
	return b.NewRecord()
}

// modelKeys encodes rec's columns names with a codec of their own and
// copies each row's bytes.
func modelKeys(t *testing.T, mem memory.Allocator, rec arrow.Record, names []string) []string {
	t.Helper()
	var idx []int
	for _, name := range names {
		idx = append(idx, rec.Schema().FieldIndices(name)[0])
	}
	c, err := newRowCodec(mem, rec.Schema(), idx)
	if err != nil {
		t.Fatal(err)
	}
	defer c.enc.Release()
	if err := c.encode(rec); err != nil {
		t.Fatal(err)
	}
	out := make([]string, rec.NumRows())
	for i := range out {
		out[i] = string(c.at(i))
	}
	return out
}

// BenchmarkJoinWindowKeys keys 10K rows by a window struct in runs (q5's
// join of the counts on their window): CPU per row of the key encoding.
func BenchmarkJoinWindowKeys(b *testing.B) {
	mem := memory.NewGoAllocator()
	win := arrow.StructOf(
		arrow.Field{Name: "start", Type: arrow.FixedWidthTypes.Timestamp_us, Nullable: true},
		arrow.Field{Name: "end", Type: arrow.FixedWidthTypes.Timestamp_us, Nullable: true})
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "w", Type: win, Nullable: true},
		{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
	}, nil)
	codec, err := newValueCodec(mem, schema, []int{0, 1, 2})
	if err != nil {
		b.Fatal(err)
	}
	rec := runsTestRecord(mem, rand.New(rand.NewSource(1)), schema, 10_000)
	defer rec.Release()
	side := &joinSide{name: "left", schema: schema, codec: codec, keys: []vector.Expr{vector.Col("w")}}
	s := &statefulJoin{mem: mem, keep: mem, nullSafe: []bool{false},
		sides: [2]*joinSide{side, {name: "right"}}, state: statePartitions{scheme: partitionMurmur3}}
	defer s.Close()
	for b.Loop() {
		r := &sideRows{rec: rec}
		if err := s.encodeNewKeys(context.Background(), side, r); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(float64(b.Elapsed().Nanoseconds())/float64(b.N*10_000), "ns/row")
}

// TestJoinNewKeysScratchPerSide: an epoch's new rows' key words, nulls
// and hashes are a scratch of their side kept across epochs (from the
// second epoch on, no fresh slices of the epoch's rows), with the
// values a fresh encoding gives; one side's keys are not changed by the
// other side's encoding in the same epoch (both sides' rows are read
// until the epoch's end), and an epoch with fewer rows leaves no stale
// key null behind.
func TestJoinNewKeysScratchPerSide(t *testing.T) {
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	schema := arrow.NewSchema([]arrow.Field{
		{Name: "a", Type: arrow.PrimitiveTypes.Int64, Nullable: true},
		{Name: "b", Type: arrow.BinaryTypes.String, Nullable: true},
		{Name: "c", Type: arrow.PrimitiveTypes.Int32, Nullable: true},
	}, nil)
	codec, err := newValueCodec(mem, schema, []int{0, 1, 2})
	if err != nil {
		t.Fatal(err)
	}
	left := &joinSide{name: "left", schema: schema, codec: codec, keys: []vector.Expr{vector.Col("a")}}
	right := &joinSide{name: "right", schema: schema, codec: codec, keys: []vector.Expr{vector.Col("a")}}
	s := &statefulJoin{mem: mem, keep: mem, fixedKeys: true, nullSafe: []bool{false},
		sides: [2]*joinSide{left, right}, state: statePartitions{scheme: partitionMurmur3}}
	defer func() {
		if err := s.Close(); err != nil {
			t.Fatal(err)
		}
	}()
	type keys struct {
		words, hashes []uint64
		null          []bool
	}
	snap := func(r *sideRows) keys {
		return keys{slices.Clone(r.words), slices.Clone(r.hashes), slices.Clone(r.keyNull)}
	}
	same := func(a keys, r *sideRows) bool {
		return slices.Equal(a.words, r.words) && slices.Equal(a.hashes, r.hashes) && slices.Equal(a.null, r.keyNull)
	}
	rng := rand.New(rand.NewSource(23))
	type bufs struct {
		words, hashes *uint64
		null          *bool
	}
	var prev [2]bufs
	for e, n := range []int{3000, 2500, 900, 3000, 40} {
		var rows [2]*sideRows
		var want [2]keys
		for i, side := range s.sides {
			rec := keysTestRecord(mem, rng, schema, n-i*7)
			rows[i] = &sideRows{rec: rec}
			defer rows[i].release()
			if err := s.encodeNewKeys(context.Background(), side, rows[i]); err != nil {
				t.Fatal(err)
			}
			model := &sideRows{rec: rec}
			if err := s.encodeKeys(context.Background(), side, model); err != nil {
				t.Fatal(err)
			}
			want[i] = snap(model)
			if !same(want[i], rows[i]) {
				t.Fatalf("epoch %d, side %d: the new rows' keys differ from a fresh encoding", e, i)
			}
			now := bufs{&rows[i].words[0], &rows[i].hashes[0], &rows[i].keyNull[0]}
			if e > 0 && now != prev[i] {
				t.Fatalf("epoch %d, side %d: the new rows' key words, hashes or nulls are fresh slices, not the side's scratch", e, i)
			}
			prev[i] = now
		}
		if !same(want[0], rows[0]) {
			t.Fatalf("epoch %d: the left side's keys changed by the right side's encoding", e)
		}
	}
	// Warm: encoding an epoch's rows allocates none of the row-sized
	// slices (the key evaluation and record still allocate a few).
	rec := keysTestRecord(mem, rng, schema, 3000)
	defer rec.Release()
	allocs := testing.AllocsPerRun(5, func() {
		r := &sideRows{rec: rec}
		if err := s.encodeNewKeys(context.Background(), left, r); err != nil {
			t.Fatal(err)
		}
	})
	if allocs > 4 {
		t.Fatalf("%.0f allocations per warm encoding, want at most 4 (7 with fresh slices)", allocs)
	}
}
