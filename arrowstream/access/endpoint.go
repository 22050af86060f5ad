package access

import (
	"context"
	"fmt"
	"net"
	"strings"
	"syscall"
	"time"
)

// Resolver looks up the addresses of a host name (net.DefaultResolver
// is one).
type Resolver interface {
	LookupHost(ctx context.Context, host string) ([]string, error)
}

// resolveTimeout bounds one name lookup of the policy.
const resolveTimeout = 5 * time.Second

// allowedName is a host name of --allow-connect with its port.
type allowedName struct{ host, port string }

// addEndpoint records one --allow-connect entry: a literal address as
// an address, a name as a name (resolved whenever it is compared, so that
// a name whose addresses change keeps working).
func (p *Policy) addEndpoint(host, port string) {
	p.allowConnect[endpointKey(host, port)] = true
	if ip := net.ParseIP(strings.Trim(host, "[]")); ip != nil {
		p.allowAddrs[net.JoinHostPort(ip.String(), port)] = true
		return
	}
	p.allowNames = append(p.allowNames, allowedName{strings.ToLower(host), port})
}

// lookup resolves host to IP addresses.
func (p *Policy) lookup(ctx context.Context, host string) ([]net.IP, error) {
	ctx, cancel := context.WithTimeout(ctx, resolveTimeout)
	defer cancel()
	addrs, err := p.resolver.LookupHost(ctx, host)
	if err != nil {
		return nil, err
	}
	ips := make([]net.IP, 0, len(addrs))
	for _, a := range addrs {
		if ip := net.ParseIP(a); ip != nil {
			ips = append(ips, ip)
		}
	}
	if len(ips) == 0 {
		return nil, fmt.Errorf("%s has no IP addresses", host)
	}
	return ips, nil
}

// allowedAddr reports whether connecting to ip:port is allowed: a
// loopback address (with AllowLoopback), a listed address, or an address
// a listed name of that port resolves to now.
func (p *Policy) allowedAddr(ctx context.Context, ip net.IP, port string) bool {
	if p.allowLoopback && ip.IsLoopback() {
		return true
	}
	if p.allowAddrs[net.JoinHostPort(ip.String(), port)] {
		return true
	}
	for _, n := range p.allowNames {
		if n.port != port {
			continue
		}
		ips, err := p.lookup(ctx, n.host)
		if err != nil {
			continue
		}
		for _, x := range ips {
			if x.Equal(ip) {
				return true
			}
		}
	}
	return false
}

// endpointAllowedByAddress is CheckEndpoint's comparison of resolved
// addresses: a literal address is compared with the listed addresses and
// what listed names resolve to; an unlisted name is allowed when every
// address it resolves to is (the connection is checked again when it is
// made: Control).
func (p *Policy) endpointAllowedByAddress(host, port string) bool {
	ctx := context.Background()
	if ip := net.ParseIP(strings.Trim(host, "[]")); ip != nil {
		return p.allowedAddr(ctx, ip, port)
	}
	ips, err := p.lookup(ctx, host)
	if err != nil {
		return false
	}
	for _, ip := range ips {
		if !p.allowedAddr(ctx, ip, port) {
			return false
		}
	}
	return true
}

// Control is a net.Dialer Control function that enforces the policy on
// the address a connection is actually made to, after name resolution:
// a name that resolved to an allowed address when a table was created
// and resolves elsewhere now (DNS rebinding) is refused here. Connectors
// that dial (socket, Kafka) use it when the session has a policy.
func (p *Policy) Control(network, address string, _ syscall.RawConn) error {
	if p == nil {
		return nil
	}
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return fmt.Errorf("%w: connect to %q: not host:port: %v", ErrDenied, address, err)
	}
	ip := net.ParseIP(host)
	if ip == nil {
		return fmt.Errorf("%w: connect to %s: not an IP address", ErrDenied, address)
	}
	if p.allowedAddr(context.Background(), ip, port) {
		return nil
	}
	return fmt.Errorf("%w: connect to %s (%s) refused: the address is not loopback, not listed in %s and not an address of a listed name now (a name that resolves elsewhere than when it was checked is refused)",
		ErrDenied, address, network, FlagAllowConnect)
}
