package console

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strconv"
	"strings"
	"sync"

	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/vector"
)

// Format is the sink format name the package registers.
const Format = "console"

// Defaults of the writer options (Spark's).
const (
	DefaultNumRows  = 20
	DefaultTruncate = 20
)

// Options configure the sinks a Session creates for the console format.
type Options struct {
	// Out receives the output; nil means os.Stdout. Each epoch is one
	// Write call. The sinks one InstallWith creates share a lock, so
	// queries writing to the same Out never write at the same time; a
	// sink made with New locks only itself.
	Out io.Writer
}

// Install registers the "console" sink format in s, writing to os.Stdout.
func Install(s stream.FormatRegistrar) { InstallWith(s, Options{}) }

// InstallWith registers the "console" sink format in s with o.
func InstallWith(s stream.FormatRegistrar, o Options) {
	mu := &sync.Mutex{}
	s.RegisterSinkFormat(Format, func(_ context.Context, _ memory.Allocator, info stream.SinkInfo) (stream.Sink, error) {
		return newSink(info, o, mu)
	})
	stream.DeclareSinkOptions(s, Format, OptionKeys())
}

// OptionKeys are the options the console sink reads (newSink); a session
// that checks options refuses others.
func OptionKeys() []string { return []string{"numRows", "truncate"} }

// Sink prints each epoch's output. It is safe for concurrent use.
type Sink struct {
	mu       *sync.Mutex // guards writes to out
	out      io.Writer
	numRows  int
	truncate int // 0: no truncation
}

// New returns a console sink for a query, reading numRows and truncate from
// info.Options. A bad option value is an error naming the option.
func New(info stream.SinkInfo, o Options) (*Sink, error) {
	return newSink(info, o, &sync.Mutex{})
}

func newSink(info stream.SinkInfo, o Options, mu *sync.Mutex) (*Sink, error) {
	s := &Sink{mu: mu, out: o.Out, numRows: DefaultNumRows, truncate: DefaultTruncate}
	if s.out == nil {
		s.out = os.Stdout
	}
	for k, v := range info.Options {
		switch strings.ToLower(k) {
		case "numrows":
			n, err := strconv.Atoi(strings.TrimSpace(v))
			if err != nil || n < 0 {
				return nil, fmt.Errorf("console: option numRows=%q: want a non-negative integer", v)
			}
			s.numRows = n
		case "truncate":
			b, err := strconv.ParseBool(strings.TrimSpace(v))
			if err != nil {
				return nil, fmt.Errorf("console: option truncate=%q: %w", v, err)
			}
			if !b {
				s.truncate = 0
			}
		}
	}
	return s, nil
}

// Description names the sink in progress reports.
func (s *Sink) Description() string {
	return fmt.Sprintf("ConsoleSink[numRows=%d, truncate=%t]", s.numRows, s.truncate > 0)
}

// AddBatch prints the epoch: a header and the first numRows rows. All
// rows are read (and counted) so that the operators before the sink finish
// the epoch; only the shown ones are formatted.
func (s *Sink) AddBatch(ctx context.Context, epoch int64, data vector.Operator) error {
	defer data.Close()
	t := newTable(data.Schema(), s.truncate)
	total := 0
	for {
		rec, err := data.Next(ctx)
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return err
		}
		n := int(rec.NumRows())
		for r := 0; r < n && total+r < s.numRows; r++ {
			t.addRow(rec, r)
		}
		total += n
		rec.Release()
	}
	var b bytes.Buffer
	fmt.Fprintf(&b, "%s\nBatch: %d\n%s\n", rule, epoch, rule)
	t.write(&b, total > s.numRows, s.numRows)
	b.WriteByte('\n')
	s.mu.Lock()
	defer s.mu.Unlock()
	if _, err := s.out.Write(b.Bytes()); err != nil {
		return fmt.Errorf("console: write batch %d: %w", epoch, err)
	}
	return nil
}

const rule = "-------------------------------------------"

var _ stream.Sink = (*Sink)(nil)
