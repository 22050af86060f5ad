package sql

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if goroutines are left running
// after them.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
