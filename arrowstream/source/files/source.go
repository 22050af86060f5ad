package files

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/vector"
)

// Source is the file stream source (Spark's FileStreamSource). Each
// listing that finds new files appends them to the seen-files log in
// numbered groups (at most maxFilesPerTrigger files and maxBytesPerTrigger
// bytes each, but at least one file); offset {"logOffset":n} covers groups
// 0..n, and an admission-controlled epoch reads one group. The engine
// calls it from one goroutine at a time.
type Source struct {
	mem     memory.Allocator
	opts    Options
	out     *arrow.Schema
	codec   lineCodec // CSV and JSON
	corrupt int       // output column of the corrupt record, or -1

	log      *checkpoint.Log // nil until SetCheckpointDir: entries in memory only
	entries  map[int64][]fileInfo
	latest   int64 // highest entry, -1 when none
	seen     map[string]bool
	maxMtime int64
	cleaned  int64 // highest entry handled by cleanSource

	stats counters
}

var (
	_ stream.Source                 = (*Source)(nil)
	_ stream.AdmissionControlSource = (*Source)(nil)
	_ stream.CheckpointedSource     = (*Source)(nil)
	_ stream.DescribedSource        = (*Source)(nil)
	_ stream.MetricsSource          = (*Source)(nil)
	_ stream.BatchSource            = (*Source)(nil)
)

// NewSource returns a file source. schema is the user's schema, or nil to
// infer one from the files present now.
func NewSource(mem memory.Allocator, schema *arrow.Schema, opts Options) (*Source, error) {
	// Seen files are remembered by absolute path, so that a restart from
	// another working directory still knows them.
	abs, err := filepath.Abs(opts.Path)
	if err != nil {
		return nil, fmt.Errorf("files: path %s: %w", opts.Path, err)
	}
	opts.Path = abs
	s := &Source{mem: mem, opts: opts, corrupt: -1, entries: map[int64][]fileInfo{}, latest: -1, cleaned: -1, seen: map[string]bool{}}
	if opts.CleanSource == CleanArchive {
		if err := checkArchiveDir(opts); err != nil {
			return nil, err
		}
	}
	if schema == nil {
		files, err := listFiles(opts.Path, opts.Confine)
		if err != nil {
			return nil, err
		}
		sortFiles(files, false)
		if schema, err = inferSchema(opts, files); err != nil {
			return nil, err
		}
	}
	s.out = schema
	if opts.Format == CSV || opts.Format == JSON {
		decode := schema
		if i := schema.FieldIndices(opts.CorruptColumn); len(i) > 0 {
			if schema.Field(i[0]).Type.ID() != arrow.STRING {
				return nil, fmt.Errorf("files: the corrupt-record column %s must be a string, not %s", opts.CorruptColumn, schema.Field(i[0]).Type)
			}
			s.corrupt = i[0]
			fields := append(append([]arrow.Field(nil), schema.Fields()[:i[0]]...), schema.Fields()[i[0]+1:]...)
			decode = arrow.NewSchema(fields, nil)
		}
		if opts.Format == CSV {
			c, err := newCSVCodec(decode, opts)
			if err != nil {
				return nil, err
			}
			s.codec = c
		} else {
			s.codec = &jsonCodec{schema: decode}
		}
	}
	return s, nil
}

// checkArchiveDir refuses an archive directory that the source path would
// list again (Spark's rule), which would read archived files twice.
func checkArchiveDir(o Options) error {
	arch, err1 := filepath.Abs(o.SourceArchiveDir)
	base := o.Path
	if hasGlob(base) {
		base = filepath.Dir(base)
		for hasGlob(base) {
			base = filepath.Dir(base)
		}
	}
	src, err2 := filepath.Abs(base)
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("files: sourceArchiveDir: %w", err)
	}
	if arch == src || strings.HasPrefix(arch, src+string(filepath.Separator)) {
		return fmt.Errorf("files: sourceArchiveDir %s is inside the source path %s: archived files would be read again", o.SourceArchiveDir, o.Path)
	}
	return nil
}

// Schema implements arrowstream.Source.
func (s *Source) Schema() *arrow.Schema { return s.out }

// Description implements arrowstream.DescribedSource.
func (s *Source) Description() string { return "FileStreamSource[" + s.opts.Path + "]" }

// SetCheckpointDir implements arrowstream.CheckpointedSource: it opens the
// seen-files log and remembers every file it lists, so that a restart
// neither reads a file twice nor skips one.
func (s *Source) SetCheckpointDir(dir string) error {
	log, err := checkpoint.OpenLog(dir, nil)
	if err != nil {
		return err
	}
	epochs, err := log.Epochs()
	if err != nil {
		return err
	}
	s.log, s.entries, s.latest, s.seen, s.maxMtime = log, map[int64][]fileInfo{}, -1, map[string]bool{}, 0
	for _, e := range epochs {
		body, ok, err := log.Get(e)
		if err != nil {
			return err
		}
		if !ok {
			continue
		}
		var groups [][]fileInfo
		if err := json.Unmarshal(body, &groups); err != nil {
			return fmt.Errorf("files: seen-files log %s/%d: %w", dir, e, err)
		}
		if e != s.latest+1 {
			return fmt.Errorf("files: seen-files log %s: entry %d follows entry %d (the log must be contiguous)", dir, e, s.latest)
		}
		for i, g := range groups {
			s.remember(e+int64(i), g)
		}
	}
	return nil
}

func (s *Source) remember(id int64, files []fileInfo) {
	s.entries[id] = files
	s.latest = max(s.latest, id)
	for _, f := range files {
		s.seen[f.Path] = true
		s.maxMtime = max(s.maxMtime, f.MtimeMs)
	}
}

func sortFiles(files []fileInfo, newestFirst bool) {
	sort.Slice(files, func(i, j int) bool {
		a, b := files[i], files[j]
		if a.MtimeMs != b.MtimeMs {
			return (a.MtimeMs < b.MtimeMs) != newestFirst
		}
		return a.Path < b.Path
	})
}

// discover lists the path and logs the new files in groups (offsets) of
// at most one trigger's worth each.
func (s *Source) discover() error {
	all, err := listFiles(s.opts.Path, s.opts.Confine)
	if err != nil {
		return err
	}
	newest := s.maxMtime
	for _, f := range all {
		newest = max(newest, f.MtimeMs)
	}
	// maxFileAge does not apply to the first discovery, nor with
	// latestFirst and maxFilesPerTrigger together (Spark's rules).
	ageLimit := s.latest >= 0 && !(s.opts.LatestFirst && s.opts.MaxFilesPerTrigger > 0)
	var fresh []fileInfo
	for _, f := range all {
		if s.seen[f.Path] || (ageLimit && f.MtimeMs < newest-s.opts.MaxFileAge.Milliseconds()) {
			continue
		}
		fresh = append(fresh, f)
	}
	sortFiles(fresh, s.opts.LatestFirst)
	var groups [][]fileInfo
	for len(fresh) > 0 {
		n, bytes := 0, int64(0)
		for n < len(fresh) {
			if n > 0 && (s.opts.MaxFilesPerTrigger > 0 && n >= s.opts.MaxFilesPerTrigger ||
				s.opts.MaxBytesPerTrigger > 0 && bytes+fresh[n].Size > s.opts.MaxBytesPerTrigger) {
				break
			}
			bytes += fresh[n].Size
			n++
		}
		groups = append(groups, fresh[:n:n])
		fresh = fresh[n:]
	}
	if len(groups) == 0 {
		return nil
	}
	// One atomic log write per listing, however many triggers' worth of
	// files it found: log file n holds groups n, n+1, ... (a backlog of
	// ten thousand files costs one fsync, not ten thousand).
	first := s.latest + 1
	if s.log != nil {
		body, _ := json.Marshal(groups)
		if _, err := s.log.Add(first, body); err != nil {
			return err
		}
	}
	for i, g := range groups {
		s.remember(first+int64(i), g)
	}
	return nil
}

func logOffset(id int64) stream.Offset {
	return stream.Offset(`{"logOffset":` + strconv.FormatInt(id, 10) + `}`)
}

// parseOffset returns the entry id of an offset, -1 for nil.
func parseOffset(o stream.Offset) (int64, error) {
	if o == nil {
		return -1, nil
	}
	var v struct {
		LogOffset *int64 `json:"logOffset"`
	}
	if err := json.Unmarshal(o, &v); err != nil || v.LogOffset == nil {
		return 0, fmt.Errorf("files: bad offset %s (want {\"logOffset\":n})", o)
	}
	return *v.LogOffset, nil
}

// LatestOffset implements arrowstream.Source: every file found so far.
func (s *Source) LatestOffset(context.Context) (stream.Offset, error) {
	if err := s.discover(); err != nil {
		return nil, err
	}
	if s.latest < 0 {
		return nil, nil
	}
	return logOffset(s.latest), nil
}

// LatestOffsetFrom implements arrowstream.AdmissionControlSource: one
// entry (one trigger's files) after start.
func (s *Source) LatestOffsetFrom(_ context.Context, start stream.Offset) (stream.Offset, error) {
	from, err := parseOffset(start)
	if err != nil {
		return nil, err
	}
	if s.latest < 0 {
		return nil, nil
	}
	return logOffset(min(from+1, s.latest)), nil
}

// Read implements arrowstream.Source: the files of entries (start, end].
func (s *Source) Read(_ context.Context, start, end stream.Offset) (vector.Operator, error) {
	from, err := parseOffset(start)
	if err != nil {
		return nil, err
	}
	to, err := parseOffset(end)
	if err != nil {
		return nil, err
	}
	var files []fileInfo
	for id := from + 1; id <= to; id++ {
		e, ok := s.entries[id]
		if !ok {
			return nil, fmt.Errorf("files: entry %d of the seen-files log is missing (offsets %s to %s)", id, start, end)
		}
		files = append(files, e...)
	}
	s.stats.malformed.Store(0)
	s.stats.dropped.Store(0)
	s.stats.files.Store(int64(len(files)))
	return s.readFiles(files), nil
}

// ReadBatch implements arrowstream.BatchSource: every file there is now.
func (s *Source) ReadBatch(context.Context) (vector.Operator, error) {
	files, err := listFiles(s.opts.Path, s.opts.Confine)
	if err != nil {
		return nil, err
	}
	sortFiles(files, false)
	return s.readFiles(files), nil
}

// Commit implements arrowstream.Source: with cleanSource, the files of the
// committed entries are archived or deleted. A file already gone (cleaned
// before a restart) is skipped.
func (s *Source) Commit(_ context.Context, end stream.Offset) error {
	to, err := parseOffset(end)
	if err != nil || s.opts.CleanSource == CleanOff {
		return err
	}
	for id := s.cleaned + 1; id <= to; id++ {
		for _, f := range s.entries[id] {
			if err := s.clean(f.Path); err != nil {
				return err
			}
		}
	}
	s.cleaned = max(s.cleaned, to)
	return nil
}

func (s *Source) clean(path string) error {
	var err error
	if s.opts.CleanSource == CleanDelete {
		err = os.Remove(path)
	} else {
		abs, aerr := filepath.Abs(path)
		if aerr != nil {
			return aerr
		}
		dst := filepath.Join(s.opts.SourceArchiveDir, abs)
		if err = os.MkdirAll(filepath.Dir(dst), 0o755); err == nil {
			err = os.Rename(path, dst)
		}
	}
	if err != nil && !errors.Is(err, fs.ErrNotExist) {
		return fmt.Errorf("files: cleanSource=%s %s: %w", s.opts.CleanSource, path, err)
	}
	return nil
}

// Metrics implements arrowstream.MetricsSource: the last batch's counts.
func (s *Source) Metrics() map[string]string {
	return map[string]string{
		"numFilesRead":            strconv.FormatInt(s.stats.files.Load(), 10),
		"numMalformedRows":        strconv.FormatInt(s.stats.malformed.Load(), 10),
		"numDroppedMalformedRows": strconv.FormatInt(s.stats.dropped.Load(), 10),
	}
}

// Close implements arrowstream.Source.
func (s *Source) Close() error { return nil }
