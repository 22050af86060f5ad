package arrowstream

import (
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/arrowstream/arrowstream/plan"
)

// TestSessionRefusesSubscribe: SUBSCRIBE never ends, so a session does
// not answer it with a result; the error says where it is served.
func TestSessionRefusesSubscribe(t *testing.T) {
	s := NewSession(SessionOptions{})
	_, err := s.SQL(context.Background(), "SUBSCRIBE counts SINCE EPOCH 3")
	if !errors.Is(err, plan.ErrUnsupported) || !strings.Contains(err.Error(), "SUBSCRIBE counts: a subscription never ends, so it is served over Flight SQL") {
		t.Fatalf("got %v", err)
	}
}
