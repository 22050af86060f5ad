package stateful

import (
	"context"
	"fmt"
	"math/rand"
	"slices"
	"testing"

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
