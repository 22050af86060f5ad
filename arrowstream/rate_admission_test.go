package arrowstream

import (
	"context"
	"strings"
	"testing"

	"github.com/arrowstream/arrowstream/arrowstream/source/rate"
)

// TestSQLRateCap: CREATE TABLE ... USING rate with a rate over the cap is
// refused naming the option, the value and the setting; the session
// setting moves the cap.
func TestSQLRateCap(t *testing.T) {
	ctx := context.Background()
	s, _ := newTestSession(t)
	_, err := s.SQL(ctx, "CREATE TABLE huge USING rate OPTIONS (rowsPerSecond '1000000000000')")
	if err == nil || !strings.Contains(err.Error(), "rowsPerSecond=1000000000000") || !strings.Contains(err.Error(), rate.ConfMaxRowsPerSecond) {
		t.Fatalf("huge rate: %v", err)
	}
	_, err = s.SQL(ctx, "CREATE TABLE huge USING `rate-micro-batch` OPTIONS (rowsPerBatch '1000000000000')")
	if err == nil || !strings.Contains(err.Error(), "rowsPerBatch=1000000000000") {
		t.Fatalf("huge rate-micro-batch: %v", err)
	}
	if _, err := s.SQL(ctx, "CREATE TABLE ok USING rate OPTIONS (rowsPerSecond '100')"); err != nil {
		t.Fatal(err)
	}
	s.SetConf(rate.ConfMaxRowsPerSecond, "50")
	if _, err := s.SQL(ctx, "CREATE TABLE slow USING rate OPTIONS (rowsPerSecond '100')"); err == nil || !strings.Contains(err.Error(), "cap of 50") {
		t.Fatalf("lowered cap: %v", err)
	}
	s.SetConf(rate.ConfMaxRowsPerSecond, "lots")
	if _, err := s.SQL(ctx, "CREATE TABLE slow2 USING rate OPTIONS (rowsPerSecond '1')"); err == nil || !strings.Contains(err.Error(), `"lots"`) {
		t.Fatalf("bad setting: %v", err)
	}
}
