package arrowstream

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/internal/clip"
	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/sql"
)

// A session with a durable catalog (RestoreCatalog) records every CREATE
// TABLE ... USING, CREATE STREAMING TABLE, CREATE VIEW and DROP that
// succeeds, and answers a statement that meets a recorded definition of
// the same name so that a script can run again after a restart:
//
//   - the same definition (compared as canonical SQL) continues: a source
//     or view is left as it is, a streaming table keeps running (or is
//     started again from its checkpoint if it had stopped);
//   - a different definition is refused with a DefinitionChangedError
//     that names the choice: CREATE OR REPLACE starts over (a streaming
//     table's checkpoint is archived, its rows dropped), DROP first, or
//     keep the recorded definition;
//   - CREATE OR REPLACE replaces whatever was there;
//   - DROP of a streaming table archives its checkpoint, so that a later
//     table of the same name starts from nothing.

// DefinitionChangedError refuses a CREATE whose definition differs from
// the recorded one of the same name.
type DefinitionChangedError struct {
	Name     string
	Kind     string // "source" or "streaming"
	Recorded string // the recorded definition (canonical SQL)
	Given    string // the statement's (canonical SQL)
	// Checkpoint is a streaming table's checkpoint directory, and
	// ArchiveDir where CREATE OR REPLACE would move it.
	Checkpoint, ArchiveDir string
}

func (e *DefinitionChangedError) Error() string {
	if e.Kind == kindStreaming {
		return fmt.Sprintf("streaming table %s already exists with a different definition.\n"+
			"  recorded:  %s\n  statement: %s\n"+
			"Either start over with the new definition: CREATE OR REPLACE STREAMING TABLE %s ... "+
			"(the checkpoint %s is archived under %s and the table's rows are dropped), "+
			"or keep the table: run its recorded definition unchanged, which continues from the checkpoint",
			e.Name, e.Recorded, e.Given, e.Name, e.Checkpoint, e.ArchiveDir)
	}
	return fmt.Sprintf("table %s already exists with a different definition.\n"+
		"  recorded:  %s\n  statement: %s\n"+
		"Either replace it: CREATE OR REPLACE TABLE %s ... (streaming tables reading it keep their source until they restart), "+
		"or DROP TABLE %s first, or keep it: run its recorded definition unchanged",
		e.Name, e.Recorded, e.Given, e.Name, e.Name)
}

// RestoredTable is one definition RestoreCatalog recreated, or failed to.
type RestoredTable struct {
	Name string
	Kind string // "source", "streaming" or "view"
	SQL  string // the recorded definition
	// Query is a streaming table's query (nil when Err is set or for
	// other kinds).
	Query *StreamingQuery
	// Err is why the definition could not be recreated.
	Err error
}

// RestoreCatalog opens the durable catalog under the checkpoint root
// (<root>/_arrowstream/catalog), recreates every recorded source, view and
// static table and restarts every streaming table from its checkpoint, in
// dependency order, then records the session's DDL from now on. A
// definition that cannot be recreated is reported in its RestoredTable
// (and stays recorded: a later CREATE or DROP decides its fate; a table
// recorded, by an earlier build, under a name that cannot name its
// directory under the checkpoint root is not replayed at all, see
// badRecordedName, and its DROP touches no file); an error
// is returned only when the catalog itself cannot be read (a damaged
// record names its file and wraps checkpoint.ErrCorrupt).
//
// Only one process may use a checkpoint root at a time: the arrowstream
// command holds a lock on it (see docs/operations.md).
func (s *Session) RestoreCatalog(ctx context.Context) ([]RestoredTable, error) {
	if s.ckRoot == "" {
		return nil, errors.New("arrowstream: RestoreCatalog needs SessionOptions.CheckpointRoot")
	}
	s.ddlMu.Lock()
	defer s.ddlMu.Unlock()
	if s.durable.Load() != nil {
		return nil, errors.New("arrowstream: the session's catalog is already restored")
	}
	c, err := openCatalogLog(s.ckRoot, &checkpoint.Writer{NoSync: s.noSync, Hook: s.ckHook})
	if err != nil {
		return nil, err
	}
	defs := c.list()
	s.restoring.Store(true)
	defer s.restoring.Store(false)
	out := make([]RestoredTable, len(defs))
	pending := make([]int, 0, len(defs))
	for i, d := range defs {
		out[i] = RestoredTable{Name: d.Name, Kind: d.Kind, SQL: d.SQL}
		if out[i].Err = badRecordedName(d); out[i].Err == nil {
			pending = append(pending, i)
		}
	}
	// Definitions replay in creation order; one whose table does not exist
	// yet (its source was replaced after it) is retried after the others,
	// as long as a pass makes progress.
	for len(pending) > 0 && ctx.Err() == nil {
		var failed []int
		for _, i := range pending {
			d := defs[i]
			var conf map[string]string
			if d.Kind == kindStreaming {
				conf = d.Conf // planned under the settings it was created with
			}
			res, err := s.withTableConf(ctx, conf, func(ctx context.Context) (*Result, error) { return s.replay(ctx, d.SQL) })
			out[i].Err = err
			if err != nil {
				failed = append(failed, i)
				continue
			}
			out[i].Query = res.Query
			res.Close()
		}
		if len(failed) == len(pending) {
			break
		}
		pending = failed
	}
	for i := range out {
		if out[i].Err != nil {
			out[i].Err = fmt.Errorf("arrowstream: restore %s %s from the catalog: %w", out[i].Kind, clip.Text(out[i].Name, shownNameBytes), out[i].Err)
			s.logger.Error("cannot restore a table from the catalog", "table", out[i].Name, "err", out[i].Err)
		}
	}
	s.durable.Store(c)
	return out, ctx.Err()
}

func (s *Session) replay(ctx context.Context, text string) (*Result, error) {
	stmt, err := sql.Parse(text)
	if err != nil {
		return nil, err
	}
	return s.runStatement(ctx, stmt)
}

// isDDL reports whether a statement changes the catalog.
func isDDL(stmt sql.Statement) bool {
	switch stmt.(type) {
	case *sql.CreateTable, *sql.CreateStreamingTable, *sql.CreateView, *sql.DropTable:
		return true
	}
	return false
}

// durableDDL runs a DDL statement of a session with a durable catalog.
func (s *Session) durableDDL(ctx context.Context, c *catalogLog, stmt sql.Statement) (*Result, error) {
	s.ddlMu.Lock()
	defer s.ddlMu.Unlock()
	switch x := stmt.(type) {
	case *sql.CreateTable:
		// Before anything is archived, written or recorded.
		if err := checkTableDirName(identName(x.Name)); err != nil {
			return nil, err
		}
		return s.durableCreateTable(ctx, c, x)
	case *sql.CreateStreamingTable:
		if err := checkTableDirName(identName(x.Name)); err != nil {
			return nil, err
		}
		return s.durableCreateStreaming(ctx, c, x)
	case *sql.CreateView:
		return s.durableCreateView(ctx, c, x)
	case *sql.DropTable:
		return s.durableDrop(ctx, c, x)
	}
	return s.runStatement(ctx, stmt)
}

func (s *Session) durableCreateTable(ctx context.Context, c *catalogLog, x *sql.CreateTable) (*Result, error) {
	name := identName(x.Name)
	plain := *x
	plain.OrReplace, plain.IfNotExists = false, false
	def := sql.Format(&plain)
	cur, recorded := c.get(name)
	_, lookupErr := s.catalog.Table(name)
	exists := lookupErr == nil
	switch {
	case x.OrReplace:
		if exists {
			s.dropLocal(name)
		}
		if err := s.archiveStaticData(name); err != nil {
			return nil, err
		}
	case exists && recorded && cur.SQL == def:
		return &Result{}, nil // the same definition: continue
	case exists && x.IfNotExists:
		return &Result{}, nil
	case exists && recorded:
		return nil, &DefinitionChangedError{Name: name, Kind: kindSource, Recorded: cur.SQL, Given: def}
	}
	return s.runAndRecord(ctx, c, &plain, catalogDef{Name: name, Kind: kindSource, SQL: def})
}

// runAndRecord runs a creating statement and records its definition; a
// statement that ran but could not be recorded is undone, so that the
// session never holds a table the catalog would not bring back.
func (s *Session) runAndRecord(ctx context.Context, c *catalogLog, stmt sql.Statement, def catalogDef) (*Result, error) {
	res, err := s.runStatement(ctx, stmt)
	if err != nil {
		return nil, err
	}
	if err := c.create(def); err != nil {
		res.Close()
		s.dropLocal(def.Name)
		return nil, err
	}
	return res, nil
}

func (s *Session) durableCreateStreaming(ctx context.Context, c *catalogLog, x *sql.CreateStreamingTable) (*Result, error) {
	name := identName(x.Name)
	if sameName(name, ReservedDir) {
		return nil, fmt.Errorf("arrowstream: streaming table name %s is reserved (its checkpoint directory holds the catalog)", name)
	}
	plain := *x
	plain.OrReplace, plain.OrRefresh = false, false
	def := sql.Format(&plain)
	cur, recorded := c.get(name)
	q := s.activeQuery(name)
	switch {
	case x.OrReplace:
		if err := s.startOver(name, cur.Checkpoint); err != nil {
			return nil, err
		}
	case recorded && cur.SQL == def:
		if q != nil {
			return &Result{Query: q}, nil // the same definition: it continues
		}
		// Restart from its checkpoint, under the settings it was created with.
		return s.withTableConf(ctx, cur.Conf, func(ctx context.Context) (*Result, error) { return s.runStatement(ctx, &plain) })
	case recorded:
		dir := cur.Checkpoint
		if q != nil {
			dir = q.CheckpointDir()
		}
		if dir == "" {
			dir = filepath.Join(s.ckRoot, name)
		}
		return nil, &DefinitionChangedError{Name: name, Kind: kindStreaming, Recorded: cur.SQL, Given: def,
			Checkpoint: dir, ArchiveDir: filepath.Dir(s.archiveDest(dir, ""))}
	}
	run := plain
	run.OrRefresh = x.OrRefresh // without a record, OR REFRESH restarts a running query as before
	conf := recordedTableConf(s.confCopy())
	res, err := s.runStatement(ctx, &run)
	if err != nil {
		return nil, err
	}
	d := catalogDef{Name: name, Kind: kindStreaming, SQL: def, Conf: conf}
	if res.Query != nil {
		d.Checkpoint = res.Query.CheckpointDir()
	}
	if err := c.create(d); err != nil {
		s.dropTable(name, true)
		return nil, err
	}
	return res, nil
}

func (s *Session) durableCreateView(ctx context.Context, c *catalogLog, x *sql.CreateView) (*Result, error) {
	name := identName(x.Name)
	plain := *x
	plain.OrReplace, plain.IfNotExists = false, false
	def := sql.Format(&plain)
	cur, recorded := c.get(name)
	_, lookupErr := s.catalog.Table(name)
	exists := lookupErr == nil
	if exists && (x.IfNotExists || recorded && cur.SQL == def && !x.OrReplace) {
		return &Result{}, nil
	}
	return s.runAndRecord(ctx, c, x, catalogDef{Name: name, Kind: kindView, SQL: def})
}

func (s *Session) durableDrop(ctx context.Context, c *catalogLog, x *sql.DropTable) (*Result, error) {
	name := identName(x.Name)
	cur, recorded := c.get(name)
	dir := cur.Checkpoint
	if q := s.activeQuery(name); q != nil {
		dir = q.CheckpointDir()
	}
	res, err := s.runStatement(ctx, x)
	switch {
	case err != nil && recorded && errors.Is(err, plan.ErrTableNotFound):
		// A recorded table that could not be restored: dropping it
		// removes the record.
		res = &Result{}
	case err != nil:
		return nil, err
	case !recorded:
		return res, nil
	}
	if err := c.drop(cur.Name); err != nil {
		res.Close()
		return nil, err
	}
	if bad := badRecordedName(cur); bad != nil {
		// Its directory would be outside its own (badRecordedName):
		// nothing is archived.
		s.logger.Warn("dropped a table recorded under a name that cannot name its directory under the checkpoint root; no file was touched",
			"table", cur.Name, "kind", cur.Kind)
		return res, nil
	}
	if cur.Kind == kindStreaming {
		if err := s.archiveCheckpoint(name, dir); err != nil {
			res.Close()
			return nil, err
		}
	}
	if cur.Kind == kindSource {
		if err := s.archiveStaticData(name); err != nil {
			res.Close()
			return nil, err
		}
	}
	return res, nil
}

// startOver drops the streaming table name (stopping its query) and
// archives its checkpoint (dir, or the running query's, or the default
// one), for CREATE OR REPLACE STREAMING TABLE.
func (s *Session) startOver(name, dir string) error {
	if q := s.activeQuery(name); q != nil {
		dir = q.CheckpointDir()
	}
	if err := s.dropTable(name, true); err != nil {
		return err
	}
	return s.archiveCheckpoint(name, dir)
}

// activeQuery is the running query named name, or nil.
func (s *Session) activeQuery(name string) *StreamingQuery {
	for _, q := range s.manager.Active() {
		if sameName(q.Name(), name) {
			return q
		}
	}
	return nil
}

// dropLocal removes a source, view or static table of the session (not a
// sink table), closing a shared source.
func (s *Session) dropLocal(name string) {
	if t, err := s.catalog.Table(name); err == nil {
		if st, ok := t.(*streamTable); ok && st.shared != nil {
			defer st.shared.Close()
		}
	}
	s.DropTable(name)
}

// archiveDest is where a checkpoint is archived at stamp: under
// <root>/_arrowstream/archive/ when it is in the root, else next to it.
func (s *Session) archiveDest(dir, stamp string) string {
	if rel, err := filepath.Rel(s.ckRoot, dir); s.ckRoot != "" && err == nil && !strings.HasPrefix(rel, "..") && !filepath.IsAbs(rel) {
		return filepath.Join(s.ckRoot, ReservedDir, "archive", filepath.Base(dir)+"-"+stamp)
	}
	return dir + ".archived-" + stamp
}

// archiveCheckpoint moves a dropped or replaced streaming table's
// checkpoint out of the way: under <root>/_arrowstream/archive/ when it is
// in the checkpoint root, else next to itself. Nothing is deleted: the
// operator removes archives when they are no longer wanted.
func (s *Session) archiveCheckpoint(name, dir string) error {
	if dir == "" {
		if s.ckRoot == "" {
			return nil // a temporary checkpoint, removed when the query stopped
		}
		dir = filepath.Join(s.ckRoot, name)
	}
	if _, err := os.Stat(dir); errors.Is(err, fs.ErrNotExist) {
		return nil
	}
	// Not from under a live writer: the session stopped its own query,
	// but another session or process may run one on this checkpoint,
	// which would go on writing at paths that no longer hold it. The
	// lock moves with the directory and is released after the move.
	lock, err := checkpoint.LockWriter(dir, &checkpoint.Writer{NoSync: s.noSync}, fmt.Sprintf("archiving the checkpoint of dropped or replaced streaming table %q", name))
	if err != nil {
		return fmt.Errorf("arrowstream: archive checkpoint of %s: %w", name, err)
	}
	defer lock.Release()
	dest := s.archiveDest(dir, time.Now().UTC().Format("20060102T150405.000Z"))
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return fmt.Errorf("arrowstream: archive checkpoint of %s: %w", name, err)
	}
	if err := os.Rename(dir, dest); err != nil {
		return fmt.Errorf("arrowstream: archive checkpoint of %s: %w", name, err)
	}
	s.logger.Info("archived the checkpoint of a dropped or replaced streaming table", "table", name, "checkpoint", dir, "archive", dest)
	return nil
}

// sameName reports whether two table names are one name: compared as their
// lower case, as the catalogs key them (plan.Catalog, the durable catalog,
// the server's read grants). strings.EqualFold also equates names whose
// lower cases differ ("ſ" and "s"): a DROP of one stopped the other.
func sameName(a, b string) bool { return strings.ToLower(a) == strings.ToLower(b) }
