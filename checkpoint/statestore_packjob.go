package checkpoint

import (
	"errors"
	"fmt"
	"os"
	"slices"
)

// Maintenance by operator. A group commit collects the partitions whose
// maintenance it makes due (maintDue) and runs those of one operator as
// one job on the provider's pool (snapPacks.maintain): each partition
// decides and encodes its snapshot as before, but hands the file to the
// job's batch instead of writing it (putBase); the batch writes each
// version's snapshots as one pack (statestore_pack.go), then every
// partition records its new base and deletes what it no longer needs.

// maintDue collects, during a group commit, the partitions whose
// maintenance is due, by operator.
type maintDue struct {
	order []*snapPacks
	parts map[*snapPacks][]*StorePartition
}

// add queues p (whose maint.Add was done) for its operator's job.
func (d *maintDue) add(p *StorePartition) {
	if d.parts == nil {
		d.parts = map[*snapPacks][]*StorePartition{}
	}
	if _, ok := d.parts[p.packs]; !ok {
		d.order = append(d.order, p.packs)
	}
	d.parts[p.packs] = append(d.parts[p.packs], p)
}

// submit queues one job per operator on pool.
func (d *maintDue) submit(pool *maintPool) {
	for _, s := range d.order {
		parts := d.parts[s]
		pool.submitJob(func() { s.maintain(parts) })
	}
}

// packBatch holds the snapshots of one maintenance job until they are
// written as packs.
type packBatch struct {
	s       *snapPacks
	pending []pendingBase
	bytes   int64
	errs    map[*StorePartition]error
}

// add queues a partition's snapshot; the batch writes it once it holds
// packFlushBytes.
func (b *packBatch) add(pb pendingBase) {
	b.pending = append(b.pending, pb)
	b.bytes += int64(len(pb.raw))
	if b.bytes >= packFlushBytes {
		b.flush()
	}
}

// flush writes the pending snapshots, one pack per version, and installs
// them in their partitions; a failed pack's partitions get its error.
func (b *packBatch) flush() {
	pending := b.pending
	b.pending, b.bytes = nil, 0
	slices.SortStableFunc(pending, func(x, y pendingBase) int {
		return int(min(max(x.key.version-y.key.version, -1), 1))
	})
	for len(pending) > 0 {
		n := 1
		for n < len(pending) && pending[n].key.version == pending[0].key.version {
			n++
		}
		group := pending[:n]
		pending = pending[n:]
		if err := b.s.write(group[0].key.version, group); err != nil {
			if b.errs == nil {
				b.errs = map[*StorePartition]error{}
			}
			for _, pb := range group {
				b.errs[pb.p] = err
			}
			continue
		}
		for _, pb := range group {
			pb.install()
		}
	}
}

// maintain runs the maintenance of parts, partitions of this operator
// whose commit made it due, writing their snapshots as packs.
func (s *snapPacks) maintain(parts []*StorePartition) {
	type run struct {
		latest int64
		files  map[fileKey]bool
		err    error
	}
	runs := make([]run, len(parts))
	b := &packBatch{s: s}
	for i, p := range parts {
		p.mu.Lock()
		runs[i].latest = p.version
		p.mu.Unlock()
		p.mbatch = b
		var done int64
		runs[i].files, done, runs[i].err = p.maintainSnapshot()
		runs[i].latest = max(runs[i].latest, done)
		p.mbatch = nil
	}
	b.flush()
	var again []*StorePartition
	for i, p := range parts {
		r := runs[i]
		if r.err == nil {
			r.err = b.errs[p]
		}
		if r.err == nil && r.files != nil {
			r.err = p.cleanup(r.files, r.latest)
		}
		if p.endMaintenance(r.latest, r.err) {
			again = append(again, p)
		}
	}
	if len(again) > 0 {
		// Commits made their snapshots due while this ran: one job
		// for them, as a group commit would have queued.
		parts[0].opts.maint.submitJob(func() { s.maintain(again) })
	}
}

// putBase writes a snapshot or segment of the partition and then runs
// install (which records it): as a file of its own, or, during an
// operator's maintenance job, into the job's pack (install then runs once
// the pack is durable).
func (p *StorePartition) putBase(key fileKey, raw []byte, install func()) error {
	if b := p.mbatch; b != nil {
		b.add(pendingBase{p: p, key: key, raw: raw, install: install})
		return nil
	}
	if err := p.writeFile(p.file(key.version, key.kind), raw); err != nil {
		return err
	}
	install()
	return nil
}

// readBase applies the snapshot or segment k to data, from its pack or
// its own file; aliased as readChain's.
func (p *StorePartition) readBase(k fileKey, data map[string][]byte, aliased bool) error {
	if p.packs != nil {
		if r, ok := p.packs.lookup(p.packPart, k); ok {
			raw, err := r.read()
			if err != nil {
				return err
			}
			if aliased {
				err = p.decodeAliased(raw, data)
			} else {
				err = decodeState(p.opts.Allocator, raw, data)
			}
			if err != nil {
				return fmt.Errorf("checkpoint: %s: %w", r.name(), err)
			}
			return nil
		}
	}
	path := p.file(k.version, k.kind)
	if aliased {
		return p.readAliased(path, data)
	}
	_, err := p.readInto(path, data)
	return err
}

// removeBase deletes a file of the partition that cleanup no longer
// needs: its pack entry, or its own file.
func (p *StorePartition) removeBase(k fileKey) error {
	if p.packs != nil {
		if ok, err := p.packs.drop(p.packPart, k); ok || err != nil {
			return err
		}
	}
	if err := os.Remove(p.file(k.version, k.kind)); err != nil && !errors.Is(err, os.ErrNotExist) {
		return fmt.Errorf("checkpoint: delete old state file: %w", err)
	}
	return nil
}
