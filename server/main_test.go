package server

import (
	"testing"

	"go.uber.org/goleak"
)

// TestMain fails the package's tests if goroutines are left running
// after them (servers stopped, streams ended, clients closed).
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// The ADBC Flight SQL driver (v1.1.0) leaks the gRPC ClientConn of
		// a Database.Open whose login fails: getFlightClient returns the
		// AuthenticateBasicToken error without closing the client it made.
		// TestAuthADBCAndPreparedStatementOwnership checks that failure.
		// A ClientConn never closed keeps its callback serializers (three
		// goroutines with this top function) after its transport ends.
		// Our own clients are closed by t.Cleanup in flightClient,
		// sqlClient and adbcConn.
		goleak.IgnoreTopFunction("google.golang.org/grpc/internal/grpcsync.(*CallbackSerializer).run"),
	)
}
