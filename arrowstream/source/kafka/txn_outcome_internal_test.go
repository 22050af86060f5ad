package kafka

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"strings"
	"testing"
	"time"

	"github.com/twmb/franz-go/pkg/kfake"
	"github.com/twmb/franz-go/pkg/kgo"
)

// TestTxnOutcomeLog: only an accepted EndTxn with the commit flag set
// counts as a commit; the client's warnings and errors reach the logger,
// its info does not.
func TestTxnOutcomeLog(t *testing.T) {
	for _, tc := range []struct {
		name    string
		msg     string
		keyvals []any
		want    bool
	}{
		{"commit accepted", endTxnAccepted, []any{"transactional_id", "x", "commit", kgo.TryCommit, "producer_id", int64(1)}, true},
		{"commit as a bool", endTxnAccepted, []any{"commit", true}, true},
		{"abort accepted", endTxnAccepted, []any{"transactional_id", "x", "commit", kgo.TryAbort}, false},
		{"no commit key", endTxnAccepted, []any{"transactional_id", "x"}, false},
		{"odd keyvals", endTxnAccepted, []any{"commit"}, false},
		{"commit key of another type", endTxnAccepted, []any{"commit", "true"}, false},
		{"ending, not accepted", "ending transaction", []any{"commit", kgo.TryCommit}, false},
		{"abort for us", "no produce succeeded in this transaction but produces were attempted; issuing an abort to clear any server-side partition registrations", nil, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			o := newTxnOutcome(slog.New(slog.DiscardHandler))
			o.Log(kgo.LogLevelInfo, tc.msg, tc.keyvals...)
			if got := o.committed.Load(); got != tc.want {
				t.Fatalf("committed %v, want %v", got, tc.want)
			}
		})
	}
	var buf bytes.Buffer
	o := newTxnOutcome(slog.New(slog.NewTextHandler(&buf, nil)))
	o.Log(kgo.LogLevelInfo, "beginning transaction")
	o.Log(kgo.LogLevelWarn, "unable to open connection to broker", "broker", 1)
	o.Log(kgo.LogLevelError, "broker did not reply")
	got := buf.String()
	if strings.Contains(got, "beginning") || !strings.Contains(got, "level=WARN msg=\"kafka client: unable to open connection to broker\" broker=1") ||
		!strings.Contains(got, "level=ERROR msg=\"kafka client: broker did not reply\"") {
		t.Fatalf("logged:\n%s", got)
	}
}

// TestCommitTxnSeesCommit runs real transactions against kfake: a commit
// is seen as one (so a franz-go that logged differently would fail every
// commit here, never pass one silently); a transaction whose produce
// failed is aborted by the client inside EndTransaction(TryCommit), which
// returns nil, and commitTxn says it did not commit (the case that lost
// and doubled rows, txn_outcome.go); so is a transaction with nothing in
// it (no EndTxn is sent).
func TestCommitTxnSeesCommit(t *testing.T) {
	c, err := kfake.NewCluster(kfake.NumBrokers(1), kfake.SeedTopics(2, "t"))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	out := newTxnOutcome(slog.New(slog.DiscardHandler))
	cl, err := kgo.NewClient(kgo.SeedBrokers(c.ListenAddrs()...), kgo.TransactionalID("txn-outcome"),
		kgo.RecordPartitioner(kgo.ManualPartitioner()), kgo.UnknownTopicRetries(0), kgo.WithLogger(out))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()

	produce := func(topic string) error {
		if err := cl.BeginTransaction(); err != nil {
			t.Fatal(err)
		}
		var perr error
		done := make(chan struct{})
		cl.Produce(ctx, &kgo.Record{Topic: topic, Partition: 1, Value: []byte("v")}, func(_ *kgo.Record, err error) {
			perr = err
			close(done)
		})
		if err := cl.Flush(ctx); err != nil {
			t.Fatal(err)
		}
		<-done
		return perr
	}

	if err := produce("t"); err != nil {
		t.Fatalf("produce: %v", err)
	}
	if err := commitTxn(ctx, cl, out); err != nil {
		t.Fatalf("a committed transaction: %v", err)
	}

	// The produce fails (no such topic); franz-go then ends the
	// transaction with an abort although a commit was asked for.
	if err := produce("missing"); err == nil {
		t.Fatal("a produce to a missing topic succeeded")
	}
	if err := commitTxn(ctx, cl, out); !errors.Is(err, errTxnNotCommitted) {
		t.Fatalf("a transaction the client aborted: commitTxn returned %v, want errTxnNotCommitted", err)
	}

	if err := cl.BeginTransaction(); err != nil {
		t.Fatal(err)
	}
	if err := commitTxn(ctx, cl, out); !errors.Is(err, errTxnNotCommitted) {
		t.Fatalf("an empty transaction: commitTxn returned %v, want errTxnNotCommitted", err)
	}

	// The client still commits after both.
	if err := produce("t"); err != nil {
		t.Fatalf("produce: %v", err)
	}
	if err := commitTxn(ctx, cl, out); err != nil {
		t.Fatalf("a committed transaction after the others: %v", err)
	}
}
