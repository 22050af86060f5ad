package arrowstream

import (
	"fmt"
	"strings"
	"syscall"

	"github.com/arrowstream/arrowstream/arrowstream/access"
	"github.com/arrowstream/arrowstream/internal/clip"
)

// This file applies SessionOptions.Access where sources, sinks and
// checkpoints are created. The options that name files or endpoints are
// recognised by key, whatever the format: a format that reuses a key
// ("path", "host") is confined the same way.

// Access returns the session's resource policy (nil: no restriction).
func (s *Session) Access() *access.Policy { return s.access }

// ConfineDataFile vets a file a file source found while listing against
// the policy's data directories (always nil without a policy). File
// sources call it through an interface, without importing this package.
func (s *Session) ConfineDataFile(path string) error { return s.access.CheckDataFile(path) }

// DialControl is the net.Dialer Control function that enforces the
// session's endpoint policy on every connection a connector makes, after
// name resolution (nil without a policy). Connectors that dial ask for it
// through an interface, without importing this package.
func (s *Session) DialControl() func(network, address string, c syscall.RawConn) error {
	if s.access == nil {
		return nil
	}
	return s.access.Control
}

// checkOptionsAccess checks the options of a source or sink against the
// policy.
func (s *Session) checkOptionsAccess(format string, opts map[string]string) error {
	p := s.access
	if p == nil {
		return nil
	}
	var host, port string
	for k, v := range opts {
		var err error
		switch strings.ToLower(k) {
		case "path":
			_, err = p.CheckDataPath(k, v)
		case "sourcearchivedir":
			_, err = p.CheckDataPath(k, v)
		case "kafka.bootstrap.servers":
			for _, ep := range strings.Split(v, ",") {
				if strings.TrimSpace(ep) == "" {
					continue
				}
				if err = p.CheckEndpoint(k, ep); err != nil {
					break
				}
			}
		case "host":
			host = strings.TrimSpace(v)
		case "port":
			port = strings.TrimSpace(v)
		case "statestore.pebble.localdir", "spark.sql.streaming.statestore.pebble.localdir":
			err = p.CheckLocalDir(k, v)
		}
		if err != nil {
			return fmt.Errorf("%s: %w", format, err)
		}
	}
	if host != "" || port != "" {
		if err := p.CheckEndpoint("host/port", host+":"+port); err != nil {
			return fmt.Errorf("%s: %w", format, err)
		}
	}
	return nil
}

// checkConfAccess checks session settings that name directories.
func (s *Session) checkConfAccess(conf map[string]string) error {
	if s.access == nil {
		return nil
	}
	for k, v := range conf {
		if strings.HasSuffix(strings.ToLower(k), "statestore.pebble.localdir") {
			if err := s.access.CheckLocalDir(k, v); err != nil {
				return err
			}
		}
	}
	return nil
}

// confinedCheckpointDir applies the policy to a query's checkpoint: the
// query name must be a plain directory name, and a checkpointLocation
// must lie under the checkpoint root (a relative one is taken relative to
// it). It returns the location to use ("" when the option is not set).
func (s *Session) confinedCheckpointDir(name string, opts map[string]string) (string, error) {
	loc := ""
	for k, v := range opts {
		if strings.EqualFold(k, "checkpointLocation") && v != "" {
			loc = v
		}
	}
	if s.access == nil {
		return loc, nil
	}
	dir, err := s.access.CheckCheckpoint(name, loc)
	if err != nil {
		// The refusal quotes the name (shortened) already; so does this.
		return "", fmt.Errorf("arrowstream: query %s: %w", clip.Text(name, shownNameBytes), err)
	}
	return dir, nil
}
