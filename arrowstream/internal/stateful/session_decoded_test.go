package stateful

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
	"sort"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/internal/testutil/poisonmem"
	"github.com/arrowstream/arrowstream/vector"
)

var sessionValSchema = arrow.NewSchema([]arrow.Field{
	{Name: "k", Type: arrow.BinaryTypes.String, Nullable: true},
	{Name: "v", Type: vector.Int64, Nullable: true},
	{Name: "session", Type: vector.WindowType},
}, nil)

// sessionIntSchema is sessionValSchema with integer keys (the key codec's
// fixed-width path): a key name's number, parsed from "k<n>".
var sessionIntSchema = arrow.NewSchema([]arrow.Field{
	{Name: "k", Type: vector.Int64, Nullable: true},
	{Name: "v", Type: vector.Int64, Nullable: true},
	{Name: "session", Type: vector.WindowType},
}, nil)

// sessionIntRecord is sessionValRecord with the keys as integers.
func sessionIntRecord(mem memory.Allocator, rows []sessionValRow, gap int64) arrow.Record {
	rec := sessionValRecord(mem, rows, gap)
	defer rec.Release()
	kb := array.NewInt64Builder(mem)
	defer kb.Release()
	for _, r := range rows {
		if r.k == nil {
			kb.AppendNull()
			continue
		}
		var n int64
		fmt.Sscanf(*r.k, "k%d", &n)
		kb.Append(n)
	}
	k := kb.NewArray()
	defer k.Release()
	return array.NewRecord(sessionIntSchema, []arrow.Array{k, rec.Column(1), rec.Column(2)}, rec.NumRows())
}

// sessionValRow is one input row: key (nil: null), value (nil: null),
// session start (µs).
type sessionValRow struct {
	k     *string
	v     *int64
	start int64
}

func sessionValRecord(mem memory.Allocator, rows []sessionValRow, gap int64) arrow.Record {
	kb := array.NewStringBuilder(mem)
	defer kb.Release()
	vb := array.NewInt64Builder(mem)
	defer vb.Release()
	sb := array.NewStructBuilder(mem, vector.WindowType)
	defer sb.Release()
	starts := sb.FieldBuilder(0).(*array.TimestampBuilder)
	ends := sb.FieldBuilder(1).(*array.TimestampBuilder)
	for _, r := range rows {
		if r.k == nil {
			kb.AppendNull()
		} else {
			kb.Append(*r.k)
		}
		if r.v == nil {
			vb.AppendNull()
		} else {
			vb.Append(*r.v)
		}
		sb.Append(true)
		starts.Append(arrow.Timestamp(r.start))
		ends.Append(arrow.Timestamp(r.start + gap))
	}
	k, v, s := kb.NewArray(), vb.NewArray(), sb.NewArray()
	defer k.Release()
	defer v.Release()
	defer s.Release()
	return array.NewRecord(sessionValSchema, []arrow.Array{k, v, s}, int64(len(rows)))
}

// sessionValModel is the brute-force sessionization: every accepted row
// of a key kept in its session, sessions merged when they overlap or
// touch, and count(*), count(v), sum(v), min(v), max(v) computed from
// the rows.
type sessionValModel struct {
	sessions map[string][]modelSession // key ("<null>" for null) → sessions by start
}

type modelSession struct {
	start, end int64
	vals       []*int64
}

func (m *sessionValModel) epoch(rows []sessionValRow, gap, wmMs, lateMs int64, evict bool) []string {
	for _, r := range rows {
		if evict && r.start+gap <= lateMs*1000 {
			continue
		}
		k := "<null>"
		if r.k != nil {
			k = *r.k
		}
		all := append(m.sessions[k], modelSession{r.start, r.start + gap, []*int64{r.v}})
		sort.SliceStable(all, func(i, j int) bool { return all[i].start < all[j].start })
		var merged []modelSession
		for _, s := range all {
			if n := len(merged); n > 0 && s.start <= merged[n-1].end {
				merged[n-1].end = max(merged[n-1].end, s.end)
				merged[n-1].vals = append(merged[n-1].vals, s.vals...)
				continue
			}
			merged = append(merged, modelSession{s.start, s.end, append([]*int64(nil), s.vals...)})
		}
		m.sessions[k] = merged
	}
	var out []string
	for k, ss := range m.sessions {
		var keep []modelSession
		for _, s := range ss {
			if evict && s.end > wmMs*1000 {
				keep = append(keep, s)
				continue
			}
			out = append(out, s.row(k))
			if !evict {
				keep = append(keep, s)
			}
		}
		if len(keep) == 0 {
			delete(m.sessions, k)
		} else {
			m.sessions[k] = keep
		}
	}
	slices.Sort(out)
	return out
}

// row is "k start end count(*) count(v) sum min max" (null as "(null)").
func (s modelSession) row(k string) string {
	var n, sum int64
	var lo, hi *int64
	for _, v := range s.vals {
		if v == nil {
			continue
		}
		n++
		sum += *v
		if lo == nil || *v < *lo {
			lo = v
		}
		if hi == nil || *v > *hi {
			hi = v
		}
	}
	str := func(p *int64) string {
		if p == nil {
			return "(null)"
		}
		return fmt.Sprint(*p)
	}
	sumS := "(null)"
	if n > 0 {
		sumS = fmt.Sprint(sum)
	}
	return fmt.Sprint(k, " ", s.start, " ", s.end, " ", len(s.vals), " ", n, " ", sumS, " ", str(lo), " ", str(hi))
}

// TestSessionDecodedMatchesModel runs session windows with the sessions
// kept decoded between epochs (session_decoded.go) over random epochs of
// string keys (nulls included) and nullable values, with late rows,
// aborted and replayed epochs, restarts from the files and 1 and 5
// partitions, in Append and Update mode. Each committed epoch's output
// must equal (a) the brute-force model's count, count(v), sum, min and max
// and (b) in every column (first, last with ignored nulls, avg too) the
// output of the encoded path (noDecoded) run beside it on its own stores;
// numRowsTotal must be the model's session count.
func TestSessionDecodedMatchesModel(t *testing.T) {
	const gap = 2_000_000 // µs
	for _, mode := range []stream.OutputMode{stream.Append, stream.Update} {
		for _, parts := range []int{1, 5} {
			for _, intKeys := range []bool{false, true} {
				// raw: no first/last, so the input rows are folded
				// straight into their sessions (no partial rows).
				for _, raw := range []bool{false, true} {
					t.Run(fmt.Sprintf("%v/%d/int=%v/raw=%v", mode, parts, intKeys, raw), func(t *testing.T) {
						testSessionDecoded(t, mode, parts, gap, intKeys, raw)
					})
				}
			}
		}
	}
}

func testSessionDecoded(t *testing.T, mode stream.OutputMode, parts int, gap int64, intKeys, raw bool) {
	schema, record := sessionValSchema, sessionValRecord
	if intKeys {
		schema, record = sessionIntSchema, sessionIntRecord
	}
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	v := func() vector.Expr { return vector.Col("v") }
	spec := vector.AggregateSpec{
		GroupBy: []vector.NamedExpr{vector.As(vector.Col("k"), "k"), vector.As(vector.Col("session"), "session")},
		Aggregates: []vector.AggregateCall{
			{Func: vector.AggCountStar, Name: "n"},
			{Func: vector.AggCount, Args: []vector.Expr{v()}, Name: "nv"},
			{Func: vector.AggSum, Args: []vector.Expr{v()}, Name: "s"},
			{Func: vector.AggMin, Args: []vector.Expr{v()}, Name: "lo"},
			{Func: vector.AggMax, Args: []vector.Expr{v()}, Name: "hi"},
			{Func: vector.AggFirst, Args: []vector.Expr{v()}, Name: "f"},
			{Func: vector.AggLast, Args: []vector.Expr{v()}, IgnoreNulls: true, Name: "l"},
			{Func: vector.AggAvg, Args: []vector.Expr{v()}, Name: "a"},
		},
	}
	if raw {
		spec.Aggregates = slices.DeleteFunc(spec.Aggregates, func(c vector.AggregateCall) bool {
			return c.Func == vector.AggFirst || c.Func == vector.AggLast
		})
	}
	type side struct {
		dir    string
		stores *testStores
		op     *statefulSessionWindow
	}
	newOp := func(decoded bool) *statefulSessionWindow {
		op, err := newStatefulSessionWindow(mem, 0, schema, spec, 1, 2, true, mode)
		if err != nil {
			t.Fatal(err)
		}
		op.noDecoded = !decoded
		return op
	}
	sides := make([]*side, 2) // 0 decoded, 1 encoded
	for i := range sides {
		dir := t.TempDir()
		// The decoded side's stores snapshot every few epochs (from
		// its live sessions) and keep few versions: its restarts load
		// snapshots with the changelogs under them purged.
		stores := newTestStores(t, mem, dir, parts)
		if i == 0 {
			stores = newOptStores(t, dir, parts, liveSnapOpts(mem, true))
		}
		sides[i] = &side{dir: dir, stores: stores, op: newOp(i == 0)}
		defer sides[i].stores.close()
	}
	defer func() {
		for _, sd := range sides {
			sd.op.Close()
		}
	}()
	evict := mode == stream.Append
	model := &sessionValModel{sessions: map[string][]modelSession{}}
	rng := rand.New(rand.NewPCG(uint64(parts), uint64(mode)))
	lateMs := int64(0)
	keyNames := []string{"a", "bb", "", "ccc", "d", "e", "ffff", "g"}
	if intKeys {
		keyNames = []string{"k0", "k1", "k-7", "k12", "k3", "k1000000", "k5", "k6"}
	}
	for id := int64(0); id < 30; id++ {
		wmMs := max(0, (id-4)*1000)
		var rows []sessionValRow
		for i := 0; i < 2+rng.IntN(10*parts); i++ {
			r := sessionValRow{start: (max(0, id-6)*1000 + rng.Int64N(7000)) * 1000}
			if rng.IntN(8) == 0 {
				r.start = rng.Int64N(max(1, id-3)*1000) * 1000 // likely late
			}
			if k := rng.IntN(len(keyNames) + 1); k < len(keyNames) {
				r.k = &keyNames[k]
			}
			if rng.IntN(4) != 0 {
				x := rng.Int64N(100) - 50
				r.v = &x
			}
			rows = append(rows, r)
		}
		want := model.epoch(rows, gap, wmMs, lateMs, evict)
		// Some epochs come as several records (the merge numbers rows
		// across them): cut at up to two random rows, empty pieces too.
		var cuts []int64
		for range rng.IntN(3) {
			cuts = append(cuts, rng.Int64N(int64(len(rows))+1))
		}
		slices.Sort(cuts)
		ep := Epoch{EpochInfo: stream.EpochInfo{ID: id, WatermarkMs: wmMs, LateWatermarkMs: lateMs, HasWatermark: true, NumPartitions: parts}}
		run := func(sd *side) [][]string {
			ep.CheckpointDir = sd.dir
			rec := record(mem, rows, gap)
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
			// The schema first: the decoded side's rows are finalized
			// from the live aggregate, the encoded side's by a hash
			// aggregation; both must answer the same layout.
			full := []string{outSchema.String()}
			var modelCols []string
			for _, r := range recs {
				sess := r.Column(1).(*array.Struct)
				st, en := sess.Field(0).(*array.Timestamp), sess.Field(1).(*array.Timestamp)
				for i := 0; i < int(r.NumRows()); i++ {
					k := "<null>"
					switch col := r.Column(0).(type) {
					case *array.String:
						if col.IsValid(i) {
							k = col.Value(i)
						}
					case *array.Int64:
						if col.IsValid(i) {
							k = fmt.Sprint("k", col.Value(i))
						}
					}
					cells := []string{k, fmt.Sprint(int64(st.Value(i))), fmt.Sprint(int64(en.Value(i)))}
					for c := 2; c < int(r.NumCols()); c++ {
						cells = append(cells, r.Column(c).ValueStr(i))
					}
					full = append(full, strings.Join(cells, " "))
					modelCols = append(modelCols, strings.Join(cells[:8], " "))
				}
				if !r.Schema().Equal(outSchema) {
					t.Fatalf("epoch %d: a record of schema %v in an output of %v", id, r.Schema(), outSchema)
				}
				r.Release()
			}
			slices.Sort(full)
			slices.Sort(modelCols)
			return [][]string{full, modelCols}
		}
		var got [2][][]string
		for i, sd := range sides {
			for rng.IntN(4) == 0 {
				run(sd)
				sd.stores.abort()
				sd.op.Abort()
			}
			got[i] = run(sd)
			sd.op.Committed(sd.stores.commit(ctx))
		}
		if sides[0].op.index.dec == nil {
			t.Fatal("the sessions were not kept decoded")
		}
		if (sides[0].op.index.dec.raw != nil) != raw {
			t.Fatalf("input rows folded raw: %v, want %v", sides[0].op.index.dec.raw != nil, raw)
		}
		sides[0].stores.waitMaintenance()
		checkDecodedMirrors(t, sides[0].op, readVersion(t, mem, sides[0].dir, parts, id+1))
		if !slices.Equal(got[0][1], want) {
			t.Fatalf("epoch %d: decoded path\n%v\nmodel\n%v", id, strings.Join(got[0][1], "\n"), strings.Join(want, "\n"))
		}
		if !slices.Equal(got[0][0], got[1][0]) {
			t.Fatalf("epoch %d: decoded path\n%v\nencoded path\n%v", id, strings.Join(got[0][0], "\n"), strings.Join(got[1][0], "\n"))
		}
		var n int64
		for _, ss := range model.sessions {
			n += int64(len(ss))
		}
		if p := sides[0].op.Report(); p.NumRowsTotal != n {
			t.Fatalf("epoch %d: numRowsTotal %d, want %d", id, p.NumRowsTotal, n)
		}
		if rng.IntN(5) == 0 {
			for i, sd := range sides {
				sd.op.Close()
				sd.op = newOp(i == 0)
			}
		}
		if evict {
			lateMs = wmMs
		}
	}
}

// TestSessionDecodedCompacts evicts thousands of sessions so that the
// decoded aggregate's dead groups are compacted away (the sessions'
// groups renumbered), and checks every epoch against the model across
// the compactions and the sessions that outlive them.
func TestSessionDecodedCompacts(t *testing.T) {
	const gap = 2_000_000 // µs
	mem := poisonmem.New()
	defer mem.AssertSize(t, 0)
	ctx := context.Background()
	dir := t.TempDir()
	stores := newTestStores(t, mem, dir, 2)
	defer stores.close()
	spec := vector.AggregateSpec{
		GroupBy: []vector.NamedExpr{vector.As(vector.Col("k"), "k"), vector.As(vector.Col("session"), "session")},
		Aggregates: []vector.AggregateCall{
			{Func: vector.AggCountStar, Name: "n"},
			{Func: vector.AggCount, Args: []vector.Expr{vector.Col("v")}, Name: "nv"},
			{Func: vector.AggSum, Args: []vector.Expr{vector.Col("v")}, Name: "s"},
			{Func: vector.AggMin, Args: []vector.Expr{vector.Col("v")}, Name: "lo"},
			{Func: vector.AggMax, Args: []vector.Expr{vector.Col("v")}, Name: "hi"},
		},
	}
	op, err := newStatefulSessionWindow(mem, 0, sessionValSchema, spec, 1, 2, true, stream.Append)
	if err != nil {
		t.Fatal(err)
	}
	defer op.Close()
	model := &sessionValModel{sessions: map[string][]modelSession{}}
	names := make([]string, 1500)
	for i := range names {
		names[i] = fmt.Sprint("key", i)
	}
	rng := rand.New(rand.NewPCG(3, 4))
	lateMs := int64(0)
	compacted := false
	for id := int64(0); id < 12; id++ {
		wmMs := max(0, (id-1)*3000)
		var rows []sessionValRow
		for i := range names {
			x := rng.Int64N(1000)
			rows = append(rows, sessionValRow{k: &names[i], v: &x, start: (id*3000 + rng.Int64N(500)) * 1000})
			if i%7 == 0 { // a long-lived key: its session keeps growing
				rows = append(rows, sessionValRow{k: &names[i], v: &x, start: (id*3000 + 1500) * 1000})
			}
		}
		want := model.epoch(rows, gap, wmMs, lateMs, true)
		rec := sessionValRecord(mem, rows, gap)
		scan, err := vector.NewScan(sessionValSchema, rec)
		rec.Release()
		if err != nil {
			t.Fatal(err)
		}
		ep := Epoch{EpochInfo: stream.EpochInfo{ID: id, WatermarkMs: wmMs, LateWatermarkMs: lateMs, HasWatermark: true, CheckpointDir: dir, NumPartitions: 2}}
		ep.State = stores.begin(id)
		out, err := op.Execute(ctx, ep, scan)
		if err != nil {
			t.Fatalf("epoch %d: %v", id, err)
		}
		recs, err := vector.Drain(ctx, out)
		out.Close()
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, r := range recs {
			sess := r.Column(1).(*array.Struct)
			st, en := sess.Field(0).(*array.Timestamp), sess.Field(1).(*array.Timestamp)
			for i := 0; i < int(r.NumRows()); i++ {
				cells := []string{r.Column(0).(*array.String).Value(i), fmt.Sprint(int64(st.Value(i))), fmt.Sprint(int64(en.Value(i)))}
				for c := 2; c < int(r.NumCols()); c++ {
					cells = append(cells, r.Column(c).ValueStr(i))
				}
				got = append(got, strings.Join(cells, " "))
			}
			r.Release()
		}
		slices.Sort(got)
		op.Committed(stores.commit(ctx))
		if !slices.Equal(got, want) {
			t.Fatalf("epoch %d: %d rows, want %d", id, len(got), len(want))
		}
		lateMs = wmMs
		stores.waitMaintenance()
		checkDecodedMirrors(t, op, readVersion(t, mem, dir, 2, id+1))
		// Every session id took a group: fewer groups than ids means
		// the dead ones were dropped.
		if d := op.index.dec; int64(d.agg.NumGroups()) < d.nextSid {
			compacted = true
		}
	}
	if !compacted {
		t.Fatal("the decoded aggregate was never compacted")
	}
}

// checkDecodedMirrors checks that the decoded sessions hold what the
// stores hold at the version they mirror (stored: each partition as a
// restarted process loads it, newest snapshot plus changelogs): the same
// keys in the same partitions, each key's sessions with the same bounds,
// and states that encode to the stored bytes; that the fixed-width
// lookup finds exactly the stored keys; and that no encoded copy of the
// sessions is kept beside the decoded ones.
func checkDecodedMirrors(t *testing.T, op *statefulSessionWindow, stored []map[string]string) {
	t.Helper()
	d := op.index.dec
	if op.index.live.on() {
		t.Fatal("an encoded copy of the sessions is kept beside the decoded ones")
	}
	var keys int
	for p, m := range stored {
		keys += len(m)
		for k, v := range m {
			ks := d.lookup(k)
			if ks == nil || int(ks.part) != p {
				t.Fatalf("key %q of partition %d: decoded %+v", k, p, ks)
			}
			entries, err := splitSessions([]byte(v))
			if err != nil {
				t.Fatal(err)
			}
			if len(entries) != len(ks.list) {
				t.Fatalf("key %q: %d stored sessions, %d decoded", k, len(entries), len(ks.list))
			}
			gids := make([]int32, len(ks.list))
			starts := make([]arrow.Timestamp, len(ks.list))
			ends := make([]arrow.Timestamp, len(ks.list))
			for i, ls := range ks.list {
				gids[i], starts[i], ends[i] = ls.gid, arrow.Timestamp(ls.start), arrow.Timestamp(ls.end)
			}
			st, err := d.agg.State(gids)
			if err != nil {
				t.Fatal(err)
			}
			win := windowArray(op.mem, starts, ends)
			err = op.valCodec.encodeCols(append([]arrow.Array{win}, st.Columns()[1:]...))
			if err == nil {
				for i, en := range entries {
					if en.end != ks.list[i].end || string(en.val) != string(op.valCodec.at(i)) {
						err = fmt.Errorf("key %q session %d: stored end %d, decoded %+v: the encodings differ", k, i, en.end, ks.list[i])
						break
					}
				}
			}
			win.Release()
			st.Release()
			if err != nil {
				t.Fatal(err)
			}
		}
	}
	if d.numKeys() != keys {
		t.Fatalf("%d decoded keys, %d stored", d.numKeys(), keys)
	}
	if d.fixed != nil && len(d.keys) > 0 {
		t.Fatalf("%d keys found by string beside the fixed-width words", len(d.keys))
	}
	// Eviction finds a key by its arming entry: at or before the end of
	// its first session, and in the end index.
	pending := map[sessionKey]map[int64]bool{}
	for i := range op.index.ends.len() {
		e := op.index.ends.at(i)
		if pending[e.v] == nil {
			pending[e.v] = map[int64]bool{}
		}
		pending[e.v][e.at] = true
	}
	var n int
	d.each(func(ks *keySessions) {
		n++
		if op.indexed() && len(ks.list) > 0 {
			if !ks.armedOK || ks.armed > ks.list[0].end {
				t.Fatalf("key %q: armed %v at %d, first session ends at %d", ks.key, ks.armedOK, ks.armed, ks.list[0].end)
			}
			if !pending[sessionKey{part: ks.part, key: ks.key}][ks.armed] {
				t.Fatalf("key %q: no end index entry at its arming time %d", ks.key, ks.armed)
			}
		}
		// Eviction takes a prefix of the list: the sessions must be
		// disjoint and sorted, so that their ends increase.
		for i := 1; i < len(ks.list); i++ {
			if ks.list[i].start <= ks.list[i-1].end {
				t.Fatalf("key %q: session %+v follows %+v", ks.key, ks.list[i], ks.list[i-1])
			}
		}
		if d.lookup(ks.key) != ks {
			t.Fatalf("key %q is not found by its own bytes", ks.key)
		}
		if _, ok := stored[ks.part][ks.key]; !ok {
			t.Fatalf("decoded key %q of partition %d is not stored", ks.key, ks.part)
		}
	})
	if n != keys {
		t.Fatalf("%d decoded keys visited, %d stored", n, keys)
	}
}

// FuzzSessionFraming reads arbitrary bytes as a stored session list: the
// split must not panic, and what it reads must frame again (appendSession,
// as the save and the snapshots write) into a value that splits into the
// same sessions.
func FuzzSessionFraming(f *testing.F) {
	f.Add(joinSessions([]sessionEntry{{end: 5, val: []byte("ab")}, {end: -1, val: nil}}))
	f.Add([]byte{0x80})
	f.Add([]byte{3, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Add([]byte{0x80, 0, 1, 2, 3, 4, 5, 6, 7, 8, 0x81, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9})
	f.Fuzz(func(t *testing.T, v []byte) {
		es, err := splitSessions(v)
		if err != nil {
			return
		}
		var again []byte
		for _, e := range es {
			again = appendSession(again, e.end, e.val)
		}
		// Compared as sessions: a length's varint need not be the
		// shortest one.
		back, err := splitSessions(again)
		if err != nil || fmt.Sprint(back) != fmt.Sprint(es) {
			t.Fatalf("%x framed again as %x (%v): %v, want %v", v, again, err, back, es)
		}
	})
}
