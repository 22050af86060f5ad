package stateful

import (
	"fmt"
	"io"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/array"
	"github.com/apache/arrow/go/v17/arrow/ipc"
	"github.com/apache/arrow/go/v17/arrow/memory"
)

// ipcStreamEncoder writes records of one schema, each as a join batch
// entry: the very bytes writeJoinRecord writes (the magic, then the IPC
// stream's record batch message and end marker; the schema message is left
// out, stateful_join_ipc.go). writeJoinRecord starts a fresh ipc.Writer for
// every entry, which builds the schema's flatbuffer message only to skip
// it: most of the cost of logging a join partition's few new rows each
// epoch. Here one writer, started once, encodes the record batch messages.
//
// A record whose schema is not the encoder's (by pointer), or a schema with
// a dictionary-encoded column (a started writer would leave out
// dictionaries it already wrote), goes through writeJoinRecord. An encoder
// is used by one goroutine at a time. It holds no Arrow buffers: nothing to
// release.
type ipcStreamEncoder struct {
	mem    memory.Allocator
	schema *arrow.Schema
	out    retargetWriter
	// w is the started writer; nil: every record goes through
	// writeJoinRecord.
	w *ipc.Writer
	// direct writes the record batch message without w for a schema of
	// flat columns (ipc_batch_direct.go); nil: through w.
	direct *directMessage
	// lazy: w is started when a record first needs it (an encoder
	// cloned from another's template, which most records never need).
	lazy bool
}

// ipcEOS is the IPC stream's end marker: a continuation token and a
// zero-length message.
var ipcEOS = [8]byte{0xff, 0xff, 0xff, 0xff, 0, 0, 0, 0}

// retargetWriter passes writes on to the writer set for the current record.
type retargetWriter struct{ w io.Writer }

func (r *retargetWriter) Write(p []byte) (int, error) { return r.w.Write(p) }

// newIPCStreamEncoder makes an encoder for schema.
func newIPCStreamEncoder(mem memory.Allocator, schema *arrow.Schema) (*ipcStreamEncoder, error) {
	e := &ipcStreamEncoder{mem: mem, schema: schema}
	if schemaHasDictionary(schema) {
		return e, nil
	}
	if err := e.start(); err != nil {
		return nil, err
	}
	var err error
	if e.direct, err = newDirectMessage(mem, e.w, &e.out, schema); err != nil {
		return nil, err
	}
	return e, nil
}

// start starts e's writer on an empty record written nowhere (the schema
// message with it): its later writes are record batch messages only.
func (e *ipcStreamEncoder) start() error {
	e.out.w = io.Discard
	w := ipc.NewWriter(&e.out, ipc.WithSchema(e.schema), ipc.WithAllocator(e.mem))
	b := array.NewRecordBuilder(e.mem, e.schema)
	empty := b.NewRecord()
	b.Release()
	err := w.Write(empty)
	empty.Release()
	if err != nil {
		return fmt.Errorf("arrow IPC writer: %w", err)
	}
	e.w, e.lazy = w, false
	return nil
}

// clone returns an encoder of e's schema for another goroutine (e's
// writer and template are one goroutine's): the direct path's template
// copied, its writer started only when a record the template does not
// fit comes. Starting an encoder writes the schema's message and a
// one-row probe through a fresh ipc.Writer (about 50 allocations); the
// join did that for each side of each partition of every query, and
// with Spark's 200 partitions for 400 encoders. An encoder without a
// template is started afresh.
func (e *ipcStreamEncoder) clone() (*ipcStreamEncoder, error) {
	if e.w == nil && !e.lazy {
		return &ipcStreamEncoder{mem: e.mem, schema: e.schema}, nil // dictionaries
	}
	if e.direct == nil {
		return newIPCStreamEncoder(e.mem, e.schema)
	}
	return &ipcStreamEncoder{mem: e.mem, schema: e.schema, direct: e.direct.clone(), lazy: true}, nil
}

// framing returns the bytes a join batch entry of rows > 0 holds beside
// its body's buffers: the magic, the record batch message's prefix and
// flatbuffer, and the end marker; false without a template.
func (e *ipcStreamEncoder) framing() (int64, bool) {
	if e.direct == nil {
		return 0, false
	}
	return int64(len(joinBatchMagic) + len(e.direct.head) + len(ipcEOS)), true
}

// write writes rec to dst as a join batch entry.
func (e *ipcStreamEncoder) write(dst io.Writer, rec arrow.Record) error {
	if e.w == nil && !e.lazy || rec.Schema() != e.schema {
		return writeJoinRecord(e.mem, dst, rec)
	}
	if _, err := dst.Write(joinBatchMagic[:]); err != nil {
		return err
	}
	done := false
	if e.direct != nil {
		var err error
		if done, err = e.direct.write(dst, rec); err != nil {
			return err
		}
	}
	if !done {
		if e.w == nil {
			if err := e.start(); err != nil {
				return err
			}
		}
		e.out.w = dst
		err := e.w.Write(rec)
		e.out.w = io.Discard
		if err != nil {
			return err
		}
	}
	_, err := dst.Write(ipcEOS[:])
	return err
}

// schemaHasDictionary reports whether a column of schema, or a field
// nested in one, is dictionary-encoded.
func schemaHasDictionary(schema *arrow.Schema) bool {
	for _, f := range schema.Fields() {
		if typeHasDictionary(f.Type) {
			return true
		}
	}
	return false
}

func typeHasDictionary(dt arrow.DataType) bool {
	switch t := dt.(type) {
	case *arrow.DictionaryType:
		return true
	case arrow.ExtensionType:
		return typeHasDictionary(t.StorageType())
	case arrow.NestedType:
		for _, f := range t.Fields() {
			if typeHasDictionary(f.Type) {
				return true
			}
		}
	}
	return false
}
