package stateful

import (
	"context"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
)

// TestSessionWordsMatchesMap runs random puts, gets and deletes of
// clustered and extreme words against a Go map: every lookup, the count
// and a range over the table must agree with it through growth, the
// backward shifts of deletes and shrinking.
func TestSessionWordsMatchesMap(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	tbl := newSessionWords()
	model := map[uint64]*keySessions{}
	extremes := []uint64{0, 1, math.MaxUint64, 1 << 63, uint64(math.MaxInt64), uint64(1) << 32}
	word := func() uint64 {
		switch rng.IntN(4) {
		case 0:
			return extremes[rng.IntN(len(extremes))]
		case 1: // multiples of the table's sizes: one home slot
			return uint64(rng.IntN(64)) << 58
		default:
			return uint64(rng.IntN(3000)) - 1500
		}
	}
	maxSlots := 0
	for step := 0; step < 200_000; step++ {
		w := word()
		// Phases of growth (puts and deletes) and of shrinking (deletes).
		grow := (step/20_000)%2 == 0
		switch r := rng.IntN(10); {
		case r < 4 && grow:
			e := &keySessions{}
			tbl.put(w, e)
			model[w] = e
		case r < 7:
			tbl.del(w)
			delete(model, w)
		default:
			if got := tbl.get(w); got != model[w] {
				t.Fatalf("step %d: get(%#x) = %p, want %p", step, w, got, model[w])
			}
		}
		maxSlots = max(maxSlots, len(tbl.words))
		if step%997 == 0 {
			if tbl.n != len(model) {
				t.Fatalf("step %d: %d entries, want %d", step, tbl.n, len(model))
			}
			seen := 0
			for i, e := range tbl.ents {
				if e == nil {
					continue
				}
				seen++
				if model[tbl.words[i]] != e {
					t.Fatalf("step %d: slot %d holds %#x, not in the model", step, i, tbl.words[i])
				}
			}
			for w, e := range model {
				if tbl.get(w) != e {
					t.Fatalf("step %d: %#x not found", step, w)
				}
			}
			if seen != len(model) {
				t.Fatalf("step %d: %d entries ranged, want %d", step, seen, len(model))
			}
		}
	}
	if maxSlots < 1024 || len(tbl.words) >= maxSlots {
		t.Fatalf("the table grew to %d slots and ended at %d: growth and shrinking not both exercised", maxSlots, len(tbl.words))
	}
}

// sessionWordTypes are the key types numbered by their words, each with
// its extreme values.
var sessionWordTypes = []struct {
	dt       arrow.DataType
	extremes []int64
}{
	{arrow.PrimitiveTypes.Int8, []int64{math.MinInt8, math.MaxInt8, -1, 0}},
	{arrow.PrimitiveTypes.Int16, []int64{math.MinInt16, math.MaxInt16, -1, 0}},
	{arrow.PrimitiveTypes.Int32, []int64{math.MinInt32, math.MaxInt32, -1, 0}},
	{arrow.PrimitiveTypes.Int64, []int64{math.MinInt64, math.MaxInt64, -1, 0, 1 << 40}},
	{arrow.FixedWidthTypes.Date32, []int64{math.MinInt32, math.MaxInt32, -1, 0}},
	{arrow.FixedWidthTypes.Timestamp_us, []int64{math.MinInt64, math.MaxInt64, -1, 0}},
}

// sessionTypedRecord is sessionValRecord with the keys ("k<n>") as
// values of dt.
func sessionTypedRecord(mem memory.Allocator, dt arrow.DataType, rows []sessionValRow, gap int64) arrow.Record {
	rec := sessionValRecord(mem, rows, gap)
	defer rec.Release()
	kb := array.NewBuilder(mem, dt)
	defer kb.Release()
	for _, r := range rows {
		if r.k == nil {
			kb.AppendNull()
			continue
		}
		var n int64
		fmt.Sscanf(*r.k, "k%d", &n)
		switch b := kb.(type) {
		case *array.Int8Builder:
			b.Append(int8(n))
		case *array.Int16Builder:
			b.Append(int16(n))
		case *array.Int32Builder:
			b.Append(int32(n))
		case *array.Int64Builder:
			b.Append(n)
		case *array.Date32Builder:
			b.Append(arrow.Date32(n))
		case *array.TimestampBuilder:
			b.Append(arrow.Timestamp(n))
		}
	}
	k := kb.NewArray()
	defer k.Release()
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: dt, Nullable: true}, sessionValSchema.Field(1), sessionValSchema.Field(2)}, nil)
	return array.NewRecord(schema, []arrow.Array{k, rec.Column(1), rec.Column(2)}, rec.NumRows())
}

// typedKeyString is "k<n>" of row i of a key column of sessionWordTypes
// ("<null>" for null).
func typedKeyString(col arrow.Array, i int) string {
	if col.IsNull(i) {
		return "<null>"
	}
	switch c := col.(type) {
	case *array.Int8:
		return fmt.Sprint("k", c.Value(i))
	case *array.Int16:
		return fmt.Sprint("k", c.Value(i))
	case *array.Int32:
		return fmt.Sprint("k", c.Value(i))
	case *array.Int64:
		return fmt.Sprint("k", c.Value(i))
	case *array.Date32:
		return fmt.Sprint("k", int64(c.Value(i)))
	case *array.Timestamp:
		return fmt.Sprint("k", int64(c.Value(i)))
	}
	return "?" + col.DataType().String()
}

// TestSessionWordKeysMatchGeneral runs session windows over one integral
// key (every type numbered by its words, with its extremes, negatives,
// nulls and a few hundred keys that grow and shrink the word table)
// three ways on their own stores: the decoded sessions numbered by their
// words (numberWords), the decoded sessions numbered by the general key
// index and codec (noWordKeys), and the encoded path (noDecoded). Epochs
// come in several records, with late rows, aborted and replayed epochs
// and restarts from the files; a restart of the first side switches it
// between the word numbering and the general one at random, so that
// state written by either numbering is read by the other. Every
// committed epoch's output must be equal in every column on the three
// sides and equal the brute-force model's, the words side must mirror
// its stores, and numRowsTotal must be the model's session count.
func TestSessionWordKeysMatchGeneral(t *testing.T) {
	const gap = 2_000_000 // µs
	for _, kt := range sessionWordTypes {
		for _, mode := range []stream.OutputMode{stream.Append, stream.Update} {
			for _, parts := range []int{1, 3} {
				for _, raw := range []bool{true, false} {
					name := fmt.Sprintf("%v/%v/%d/raw=%v", kt.dt, mode, parts, raw)
					t.Run(name, func(t *testing.T) {
						testSessionWordKeys(t, kt.dt, kt.extremes, mode, parts, gap, raw)
					})
				}
			}
		}
	}
}

func testSessionWordKeys(t *testing.T, dt arrow.DataType, extremes []int64, mode stream.OutputMode, parts int, gap int64, raw bool) {
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	schema := arrow.NewSchema([]arrow.Field{{Name: "k", Type: dt, Nullable: true}, sessionValSchema.Field(1), sessionValSchema.Field(2)}, nil)
	v := func() vector.Expr { return vector.Col("v") }
	spec := vector.AggregateSpec{
		GroupBy: []vector.NamedExpr{vector.As(vector.Col("k"), "k"), vector.As(vector.Col("session"), "session")},
		Aggregates: []vector.AggregateCall{
			{Func: vector.AggCountStar, Name: "n"},
			{Func: vector.AggCount, Args: []vector.Expr{v()}, Name: "nv"},
			{Func: vector.AggSum, Args: []vector.Expr{v()}, Name: "s"},
			{Func: vector.AggMin, Args: []vector.Expr{v()}, Name: "lo"},
			{Func: vector.AggMax, Args: []vector.Expr{v()}, Name: "hi"},
			{Func: vector.AggAvg, Args: []vector.Expr{v()}, Name: "a"},
		},
	}
	if !raw {
		spec.Aggregates = append(spec.Aggregates, vector.AggregateCall{Func: vector.AggFirst, Args: []vector.Expr{v()}, Name: "f"})
	}
	const (
		words   = iota // decoded, numbered by words
		general        // decoded, key index and codec
		encoded        // not decoded
	)
	type side struct {
		dir    string
		stores *testStores
		op     *statefulSessionWindow
	}
	rng := rand.New(rand.NewPCG(uint64(parts), uint64(len(extremes))+uint64(dt.ID())))
	newOp := func(kind int, noWords bool) *statefulSessionWindow {
		op, err := newStatefulSessionWindow(mem, 0, schema, spec, 1, 2, true, mode)
		if err != nil {
			t.Fatal(err)
		}
		op.noDecoded = kind == encoded
		op.noWordKeys = noWords
		return op
	}
	sides := make([]*side, 3)
	for i := range sides {
		dir := t.TempDir()
		stores := newTestStores(t, mem, dir, parts)
		if i != encoded {
			stores = newOptStores(t, dir, parts, liveSnapOpts(mem, true))
		}
		sides[i] = &side{dir: dir, stores: stores, op: newOp(i, i == general)}
		defer sides[i].stores.close()
	}
	defer func() {
		for _, sd := range sides {
			sd.op.Close()
		}
	}()
	evict := mode == stream.Append
	model := &sessionValModel{sessions: map[string][]modelSession{}}
	var keyNames []string
	for _, x := range extremes {
		keyNames = append(keyNames, fmt.Sprint("k", x))
	}
	lo, hi := int64(-100), int64(100)
	if dt.ID() == arrow.INT8 {
		lo, hi = -60, 60
	}
	lateMs := int64(0)
	for id := int64(0); id < 24; id++ {
		wmMs := max(0, (id-4)*1000)
		var rows []sessionValRow
		n := 2 + rng.IntN(12*parts)
		if id%8 == 3 {
			n = 300 // a burst of keys: the word table grows, then shrinks as they are evicted
		}
		for i := 0; i < n; i++ {
			r := sessionValRow{start: (max(0, id-6)*1000 + rng.Int64N(7000)) * 1000}
			if rng.IntN(8) == 0 {
				r.start = rng.Int64N(max(1, id-3)*1000) * 1000 // likely late
			}
			switch k := rng.IntN(10); {
			case k == 0: // null
			case k < 4 || n < 100:
				r.k = &keyNames[rng.IntN(len(keyNames))]
			default:
				s := fmt.Sprint("k", lo+rng.Int64N(hi-lo))
				r.k = &s
			}
			if rng.IntN(4) != 0 {
				x := rng.Int64N(100) - 50
				r.v = &x
			}
			rows = append(rows, r)
		}
		want := model.epoch(rows, gap, wmMs, lateMs, evict)
		var cuts []int64
		for range rng.IntN(3) {
			cuts = append(cuts, rng.Int64N(int64(len(rows))+1))
		}
		slices.Sort(cuts)
		ep := Epoch{EpochInfo: stream.EpochInfo{ID: id, WatermarkMs: wmMs, LateWatermarkMs: lateMs, HasWatermark: true, NumPartitions: parts}}
		run := func(sd *side) [][]string {
			ep.CheckpointDir = sd.dir
			rec := sessionTypedRecord(mem, dt, rows, gap)
			var pieces []arrow.Record
			from := int64(0)
			for _, c := range append(cuts, rec.NumRows()) {
				pieces = append(pieces, rec.NewSlice(from, c))
				from = c
			}
			rec.Release()
			scan, err := vector.NewScan(schema, pieces...)
			releaseRecords(pieces)
			if err != nil {
				t.Fatal(err)
			}
			ep.State = sd.stores.begin(id)
			out, err := sd.op.Execute(ctx, ep, scan)
			if err != nil {
				t.Fatalf("epoch %d: %v", id, err)
			}
			outSchema := out.Schema()
			recs, err := vector.Drain(ctx, out)
			out.Close()
			if err != nil {
				t.Fatal(err)
			}
			full := []string{outSchema.String()}
			var modelCols []string
			for _, r := range recs {
				sess := r.Column(1).(*array.Struct)
				st, en := sess.Field(0).(*array.Timestamp), sess.Field(1).(*array.Timestamp)
				for i := 0; i < int(r.NumRows()); i++ {
					cells := []string{typedKeyString(r.Column(0), i), fmt.Sprint(int64(st.Value(i))), fmt.Sprint(int64(en.Value(i)))}
					for c := 2; c < int(r.NumCols()); c++ {
						cells = append(cells, r.Column(c).ValueStr(i))
					}
					full = append(full, strings.Join(cells, " "))
					modelCols = append(modelCols, strings.Join(cells[:8], " "))
				}
				r.Release()
			}
			slices.Sort(full)
			slices.Sort(modelCols)
			return [][]string{full, modelCols}
		}
		var got [3][][]string
		for i, sd := range sides {
			for rng.IntN(5) == 0 {
				run(sd)
				sd.stores.abort()
				sd.op.Abort()
			}
			got[i] = run(sd)
			sd.op.Committed(sd.stores.commit(ctx))
		}
		if d := sides[words].op.index.dec; d == nil || d.byWords == sides[words].op.noWordKeys {
			t.Fatalf("epoch %d: the words side is not numbered by its words as asked (noWordKeys %v)", id, sides[words].op.noWordKeys)
		}
		if d := sides[general].op.index.dec; d == nil || d.byWords {
			t.Fatal("the general side is numbered by words")
		}
		sides[words].stores.waitMaintenance()
		checkDecodedMirrors(t, sides[words].op, readVersion(t, mem, sides[words].dir, parts, id+1))
		if !slices.Equal(got[words][1], want) {
			t.Fatalf("epoch %d: words\n%v\nmodel\n%v", id, strings.Join(got[words][1], "\n"), strings.Join(want, "\n"))
		}
		for _, other := range []int{general, encoded} {
			if !slices.Equal(got[words][0], got[other][0]) {
				t.Fatalf("epoch %d: words\n%v\nside %d\n%v", id, strings.Join(got[words][0], "\n"), other, strings.Join(got[other][0], "\n"))
			}
		}
		var sessions int64
		for _, ss := range model.sessions {
			sessions += int64(len(ss))
		}
		if p := sides[words].op.Report(); p.NumRowsTotal != sessions {
			t.Fatalf("epoch %d: numRowsTotal %d, want %d", id, p.NumRowsTotal, sessions)
		}
		if rng.IntN(4) == 0 {
			for i, sd := range sides {
				noWords := i == general
				if i == words {
					noWords = rng.IntN(2) == 0 // read what either numbering wrote
				}
				sd.op.Close()
				sd.op = newOp(i, noWords)
			}
		}
		if evict {
			lateMs = wmMs
		}
	}
}
