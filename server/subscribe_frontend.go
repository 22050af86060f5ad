package server

import (
	"context"
	"fmt"
)

// IsSubscribe reports whether text is a SUBSCRIBE statement (which
// Subscribe serves; Query does not).
func IsSubscribe(text string) bool {
	sub, err := parseSubscribe(text)
	return err != nil || sub != nil
}

// Subscribe starts a SUBSCRIBE t [SINCE EPOCH n] for another protocol:
// Rows whose batches are each committed epoch's rows (the table's
// columns, then _epoch and _commit_timestamp), returned as they commit;
// Next blocks between commits and never returns io.EOF. It ends when ctx
// is canceled, the table is dropped or the server stops. The rules of
// the Flight SQL SUBSCRIBE apply: a read grant on the table, a slot of
// the user's concurrent statements while it runs, no query timeout; a
// slow reader holds back only its own subscription (at most one epoch
// in hand), and one that falls behind the table's retention gets
// memsink.ErrBehind. The caller must Close the Rows.
func (fs *FrontendSession) Subscribe(ctx context.Context, text string) (_ *Rows, err error) {
	s := fs.f.s
	ctx = fs.withUser(ctx)
	sub, err := parseSubscribe(text)
	if err != nil {
		return nil, err
	}
	if sub == nil {
		return nil, fmt.Errorf("%q is not a SUBSCRIBE statement: %w", firstWords(text), ErrUnsupported)
	}
	if err := s.checkStatement(text); err != nil {
		return nil, err
	}
	if err := s.pool.admit(); err != nil {
		return nil, err
	}
	release, err := s.admit(ctx)
	if err != nil {
		return nil, err
	}
	r := &Rows{s: s, release: release}
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	t, err := s.subscribedTable(ctx, sub)
	if err != nil {
		return nil, err
	}
	sctx, cancel := context.WithCancelCause(ctx)
	stopWatch := context.AfterFunc(s.life, func() { cancel(errServerStopping) })
	r.qctx = sctx
	r.mem = s.sql.newAllocator()
	var stop context.CancelFunc
	r.ctx, stop = limitedContext(sctx, r.mem)
	r.cancel = func() { stop(); stopWatch(); cancel(nil) }
	sc, err := t.Subscribe(sub.Since, r.mem)
	if err != nil {
		return nil, subscribeStatus(err)
	}
	r.op = sc
	r.schema = subscribeSchema(t, sc.After())
	s.log.Debug("subscription started", "table", t.Name(), "after", sc.After(), "user", fs.user, "protocol", "frontend")
	return r, nil
}
