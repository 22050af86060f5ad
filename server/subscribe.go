package server

import (
	"context"
	"errors"
	"strings"

	"github.com/apache/arrow/go/v17/arrow"
	"github.com/apache/arrow/go/v17/arrow/flight"
	"google.golang.org/grpc/codes"

	"github.com/arrowstream/arrowstream/memsink"
	"github.com/arrowstream/arrowstream/sql"
)

// SUBSCRIBE t [SINCE EPOCH n] is served here, not by the QueryEngine: it
// reads a memory-sink table's commits and its result never ends. Its
// GetFlightInfo answers at once with the schema (the table's columns,
// then _epoch and _commit_timestamp; EpochMetadataKey holds the epoch
// after which rows start) and a ticket; its DoGet streams each committed
// epoch as it commits (memsink.Subscription) until the client cancels,
// the table is dropped or the server stops.
//
// Back-pressure: the stream is produced on the call's goroutine, so a
// subscriber that reads slowly blocks its own Send and nothing else. It
// holds at most the epoch being sent; commits, other readers and other
// subscribers carry on. A subscriber that reads nothing for
// Limits.StallTimeout is dropped (its connection closed, as for any
// stalled result stream); one that falls behind the table's retention
// gets ResourceExhausted naming the evicted epochs.
//
// A subscription is a statement for the quotas: it holds a slot of the
// user's concurrent statements for as long as it runs, and its user needs
// a read grant on the table (without one the table does not exist, as in
// every other read). The query timeout does not apply: the stream is
// meant to run until cancelled.

// errServerStopping ends subscriptions when the server stops.
var errServerStopping = errors.New("the server is shutting down")

// parseSubscribe returns the SUBSCRIBE statement text holds, or nil for
// any other statement.
func parseSubscribe(text string) (*sql.Subscribe, error) {
	if !strings.EqualFold(firstWord(text), "SUBSCRIBE") {
		return nil, nil
	}
	st, err := sql.Parse(text)
	if err != nil {
		return nil, statusf(codes.InvalidArgument, "%v", err)
	}
	sub, ok := st.(*sql.Subscribe)
	if !ok {
		return nil, nil
	}
	return sub, nil
}

// firstWord is the first word of a statement (comments and whitespace
// skipped by the caller's parser; here only leading whitespace).
func firstWord(text string) string {
	text = strings.TrimLeft(text, " \t\r\n(")
	end := strings.IndexAny(text, " \t\r\n;(")
	if end < 0 {
		return text
	}
	return text[:end]
}

// subscribedTable resolves the table of a SUBSCRIBE for the calling user.
func (s *Server) subscribedTable(ctx context.Context, sub *sql.Subscribe) (*memsink.Table, error) {
	name := sub.Name[len(sub.Name)-1].Name
	if len(sub.Name) > 1 {
		if q := sub.Name[len(sub.Name)-2].Name; !strings.EqualFold(q, DefaultSchema) {
			return nil, statusf(codes.NotFound, "SUBSCRIBE: only tables of schema %q can be followed, not %s.%s", DefaultSchema, q, name)
		}
	}
	t, ok := s.cfg.Sinks.Lookup(name)
	if !ok || !s.mayRead(ctx, name) {
		return nil, statusf(codes.NotFound, "SUBSCRIBE: table %q does not exist or is not a streaming table with a memory sink (SHOW TABLES lists them)", name)
	}
	return t, nil
}

// Schema metadata of a subscription stream besides EpochMetadataKey
// (the epoch after which rows start): how a client should show it.
const (
	// OutputModeMetadataKey holds the table's output mode: append (each
	// epoch adds rows), complete (each epoch is the whole result) or
	// update (each epoch's rows replace those with the same key).
	OutputModeMetadataKey = "arrowstream.output_mode"
	// KeyColumnsMetadataKey holds the key columns of an update table,
	// comma-separated (absent when unknown).
	KeyColumnsMetadataKey = "arrowstream.key_columns"
)

// subscribeSchema is the schema of a subscription's stream.
func subscribeSchema(t *memsink.Table, after int64) *arrow.Schema {
	s := withEpochMetadata(memsink.WithEpochSchema(t.Schema()), after)
	md := s.Metadata()
	keys := append([]string{}, md.Keys()...)
	vals := append([]string{}, md.Values()...)
	keys = append(keys, OutputModeMetadataKey)
	vals = append(vals, strings.ToLower(t.Mode().String()))
	if k := t.KeyColumns(); len(k) > 0 {
		keys = append(keys, KeyColumnsMetadataKey)
		vals = append(vals, strings.Join(k, ","))
	}
	m := arrow.NewMetadata(keys, vals)
	return arrow.NewSchema(s.Fields(), &m)
}

// subscribeInfo answers GetFlightInfo for a SUBSCRIBE: it checks the table
// and the starting epoch, and returns a ticket that DoGet follows.
func (q *sqlServer) subscribeInfo(ctx context.Context, text string, sub *sql.Subscribe) (*flight.FlightInfo, error) {
	if err := q.s.checkStatement(text); err != nil {
		return nil, err
	}
	t, err := q.s.subscribedTable(ctx, sub)
	if err != nil {
		return nil, err
	}
	sc, err := t.Subscribe(sub.Since, nil)
	if err != nil {
		if errors.Is(err, memsink.ErrBehind) {
			return nil, statusf(codes.InvalidArgument, "%s: %v", sql.Format(sub), err)
		}
		return nil, subscribeStatus(err)
	}
	after := sc.After()
	sc.Close()
	// The ticket starts where this call looked, so that no epoch
	// committed between GetFlightInfo and DoGet is missed.
	pinned := *sub
	pinned.Since = &after
	tk, err := statementTicket(Ticket{Version: TicketVersion, Query: sql.Format(&pinned)})
	if err != nil {
		return nil, statusOf(err, codes.Internal)
	}
	return q.statementInfo(subscribeSchema(t, after), tk), nil
}

// runSubscribe streams a SUBSCRIBE until the client cancels, the table
// is dropped or the server stops.
func (q *sqlServer) runSubscribe(ctx context.Context, stream flight.FlightService_DoGetServer, text string, sub *sql.Subscribe) error {
	if err := q.s.checkStatement(text); err != nil {
		return err
	}
	if err := q.s.pool.admit(); err != nil {
		return err
	}
	release, err := q.s.admit(ctx)
	if err != nil {
		return err
	}
	defer release()
	t, err := q.s.subscribedTable(ctx, sub)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithCancelCause(ctx)
	defer cancel(nil)
	stopWatch := context.AfterFunc(q.s.life, func() { cancel(errServerStopping) })
	defer stopWatch()
	mem := q.newAllocator()
	ctx, stop := limitedContext(ctx, mem)
	defer stop()
	sc, err := t.Subscribe(sub.Since, mem)
	if err != nil {
		return subscribeStatus(err)
	}
	q.s.log.Debug("subscription started", "table", t.Name(), "after", sc.After(), "user", UserFromContext(ctx))
	err = withLimitCause(q.s.sendStreamOn(ctx, stream, subscribeSchema(t, sc.After()), sc, mem), mem)
	q.s.endQuery(mem) // the subscription (it allocates in Next) and the stream are closed
	if errors.Is(context.Cause(ctx), errServerStopping) {
		err = errServerStopping
	}
	q.s.log.Debug("subscription ended", "table", t.Name(), "after", sc.After(), "err", err)
	return subscribeStatus(err)
}

// subscribeStatus gives a subscription's errors their codes.
func subscribeStatus(err error) error {
	switch {
	case err == nil:
		return nil
	case errors.Is(err, memsink.ErrBehind):
		return statusf(codes.ResourceExhausted, "SUBSCRIBE: %v", err)
	case errors.Is(err, memsink.ErrDropped):
		return statusf(codes.NotFound, "SUBSCRIBE: %v", err)
	case errors.Is(err, errServerStopping):
		// Unavailable: the client may reconnect and resume with
		// SINCE EPOCH <the last _epoch it read>.
		return statusf(codes.Unavailable, "SUBSCRIBE: %v; resume with SINCE EPOCH <last _epoch read>", err)
	}
	return statusOf(err, codes.Internal)
}
