package pebblestore

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if goroutines are left running after
// them (Pebble's background work must end with Close).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m)
}
