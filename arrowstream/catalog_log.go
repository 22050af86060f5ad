package arrowstream

import (
	"encoding/json"
	"fmt"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/arrowstream/arrowstream/checkpoint"
)

// The durable catalog is a log of DDL records under the checkpoint root:
//
//	<root>/_arrowstream/catalog/<n>   one record per DDL statement
//
// Each record is a checkpoint.Log entry (written atomically, never
// overwritten, with a checksum line), holding JSON: a definition created
// (its canonical SQL), a name dropped, or a snapshot of every live
// definition (written when the log is compacted; the records before it
// are then deleted). Replaying the records in order gives the live
// definitions; a damaged record fails the replay with an error naming it
// (checkpoint.ErrCorrupt) rather than silently forgetting a table.

// ReservedDir is the directory of the checkpoint root that holds the
// catalog log and the root's lock: no streaming table may use it as its
// checkpoint.
const ReservedDir = "_arrowstream"

// catalogFormat is the record format this build writes and reads.
const catalogFormat = 1

// Definition kinds.
const (
	kindSource    = "source"    // CREATE TABLE ... USING (sources and static tables)
	kindStreaming = "streaming" // CREATE STREAMING TABLE
	kindView      = "view"      // CREATE VIEW
)

// catalogDef is one live definition.
type catalogDef struct {
	Name string `json:"name"`
	Kind string `json:"kind"`
	// SQL is the statement in canonical form (sql.Format), without OR
	// REPLACE, OR REFRESH or IF NOT EXISTS: the text compared to decide
	// whether a later statement changes the definition.
	SQL string `json:"sql"`
	// Seq is the log position of the record that created it (the replay
	// order).
	Seq int64 `json:"seq"`
	// Checkpoint is a streaming table's checkpoint directory.
	Checkpoint string `json:"checkpoint,omitempty"`
	// Conf is a streaming table's settings when it was created (the
	// session settings that shape its plan and semantics, tableConf):
	// a restart runs its definition under them, so that a restarted
	// process without the SETs of the script that created it plans the
	// same query. Absent in records of earlier builds.
	Conf map[string]string `json:"conf,omitempty"`
}

// catalogRecord is one log entry.
type catalogRecord struct {
	Format int          `json:"format"`
	Op     string       `json:"op"` // create, drop, snapshot
	Def    *catalogDef  `json:"def,omitempty"`
	Name   string       `json:"name,omitempty"` // drop
	Defs   []catalogDef `json:"defs,omitempty"` // snapshot
	Time   time.Time    `json:"time"`
}

// catalogLog is the open log and the definitions it holds.
type catalogLog struct {
	root string
	log  *checkpoint.Log

	mu   sync.Mutex
	next int64                 // the next record's position
	defs map[string]catalogDef // by lower-case name
}

// catalogDir is where the log of a checkpoint root lives.
func catalogDir(root string) string { return filepath.Join(root, ReservedDir, "catalog") }

// openCatalogLog opens (creating) the log under root and replays it. A
// log whose records outnumber the live definitions by far is compacted.
func openCatalogLog(root string, w *checkpoint.Writer) (*catalogLog, error) {
	lg, err := checkpoint.OpenLog(catalogDir(root), w)
	if err != nil {
		return nil, fmt.Errorf("arrowstream: catalog under %s: %w", root, err)
	}
	c := &catalogLog{root: root, log: lg, defs: map[string]catalogDef{}}
	seqs, err := lg.Epochs()
	if err != nil {
		return nil, fmt.Errorf("arrowstream: catalog %s: %w", lg.Dir(), err)
	}
	for _, n := range seqs {
		body, ok, err := lg.Get(n)
		if err != nil {
			return nil, fmt.Errorf("arrowstream: catalog: %w", err)
		}
		if !ok {
			continue // purged by a concurrent compaction: cannot happen under the root's lock
		}
		if err := c.apply(n, body); err != nil {
			return nil, fmt.Errorf("arrowstream: catalog record %s: %w", filepath.Join(lg.Dir(), fmt.Sprint(n)), err)
		}
		c.next = n + 1
	}
	if len(seqs) > 2*len(c.defs)+32 {
		if err := c.compact(); err != nil {
			return nil, err
		}
	}
	return c, nil
}

// apply replays the record at position n.
func (c *catalogLog) apply(n int64, body []byte) error {
	var r catalogRecord
	if err := json.Unmarshal(body, &r); err != nil {
		return fmt.Errorf("undecodable JSON (%v): %w", err, checkpoint.ErrCorrupt)
	}
	if r.Format > catalogFormat {
		return fmt.Errorf("written in catalog format v%d, this build reads up to v%d; upgrade Arrowstream to read it: %w", r.Format, catalogFormat, checkpoint.ErrNewerFormat)
	}
	switch r.Op {
	case "create":
		if r.Def == nil || r.Def.Name == "" || r.Def.SQL == "" {
			return fmt.Errorf("create record without a definition: %w", checkpoint.ErrCorrupt)
		}
		d := *r.Def
		d.Seq = n
		c.defs[strings.ToLower(d.Name)] = d
	case "drop":
		if r.Name == "" {
			return fmt.Errorf("drop record without a name: %w", checkpoint.ErrCorrupt)
		}
		delete(c.defs, strings.ToLower(r.Name))
	case "snapshot":
		c.defs = map[string]catalogDef{}
		for _, d := range r.Defs {
			if d.Name == "" || d.SQL == "" {
				return fmt.Errorf("snapshot with an empty definition: %w", checkpoint.ErrCorrupt)
			}
			c.defs[strings.ToLower(d.Name)] = d
		}
	default:
		return fmt.Errorf("unknown operation %q: %w", r.Op, checkpoint.ErrCorrupt)
	}
	return nil
}

// add writes a record and applies it.
func (c *catalogLog) add(r catalogRecord) error {
	c.mu.Lock()
	defer c.mu.Unlock()
	r.Format, r.Time = catalogFormat, time.Now().UTC()
	body, err := json.Marshal(r)
	if err != nil {
		return fmt.Errorf("arrowstream: catalog record: %w", err)
	}
	n := c.next
	ok, err := c.log.Add(n, body)
	if err != nil {
		return fmt.Errorf("arrowstream: catalog %s: %w", c.log.Dir(), err)
	}
	if !ok {
		return fmt.Errorf("arrowstream: catalog record %d under %s exists already: another process writes this checkpoint root", n, c.log.Dir())
	}
	c.next = n + 1
	return c.apply(n, body)
}

func (c *catalogLog) create(d catalogDef) error {
	return c.add(catalogRecord{Op: "create", Def: &d})
}

func (c *catalogLog) drop(name string) error {
	return c.add(catalogRecord{Op: "drop", Name: name})
}

// get returns the live definition of name.
func (c *catalogLog) get(name string) (catalogDef, bool) {
	c.mu.Lock()
	defer c.mu.Unlock()
	d, ok := c.defs[strings.ToLower(name)]
	return d, ok
}

// list returns the live definitions in creation order.
func (c *catalogLog) list() []catalogDef {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]catalogDef, 0, len(c.defs))
	for _, d := range c.defs {
		out = append(out, d)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Seq < out[j].Seq })
	return out
}

// compact writes a snapshot of the live definitions, then deletes the
// records before it. A crash in between leaves records that the
// snapshot supersedes when replayed.
func (c *catalogLog) compact() error {
	defs := c.list()
	if err := c.add(catalogRecord{Op: "snapshot", Defs: defs}); err != nil {
		return err
	}
	c.mu.Lock()
	snap := c.next - 1
	c.mu.Unlock()
	if err := c.log.Purge(snap); err != nil {
		return fmt.Errorf("arrowstream: compact catalog %s: %w", c.log.Dir(), err)
	}
	return nil
}
