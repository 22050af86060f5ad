package main

import (
	"errors"
	"fmt"
	"net"
	"syscall"
)

// addrInUse explains a listen error on an address another process holds:
// it names the flag that sets the address and a port that was free a
// moment ago (probed by listening on port 0). Other errors come back
// unchanged.
func addrInUse(flagName, addr string, err error) error {
	if !errors.Is(err, syscall.EADDRINUSE) {
		return err
	}
	host, _, splitErr := net.SplitHostPort(addr)
	if splitErr != nil {
		host = "127.0.0.1"
	}
	hint := fmt.Sprintf("pass --%s HOST:PORT with a free port (port 0 picks one)", flagName)
	if free, ok := probeFreePort(host); ok {
		hint = fmt.Sprintf("pass --%s %s (free now), or --%s %s to pick any free port",
			flagName, net.JoinHostPort(host, free), flagName, net.JoinHostPort(host, "0"))
	}
	return fmt.Errorf("%w\n(another process listens on --%s %s: %s)", err, flagName, addr, hint)
}

// probeFreePort asks the system for a free port on host.
func probeFreePort(host string) (string, bool) {
	ln, err := net.Listen("tcp", net.JoinHostPort(host, "0"))
	if err != nil {
		return "", false
	}
	defer ln.Close()
	_, port, err := net.SplitHostPort(ln.Addr().String())
	return port, err == nil
}
