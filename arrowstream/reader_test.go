package arrowstream

import (
	"context"
	"io"
	"strings"
	"testing"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/internal/collectsink"
	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// batchMemorySource is a MemoryStream that can also be read as a batch.
type batchMemorySource struct{ *MemoryStream }

func (b batchMemorySource) ReadBatch(ctx context.Context) (vector.Operator, error) {
	end, err := b.LatestOffset(ctx)
	if err != nil {
		return nil, err
	}
	if end == nil {
		return vector.NewScan(b.Schema())
	}
	return b.Read(ctx, nil, end)
}

func TestDataStreamReader(t *testing.T) {
	intSchema := arrow.NewSchema([]arrow.Field{{Name: "value", Type: vector.Int64, Nullable: true}}, nil)
	tests := []struct {
		name    string
		build   func(s *Session) *DataFrame
		wantErr string
		rows    int // rows expected after ProcessAllAvailable
	}{
		{name: "rate-micro-batch through the registry", rows: -1, build: func(s *Session) *DataFrame {
			return s.ReadStreamFormat("rate-micro-batch").Options(map[string]string{"rowsPerBatch": "5"}).Load()
		}},
		{name: "unknown format", wantErr: `unknown source format "nope"`, build: func(s *Session) *DataFrame {
			return s.ReadStreamFormat("nope").Load()
		}},
		{name: "bad option is the format's error", wantErr: "rowsPerBatch", build: func(s *Session) *DataFrame {
			return s.ReadStreamFormat("rate-micro-batch").Option("rowsPerBatch", "x").Load()
		}},
		{name: "two paths", wantErr: "one path", build: func(s *Session) *DataFrame {
			return s.ReadStreamFormat("rate").Load("a", "b")
		}},
		{name: "path and schema reach the format", rows: 3, build: func(s *Session) *DataFrame {
			s.RegisterSourceFormat("mem", func(mem memory.Allocator, schema *arrow.Schema, opts map[string]string) (Source, error) {
				if opts["path"] != "/p" || !schema.Equal(intSchema) {
					return nil, io.ErrUnexpectedEOF
				}
				src := NewMemoryStream(mem, schema)
				if _, err := src.AddData([]any{1}, []any{2}, []any{3}); err != nil {
					return nil, err
				}
				return src, nil
			})
			return s.ReadStreamFormat("mem").Schema(intSchema).Load("/p")
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			s, _ := newTestSession(t)
			df := tc.build(s)
			if tc.wantErr != "" {
				if df.Err() == nil || !strings.Contains(df.Err().Error(), tc.wantErr) {
					t.Fatalf("error %v, want one containing %q", df.Err(), tc.wantErr)
				}
				return
			}
			if df.Err() != nil {
				t.Fatal(df.Err())
			}
			if tc.rows < 0 {
				if df.Schema().NumFields() != 2 || !df.IsStreaming() {
					t.Fatalf("schema %v", df.Schema())
				}
				return
			}
			sink := &collectsink.Sink{}
			q, err := df.WriteStream().Sink(sink).Trigger(Once()).Start(t.Context())
			if err != nil {
				t.Fatal(err)
			}
			if err := q.AwaitTermination(t.Context()); err != nil {
				t.Fatal(err)
			}
			if got := len(sink.All()); got != tc.rows {
				t.Fatalf("%d rows, want %d", got, tc.rows)
			}
		})
	}
}

// TestBatchSourceTable checks that a format whose sources implement
// BatchSource is readable by a batch SELECT, and others only with STREAM.
func TestBatchSourceTable(t *testing.T) {
	s, _ := newTestSession(t)
	schema := arrow.NewSchema([]arrow.Field{{Name: "value", Type: vector.Int64, Nullable: true}}, nil)
	s.RegisterSourceFormat("batchmem", func(mem memory.Allocator, _ *arrow.Schema, _ map[string]string) (Source, error) {
		src := NewMemoryStream(mem, schema)
		if _, err := src.AddData([]any{7}, []any{8}); err != nil {
			return nil, err
		}
		return batchMemorySource{src}, nil
	})
	ctx := t.Context()
	for _, q := range []string{"CREATE TABLE b USING batchmem", "CREATE TABLE r USING rate"} {
		if _, err := s.SQL(ctx, q); err != nil {
			t.Fatal(err)
		}
	}
	res, err := s.SQL(ctx, "SELECT sum(value) AS s FROM b")
	if err != nil {
		t.Fatal(err)
	}
	recs, err := vector.Drain(ctx, res.Op)
	res.Close()
	if err != nil {
		t.Fatal(err)
	}
	if len(recs) != 1 || recs[0].Column(0).(interface{ Value(int) int64 }).Value(0) != 15 {
		t.Fatalf("got %v", recs)
	}
	for _, r := range recs {
		r.Release()
	}
	if _, err := s.SQL(ctx, "SELECT * FROM r"); err == nil || !strings.Contains(err.Error(), "STREAM") {
		t.Fatalf("batch read of a stream-only source: %v", err)
	}
}

// TestBatchSourceScanOnPlannerAllocator: a batch scan of a source table
// makes exactly one source, on the allocator the planner gives it (not the
// session's), and everything that source allocated is released once the
// scan is closed: both allocators end at zero.
func TestBatchSourceScanOnPlannerAllocator(t *testing.T) {
	s, smem := newTestSession(t)
	schema := arrow.NewSchema([]arrow.Field{{Name: "value", Type: vector.Int64, Nullable: true}}, nil)
	var made []memory.Allocator
	s.RegisterSourceFormat("batchmem", func(mem memory.Allocator, _ *arrow.Schema, _ map[string]string) (Source, error) {
		made = append(made, mem)
		src := NewMemoryStream(mem, schema)
		if _, err := src.AddData([]any{7}, []any{8}); err != nil {
			return nil, err
		}
		return batchMemorySource{src}, nil
	})
	tb, err := s.formatTable("batchmem", nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	base := smem.CurrentAlloc()
	qmem := memory.NewCheckedAllocator(memory.NewGoAllocator())
	made = nil
	op, err := tb.(plan.BatchTable).Scan(t.Context(), qmem)
	if err != nil {
		t.Fatal(err)
	}
	recs, err := vector.Drain(t.Context(), op)
	op.Close()
	if err != nil {
		t.Fatal(err)
	}
	rows := 0
	for _, r := range recs {
		rows += int(r.NumRows())
		r.Release()
	}
	if rows != 2 {
		t.Fatalf("read %d rows, want 2", rows)
	}
	if len(made) != 1 || made[0] != memory.Allocator(qmem) {
		t.Fatalf("the scan made %d sources on %v, want one on the planner's allocator", len(made), made)
	}
	qmem.AssertSize(t, 0)
	if got := smem.CurrentAlloc(); got != base {
		t.Fatalf("the session's allocator holds %d bytes after the scan, %d before", got, base)
	}
}
