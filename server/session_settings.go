package server

import (
	"context"
	"maps"
	"sync"

	"google.golang.org/grpc/peer"
)

// Settings are the SET values of one client session (spark.sql.ansi.enabled,
// spark.sql.session.timeZone, ...). A Flight SQL session is a client
// connection: every ADBC, JDBC or Flight SQL connection is one gRPC
// channel over one TCP connection, so its SETs apply to its own
// statements only, and end with it. Safe for concurrent use.
type Settings struct {
	mu   sync.Mutex
	conf map[string]string
}

// Set stores a setting (the engine checks it first).
func (s *Settings) Set(key, value string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.conf == nil {
		s.conf = map[string]string{}
	}
	s.conf[key] = value
}

// Get returns a setting and whether the session set it.
func (s *Settings) Get(key string) (string, bool) {
	s.mu.Lock()
	defer s.mu.Unlock()
	v, ok := s.conf[key]
	return v, ok
}

// Snapshot is a copy of the session's settings.
func (s *Settings) Snapshot() map[string]string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return maps.Clone(s.conf)
}

// sessionSettings holds the Settings of the open connections, keyed by
// the client's address (unique among open connections). An entry is made
// on a connection's first statement and dropped when the connection
// closes, so the map is bounded by the open connections.
type sessionSettings struct {
	mu    sync.Mutex
	conns map[string]*Settings
}

func newSessionSettings() *sessionSettings {
	return &sessionSettings{conns: map[string]*Settings{}}
}

// forCall returns the Settings of the calling connection, or nil when the
// call has no peer (an in-process call without a connection).
func (ss *sessionSettings) forCall(ctx context.Context) *Settings {
	p, ok := peer.FromContext(ctx)
	if !ok || p.Addr == nil {
		return nil
	}
	key := p.Addr.String()
	ss.mu.Lock()
	defer ss.mu.Unlock()
	s := ss.conns[key]
	if s == nil {
		s = &Settings{}
		ss.conns[key] = s
	}
	return s
}

// closed forgets the settings of the connection from addr.
func (ss *sessionSettings) closed(addr string) {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	delete(ss.conns, addr)
}

// open is the number of connections with settings (for tests).
func (ss *sessionSettings) open() int {
	ss.mu.Lock()
	defer ss.mu.Unlock()
	return len(ss.conns)
}
