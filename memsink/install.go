package memsink

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/memory"

	"github.com/arrowstream/arrowstream/arrowstream/stream"
	"github.com/arrowstream/arrowstream/checkpoint"
	"github.com/arrowstream/arrowstream/plan"
	"github.com/arrowstream/arrowstream/vector"
)

// Registrar is what Install needs from a session (arrowstream.Session
// implements it): a sink format and a catalog of tables.
type Registrar interface {
	RegisterSinkFormat(name string, f stream.SinkFormat)
	AddCatalog(c plan.Catalog)
}

// Install registers the "memory" sink format in sess, keeping the tables it
// creates in cat, and makes cat's tables queryable by the session's SQL and
// DataFrames (as static tables). defaults are the table options; writer
// options override them per query: persist, maxEpochs, maxRows, maxBytes,
// updateAsView, offHeap.
//
// A query that restarts under the name of a table still in cat, with the
// same schema, writes to that table again (its epochs are kept, as Spark's
// test harness reuses its sink). Otherwise a new table is created: from its
// persisted epochs when persist is on, and without persistence an Append or
// Update query refuses to resume from an existing checkpoint (Spark's rule:
// the earlier epochs are gone).
func Install(sess Registrar, cat *Catalog, defaults Options) {
	sess.RegisterSinkFormat("memory", func(ctx context.Context, mem memory.Allocator, info stream.SinkInfo) (stream.Sink, error) {
		if info.QueryName == "" {
			return nil, fmt.Errorf("queryName must be specified for memory sink")
		}
		opts, err := tableOptions(defaults, info.QueryName, info.Options)
		if err != nil {
			return nil, err
		}
		if t, ok := cat.Lookup(info.QueryName); ok && t.Schema().Equal(info.Schema) && t.Mode() == info.Mode {
			return t, nil
		}
		if !opts.Persist {
			if ok, _ := checkpoint.HasEpochLog(info.CheckpointDir); ok {
				if err := CanRecover(info.CheckpointDir, info.Mode, false); err != nil {
					return nil, err
				}
			}
		}
		t, err := Open(ctx, mem, info, opts)
		if err != nil {
			return nil, err
		}
		if old, _ := cat.Replace(info.QueryName, t); old != nil {
			old.Close()
		}
		return t, nil
	})
	// A session that checks TBLPROPERTIES before planning learns our keys.
	if r, ok := sess.(stream.SinkOptionRegistrar); ok {
		r.RegisterSinkOptions("memory", OptionKeys())
	}
	sess.AddCatalog(PlanCatalog{cat})
	// A session with a memory target counts the tables as held data.
	if r, ok := sess.(HeldRegistrar); ok {
		r.AddHeldBytes("memory sink", cat.HeldBytes)
	}
}

// HeldRegistrar is a session that sets the process's memory limit from
// the bytes its queries and tables hold (arrowstream.Session): Install
// registers the catalog's HeldBytes with it.
type HeldRegistrar interface {
	AddHeldBytes(name string, f func() int64)
}

// OptionKeys are the options of the memory sink (TBLPROPERTIES of CREATE
// STREAMING TABLE), as tableOptions reads them.
func OptionKeys() []string {
	return []string{"persist", "updateAsView", "maxEpochs", "maxRows", "maxBytes", "offHeap"}
}

func isWriterKey(k string) bool {
	for _, w := range stream.WriterOptionKeys() {
		if strings.EqualFold(k, w) {
			return true
		}
	}
	return false
}

// tableOptions applies the options of the table name to o; an unknown
// key is an error with a "did you mean" hint.
func tableOptions(o Options, name string, writerOpts map[string]string) (Options, error) {
	for k, v := range writerOpts {
		var err error
		switch strings.ToLower(k) {
		case "persist":
			o.Persist, err = strconv.ParseBool(v)
		case "updateasview":
			o.UpdateAsView, err = strconv.ParseBool(v)
		case "maxepochs":
			o.MaxEpochs, err = strconv.Atoi(v)
		case "maxrows":
			o.MaxRows, err = strconv.ParseInt(v, 10, 64)
		case "maxbytes":
			o.MaxBytes, err = strconv.ParseInt(v, 10, 64)
		case "offheap":
			o.OffHeap, err = strconv.ParseBool(v)
		default:
			if isWriterKey(k) {
				continue // read by the engine
			}
			known := append(OptionKeys(), stream.WriterOptionKeys()...)
			return o, fmt.Errorf("unknown option '%s' of streaming table %s%s", k, name, plan.DidYouMean(k, known))
		}
		if err != nil {
			return o, fmt.Errorf("memsink: option %s=%q: %w", k, v, err)
		}
	}
	return o, nil
}

// PlanCatalog exposes a Catalog's tables to the planner: each sink table is
// a static table read through a snapshot, with time travel (VERSION AS OF
// epoch) and committed changes (table_changes).
type PlanCatalog struct{ C *Catalog }

// Table implements plan.Catalog.
func (p PlanCatalog) Table(name string) (plan.Table, error) {
	t, ok := p.C.Lookup(name)
	if !ok {
		return nil, fmt.Errorf("%w: %s", plan.ErrTableNotFound, name)
	}
	return planTable{t}, nil
}

// TableNames implements plan.TableLister.
func (p PlanCatalog) TableNames() []string { return p.C.List() }

// planTable adapts a Table to the planner's table interfaces.
type planTable struct{ t *Table }

func (p planTable) Schema() *arrow.Schema { return p.t.Schema() }
func (p planTable) Streaming() bool       { return false }

// Scan reads the current snapshot (whole epochs only).
func (p planTable) Scan(context.Context, memory.Allocator) (vector.Operator, error) {
	return scanSnapshot(p.t.Snapshot())
}

// ScanVersion reads the table as of an epoch.
func (p planTable) ScanVersion(_ context.Context, _ memory.Allocator, version int64) (vector.Operator, error) {
	s, err := p.t.AsOf(version)
	if err != nil {
		return nil, err
	}
	return scanSnapshot(s)
}

// scanSnapshot is NewSnapshotScan without epoch columns, as a
// vector.Operator (nil on error, not a nil *SnapshotScan).
func scanSnapshot(s *Snapshot) (vector.Operator, error) {
	op, err := NewSnapshotScan(s, false, nil)
	if err != nil {
		return nil, err
	}
	return op, nil
}

// ScanChanges reads the rows committed after epoch from up to epoch to
// (to < 0: the latest), with _epoch and _commit_timestamp.
func (p planTable) ScanChanges(ctx context.Context, mem memory.Allocator, from, to int64) (vector.Operator, error) {
	s, err := p.t.Since(from)
	if err != nil {
		return nil, err
	}
	scan, err := NewSnapshotScan(s, true, mem)
	if err != nil {
		return nil, err
	}
	if to < 0 {
		return scan, nil
	}
	f, err := vector.NewFilter(mem, scan, vector.Le(vector.Col(plan.EpochColumn), vector.Lit(to)))
	if err != nil {
		scan.Close()
		return nil, err
	}
	return f, nil
}

// DropTable implements arrowstream.TableDropper: the table is removed from
// the catalog and closed.
func (p PlanCatalog) DropTable(name string) bool {
	t, ok := p.C.Drop(name)
	if ok {
		t.Close()
	}
	return ok
}

var historySchema = arrow.NewSchema([]arrow.Field{
	{Name: "epoch", Type: vector.Int64},
	{Name: "rows", Type: vector.Int64},
	{Name: "bytes", Type: vector.Int64},
	{Name: "commitTime", Type: vector.Timestamp},
	{Name: "retained", Type: vector.Boolean},
}, nil)

// History implements arrowstream.HistoryTable (DESCRIBE HISTORY).
func (p planTable) History(mem memory.Allocator) (arrow.Record, error) {
	b := array.NewRecordBuilder(mem, historySchema)
	defer b.Release()
	for _, e := range p.t.History() {
		b.Field(0).(*array.Int64Builder).Append(e.Epoch)
		b.Field(1).(*array.Int64Builder).Append(e.Rows)
		b.Field(2).(*array.Int64Builder).Append(e.Bytes)
		b.Field(3).(*array.TimestampBuilder).Append(arrow.Timestamp(e.CommitTime.UnixMicro()))
		b.Field(4).(*array.BooleanBuilder).Append(!e.Superseded)
	}
	return b.NewRecord(), nil
}
