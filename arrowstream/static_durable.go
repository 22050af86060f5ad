package arrowstream

import (
	"bytes"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/ipc"

	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/plan"
)

// A static table (CREATE TABLE t (cols) USING parquet, no path) of a
// session with a durable catalog keeps its rows under
// <root>/_arrowstream/tables/<name>/: every INSERT writes one sealed
// (checksummed) Arrow IPC file, durably, before its rows become visible,
// and a restored catalog reads them back in order. So a static table
// comes back with its rows, as its definition does. DROP and CREATE OR
// REPLACE archive the directory as they archive a streaming table's
// checkpoint.

// staticSuffix names the files of a durable static table.
const staticSuffix = ".arrows"

// durableStatic is a static table whose appends are written to dir first.
type durableStatic struct {
	*plan.StaticTable
	dir    string
	writer *checkpoint.Writer

	mu   sync.Mutex // serializes appends, so files are numbered in order
	next int64      // number of the next file
}

// Append implements plan.Inserter: the rows are written and synced to a
// new file, then made visible; a failed write appends nothing.
func (t *durableStatic) Append(records ...arrow.Record) error {
	for i, r := range records {
		if !r.Schema().Equal(t.Schema()) {
			return fmt.Errorf("arrowstream: insert record %d has schema %s, want %s", i, r.Schema(), t.Schema())
		}
	}
	t.mu.Lock()
	defer t.mu.Unlock()
	var buf bytes.Buffer
	w := ipc.NewWriter(&buf, ipc.WithSchema(t.Schema()))
	for _, r := range records {
		if err := w.Write(r); err != nil {
			return fmt.Errorf("arrowstream: encode inserted rows for %s: %w", t.dir, err)
		}
	}
	if err := w.Close(); err != nil {
		return fmt.Errorf("arrowstream: encode inserted rows for %s: %w", t.dir, err)
	}
	if err := os.MkdirAll(t.dir, 0o755); err != nil {
		return fmt.Errorf("arrowstream: keep inserted rows: %w", err)
	}
	path := filepath.Join(t.dir, fmt.Sprintf("%020d%s", t.next, staticSuffix))
	if err := t.writer.WriteSealedFile(path, buf.Bytes(), false); err != nil {
		return fmt.Errorf("arrowstream: keep inserted rows: %w", err)
	}
	t.next++
	return t.StaticTable.Append(records...)
}

// Overwrite refuses INSERT OVERWRITE: the files of the rows it replaces
// would have to be archived and the new ones written as one step, which
// the durable layout does not do yet.
func (t *durableStatic) Overwrite(...arrow.Record) error {
	return fmt.Errorf("arrowstream: INSERT OVERWRITE of %s: a static table of a durable catalog cannot be overwritten (insert into a new table instead): %w", filepath.Base(t.dir), plan.ErrUnsupported)
}

// staticDataDir is where the static table name keeps its rows.
func (s *Session) staticDataDir(name string) string {
	return filepath.Join(s.ckRoot, ReservedDir, "tables", strings.ToLower(name))
}

// durableCatalog reports whether DDL is recorded (or being replayed), so
// that static tables keep their rows.
func (s *Session) durableCatalog() bool {
	return s.ckRoot != "" && (s.durable.Load() != nil || s.restoring.Load())
}

// newStaticTable makes the static table name: in memory, or, with a
// durable catalog, kept on disk (loading what a restored table holds; a
// new table's stale directory is archived first).
func (s *Session) newStaticTable(name string, schema *arrow.Schema) (plan.Table, error) {
	t := plan.NewStaticTable(schema)
	if !s.durableCatalog() {
		return t, nil
	}
	if err := checkTableDirName(name); err != nil {
		t.Release()
		return nil, err
	}
	dir := s.staticDataDir(name)
	if !s.restoring.Load() {
		if err := s.archiveStaticData(name); err != nil {
			return nil, err
		}
	}
	d := &durableStatic{StaticTable: t, dir: dir, writer: &checkpoint.Writer{NoSync: s.noSync, Hook: s.ckHook}}
	n, err := s.loadStaticData(d)
	if err != nil {
		t.Release()
		return nil, err
	}
	d.next = n
	return d, nil
}

// loadStaticData appends the rows of d's files, in order, and returns the
// number of the next file. A damaged or foreign file is an error naming it.
func (s *Session) loadStaticData(d *durableStatic) (int64, error) {
	entries, err := os.ReadDir(d.dir)
	if errors.Is(err, os.ErrNotExist) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("arrowstream: read the rows of a static table: %w", err)
	}
	var nums []int64
	for _, e := range entries {
		base, ok := strings.CutSuffix(e.Name(), staticSuffix)
		if !ok {
			continue // temporary files of an interrupted write
		}
		n, err := strconv.ParseInt(base, 10, 64)
		if err != nil || n < 0 {
			return 0, fmt.Errorf("arrowstream: %s: not a file of a static table's rows (want <number>%s)", filepath.Join(d.dir, e.Name()), staticSuffix)
		}
		nums = append(nums, n)
	}
	slices.Sort(nums)
	for i, n := range nums {
		path := filepath.Join(d.dir, fmt.Sprintf("%020d%s", n, staticSuffix))
		if n != int64(i) {
			return 0, fmt.Errorf("arrowstream: %s: the rows of a static table are numbered 0.., and file %d is missing: %w", path, i, checkpoint.ErrCorrupt)
		}
		if err := s.loadStaticFile(d, path); err != nil {
			return 0, err
		}
	}
	return int64(len(nums)), nil
}

func (s *Session) loadStaticFile(d *durableStatic, path string) error {
	data, err := os.ReadFile(path)
	if err != nil {
		return fmt.Errorf("arrowstream: read the rows of a static table: %w", err)
	}
	payload, legacy, err := checkpoint.Unseal(path, data)
	if err != nil {
		return err
	}
	if legacy {
		return fmt.Errorf("arrowstream: %s has no checksum trailer (truncated?): %w", path, checkpoint.ErrCorrupt)
	}
	r, err := ipc.NewReader(bytes.NewReader(payload), ipc.WithAllocator(s.mem))
	if err != nil {
		return fmt.Errorf("arrowstream: %s: %w", path, err)
	}
	defer r.Release()
	if !r.Schema().Equal(d.Schema()) {
		return fmt.Errorf("arrowstream: %s holds rows of schema %s, the table has %s", path, r.Schema(), d.Schema())
	}
	for r.Next() {
		if err := d.StaticTable.Append(r.Record()); err != nil {
			return fmt.Errorf("arrowstream: %s: %w", path, err)
		}
	}
	if err := r.Err(); err != nil {
		return fmt.Errorf("arrowstream: %s: %w", path, err)
	}
	return nil
}

// archiveStaticData moves a dropped or replaced static table's rows under
// <root>/_arrowstream/archive/ (nothing when it kept none).
func (s *Session) archiveStaticData(name string) error {
	if s.ckRoot == "" {
		return nil
	}
	dir := s.staticDataDir(name)
	if _, err := os.Stat(dir); errors.Is(err, os.ErrNotExist) {
		return nil
	}
	dest := filepath.Join(s.ckRoot, ReservedDir, "archive", "table-"+filepath.Base(dir)+"-"+time.Now().UTC().Format("20060102T150405.000Z"))
	for i := 2; ; i++ { // two archives within a millisecond keep both
		if _, err := os.Stat(dest); errors.Is(err, os.ErrNotExist) {
			break
		}
		dest = strings.TrimSuffix(dest, "-"+strconv.Itoa(i-1)) + "-" + strconv.Itoa(i)
	}
	if err := os.MkdirAll(filepath.Dir(dest), 0o755); err != nil {
		return fmt.Errorf("arrowstream: archive the rows of %s: %w", name, err)
	}
	if err := os.Rename(dir, dest); err != nil {
		return fmt.Errorf("arrowstream: archive the rows of %s: %w", name, err)
	}
	s.logger.Info("archived the rows of a dropped or replaced static table", "table", name, "archive", dest)
	return nil
}
