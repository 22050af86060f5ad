package checkpoint

import (
	"context"
	"encoding/binary"
	"fmt"
	"io"
	"slices"
)

// Snapshots from live state. A partition whose operator keeps its state
// live (ChangelogWriter) has no decoded copy of it: a full snapshot used
// to be folded from the files, reading the newest snapshot's chain and
// every delta since, applying them to a map and encoding the map
// (foldSnapshot), the largest share of a small epoch's CPU. Yet at an
// epoch boundary the operator's live data is exactly the state at the
// version the epoch commits. An operator that implements the
// LiveSnapshotter side of its stores hands them, when they ask
// (WantsLiveSnapshot), a LiveView of that state: an immutable view taken
// at the boundary (the aggregation's accumulators copied into an Arrow
// record, a join side's retained batches), cheap for the epoch. The
// partition keeps the view with the version it describes; background
// maintenance, where it would fold, encodes the view into a full snapshot
// of that version instead (snapshotFromLive): no file is read, no map
// built. Encoding, compression and the file write stay off the epoch's
// path, as the fold was.
//
// The snapshot file is a full snapshot in the format every other one has
// (<version>.snapshot, v2 columns with its trailer): loading, damage
// detection (a torn or altered file is ErrCorrupt naming it, and the
// version is rebuilt from an older base and the deltas when they are
// still there) and old checkpoints are unchanged. Recovery stays the
// newest snapshot plus the state log's deltas after it.
//
// Cost: a view is asked for only when a snapshot is due at this commit by
// the rule every snapshot follows (snapshotDue: the deltas since the last
// one hold as many bytes as it), so the view's copy and its encoding are
// paid for by as many bytes of changes, amortized O(changes) per epoch.
// When maintenance writes a segment (the changes alone, cheaper still)
// or cannot use the view (it started late, the partition moved on), the
// view is released unused.

// LiveSnapshotter is implemented by the stores of a partition that can
// take a snapshot from its operator's live state (the memory provider's
// stores and the engine's lazy handles over them). An operator that keeps
// its state live and logs changes (ChangelogWriter) asks every epoch,
// after logging them, whether a view is wanted and hands one if so.
type LiveSnapshotter interface {
	// WantsLiveSnapshot reports whether the commit of this epoch will
	// likely make a snapshot due: a view handed now would be used.
	WantsLiveSnapshot() bool
	// SetLiveSnapshot hands the store a view of the partition's whole
	// state as this epoch leaves it (every key and value the changelog
	// has made live, nothing else). The store owns the view from now on:
	// it releases it once, whether it was used or not, and may read it
	// from another goroutine after the commit, while the operator runs
	// the next epochs.
	SetLiveSnapshot(v LiveView)
}

// LiveView is an immutable view of one partition's state at one version,
// taken from the operator's live data.
type LiveView interface {
	// Entries calls emit with every key and its value, each key once,
	// in any order. The bytes are only read during the call (the store
	// copies them). An error from emit stops it and is returned.
	Entries(ctx context.Context, emit func(key, value []byte) error) error
	// Release frees the view; it is called once, and Entries is not
	// called after it.
	Release()
}

// liveSnap is a view with the version it describes (0, nil: none) and
// the partition's sinceSnap when it was kept: the delta bytes a snapshot
// of that version covers.
type liveSnap struct {
	version int64
	view    LiveView
	since   int64
}

var _ LiveSnapshotter = (*store)(nil)

// WantsLiveSnapshot implements LiveSnapshotter: the epoch's commit would
// make a snapshot due (snapshotDue with the changes logged so far). When
// maintenance is running or behind, the view waits for the next one,
// which writes its snapshot at the view's version (fullSnapshot).
func (s *store) WantsLiveSnapshot() bool {
	if s.p.opts.NoLiveSnapshots {
		return false
	}
	p := s.p
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.files == nil {
		// Without a file index the first maintenance lists the
		// directory; its snapshot is folded as before.
		return false
	}
	next := s.version + 1
	// The bases' sorted versions, not the file index: every changed
	// partition asks every epoch.
	lastSnap := p.purgeBase(s.version)
	if p.live.view != nil && p.live.version > lastSnap || p.liveTaken > lastSnap {
		// A view kept for a snapshot not yet written (maintenance is
		// behind), or one maintenance is writing a snapshot from, will
		// do: a newer one would copy the state again, and once that
		// snapshot is in, the changes since are too few to make another
		// due.
		return false
	}
	since := p.sinceSnap
	if s.cl != nil {
		since += s.cl.upserted + s.cl.deleted
		if s.cl.liveBytes >= 0 && p.dataless {
			// The live bytes this epoch declared, not the last
			// commit's: the view is asked for after the epoch's changes.
			deltas := next - lastSnap
			return deltas > int64(p.opts.MinDeltasForSnapshot) &&
				(p.replayDue(lastSnap, since, s.cl.liveBytes) || deltas >= 10*int64(p.opts.MaxDeltasForSnapshot))
		}
	}
	return p.snapshotDueWith(next, lastSnap, since)
}

// SetLiveSnapshot implements LiveSnapshotter: the view is published with
// the epoch's commit (finishChangelog) and released if the epoch aborts.
func (s *store) SetLiveSnapshot(v LiveView) {
	if s.live != nil {
		s.live.Release()
	}
	s.live = v
}

// setLive keeps view as the state at version, releasing the one it
// replaces. Callers hold p.mu, with sinceSnap counting version's delta.
func (p *StorePartition) setLive(version int64, view LiveView) {
	if p.live.view != nil {
		p.live.view.Release()
	}
	p.live = liveSnap{version: version, view: view, since: p.sinceSnap}
}

// dropLive releases the kept view. Callers hold p.mu.
func (p *StorePartition) dropLive() { p.setLive(0, nil) }

// takeLive returns the kept view when it describes a version after the
// newest snapshot (after; the caller owns it then), with that version and
// the delta bytes a snapshot of it covers; a view at or below after,
// which no snapshot wants any more, is released. Callers hold p.mu.
func (p *StorePartition) takeLive(after int64) (LiveView, liveSnap) {
	switch {
	case p.live.view == nil:
		return nil, liveSnap{}
	case p.live.version <= after:
		p.dropLive()
		return nil, liveSnap{}
	}
	l := p.live
	p.live = liveSnap{}
	p.liveTaken = l.version
	return l.view, l
}

// snapshotFromLive writes the full snapshot of version latest from the
// operator's view of it (see the top of this file), and updates the
// partition's snapshot bookkeeping as foldSnapshot does. covered is the
// delta bytes the snapshot makes unnecessary to replay. latest is the
// view's version, committed (its delta durable) when the view was kept,
// and need not be the one maintenance started from: the snapshot is as
// valid a base either way.
func (p *StorePartition) snapshotFromLive(files map[fileKey]bool, latest, covered int64, view LiveView) error {
	raw, entries, state, err := encodeLiveView(view)
	if err != nil {
		return fmt.Errorf("checkpoint: snapshot of %s at version %d from the operator's live state: %w", p.dir, latest, err)
	}
	return p.installSnapshot(files, latest, covered, raw, entries, state, func() {
		if p.dataless {
			p.estBytes = state + p.sinceSnap
		}
		p.liveSnaps++
	})
}

// LiveSizer may be implemented by a LiveView that knows about how many
// key and value bytes its entries hold: the snapshot's body is then
// allocated once at its size instead of doubling while it is written (a
// copy of everything written so far, into fresh pages, at each doubling).
type LiveSizer interface {
	EntryBytes() int64
}

// LiveShaper may be implemented by a LiveView whose entries are all
// smaller than liveDirectMin and that knows exactly how many it emits and
// their key and value bytes: the arena that gathers them into chunks is
// then allocated once at a chunk's size, and the body at the chunks' size
// with their offsets. Grown by appends, both copied everything written so
// far into fresh pages at each doubling (most of q11's background
// snapshot encode). A wrong shape only sizes the buffers wrongly.
type LiveShaper interface {
	EntryShape() (entries int, keyBytes, valueBytes int64)
}

// LiveStreamer may be implemented by a LiveView whose values are
// encodings it would otherwise write into a buffer of its own for emit to
// copy (a join's batch, its rows as an Arrow IPC stream): StreamEntries is
// Entries with a second way to hand an entry, emitFrom, whose write
// writes the value straight into the snapshot's body.
type LiveStreamer interface {
	StreamEntries(ctx context.Context, emit func(key, value []byte) error, emitFrom func(key []byte, write func(w io.Writer) error) error) error
}

// bodyWriter appends what is written to a snapshot body.
type bodyWriter struct{ body *[]byte }

func (w bodyWriter) Write(p []byte) (int, error) {
	*w.body = append(*w.body, p...)
	return len(p), nil
}

// Extend lends the next n bytes of the body to a writer that fills them
// itself (as arenaValues.Extend).
func (w bodyWriter) Extend(n int) []byte {
	start := len(*w.body)
	*w.body = slices.Grow(*w.body, n)[:start+n]
	return (*w.body)[start : start+n]
}

// liveDirectMin is the value size from which an entry is written into
// the body as a chunk of its own, straight from the view's bytes, instead
// of through the arena: a join's batch (its rows as one Arrow IPC stream,
// megabytes) was copied into the arena, whose growth copied it again,
// and from the arena into the body.
const liveDirectMin = 64 << 10

// encodeLiveView encodes the view's entries as a full snapshot file:
// small entries are copied into a changelog arena and written chunk by
// chunk into one body (the view's bytes need not outlive emit), a large
// value as a one-entry chunk copied once into the body. entries and
// state are the entries written and their key and value bytes.
func encodeLiveView(view LiveView) (raw []byte, entries, state int64, err error) {
	var a changeArena
	size := 5
	if s, ok := view.(LiveShaper); ok {
		n, kb, vb := s.EntryShape()
		size += shapedBodyBytes(n, kb, vb)
		a.presize(n, kb, vb)
	} else if s, ok := view.(LiveSizer); ok {
		size += int(min(s.EntryBytes(), 1<<34)) + 4<<10
	}
	body := make([]byte, 0, size)
	body = append(body, stateColumnsMagic...)
	body = append(body, stateCodecStored)
	emitFrom := func(key []byte, write func(w io.Writer) error) error {
		// A one-entry chunk whose value length is patched in once
		// written (appendChunk's layout).
		body = a.appendChunk(body)
		a.reset()
		start := len(body)
		body = appendChunkHeader(body, 1, len(key), 0)
		body = binary.LittleEndian.AppendUint32(body, 0)
		body = binary.LittleEndian.AppendUint32(body, uint32(len(key)))
		body = binary.LittleEndian.AppendUint32(body, 0)
		voff := len(body)
		body = binary.LittleEndian.AppendUint32(body, 0)
		body = append(body, 1)
		body = append(body, key...)
		vstart := len(body)
		if err := write(bodyWriter{&body}); err != nil {
			return err
		}
		n := len(body) - vstart
		binary.LittleEndian.PutUint32(body[start+8:], uint32(n))
		binary.LittleEndian.PutUint32(body[voff:], uint32(n))
		entries++
		state += int64(len(key) + n)
		return nil
	}
	emit := func(key, value []byte) error {
		if len(value) >= liveDirectMin {
			body = a.appendChunk(body)
			a.reset()
			one := changeArena{keys: key, values: value, koff: []uint32{uint32(len(key))}, voff: []uint32{uint32(len(value))}, valid: []byte{1}}
			body = one.appendChunk(body)
		} else {
			if a.len() == stateChunkRows || len(a.keys)+len(a.values)+len(key)+len(value) > stateChunkBytes && a.len() > 0 {
				body = a.appendChunk(body)
				a.reset()
			}
			a.add(key, value, true)
		}
		entries++
		state += int64(len(key) + len(value))
		return nil
	}
	if st, ok := view.(LiveStreamer); ok {
		err = st.StreamEntries(context.Background(), emit, emitFrom)
	} else {
		err = view.Entries(context.Background(), emit)
	}
	if err != nil {
		return nil, 0, 0, err
	}
	body = a.appendChunk(body)
	raw, err = sealColumnsOwned(body)
	return raw, entries, state, err
}

// shapedBodyBytes is the body bytes of n entries of keyBytes and
// valueBytes in all, written as arena chunks (appendChunk's layout: per
// chunk a header and two leading offsets, per entry two offsets and a
// validity bit), with the trailer.
func shapedBodyBytes(n int, keyBytes, valueBytes int64) int {
	if n <= 0 || keyBytes < 0 || valueBytes < 0 {
		return 0
	}
	data := min(keyBytes+valueBytes, 1<<34)
	chunks := n/stateChunkRows + int(data/stateChunkBytes) + 2
	return int(data) + 8*n + n/8 + chunks*(12+8+1) + 8
}

// presize sizes an empty arena for one chunk of n entries of keyBytes
// and valueBytes in all (a share of them when they need several chunks).
func (a *changeArena) presize(n int, keyBytes, valueBytes int64) {
	if n <= 0 || keyBytes < 0 || valueBytes < 0 {
		return
	}
	rows := min(n, stateChunkRows)
	if rows < n {
		keyBytes = keyBytes/int64(n)*int64(rows) + keyBytes/int64(n)
		valueBytes = valueBytes/int64(n)*int64(rows) + valueBytes/int64(n)
	}
	keyBytes, valueBytes = min(keyBytes, stateChunkBytes), min(valueBytes, stateChunkBytes)
	a.keys = make([]byte, 0, keyBytes)
	a.values = make([]byte, 0, valueBytes)
	a.koff = make([]uint32, 0, rows)
	a.voff = make([]uint32, 0, rows)
	a.valid = make([]byte, 0, (rows+7)/8)
}

// LiveSnapshots returns how many snapshots this partition wrote from its
// operator's live views since it was opened.
func (p *StorePartition) LiveSnapshots() int64 {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.liveSnaps
}
