package socket

import (
	"bufio"
	"context"
	"crypto/rand"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"log/slog"
	"net"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/vector"
)

// Schema returns the source's schema.
func Schema(includeTimestamp bool) *arrow.Schema {
	fields := []arrow.Field{{Name: "value", Type: vector.String, Nullable: true}}
	if includeTimestamp {
		fields = append(fields, arrow.Field{Name: "timestamp", Type: vector.Timestamp, Nullable: true})
	}
	return arrow.NewSchema(fields, nil)
}

// Source reads lines from a TCP connection. See the package doc for what
// it does not guarantee.
type Source struct {
	mem    memory.Allocator
	opts   Options
	schema *arrow.Schema
	logger *slog.Logger
	run    string // names this connection in offsets

	connectOnce sync.Once
	conn        net.Conn
	done        chan struct{} // closed when the reader goroutine ends

	mu      sync.Mutex
	room    *sync.Cond // signalled when lines are dropped or on Close
	lines   []string   // lines dropped+1 .. dropped+len(lines)
	stamps  []int64    // µs, with includeTimestamp
	dropped int64
	err     error // the connection's error, reported by LatestOffset
	closed  bool
	notify  chan struct{} // from DataAvailable, closed by wake (notify.go)
}

// New returns a source; it connects on the first LatestOffset, so that
// declaring a table does not consume lines.
func New(mem memory.Allocator, o Options) (*Source, error) {
	if o.Host == "" || o.Port == 0 {
		return nil, fmt.Errorf("socket: host and port must be specified")
	}
	if o.MaxBufferedLines <= 0 {
		o.MaxBufferedLines = 100_000
	}
	if o.MaxLineBytes <= 0 {
		o.MaxLineBytes = 1 << 20
	}
	logger := o.Logger
	if logger == nil {
		logger = slog.Default()
	}
	var id [8]byte
	if _, err := rand.Read(id[:]); err != nil {
		return nil, fmt.Errorf("socket: run id: %w", err)
	}
	s := &Source{mem: mem, opts: o, schema: Schema(o.IncludeTimestamp), logger: logger, run: hex.EncodeToString(id[:])}
	s.room = sync.NewCond(&s.mu)
	return s, nil
}

// Schema implements arrowstream.Source.
func (s *Source) Schema() *arrow.Schema { return s.schema }

// Description implements arrowstream.DescribedSource.
func (s *Source) Description() string {
	return fmt.Sprintf("TextSocketV2[host: %s, port: %d]", s.opts.Host, s.opts.Port)
}

func (s *Source) connect(ctx context.Context) error {
	var err error
	s.connectOnce.Do(func() {
		d := net.Dialer{Control: s.opts.Control}
		addr := net.JoinHostPort(s.opts.Host, strconv.Itoa(s.opts.Port))
		s.conn, err = d.DialContext(ctx, "tcp", addr)
		if err != nil {
			err = fmt.Errorf("socket: connect to %s: %w", addr, err)
			s.mu.Lock()
			s.err = err
			s.mu.Unlock()
			return
		}
		s.done = make(chan struct{})
		go s.readLoop()
	})
	if err == nil {
		s.mu.Lock()
		err = s.err
		s.mu.Unlock()
	}
	return err
}

// readLoop reads lines until the connection ends, waiting while the
// buffer is full (which leaves the rest in the kernel's socket buffer and
// so throttles the writer).
func (s *Source) readLoop() {
	defer close(s.done)
	sc := bufio.NewScanner(s.conn)
	sc.Buffer(make([]byte, 0, 64<<10), s.opts.MaxLineBytes)
	for sc.Scan() {
		line := strings.TrimSuffix(sc.Text(), "\r")
		now := time.Now().UnixMicro()
		s.mu.Lock()
		for len(s.lines) >= s.opts.MaxBufferedLines && !s.closed {
			s.room.Wait()
		}
		if s.closed {
			s.mu.Unlock()
			return
		}
		s.lines = append(s.lines, line)
		if s.opts.IncludeTimestamp {
			s.stamps = append(s.stamps, now)
		}
		s.wake()
		s.mu.Unlock()
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	s.wake()
	if err := sc.Err(); err != nil && !s.closed {
		s.err = fmt.Errorf("socket: reading %s: %w", s.conn.RemoteAddr(), err)
	} else if !s.closed {
		s.logger.Info("socket: connection closed by the peer", "source", s.Description())
	}
}

// offset is the source's position: a line count within one connection.
type offset struct {
	Run    string `json:"run"`
	Offset int64  `json:"offset"`
}

func (s *Source) encode(n int64) stream.Offset {
	b, _ := json.Marshal(offset{Run: s.run, Offset: n})
	return b
}

// decode returns the line count of o within this connection; ok is false
// for nil and for offsets of an earlier connection.
func (s *Source) decode(o stream.Offset) (int64, bool, error) {
	if o == nil {
		return 0, false, nil
	}
	var off offset
	if err := json.Unmarshal(o, &off); err != nil {
		return 0, false, fmt.Errorf("socket: offset %s: %w", o, err)
	}
	return off.Offset, off.Run == s.run, nil
}

// LatestOffset implements arrowstream.Source: the number of lines read.
func (s *Source) LatestOffset(ctx context.Context) (stream.Offset, error) {
	if err := s.connect(ctx); err != nil {
		return nil, err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.err != nil {
		return nil, s.err
	}
	n := s.dropped + int64(len(s.lines))
	if n == 0 {
		return nil, nil
	}
	return s.encode(n), nil
}

// LatestOffsetFrom implements arrowstream.AdmissionControlSource. start is
// the end of the last committed epoch: the lines up to it are dropped,
// which makes room in the buffer even when no new epoch starts.
func (s *Source) LatestOffsetFrom(ctx context.Context, start stream.Offset) (stream.Offset, error) {
	if err := s.Commit(ctx, start); err != nil {
		return nil, err
	}
	return s.LatestOffset(ctx)
}

// Read implements arrowstream.Source: the lines in (start, end] that are
// still buffered. A range of an earlier connection reads nothing (those
// lines are lost), and a start of an earlier connection means the start of
// this one.
func (s *Source) Read(_ context.Context, start, end stream.Offset) (vector.Operator, error) {
	to, mine, err := s.decode(end)
	if err != nil {
		return nil, err
	}
	if !mine {
		return vector.NewScan(s.schema)
	}
	from, mine, err := s.decode(start)
	if err != nil {
		return nil, err
	}
	if !mine {
		from = 0
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if from < s.dropped || to > s.dropped+int64(len(s.lines)) || from > to {
		return nil, fmt.Errorf("socket: lines (%d, %d] are not buffered (the source holds %d..%d; it cannot replay)", from, to, s.dropped+1, s.dropped+int64(len(s.lines)))
	}
	lines := s.lines[from-s.dropped : to-s.dropped]
	if len(lines) == 0 {
		return vector.NewScan(s.schema)
	}
	bytes := 0
	for _, l := range lines {
		bytes += len(l)
	}
	vb := array.NewStringBuilder(s.mem)
	defer vb.Release()
	vb.Reserve(len(lines))
	vb.ReserveData(bytes)
	for _, l := range lines {
		vb.Append(l)
	}
	cols := []arrow.Array{vb.NewArray()}
	if s.opts.IncludeTimestamp {
		tb := array.NewTimestampBuilder(s.mem, vector.Timestamp.(*arrow.TimestampType))
		defer tb.Release()
		tb.Reserve(len(lines))
		for _, ts := range s.stamps[from-s.dropped : to-s.dropped] {
			tb.UnsafeAppend(arrow.Timestamp(ts))
		}
		cols = append(cols, tb.NewArray())
	}
	rec := array.NewRecord(s.schema, cols, int64(len(lines)))
	for _, c := range cols {
		c.Release()
	}
	defer rec.Release()
	return vector.NewScan(s.schema, rec)
}

// Commit implements arrowstream.Source: lines up to end are dropped.
func (s *Source) Commit(_ context.Context, end stream.Offset) error {
	to, mine, err := s.decode(end)
	if err != nil || !mine {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if k := to - s.dropped; k > 0 {
		k = min(k, int64(len(s.lines)))
		s.lines = append(s.lines[:0], s.lines[k:]...)
		if s.opts.IncludeTimestamp {
			s.stamps = append(s.stamps[:0], s.stamps[k:]...)
		}
		s.dropped += k
		s.room.Broadcast()
	}
	return nil
}

// Close implements arrowstream.Source: it closes the connection and waits
// for the reader to stop.
func (s *Source) Close() error {
	s.mu.Lock()
	s.closed = true
	s.room.Broadcast()
	s.wake()
	s.mu.Unlock()
	if s.conn != nil {
		s.conn.Close()
		<-s.done
	}
	return nil
}
