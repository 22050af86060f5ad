package kafka

import (
	"context"
	"net"
	"syscall"
	"time"

	"github.com/twmb/franz-go/pkg/kgo"
)

// dialController is implemented by registrars whose access policy vets
// connections (arrowstream.Session).
type dialController interface {
	DialControl() func(network, address string, c syscall.RawConn) error
}

// brokerDialTimeout is franz-go's default dial timeout.
const brokerDialTimeout = 10 * time.Second

// dialFunc dials brokers with control vetting each connection's address
// (control may be nil).
func dialFunc(control func(network, address string, c syscall.RawConn) error) func(ctx context.Context, network, host string) (net.Conn, error) {
	d := &net.Dialer{Timeout: brokerDialTimeout, Control: control}
	return d.DialContext
}

// dialOpts are the client options that route broker connections through
// control (none when control is nil).
func dialOpts(control func(network, address string, c syscall.RawConn) error) []kgo.Opt {
	if control == nil {
		return nil
	}
	return []kgo.Opt{kgo.Dialer(dialFunc(control))}
}
