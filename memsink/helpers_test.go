package memsink_test

import (
	"context"
	"errors"
	"io"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream"
	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/vector"
	vt "github.com/arrowstream/arrowstream/vector/vectortest"
)

// kv is the schema most tests use: a bigint key and a nullable string.
var kv = arrow.NewSchema([]arrow.Field{
	{Name: "k", Type: vector.Int64},
	{Name: "v", Type: vector.String, Nullable: true},
}, nil)

// op returns an operator over rows laid out as shape says.
func op(t testing.TB, mem memory.Allocator, schema *arrow.Schema, rows []vt.Row, shape vt.Shape) vector.Operator {
	t.Helper()
	recs := vt.BuildRecords(mem, schema, rows, shape)
	s, err := vector.NewScan(schema, recs...)
	for _, r := range recs {
		r.Release()
	}
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// failing yields its input's records and then fails (after n records).
type failing struct {
	vector.Operator
	n      int
	closed bool
}

var errBoom = errors.New("boom")

func (f *failing) Next(ctx context.Context) (arrow.Record, error) {
	if f.n == 0 {
		return nil, errBoom
	}
	f.n--
	return f.Operator.Next(ctx)
}

func (f *failing) Close() error {
	f.closed = true
	return f.Operator.Close()
}

// counting counts the records pulled and whether Close was called.
type counting struct {
	vector.Operator
	pulled int
	eof    bool
	closed bool
}

func (c *counting) Next(ctx context.Context) (arrow.Record, error) {
	r, err := c.Operator.Next(ctx)
	if errors.Is(err, io.EOF) {
		c.eof = true
	} else if err == nil {
		c.pulled++
	}
	return r, err
}

func (c *counting) Close() error {
	c.closed = true
	return c.Operator.Close()
}

func newTable(t testing.TB, mem memory.Allocator, info arrowstream.SinkInfo, opts memsink.Options) *memsink.Table {
	t.Helper()
	if info.Schema == nil {
		info.Schema = kv
	}
	if info.QueryName == "" {
		info.QueryName = "q"
	}
	tbl, err := memsink.New(mem, info, opts)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { tbl.Close() })
	return tbl
}

func add(t testing.TB, tbl *memsink.Table, mem memory.Allocator, epoch int64, rows ...vt.Row) {
	t.Helper()
	if err := tbl.AddBatch(context.Background(), epoch, op(t, mem, tbl.Schema(), rows, vt.Shape{BatchSize: 1024})); err != nil {
		t.Fatalf("AddBatch(%d): %v", epoch, err)
	}
}

// rowsOf reads a snapshot's rows and releases it.
func rowsOf(s *memsink.Snapshot) []vt.Row {
	defer s.Release()
	return vt.RowsOf(s.Records()...)
}

func checkRows(t testing.TB, what string, want, got []vt.Row) {
	t.Helper()
	if !vt.RowsEqual(vt.SortRows(want), vt.SortRows(got)) {
		t.Fatalf("%s:\nwant:\n%sgot:\n%s", what, vt.FormatRows(vt.SortRows(want)), vt.FormatRows(vt.SortRows(got)))
	}
}

func checkOrdered(t testing.TB, what string, want, got []vt.Row) {
	t.Helper()
	if !vt.RowsEqual(want, got) {
		t.Fatalf("%s:\nwant:\n%sgot:\n%s", what, vt.FormatRows(want), vt.FormatRows(got))
	}
}

func r(vals ...any) vt.Row { return vt.Row(vals) }
