package kafka

import (
	"context"
	"errors"
	"log/slog"
	"sync/atomic"

	"github.com/twmb/franz-go/pkg/kgo"
)

// A transaction whose EndTransaction(TryCommit) returned nil is not
// always committed. franz-go (v1.22) ends a transaction in which it
// believes no produce succeeded with an abort, and returns nil: under
// KIP-890 part 2 it marks a partition added to the transaction only when
// a produce response says so, and when it finds none marked but records
// were buffered it sends EndTxn(abort) "to clear any server-side
// partition registrations". Our produces had all succeeded (Flush
// returned, every promise without error); the marks were lost in the
// client, each time in the first transaction of a new producer client,
// whose first produce to the topic waited for the topic's metadata
// (session 32, docs/cluster.md). The epoch then went on as committed:
//
//   - an upstream stage's rows were dropped (the hop transaction aborted
//     after the stage had claimed its input): the downstream read an
//     aborted range, found no rows, and committed past it;
//   - a downstream epoch's state changes, hop offsets and bookmark were
//     dropped while its local state and its sink kept the epoch: the next
//     start read the same hop range again over that state (counted twice),
//     taking the local state for the changelog's because the aborted
//     records had moved the changelog's end to where it saved it.
//
// The client says what it sent in its log: "end transaction response
// successfully received" with the commit flag, logged after the broker
// accepted the EndTxn and before EndTransaction returns. txnOutcome is
// the transactional clients' kgo.Logger: it records that message, and
// commitTxn takes a transaction as committed only when the broker
// accepted an EndTxn(commit) during the call. Anything else (an abort
// sent for us, or no EndTxn at all) fails the epoch, which runs again as
// after any transaction that did not commit. If franz-go changed that
// message, every commit would fail loudly (TestCommitTxnSeesCommit), never
// pass silently. The client's warnings and errors go to the logger.
type txnOutcome struct {
	logger    *slog.Logger
	committed atomic.Bool
}

// endTxnAccepted is the message franz-go logs (at info) when the broker
// accepted an EndTxn, with the key "commit" holding its flag.
const endTxnAccepted = "end transaction response successfully received"

func newTxnOutcome(logger *slog.Logger) *txnOutcome { return &txnOutcome{logger: logger} }

// Level implements kgo.Logger: info, for endTxnAccepted (a few messages
// per transaction; fetch and produce paths log at debug).
func (o *txnOutcome) Level() kgo.LogLevel { return kgo.LogLevelInfo }

// Log implements kgo.Logger.
func (o *txnOutcome) Log(level kgo.LogLevel, msg string, keyvals ...any) {
	if msg == endTxnAccepted && commitFlag(keyvals) {
		o.committed.Store(true)
	}
	switch level {
	case kgo.LogLevelError:
		o.logger.Error("kafka client: "+msg, keyvals...)
	case kgo.LogLevelWarn:
		o.logger.Warn("kafka client: "+msg, keyvals...)
	}
}

// commitFlag returns the value of the key "commit" in keyvals.
func commitFlag(keyvals []any) bool {
	for i := 0; i+1 < len(keyvals); i += 2 {
		if k, ok := keyvals[i].(string); !ok || k != "commit" {
			continue
		}
		switch v := keyvals[i+1].(type) {
		case kgo.TransactionEndTry:
			return bool(v)
		case bool:
			return v
		}
	}
	return false
}

// errTxnNotCommitted: EndTransaction(TryCommit) returned nil but the
// client did not commit (txnOutcome).
var errTxnNotCommitted = errors.New("the Kafka client ended the transaction without committing it (it aborted a transaction it took for empty, or sent no EndTxn)")

// commitTxn commits cl's open transaction and returns nil only when the
// broker accepted the commit. out must be cl's logger (kgo.WithLogger).
func commitTxn(ctx context.Context, cl *kgo.Client, out *txnOutcome) error {
	out.committed.Store(false)
	if err := cl.EndTransaction(ctx, kgo.TryCommit); err != nil {
		return err
	}
	if !out.committed.Load() {
		return errTxnNotCommitted
	}
	return nil
}
