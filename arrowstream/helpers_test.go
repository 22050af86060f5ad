package arrowstream

import (
	"testing"
	"time"

	"github.com/apache/arrow/go/v17/arrow"

	"github.com/arrowstream/arrowstream/vector"
)

var valueSchema = arrow.NewSchema([]arrow.Field{{Name: "value", Type: vector.Int32, Nullable: true}}, nil)

// waitFor polls cond until it holds; generous deadline (CI runs loaded).
func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached within 30s")
		}
		time.Sleep(time.Millisecond)
	}
}
