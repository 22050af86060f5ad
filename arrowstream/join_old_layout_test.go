package arrowstream

import (
	"bytes"
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/internal/collectsink"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/vector"
)

// TestStreamStreamJoinReadsOldLayout: a checkpoint whose join state is in
// the layout of earlier versions (one store entry per row: side byte ++
// encoded join key ++ epoch ++ index → matched byte ++ encoded row) still
// restarts: its rows join the new rows, and the first epoch rewrites them
// as a batch, after which no entry of the old layout is left.
func TestStreamStreamJoinReadsOldLayout(t *testing.T) {
	ctx := context.Background()
	mem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	defer mem.AssertSize(t, 0)
	s := NewSession(SessionOptions{Allocator: mem, Conf: map[string]string{ConfShufflePartitions: "1"}})
	srcs := [2]*MemoryStream{NewMemoryStream(mem, joinEventSchema), NewMemoryStream(mem, joinEventSchema)}
	for i, name := range []string{"l", "r"} {
		defer srcs[i].Close()
		s.RegisterStream(name, srcs[i])
	}
	query := `SELECT lk, lv, rv FROM (SELECT k AS lk, timestamp_seconds(ts) AS lt, v AS lv FROM STREAM l) AS l
	  JOIN (SELECT k AS rk, timestamp_seconds(ts) AS rt, v AS rv FROM STREAM r) AS r ON lk = rk`
	dir := t.TempDir()
	sink := &collectsink.Sink{}
	start := func() *StreamingQuery {
		t.Helper()
		q, err := s.SQLDataFrame(query).WriteStream().Sink(sink).OutputMode(Append).Option("checkpointLocation", dir).Start(ctx)
		if err != nil {
			t.Fatal(err)
		}
		return q
	}
	q := start()
	addJoinEvents(t, mem, srcs, [2][]joinEvent{{{k: 1, t: 10, v: 100}, {k: 2, t: 11, v: 200}, {null: true, t: 12, v: 300}}})
	if err := q.ProcessAllAvailable(ctx); err != nil {
		t.Fatal(err)
	}
	if err := q.Stop(); err != nil {
		t.Fatal(err)
	}
	// Rewrite version 1 of the join's state (epoch 0's) in the old layout.
	// The left side's stored rows: the columns the query reads of it.
	left := s.SQLDataFrame("SELECT k AS lk, v AS lv FROM STREAM l").Schema()
	toOldLayout(t, mem, dir, left)

	q = start()
	addJoinEvents(t, mem, srcs, [2][]joinEvent{nil, {{k: 1, t: 13, v: 1}, {k: 2, t: 14, v: 2}, {k: 2, t: 15, v: 3}}})
	if err := q.ProcessAllAvailable(ctx); err != nil {
		t.Fatal(err)
	}
	if err := q.Stop(); err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, r := range sink.All() {
		got = append(got, fmt.Sprint(r))
	}
	slices.Sort(got)
	want := []string{"[1 100 1]", "[2 200 2]", "[2 200 3]"}
	if !slices.Equal(got, want) {
		t.Fatalf("after the restart over the old layout: got %v, want %v", got, want)
	}
	prov, part := openLoggedPartition(t, mem, dir)
	defer prov.Close()
	st, err := part.Begin(2)
	if err != nil {
		t.Fatal(err)
	}
	defer st.Abort()
	var kinds []byte
	if err := st.Scan(func(k, _ []byte) bool { kinds = append(kinds, k[0]); return true }); err != nil {
		t.Fatal(err)
	}
	for _, k := range kinds {
		if k < 0x10 {
			t.Fatalf("an entry of the old layout (side byte %d) is left after the first epoch: %v", k, kinds)
		}
	}
	if len(kinds) == 0 {
		t.Fatal("no state left: the left rows were lost")
	}
}

// openLoggedPartition opens the join's state partition 0 of checkpoint
// dir as the engine does: through a memory provider attached to the
// checkpoint's state log, where the epochs' deltas are.
func openLoggedPartition(t *testing.T, mem memory.Allocator, dir string) (*checkpoint.MemoryProvider, checkpoint.StatePartition) {
	t.Helper()
	prov := checkpoint.NewMemoryProvider(&checkpoint.Writer{NoSync: true}, checkpoint.StoreOptions{Allocator: mem})
	if err := prov.OpenStateLog(filepath.Join(dir, "state")); err != nil {
		t.Fatal(err)
	}
	part, err := prov.OpenPartition(filepath.Join(dir, "state", "0", "0"))
	if err != nil {
		prov.Close()
		t.Fatal(err)
	}
	return prov, part
}

// toOldLayout rewrites version 1 of a join state partition (batches of
// left rows k, lt, lv) as one entry per row, as earlier versions wrote it.
func toOldLayout(t *testing.T, mem memory.Allocator, dir string, left *arrow.Schema) {
	t.Helper()
	prov, part := openLoggedPartition(t, mem, dir)
	st, err := part.Begin(1)
	if err != nil {
		t.Fatal(err)
	}
	var batches [][]byte
	if err := st.Scan(func(k, v []byte) bool {
		if k[0] == 0x10 {
			batches = append(batches, bytes.Clone(v))
		}
		return true
	}); err != nil {
		t.Fatal(err)
	}
	st.Abort()
	if len(batches) != 1 {
		t.Fatalf("%d batches of left rows in version 1, want 1", len(batches))
	}
	rd, err := ipc.NewReader(joinEntryStream(t, batches[0], left), ipc.WithAllocator(mem))
	if err != nil {
		t.Fatal(err)
	}
	defer rd.Release()
	if !rd.Next() {
		t.Fatalf("empty batch: %v", rd.Err())
	}
	rec := rd.Record()
	types := make([]arrow.DataType, rec.NumCols())
	for i, f := range rec.Schema().Fields() {
		types[i] = f.Type
	}
	rowEnc, err := vector.NewKeyEncoder(mem, types)
	if err != nil {
		t.Fatal(err)
	}
	if err := rowEnc.Encode(rec.Columns()); err != nil {
		t.Fatal(err)
	}
	keyEnc, err := vector.NewKeyEncoder(mem, types[:1])
	if err != nil {
		t.Fatal(err)
	}
	if err := keyEnc.Encode(rec.Columns()[:1]); err != nil {
		t.Fatal(err)
	}
	old, err := part.Begin(0)
	if err != nil {
		t.Fatal(err)
	}
	for i := 0; i < int(rec.NumRows()); i++ {
		key := []byte{0}
		if keyEnc.HasNull(i) {
			key = append(key, 0)
		} else {
			key = append(key, 1)
			key = binary.LittleEndian.AppendUint64(key, keyEnc.Fixed()[i])
		}
		key = binary.BigEndian.AppendUint64(key, 0)
		key = binary.BigEndian.AppendUint32(key, uint32(i))
		val := append([]byte{0}, rowEnc.Key(i)...)
		if err := old.Put(key, val); err != nil {
			t.Fatal(err)
		}
	}
	// Version 1 again (an epoch re-run may overwrite it).
	if err := prov.CommitGroup(context.Background(), []checkpoint.StateStore{old}); err != nil {
		t.Fatal(err)
	}
	check, err := part.Begin(1)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	if err := check.Scan(func(k, _ []byte) bool {
		if k[0] >= 0x10 {
			t.Errorf("version 1 still holds an entry of the new layout (%x)", k)
		}
		n++
		return true
	}); err != nil {
		t.Fatal(err)
	}
	check.Abort()
	if n != int(rec.NumRows()) {
		t.Fatalf("version 1 holds %d rows, want %d", n, rec.NumRows())
	}
	if err := prov.Close(); err != nil {
		t.Fatal(err)
	}
}

// joinEntryStream returns the Arrow IPC stream of a join batch entry: an
// entry written without its schema ("ASJ1" and the messages after the
// schema) gets the side's schema message back in front.
func joinEntryStream(t *testing.T, raw []byte, schema *arrow.Schema) io.Reader {
	t.Helper()
	if !bytes.HasPrefix(raw, []byte("ASJ1")) {
		return bytes.NewReader(raw)
	}
	var head bytes.Buffer
	if err := ipc.NewWriter(&head, ipc.WithSchema(schema)).Close(); err != nil {
		t.Fatal(err)
	}
	const eos = 8
	return io.MultiReader(bytes.NewReader(head.Bytes()[:head.Len()-eos]), bytes.NewReader(raw[4:]))
}
