package pebblestore

import "github.com/arrowstream/arrowstream/checkpoint"

var _ checkpoint.Carrier = (*Partition)(nil)

// LogsChanges implements checkpoint.Carrier: the Pebble store takes Put
// and Delete (its batch is the epoch's changelog).
func (p *Partition) LogsChanges() bool { return false }

// Carry implements checkpoint.Carrier: what a group commit of an empty
// batch does (commitGrouped), without making the batch, when that
// version writes nothing: a changelog version, or a snapshot version
// whose last manifest still describes the state.
func (p *Partition) Carry(from, _ int64) (int64, bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.glog == nil || p.busy || p.db == nil || p.version != from {
		return 0, false
	}
	next := from + 1
	changelog := p.prov.opts.ChangelogCheckpointing && next%int64(p.prov.opts.MinDeltasForSnapshot) != 0
	if !changelog && !p.snapshotCurrent {
		return 0, false
	}
	p.version = next
	if p.metrics == nil || len(p.metrics) > 0 {
		p.metrics = map[string]int64{}
	}
	return p.numKeys, true
}
