package main

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if goroutines are left running
// after them.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// The ADBC Flight SQL driver (v1.1.0) keeps a client per endpoint
		// location in a cache that Connection.Close does not purge (the
		// entries expire after 5 minutes): TestClusterAcceptance reads a
		// multi-endpoint FlightInfo through it. A ClientConn never closed
		// keeps its callback serializers (this top function).
		goleak.IgnoreTopFunction("google.golang.org/grpc/internal/grpcsync.(*CallbackSerializer).run"),
	)
}
