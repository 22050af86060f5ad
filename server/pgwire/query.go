package pgwire

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/jackc/pgx/v5/pgproto3"

	"github.com/arrowstream/arrowstream/server"
)

// source is an open result: the engine's server.Rows, or a session
// statement's rows.
type source interface {
	Schema() *arrow.Schema
	Next(ctx context.Context) (arrow.Record, error)
	Close() error
}

// recordSource serves records already computed (owned by it).
type recordSource struct {
	schema *arrow.Schema
	recs   []arrow.Record
}

func (r *recordSource) Schema() *arrow.Schema { return r.schema }

func (r *recordSource) Next(context.Context) (arrow.Record, error) {
	if len(r.recs) == 0 {
		return nil, io.EOF
	}
	rec := r.recs[0]
	r.recs = r.recs[1:]
	return rec, nil
}

func (r *recordSource) Close() error {
	for _, rec := range r.recs {
		rec.Release()
	}
	r.recs = nil
	return nil
}

// portal is a statement bound to its parameter values, being executed.
type portal struct {
	text    string // with the values substituted
	formats []int16
	// describe is the statement's description when known at Bind.
	isQuery bool
	schema  *arrow.Schema
	local   *localResult
	// params are the values of the statement's placeholders (owned), nil
	// without placeholders.
	params arrow.Record
	// flushEach sends every batch's rows as soon as they are encoded
	// (a subscription's epochs).
	flushEach bool
	// held is what the portal counts in conn.held.
	held int64

	ctx    context.Context
	cancel context.CancelFunc
	src    source
	enc    *rowEncoder
	cur    arrow.Record
	row    int
	sent   int64
	done   bool
	tag    string
}

func (p *portal) close() {
	if p.cur != nil {
		p.cur.Release()
		p.cur = nil
	}
	if p.src != nil {
		_ = p.src.Close()
		p.src = nil
	}
	if p.cancel != nil {
		p.cancel()
	}
	if p.local != nil && p.local.rows != nil {
		p.local.rows.Release()
		p.local.rows = nil
	}
	if p.params != nil {
		p.params.Release()
		p.params = nil
	}
}

// simpleQuery runs every statement of a Query message, stopping at the
// first error, then reports ReadyForQuery.
func (c *conn) simpleQuery(text string) {
	stmts := splitStatements(text)
	if len(stmts) == 0 {
		c.send(&pgproto3.EmptyQueryResponse{})
	}
	for _, s := range stmts {
		if err := c.simpleStatement(s); err != nil {
			if errors.Is(err, errConnGone) {
				// A write failed part-way (the client went, or stalled
				// past the stall timeout): the stream is broken.
				_ = c.nc.Close()
				return
			}
			c.sendError(err)
			if c.txn == 'T' {
				c.txn = 'E'
			}
			break
		}
	}
	c.readyForQuery()
}

// errConnGone is a write to a client that has gone.
var errConnGone = errors.New("client connection lost")

func (c *conn) simpleStatement(text string) error {
	if c.txn == 'E' && !isTxnEnd(text) {
		return &pgError{code: stateInFailedTx, msg: "current transaction is aborted, commands ignored until end of transaction block"}
	}
	if n, err := placeholderCount(text); err != nil {
		return err
	} else if n > 0 {
		return &pgError{code: "08P01", msg: fmt.Sprintf("statement has placeholders up to $%d: send it with the extended protocol (Parse/Bind) and bind values", n)}
	}
	if server.IsSubscribe(text) {
		return c.subscribe(text)
	}
	p, err := c.newPortal(text, nil, nil)
	if err != nil {
		return err
	}
	defer p.close()
	if p.isQuery {
		if err := c.open(p); err != nil {
			return err
		}
		c.send(rowDescription(p.src.Schema(), p.enc))
	}
	return c.run(p, 0)
}

func isTxnEnd(text string) bool {
	f := strings.Fields(text)
	if len(f) == 0 {
		return false
	}
	switch strings.ToUpper(strings.TrimRight(f[0], ";")) {
	case "COMMIT", "END", "ROLLBACK", "ABORT":
		return true
	}
	return false
}

// newPortal classifies a statement (with its parameter values, params):
// a session statement, a query (described now) or a command. The portal
// owns params when it is returned; on an error the caller still does.
func (c *conn) newPortal(text string, formats []int16, params arrow.Record) (*portal, error) {
	if server.IsSubscribe(text) {
		return nil, errSubscribeExtended
	}
	text = c.dialect.translate(text)
	p := &portal{text: text, formats: formats, params: params}
	if res, ok, err := c.local(text); err != nil {
		return nil, err
	} else if ok {
		p.local = res
		p.isQuery = res.rows != nil
		if p.isQuery {
			p.schema = res.rows.Schema()
		}
		return p, nil
	}
	ctx, done := c.statementContext()
	defer done()
	st, err := c.sess.DescribeParams(ctx, text, params)
	err = timeoutError(ctx, err)
	if err != nil && readsEmptyCatalog(text) {
		// A catalog query the planner cannot take (PostgreSQL's array
		// syntax) over a relation without rows: no rows.
		p.local = emptyResult()
		p.isQuery, p.schema = true, p.local.rows.Schema()
		return p, nil
	}
	if err == nil {
		err = c.checkCanceled()
	}
	if err != nil {
		return nil, err
	}
	p.isQuery, p.schema = st.IsQuery, st.Schema
	return p, nil
}

// open starts a query portal's result.
func (c *conn) open(p *portal) error {
	if p.src != nil {
		return nil
	}
	if p.local != nil {
		rec := p.local.rows
		p.local.rows = nil
		p.src = &recordSource{schema: rec.Schema(), recs: []arrow.Record{rec}}
	} else {
		p.ctx, p.cancel = c.withTimeout(c.baseCtx)
		stop := c.watch(p.cancel)
		rows, err := c.sess.QueryParams(p.ctx, p.text, p.params)
		stop()
		if err != nil {
			return timeoutError(p.ctx, err)
		}
		p.src = rows
	}
	enc, err := newRowEncoder(p.src.Schema(), p.formats, &c.opts)
	if err != nil {
		return err
	}
	p.enc = enc
	return nil
}

// watch makes a CancelRequest cancel f until the returned stop.
func (c *conn) watch(f context.CancelFunc) func() {
	c.mu.Lock()
	c.cancel, c.executing = f, true
	c.mu.Unlock()
	return func() {
		c.mu.Lock()
		c.cancel, c.executing = nil, false
		c.mu.Unlock()
	}
}

// maxRowBytes is the largest DataRow message (its length is an int32).
const maxRowBytes = 1<<31 - 1

// run executes a portal: a command once, a query's rows up to maxRows
// (0: all), ending with CommandComplete or PortalSuspended.
func (c *conn) run(p *portal, maxRows int64) error {
	if p.done {
		c.send(&pgproto3.CommandComplete{CommandTag: []byte(p.tag)})
		return nil
	}
	if !p.isQuery {
		tag, err := c.command(p)
		if err != nil {
			return err
		}
		p.done, p.tag = true, tag
		c.send(&pgproto3.CommandComplete{CommandTag: []byte(tag)})
		return nil
	}
	if err := c.checkCanceled(); err != nil {
		return err
	}
	if err := c.open(p); err != nil {
		return err
	}
	var ctx context.Context = c.baseCtx
	if p.ctx != nil {
		ctx = p.ctx
		defer c.watch(p.cancel)()
	}
	var n int64
	for {
		if p.cur == nil {
			rec, err := p.src.Next(ctx)
			if err != nil && ctx.Err() != nil {
				err = errCanceled
				if errors.Is(context.Cause(ctx), errStatementTimeout) {
					err = errStatementTimeout
				}
			}
			if errors.Is(err, io.EOF) {
				p.done = true
				p.tag = "SELECT " + strconv.FormatInt(p.sent, 10)
				if p.local != nil && p.local.tag != "" {
					p.tag = p.local.tag
				}
				_ = p.src.Close()
				p.src = nil
				c.send(&pgproto3.CommandComplete{CommandTag: []byte(p.tag)})
				return nil
			}
			if err != nil {
				return err
			}
			if rec.NumRows() == 0 {
				rec.Release()
				continue
			}
			p.cur, p.row = rec, 0
			p.enc.load(p.cur)
		}
		rows := int(p.cur.NumRows())
		for ; p.row < rows; p.row++ {
			if maxRows > 0 && n == maxRows {
				c.send(&pgproto3.PortalSuspended{})
				return nil
			}
			mark := len(c.out)
			c.out = p.enc.appendDataRow(c.out, p.row)
			if size := len(c.out) - mark - 1; size > maxRowBytes {
				c.out = c.out[:mark]
				return &pgError{code: stateProgramLimit, msg: fmt.Sprintf("row %d is %d bytes, over the protocol's limit of %d", p.sent, size, maxRowBytes)}
			}
			n++
			p.sent++
			if len(c.out) >= flushBytes {
				if err := c.flush(); err != nil {
					return errConnGone
				}
			}
		}
		p.cur.Release()
		p.cur = nil
		if p.flushEach {
			if err := c.flush(); err != nil {
				return errConnGone
			}
		}
	}
}

// command runs a command portal and returns its tag.
func (c *conn) command(p *portal) (string, error) {
	if p.local != nil {
		return p.local.tag, nil
	}
	if err := c.checkCanceled(); err != nil {
		return "", err
	}
	ctx, done := c.statementContext()
	defer done()
	n, err := c.sess.Exec(ctx, p.text)
	if err != nil {
		return "", timeoutError(ctx, err)
	}
	return commandTag(p.text, n), nil
}

// commandTag is the CommandComplete tag of a command: its first words.
func commandTag(text string, n int64) string {
	f := strings.Fields(strings.ToUpper(text))
	if len(f) == 0 {
		return ""
	}
	switch f[0] {
	case "INSERT":
		return "INSERT 0 " + strconv.FormatInt(n, 10)
	case "CREATE", "DROP", "ALTER":
		for _, w := range f[1:] {
			switch w {
			case "TABLE", "VIEW", "FUNCTION", "SCHEMA", "DATABASE":
				return f[0] + " " + w
			}
		}
		return f[0] + " TABLE"
	}
	return f[0]
}

// rowDescription describes a result's columns in the encoder's formats.
func rowDescription(schema *arrow.Schema, enc *rowEncoder) *pgproto3.RowDescription {
	fields := make([]pgproto3.FieldDescription, schema.NumFields())
	for i, f := range schema.Fields() {
		fd := pgproto3.FieldDescription{Name: []byte(f.Name), TypeModifier: -1}
		if enc != nil {
			col := enc.cols[i]
			fd.DataTypeOID, fd.DataTypeSize, fd.Format = col.typ.oid, col.typ.size, col.format
		} else if t, err := typeOf(f.Type); err == nil {
			fd.DataTypeOID, fd.DataTypeSize = t.oid, t.size
		} else {
			fd.DataTypeOID, fd.DataTypeSize = oidText, -1
		}
		fields[i] = fd
	}
	return &pgproto3.RowDescription{Fields: fields}
}
