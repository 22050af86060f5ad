package checkpoint

import (
	"errors"
	"fmt"
	"log/slog"
	"math"
	"sort"
	"strconv"
	"strings"
)

// Segmented snapshots. A partition whose operator keeps its state live
// (ChangelogWriter: the store holds no decoded copy) used to make every
// snapshot by reading the newest snapshot and the deltas after it,
// merging them and writing the whole state again: each snapshot cost the
// state's size, however little of it had changed. A state that only
// grows (q4's and q20's join sides) was so read and rewritten at every
// doubling.
//
// A segment is a snapshot that holds only what changed since the snapshot
// before it: <version>.<base>.segment is the deltas of versions base+1 ..
// version in one state file, their entries in order (upserts with their
// values, deletes as null values: tombstones), so that applying it in
// order leaves each key's last change. Version is then
// rebuilt from base's snapshot (itself a segment, or a full
// <base>.snapshot) plus the segment: a chain of segments on a full
// snapshot. A partition's first snapshot is full (made from the deltas
// alone, it costs the changes as well). Making one costs the changes it covers,
// not the state: a snapshot's cost is amortized O(changes), and the old
// state is never read to make it.
//
// A chain is folded into a full snapshot (compactSnapshot) only when it
// holds as many dead entries as live ones (its entries, overwritten ones
// and tombstones included, are over twice the partition's live keys) or has
// maxSegmentLinks segments: then the rewrite of the state is paid for by
// as many bytes of changes, and the chain a load reads stays within a
// small multiple of the state. A state that only grows (no deletes, no
// overwrites) is never rewritten until the chain is maxSegmentLinks long:
// with snapshots due at each doubling (snapshotDue), that is after the
// state has grown 2^maxSegmentLinks-fold.
//
// Loading reads the chain oldest first (load, readChain). A damaged or
// missing link makes the whole chain unusable: as for a damaged full
// snapshot, the version is rebuilt from an older base and the deltas
// after it when they are all still there, and otherwise refused with the
// damaged file named. A build that does not know segments ignores the
// files (their kind is not "snapshot" or "delta").

// segmentSuffix ends a segment's kind: a segment's file is
// <version>.<base>.segment, whose kind (what follows the version's dot)
// is "<base>.segment".
const segmentSuffix = ".segment"

// maxSegmentLinks bounds the segments on a chain's full snapshot.
const maxSegmentLinks = 8

// segmentKind is the kind of a segment file on base.
func segmentKind(base int64) string {
	return strconv.FormatInt(base, 10) + segmentSuffix
}

// segmentBase returns the base version of a segment kind; ok is false for
// any other kind.
func segmentBase(kind string) (int64, bool) {
	b, ok := strings.CutSuffix(kind, segmentSuffix)
	if !ok {
		return 0, false
	}
	return parseEpochName(b)
}

// isBase reports whether k is a snapshot a version can be rebuilt from (a
// full snapshot or a segment).
func isBase(k fileKey) bool {
	if k.kind == "snapshot" {
		return true
	}
	_, ok := segmentBase(k.kind)
	return ok
}

// newestBase returns the newest snapshot or segment at or below v (0:
// none). A full snapshot is preferred to a segment of the same version.
func newestBase(files map[fileKey]bool, v int64) (fileKey, bool) {
	var best fileKey
	found := false
	for k := range files {
		if k.version > v || !isBase(k) {
			continue
		}
		if !found || k.version > best.version || k.version == best.version && k.kind == "snapshot" {
			best, found = k, true
		}
	}
	return best, found
}

// basesAtOrBelow returns the snapshots and segments at or below v, newest
// first (a full snapshot before a segment of the same version).
func basesAtOrBelow(files map[fileKey]bool, v int64) []fileKey {
	var out []fileKey
	for k := range files {
		if k.version <= v && isBase(k) {
			out = append(out, k)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		if out[i].version != out[j].version {
			return out[i].version > out[j].version
		}
		return out[i].kind == "snapshot"
	})
	return out
}

// chainOf returns the files that rebuild k's version, oldest first: a
// full snapshot (absent when the chain starts from the empty version 0)
// then the segments on it, ending with k. A missing link is ErrCorrupt,
// naming the segment that needs it.
func (p *StorePartition) chainOf(files map[fileKey]bool, k fileKey) ([]fileKey, error) {
	chain := []fileKey{k}
	for {
		base, ok := segmentBase(k.kind)
		if !ok || base == 0 {
			break
		}
		if len(chain) > len(files) {
			return nil, fmt.Errorf("checkpoint: state %s: snapshot segments of %s form a cycle: %w", p.dir, p.file(k.version, k.kind), ErrCorrupt)
		}
		next, ok := fileKey{base, "snapshot"}, files[fileKey{base, "snapshot"}]
		if !ok {
			for f := range files {
				if b, seg := segmentBase(f.kind); seg && f.version == base && b < base {
					next, ok = f, true
					break
				}
			}
		}
		if !ok {
			return nil, fmt.Errorf("checkpoint: state %s: snapshot segment %s is on version %d, whose snapshot is missing: %w", p.dir, p.file(k.version, k.kind), base, ErrCorrupt)
		}
		chain = append(chain, next)
		k = next
	}
	for i, j := 0, len(chain)-1; i < j; i, j = i+1, j-1 {
		chain[i], chain[j] = chain[j], chain[i]
	}
	return chain, nil
}

// readChain applies the chain that rebuilds k's version to data (empty on
// entry); aliased, its entries alias the bytes read (compaction's
// transient map).
func (p *StorePartition) readChain(files map[fileKey]bool, k fileKey, data map[string][]byte, aliased bool) error {
	chain, err := p.chainOf(files, k)
	if err != nil {
		return err
	}
	for _, f := range chain {
		if err := p.readBase(f, data, aliased); err != nil {
			return err
		}
	}
	return nil
}

// snapChain describes the chain this process last wrote for a partition,
// so that the next snapshot knows how much the chain holds without
// reading it.
type snapChain struct {
	head    int64 // version of the newest snapshot or segment (0: none known)
	links   int   // segments on the full snapshot
	entries int64 // entries of the chain's files, tombstones included
	bytes   int64 // key and value bytes of those entries
}

// deltaPayloads reads the deltas of versions from+1..to, decompressed,
// in version order: the chunks a segment of them concatenates (a load
// applies entries in order, so a key's last change wins; no map, no
// hashing) or a fold applies. size is the bytes of a segment body holding
// them (its magic and trailer included); entries counts their entries
// (overwritten ones and tombstones included), bytes their key and value
// bytes. ok is false when one of the deltas is not of format v2 (written
// by an older build), and the caller compacts instead. The payloads are
// decompressed into buffers of bufs (recycled ones: fresh buffers for
// every snapshot, faulted in and returned to the OS again, were a fifth
// of a churning state's snapshot), which the caller releases once done
// with the payloads.
func (p *StorePartition) deltaPayloads(files map[fileKey]bool, from, to int64, bufs *payloadBufs) (payloads [][]byte, size int, entries, bytes int64, ok bool, err error) {
	size = len(stateColumnsMagic) + 1 + 8
	var lr logReader
	defer lr.close()
	for v := from + 1; v <= to; v++ {
		raw, where, found, err := p.readDeltaRaw(&lr, files, v, to)
		if err != nil {
			return nil, 0, 0, 0, false, err
		}
		if !found {
			continue
		}
		payload, v2, err := columnsPayloadScratch(raw, bufs.get())
		if err != nil {
			return nil, 0, 0, 0, false, fmt.Errorf("checkpoint: %s: %w", where(), err)
		}
		if !v2 {
			return nil, 0, 0, 0, false, nil
		}
		n, nb, err := chunkTotals(payload)
		entries += n
		bytes += nb
		if err != nil {
			return nil, 0, 0, 0, false, fmt.Errorf("checkpoint: %s: %w", where(), err)
		}
		payloads = append(payloads, payload)
		size += len(payload)
	}
	return payloads, size, entries, bytes, true, nil
}

// payloadBufs are the decompression buffers of one snapshot's deltas,
// taken from the package's pool of scratch buffers and given back by
// release.
type payloadBufs struct{ taken []*scratchBuf }

// get takes a buffer.
func (b *payloadBufs) get() *[]byte {
	buf := getScratch()
	b.taken = append(b.taken, buf)
	return &buf.b
}

// release gives every buffer taken back; the payloads decompressed into
// them must no longer be used.
func (b *payloadBufs) release() {
	for _, buf := range b.taken {
		putScratch(buf)
	}
	b.taken = nil
}

// segmentBody concatenates payloads (deltaPayloads) into the body of a
// segment, copied once into a body of its total size (appending to a
// growing body cost two thirds of a segment in q20). Only a segment that
// is written is concatenated: a fold applies the payloads as they are
// (the copy was a fifth of the windowed query's snapshot work, where
// every snapshot folds).
func segmentBody(payloads [][]byte, size int) []byte {
	body := make([]byte, 0, size)
	body = append(append(body, stateColumnsMagic...), stateCodecStored)
	for _, pl := range payloads {
		body = append(body, pl...)
	}
	return body
}

// readDeltaRaw reads version v's delta (from the state log when it covers
// v, through r, else <v>.delta); where names where it came from (for an
// error: not formatted for every delta read); found is false when the log
// says the partition did not change in v.
func (p *StorePartition) readDeltaRaw(r *logReader, files map[fileKey]bool, v, target int64) (raw []byte, where func() string, found bool, err error) {
	if p.logged(v) {
		ref, ok := p.glog.lookup(p.rel, v)
		if !ok {
			return nil, nil, false, nil
		}
		raw, err := r.read(ref)
		if err != nil {
			return nil, nil, false, err
		}
		return raw, func() string {
			return fmt.Sprintf("%s: delta of %s version %d at offset %d", ref.seg.path, p.rel, v, ref.off)
		}, true, nil
	}
	path := p.file(v, "delta")
	if !files[fileKey{v, "delta"}] {
		return nil, nil, false, fmt.Errorf("checkpoint: snapshot state %s at version %d: %s is missing: %w", p.dir, target, path, ErrCorrupt)
	}
	raw, err = readFile(path)
	if err != nil {
		return nil, nil, false, err
	}
	return raw, func() string { return path }, true, nil
}

// snapshotLive writes the snapshot of version latest of a partition whose
// operator keeps the state live (dataless): a segment of the changes
// since the newest snapshot when the chain this process wrote leads there
// and would stay short and mostly live, else a full snapshot
// (compactSnapshot). covered is the delta bytes the snapshot makes
// unnecessary to replay.
func (p *StorePartition) snapshotLive(files map[fileKey]bool, latest, covered int64) error {
	if slots := p.opts.compactSlots; slots != nil {
		slots <- struct{}{}
		defer func() { <-slots }()
	}
	base, ok := newestBase(files, latest-1)
	p.mu.Lock()
	chain, rows := p.chain, p.rows
	smaller := ok && p.liveSmaller(base.version, chain, rows)
	p.mu.Unlock()
	// The first snapshot is full: from the empty version, a full
	// snapshot costs the changes too, and a chain always ends on one.
	// So is one whose live view holds fewer bytes than the changes a
	// segment would copy (liveSmaller).
	if !ok || chain.head != base.version || chain.links >= maxSegmentLinks || p.opts.fullSnapshots || smaller {
		return p.fullSnapshot(files, latest, covered, nil)
	}
	var bufs payloadBufs
	defer bufs.release()
	payloads, size, added, addedBytes, ok, err := p.deltaPayloads(files, base.version, latest, &bufs)
	if err != nil {
		return fmt.Errorf("checkpoint: snapshot segment of %s at version %d: %w", p.dir, latest, err)
	}
	if !ok {
		return p.fullSnapshot(files, latest, covered, nil)
	}
	entries := chain.entries + added
	if entries > 2*rows+p.opts.segmentSlack {
		return p.fullSnapshot(files, latest, covered, payloads)
	}
	raw, err := sealColumnsOwned(segmentBody(payloads, size))
	if err != nil {
		return fmt.Errorf("checkpoint: encode snapshot segment for %s: %w", p.dir, err)
	}
	key := fileKey{latest, segmentKind(base.version)}
	return p.putBase(key, raw, func() {
		files[key] = true
		p.mu.Lock()
		if p.files != nil {
			p.files[key] = true
			p.noteBases()
		}
		p.sinceSnap = max(p.sinceSnap-covered, 0)
		p.chain = snapChain{head: latest, links: chain.links + 1, entries: entries, bytes: chain.bytes + addedBytes}
		p.snapBytes = p.chain.bytes
		p.mu.Unlock()
	})
}

// fullSnapshot writes the full snapshot of version latest: from the
// operator's live view of it when the partition holds one
// (snapshotFromLive: nothing read, nothing folded), else folded from the
// files (foldSnapshot, with changes as there).
//
// The view may be of another version than latest: maintenance runs
// behind the commits (a worker pool serves every partition), and the
// view kept is the one of the commit that made the snapshot due, or of
// a later one. The snapshot is then of the view's version: as valid a
// base (committed, its delta durable), and still no fold.
func (p *StorePartition) fullSnapshot(files map[fileKey]bool, latest, covered int64, changes [][]byte) error {
	after := int64(0) // the newest snapshot or segment: the view must be newer
	if k, ok := newestBase(files, math.MaxInt64); ok {
		after = k.version
	}
	p.mu.Lock()
	view, at := p.takeLive(after)
	p.mu.Unlock()
	if view == nil {
		return p.foldSnapshot(files, latest, covered, changes)
	}
	defer view.Release()
	return p.snapshotFromLive(files, at.version, at.since, view)
}

// liveSmaller reports whether the partition keeps a live view newer than
// base whose entries hold fewer bytes than the deltas since the last
// snapshot (sinceSnap), estimated as the live rows at the chain's bytes
// per entry. A segment costs the changes (read back from the state log,
// concatenated, compressed, written) and a full snapshot from the view
// the live entries: for a state that turns over (a windowed
// aggregation's groups are upserted and deleted within a few epochs) the
// changes since the last snapshot are many times the live entries, and
// the view, already paid for on the epoch's path, went unused while the
// segment copied them. A state that grows keeps its segments (its
// changes are about as many as its new live entries, its view is the
// whole state). Callers hold p.mu.
func (p *StorePartition) liveSmaller(base int64, chain snapChain, rows int64) bool {
	if p.live.view == nil || p.live.version <= base || chain.entries <= 0 {
		return false
	}
	return float64(rows)*float64(chain.bytes)/float64(chain.entries) < float64(p.sinceSnap)
}

// minSegmentSlack lets a small chain hold dead entries beyond twice the
// live keys (a partition of a few keys updated every epoch would
// otherwise compact every time).
const minSegmentSlack = 1024

// keepChains returns the files that rebuilding any snapshot or segment at
// or above from needs, so that cleanup spares the older links of their
// chains. A chain that cannot be resolved keeps what it has.
func (p *StorePartition) keepChains(files map[fileKey]bool, from int64) map[fileKey]bool {
	keep := map[fileKey]bool{}
	for k := range files {
		if k.version < from || !isBase(k) {
			continue
		}
		chain, err := p.chainOf(files, k)
		if err != nil {
			if !errors.Is(err, ErrCorrupt) {
				slog.Warn("state snapshot chain unresolved", "err", err)
			}
			continue
		}
		for _, f := range chain {
			keep[f] = true
		}
	}
	return keep
}
