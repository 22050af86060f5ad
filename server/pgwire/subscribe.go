package pgwire

import (
	"context"
	"errors"
	"sync/atomic"
)

// SUBSCRIBE t [SINCE EPOCH n] over the simple query protocol streams each
// committed epoch's rows (the table's columns, then _epoch and
// _commit_timestamp, as over Flight SQL: server.FrontendSession.Subscribe)
// as DataRow messages, flushed after each batch, so a client sees an
// epoch as soon as it commits. It runs until the client sends a
// CancelRequest (57014), the table is dropped, the server stops, or the
// client closes its connection or sends a message (subscribe_watch.go).
// Back-pressure: rows are written as they are pulled, so a client that
// reads slowly blocks its own subscription, with at most one epoch and
// one write buffer (flushBytes) in hand; the stall rules of every
// result apply.

// subscribe runs a SUBSCRIBE statement of a simple query.
func (c *conn) subscribe(text string) error {
	if err := c.checkCanceled(); err != nil {
		return err
	}
	ctx, cancel := context.WithCancel(c.baseCtx)
	stop := c.watch(cancel)
	rows, err := c.sess.Subscribe(ctx, text)
	stop()
	if err != nil {
		cancel()
		return err
	}
	p := &portal{text: text, isQuery: true, src: rows, ctx: ctx, cancel: cancel, flushEach: true}
	defer p.close()
	enc, err := newRowEncoder(rows.Schema(), nil, &c.opts)
	if err != nil {
		return err
	}
	p.enc = enc
	c.send(rowDescription(rows.Schema(), enc))
	if err := c.flush(); err != nil {
		return errConnGone
	}
	var left atomic.Bool
	stopWatch := c.watchClient(func() { left.Store(true); cancel() })
	err = c.run(p, 0)
	stopWatch()
	if left.Load() && errors.Is(err, errCanceled) {
		return errClientLeft
	}
	return err
}

// errClientLeft ends a subscription whose client closed its connection
// or sent a message while it ran.
var errClientLeft = &pgError{code: stateQueryCanceled, msg: "canceling SUBSCRIBE: the client closed the connection or sent a message while it ran"}

// errSubscribeExtended refuses SUBSCRIBE in the extended protocol, whose
// portals are meant to end.
var errSubscribeExtended = &pgError{code: stateFeatureNotSupp,
	msg: "SUBSCRIBE runs over the simple query protocol (psql; pgx's QueryExecModeSimpleProtocol), not as a prepared statement"}
