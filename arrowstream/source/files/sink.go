package files

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
	"github.com/apache/arrow/go/v17/parquet"
	"github.com/apache/arrow/go/v17/parquet/compress"
	"github.com/apache/arrow/go/v17/parquet/pqarrow"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/vector"
)

// SinkOptions configure the file sink.
type SinkOptions struct {
	Format Format // Parquet or Arrow
	Path   string // output directory
	// MaxRecordsPerFile rolls to a new file after this many rows (0: one
	// file per epoch).
	MaxRecordsPerFile int64
	// Compression of Parquet files: snappy (default), zstd, gzip, none.
	Compression compress.Compression
	// NoSync skips fsync (tests only).
	NoSync bool
}

// SinkOptionKeys are the options ParseSinkOptions reads.
func SinkOptionKeys() []string { return []string{"path", "maxRecordsPerFile", "compression"} }

// ParseSinkOptions reads the writer options the sink understands (path,
// maxRecordsPerFile, compression); others are the writer's own
// (checkpointLocation, ...) and are left alone.
func ParseSinkOptions(format Format, opts map[string]string) (SinkOptions, error) {
	o := SinkOptions{Format: format, Compression: compress.Codecs.Snappy}
	for k, v := range opts {
		switch strings.ToLower(k) {
		case "path":
			o.Path = v
		case "maxrecordsperfile":
			n, err := strconv.ParseInt(v, 10, 64)
			if err != nil || n < 0 {
				return o, fmt.Errorf("files: %s sink option maxRecordsPerFile=%q: want a number >= 0", format, v)
			}
			o.MaxRecordsPerFile = n
		case "compression":
			c, err := parseCompression(v)
			if err != nil {
				return o, fmt.Errorf("files: %s sink option compression=%q: %w", format, v, err)
			}
			o.Compression = c
		}
	}
	if o.Path == "" {
		return o, fmt.Errorf("files: %s sink: option path is required", format)
	}
	return o, nil
}

// parseCompression reads a Parquet codec name.
func parseCompression(v string) (compress.Compression, error) {
	switch strings.ToLower(v) {
	case "snappy":
		return compress.Codecs.Snappy, nil
	case "zstd":
		return compress.Codecs.Zstd, nil
	case "gzip":
		return compress.Codecs.Gzip, nil
	case "none", "uncompressed":
		return compress.Codecs.Uncompressed, nil
	}
	return compress.Codecs.Uncompressed, errors.New("want snappy, zstd, gzip or none")
}

// Sink is the file sink (Spark's FileStreamSink): each epoch's rows go to
// new files, which become visible when the epoch's manifest entry is
// committed. Append mode only.
type Sink struct {
	mem    memory.Allocator
	opts   SinkOptions
	schema *arrow.Schema
	log    *checkpoint.Log
	writer *checkpoint.Writer
	last   int64 // latest committed epoch, -1 for none (this sink is the directory's only writer)
}

// NewSink opens (creating) the output directory and its manifest log.
func NewSink(mem memory.Allocator, schema *arrow.Schema, mode stream.OutputMode, opts SinkOptions) (*Sink, error) {
	if mode != stream.Append {
		return nil, fmt.Errorf("files: data source %s does not support %s output mode (the file sink appends only)", opts.Format, mode)
	}
	if opts.Format != Parquet && opts.Format != Arrow {
		return nil, fmt.Errorf("files: the file sink writes parquet or arrow, not %s", opts.Format)
	}
	w := &checkpoint.Writer{NoSync: opts.NoSync}
	log, err := checkpoint.OpenLog(filepath.Join(opts.Path, ManifestDir), w)
	if err != nil {
		return nil, err
	}
	last, _, ok, err := log.Latest()
	if err != nil {
		return nil, err
	}
	if !ok {
		last = -1
	}
	return &Sink{mem: mem, opts: opts, schema: plainSchema(schema), log: log, writer: w, last: last}, nil
}

// plainSchema drops field and schema metadata: the plan's annotations (an
// event-time column's watermark delay) describe the query, not the data,
// and would otherwise come back when the files are read as a stream.
func plainSchema(s *arrow.Schema) *arrow.Schema {
	fields := make([]arrow.Field, s.NumFields())
	for i, f := range s.Fields() {
		fields[i] = arrow.Field{Name: f.Name, Type: f.Type, Nullable: f.Nullable}
	}
	return arrow.NewSchema(fields, nil)
}

// Description names the sink in progress reports.
func (s *Sink) Description() string { return "FileSink[" + s.opts.Path + "]" }

// EpochIdempotent implements stream.EpochIdempotentSink: the manifest
// names the epochs written, and AddBatch skips those.
func (s *Sink) EpochIdempotent() bool { return true }

// AddBatch implements arrowstream.Sink. An epoch at or below the latest
// committed one is skipped (a replay after a crash). Otherwise files left
// by an earlier, uncommitted attempt of the epoch are removed, the rows are
// written to files that appear under their final names only when complete,
// and the manifest entry commits them all at once.
func (s *Sink) AddBatch(ctx context.Context, epoch int64, data vector.Operator) error {
	defer data.Close()
	if epoch <= s.last {
		return nil
	}
	prefix := fmt.Sprintf("part-%05d-", epoch)
	if err := s.removeAttempt(prefix); err != nil {
		return err
	}
	var files []manifestFile
	var cur *partWriter
	finish := func() error {
		if cur == nil {
			return nil
		}
		mf, err := cur.finish()
		cur = nil
		if err != nil {
			return err
		}
		files = append(files, mf)
		return nil
	}
	defer func() {
		if cur != nil {
			cur.abort()
		}
	}()
	for {
		rec, err := data.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		for off := int64(0); off < rec.NumRows(); {
			if cur == nil {
				name := prefix + strconv.Itoa(len(files)) + s.ext()
				if cur, err = s.newPart(name); err != nil {
					rec.Release()
					return err
				}
			}
			n := rec.NumRows() - off
			if s.opts.MaxRecordsPerFile > 0 {
				n = min(n, s.opts.MaxRecordsPerFile-cur.rows)
			}
			part := rec.NewSlice(off, off+n)
			err := cur.write(part)
			part.Release()
			if err != nil {
				rec.Release()
				return err
			}
			off += n
			if s.opts.MaxRecordsPerFile > 0 && cur.rows >= s.opts.MaxRecordsPerFile {
				if err := finish(); err != nil {
					rec.Release()
					return err
				}
			}
		}
		rec.Release()
	}
	if err := finish(); err != nil {
		return err
	}
	if !s.opts.NoSync && len(files) > 0 {
		if err := syncDir(s.opts.Path); err != nil {
			return err
		}
	}
	if _, err := s.log.Add(epoch, encodeManifest(files)); err != nil {
		return fmt.Errorf("files: commit epoch %d to %s: %w", epoch, s.opts.Path, err)
	}
	s.last = epoch
	return nil
}

func (s *Sink) ext() string {
	if s.opts.Format == Parquet {
		return ".parquet"
	}
	return ".arrow"
}

// removeAttempt deletes the files an uncommitted attempt of the epoch left
// (the epoch is not in the manifest, so no reader sees them). An attempt
// writes part-<epoch>-0, -1, ... one after the other, each under its temp
// name until complete, so the names to remove are contiguous from 0.
func (s *Sink) removeAttempt(prefix string) error {
	for n := 0; ; n++ {
		name := prefix + strconv.Itoa(n) + s.ext()
		found := false
		for _, p := range []string{name, "." + name + ".tmp"} {
			err := os.Remove(filepath.Join(s.opts.Path, p))
			if err == nil {
				found = true
			} else if !errors.Is(err, os.ErrNotExist) {
				return fmt.Errorf("files: remove the unfinished %s: %w", p, err)
			}
		}
		if !found {
			return nil
		}
	}
}

// partWriter writes one output file under a hidden temp name.
type partWriter struct {
	s     *Sink
	name  string
	tmp   string
	f     *os.File
	pq    *pqarrow.FileWriter
	ipc   *ipc.FileWriter
	rows  int64
	final bool
	// held are the records written to a Parquet file, retained until the
	// file is closed: Arrow's Parquet writer keeps the min/max statistics
	// of string and binary columns as slices of the written values (it
	// does not copy them) and encodes them into the footer at Close. With
	// the records released earlier, a pooling allocator reuses their
	// buffers and the footer's statistics come out as garbage, which a
	// reader that skips row groups by statistics turns into lost rows.
	held []arrow.Record
}

func (s *Sink) newPart(name string) (*partWriter, error) {
	tmp := filepath.Join(s.opts.Path, "."+name+".tmp")
	f, err := os.OpenFile(tmp, os.O_WRONLY|os.O_CREATE|os.O_TRUNC, 0o644)
	if err != nil {
		return nil, fmt.Errorf("files: %w", err)
	}
	p := &partWriter{s: s, name: name, tmp: tmp, f: f}
	if s.opts.Format == Parquet {
		props := parquet.NewWriterProperties(parquet.WithCompression(s.opts.Compression), parquet.WithAllocator(s.mem))
		p.pq, err = pqarrow.NewFileWriter(s.schema, f, props, pqarrow.NewArrowWriterProperties(pqarrow.WithStoreSchema(), pqarrow.WithAllocator(s.mem)))
	} else {
		p.ipc, err = ipc.NewFileWriter(f, ipc.WithSchema(s.schema), ipc.WithAllocator(s.mem))
	}
	if err != nil {
		f.Close()
		os.Remove(tmp)
		return nil, fmt.Errorf("files: %s writer for %s: %w", s.opts.Format, name, err)
	}
	return p, nil
}

func (p *partWriter) write(rec arrow.Record) error {
	rec = array.NewRecord(p.s.schema, rec.Columns(), rec.NumRows())
	var err error
	if p.pq != nil {
		p.held = append(p.held, rec) // released by release, after Close
		err = p.pq.WriteBuffered(rec)
	} else {
		defer rec.Release()
		err = p.ipc.Write(rec)
	}
	if err != nil {
		return fmt.Errorf("files: write %s: %w", p.name, err)
	}
	p.rows += rec.NumRows()
	return nil
}

// finish closes the file, makes it durable and gives it its final name.
func (p *partWriter) finish() (manifestFile, error) {
	var err error
	if p.pq != nil {
		err = p.pq.Close() // also closes the file
		p.release()
	} else {
		err = p.ipc.Close()
		if err == nil && !p.s.opts.NoSync {
			err = p.f.Sync()
		}
		err = errors.Join(err, p.f.Close())
	}
	p.pq, p.ipc = nil, nil
	if err == nil && p.s.opts.Format == Parquet && !p.s.opts.NoSync {
		err = syncFile(p.tmp)
	}
	final := filepath.Join(p.s.opts.Path, p.name)
	if err == nil {
		err = os.Rename(p.tmp, final)
	}
	if err != nil {
		os.Remove(p.tmp)
		return manifestFile{}, fmt.Errorf("files: finish %s: %w", p.name, err)
	}
	p.final = true
	st, err := os.Stat(final)
	if err != nil {
		return manifestFile{}, fmt.Errorf("files: %w", err)
	}
	return manifestFile{Path: p.name, Size: st.Size(), Rows: p.rows, MtimeMs: st.ModTime().UnixMilli()}, nil
}

// release releases the records held for the Parquet writer's statistics.
func (p *partWriter) release() {
	for _, r := range p.held {
		r.Release()
	}
	p.held = nil
}

// abort drops an unfinished file.
func (p *partWriter) abort() {
	if p.pq != nil {
		p.pq.Close()
	}
	p.release()
	if p.ipc != nil {
		p.ipc.Close()
	}
	if !p.final {
		p.f.Close()
		os.Remove(p.tmp)
	}
}

func syncFile(path string) error {
	f, err := os.OpenFile(path, os.O_RDWR, 0)
	if err != nil {
		return err
	}
	return errors.Join(f.Sync(), f.Close())
}

func syncDir(dir string) error {
	d, err := os.Open(dir)
	if err != nil {
		return fmt.Errorf("files: %w", err)
	}
	return errors.Join(d.Sync(), d.Close())
}
