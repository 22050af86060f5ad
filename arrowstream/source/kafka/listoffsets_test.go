package kafka

import (
	"errors"
	"testing"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// TestOnlyUnknownTopics: a listing whose failed pieces all say
// UNKNOWN_TOPIC_OR_PARTITION (a topic deleted after the client's metadata)
// is usable; any other failure is an error.
func TestOnlyUnknownTopics(t *testing.T) {
	unknown := kadm.ShardError{Err: kerr.UnknownTopicOrPartition}
	other := kadm.ShardError{Err: kerr.NotLeaderForPartition}
	for _, c := range []struct {
		name string
		err  error
		want bool
	}{
		{"unknown topic", &kadm.ShardErrors{Errs: []kadm.ShardError{unknown, unknown}}, true},
		{"mixed", &kadm.ShardErrors{Errs: []kadm.ShardError{unknown, other}}, false},
		{"other", &kadm.ShardErrors{Errs: []kadm.ShardError{other}}, false},
		{"no pieces", &kadm.ShardErrors{}, false},
		{"plain error", errors.New("connection refused"), false},
	} {
		if got := onlyUnknownTopics(c.err); got != c.want {
			t.Errorf("%s: got %v, want %v", c.name, got, c.want)
		}
	}
}
