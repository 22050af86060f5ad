package kafka

import (
	"errors"
	"time"

	"github.com/twmb/franz-go/pkg/kerr"
)

// A transactional writer's epoch can be fenced by the broker in two ways,
// and both end the same way, as in Kafka Streams (a TaskMigrated: abort,
// make the producer again, run the epoch again from the committed
// offsets):
//
//   - the transaction outlived its timeout: the broker aborts it and
//     bumps the producer's epoch, so the writer's next produce fails with
//     INVALID_PRODUCER_EPOCH (or its EndTxn with INVALID_TXN_STATE or
//     PRODUCER_FENCED). Session 24 saw this on a single instance at load
//     about 30: its first epoch of a backlog read, hashed and produced
//     the whole backlog inside one transaction for longer than the 10 s
//     timeout. The writer doubles its timeout for the next producer, so
//     an epoch that is slow again fits (up to maxTxnTimeout).
//   - another producer initialised the same transactional id (a newer
//     incarnation of the writer): the new producer's InitProducerID then
//     fences this one in turn and aborts what the other left open; the
//     writer's bookkeeping offset, read with RequireStable, says which
//     epochs are already written, so nothing is written twice.
//
// Neither loses or duplicates a row: the fenced transaction aborted.

// maxTxnTimeout bounds the grown transaction timeout: Kafka's default
// transaction.max.timeout.ms (a broker with a lower maximum refuses
// InitProducerID with INVALID_TRANSACTION_TIMEOUT, and the writer steps
// back, txnTimeout.refused).
const maxTxnTimeout = 15 * time.Minute

// txnFenced reports whether err says the producer's transaction was
// aborted or fenced by the broker, or its producer id is no longer
// usable: the producer must be made again.
func txnFenced(err error) bool {
	return errors.Is(err, kerr.InvalidProducerEpoch) || errors.Is(err, kerr.ProducerFenced) ||
		errors.Is(err, kerr.InvalidProducerIDMapping) || errors.Is(err, kerr.InvalidTxnState) ||
		errors.Is(err, kerr.UnknownProducerID) || errors.Is(err, kerr.TransactionAbortable)
}

// txnTimeout is a writer's transaction timeout. It starts at
// max(SessionTimeout, 10s) (ClusterOptions.TxnTimeout overrides): the
// timeout is also how long a killed writer's open transaction holds back
// every read_committed reader of the hop (their last stable offset stops
// at it) until the broker aborts it, and the session timeout already
// holds the killed instance's partitions that long, so a longer start
// would add to every kill's stall. An epoch's time is not bounded by the
// trigger (a backlog epoch reads all that waits, unless
// maxOffsetsPerTrigger bounds it), so no fixed value is safe for slow
// epochs: the writer doubles the timeout each time the broker aborted a
// transaction of it for its age.
type txnTimeout struct {
	initial, cur time.Duration
}

func newTxnTimeout(opts ClusterOptions) txnTimeout {
	d := opts.TxnTimeout
	if d <= 0 {
		d = max(opts.SessionTimeout, 10*time.Second)
	}
	return txnTimeout{initial: d, cur: d}
}

// fenced records that a transaction open for elapsed was fenced, and
// reports whether its age explains it (elapsed reached the timeout: the
// broker may have aborted it, and the timeout doubles); otherwise another
// producer initialised the transactional id. elapsed is measured from
// before the transaction's first request, so it is never shorter than
// the broker's view of it.
func (t *txnTimeout) fenced(elapsed time.Duration) (timedOut bool) {
	if elapsed < t.cur {
		return false
	}
	t.cur = min(2*t.cur, maxTxnTimeout)
	return true
}

// refused steps back after the broker refused the timeout as above its
// transaction.max.timeout.ms; it reports whether there is a shorter one
// to try.
func (t *txnTimeout) refused() bool {
	if t.cur <= t.initial {
		return false
	}
	t.cur = max(t.cur/2, t.initial)
	return true
}
