package pebblestore

import (
	"errors"
	"fmt"
	"io"
	"log/slog"
	"sync"

	"github.com/cockroachdb/pebble/v2"
	"github.com/klauspost/compress/zstd"

	"github.com/arrowstream/arrowstream/checkpoint"
)

// Options configure the Pebble provider of one query.
type Options struct {
	// Writer makes the manifests durable (its Hook sees their writes, its
	// NoSync skips fsync in tests).
	Writer *checkpoint.Writer
	// LocalDir, when set, holds the working Pebble directories (one
	// subdirectory per partition, removed on Close); empty puts each in
	// <partition dir>/_local, which hard links into the checkpoint always
	// reach.
	LocalDir string
	// BlockCacheBytes is the block cache shared by every partition of the
	// query (default 64 MiB).
	BlockCacheBytes int64
	// MemtableBytes is each partition's memtable size (default 4 MiB;
	// commits flush it, so it holds at most one epoch's updates).
	MemtableBytes int64
	// MinVersionsToRetain versions stay restorable (default 100).
	MinVersionsToRetain int
	// ChangelogCheckpointing writes only each epoch's changes (the Pebble
	// batch) for versions that are not snapshot versions; every
	// MinDeltasForSnapshot-th version copies the SST files (default 10).
	ChangelogCheckpointing bool
	MinDeltasForSnapshot   int
	// UploadHook, when set, is called before each SST file is copied into
	// the checkpoint with the target path; an error aborts the commit
	// (fault injection: crash tests kill the process there).
	UploadHook func(path string) error
	// Logger receives Pebble's messages (nil: discarded below errors).
	Logger *slog.Logger
}

func (o Options) withDefaults() Options {
	if o.Writer == nil {
		o.Writer = &checkpoint.Writer{}
	}
	if o.BlockCacheBytes <= 0 {
		o.BlockCacheBytes = 64 << 20
	}
	if o.MemtableBytes <= 0 {
		o.MemtableBytes = 4 << 20
	}
	if o.MinVersionsToRetain <= 0 {
		o.MinVersionsToRetain = 100
	}
	if o.MinDeltasForSnapshot <= 0 {
		o.MinDeltasForSnapshot = 10
	}
	if o.Logger == nil {
		o.Logger = slog.New(slog.NewTextHandler(io.Discard, nil))
	}
	return o
}

// Provider is the "pebble" StateStoreProvider.
type Provider struct {
	opts  Options
	cache *pebble.Cache
	// zenc and zdec (de)compress changelogs; both are safe for concurrent
	// EncodeAll/DecodeAll.
	zenc *zstd.Encoder
	zdec *zstd.Decoder

	mu     sync.Mutex
	parts  []*Partition
	closed bool
	// glog is the state log of group commit (OpenStateLog), nil until
	// opened; stateDir is the state directory it belongs to.
	glog     *checkpoint.StateLog
	stateDir string
}

// changelogWindow is the changelog compressor's window.
const changelogWindow = 1 << 20

// NewProvider returns a provider; Close releases its block cache.
func NewProvider(opts Options) (*Provider, error) {
	opts = opts.withDefaults()
	// A 1 MiB window: the encoder keeps a history buffer of its window's
	// size for as long as the provider lives, 8 MiB at the default; a
	// changelog is one epoch's batch of one partition, and a larger
	// window buys it little (docs/operations.md, Pebble's memory).
	zenc, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1),
		zstd.WithWindowSize(changelogWindow))
	if err != nil {
		return nil, fmt.Errorf("pebblestore: changelog compressor: %w", err)
	}
	zdec, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1), zstd.WithDecoderMaxMemory(1<<32))
	if err != nil {
		zenc.Close()
		return nil, fmt.Errorf("pebblestore: changelog decompressor: %w", err)
	}
	return &Provider{opts: opts, cache: pebble.NewCache(opts.BlockCacheBytes), zenc: zenc, zdec: zdec}, nil
}

// Name implements checkpoint.StateStoreProvider.
func (p *Provider) Name() string { return "pebble" }

// OpenPartition implements checkpoint.StateStoreProvider.
func (p *Provider) OpenPartition(dir string) (checkpoint.StatePartition, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil, errors.New("pebblestore: provider is closed")
	}
	part, err := openPartition(p, dir, len(p.parts))
	if err != nil {
		return nil, err
	}
	if p.glog != nil {
		if part.rel, err = checkpoint.StatePartitionPath(p.stateDir, dir); err != nil {
			return nil, err
		}
		part.glog = p.glog
	}
	p.parts = append(p.parts, part)
	return part, nil
}

// MemoryBytes implements checkpoint.StateStoreProvider: the shared block
// cache's bytes in use.
func (p *Provider) MemoryBytes() int64 {
	return p.cache.Metrics().Size
}

var _ checkpoint.BoundedProvider = (*Provider)(nil)

// SharedMemoryBound implements checkpoint.BoundedProvider: the block
// cache's size.
func (p *Provider) SharedMemoryBound() int64 { return p.opts.BlockCacheBytes }

// PartitionMemoryBound implements checkpoint.BoundedProvider: two
// memtables (the one being written and one being flushed; a commit
// flushes, so each holds at most one epoch's writes). The epoch's
// indexed batch, on the Go heap, is not included.
func (p *Provider) PartitionMemoryBound() int64 { return 2 * p.opts.MemtableBytes }

// Metrics implements checkpoint.StateStoreProvider: block cache figures.
func (p *Provider) Metrics() map[string]int64 {
	m := p.cache.Metrics()
	out := map[string]int64{
		"pebbleBlockCacheBytes":     m.Size,
		"pebbleBlockCacheHitCount":  m.Hits,
		"pebbleBlockCacheMissCount": m.Misses,
	}
	if m.Hits+m.Misses > 0 {
		out["pebbleBlockCacheHitRatioPct"] = 100 * m.Hits / (m.Hits + m.Misses)
	}
	return out
}

// Close implements checkpoint.StateStoreProvider.
func (p *Provider) Close() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		return nil
	}
	p.closed = true
	var errs []error
	for _, part := range p.parts {
		if err := part.Close(); err != nil {
			errs = append(errs, err)
		}
	}
	p.parts = nil
	if p.glog != nil {
		errs = append(errs, p.glog.Close())
		p.glog = nil
	}
	p.cache.Unref()
	p.zenc.Close()
	p.zdec.Close()
	return errors.Join(errs...)
}

// pebbleLogger sends Pebble's messages to slog.
type pebbleLogger struct{ l *slog.Logger }

func (l pebbleLogger) Infof(format string, args ...any) {
	l.l.Debug(fmt.Sprintf(format, args...), "component", "pebble")
}
func (l pebbleLogger) Errorf(format string, args ...any) {
	l.l.Error(fmt.Sprintf(format, args...), "component", "pebble")
}
func (l pebbleLogger) Fatalf(format string, args ...any) {
	// Pebble calls Fatalf on invariant violations and expects no return.
	l.l.Error(fmt.Sprintf(format, args...), "component", "pebble")
	panic(fmt.Sprintf("pebble: "+format, args...))
}
