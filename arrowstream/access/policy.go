package access

import (
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strings"

	"github.com/arrowstream/arrowstream/internal/clip"
)

// Flag names quoted by refusals (the arrowstream command's flags).
const (
	FlagDataDir      = "--data-dir"
	FlagCheckpoint   = "--checkpoint"
	FlagAllowConnect = "--allow-connect"
)

// ErrDenied is wrapped by every refusal of a Policy.
var ErrDenied = errors.New("access denied")

// Policy confines what a session's sources, sinks and checkpoints may
// touch. Build it with New; a nil *Policy allows everything.
type Policy struct {
	dataRoots     []string // resolved, absolute
	ckRoot        string   // resolved, absolute; "" refuses explicit checkpoint locations
	allowConnect  map[string]bool
	allowAddrs    map[string]bool // listed literal addresses, "ip:port" in net.IP's form
	allowNames    []allowedName   // listed host names
	allowLoopback bool
	resolver      Resolver
}

// Config is what New builds a Policy from.
type Config struct {
	// DataDirs are the directories file sources and sinks may use (and
	// their subdirectories). Empty: no file access at all.
	DataDirs []string
	// CheckpointRoot is the only directory checkpoints may live in.
	CheckpointRoot string
	// AllowConnect lists the host:port endpoints sources and sinks may
	// connect to. A host may be an address or a name; names are compared
	// by the addresses they resolve to when an endpoint is checked and
	// again when a connection is made (Control).
	AllowConnect []string
	// Resolver resolves host names (nil: net.DefaultResolver).
	Resolver Resolver
	// AllowLoopback also allows every endpoint on a loopback address
	// (127.0.0.0/8, ::1, localhost).
	AllowLoopback bool
}

// New resolves the roots of cfg (they must exist) and checks its
// endpoints.
func New(cfg Config) (*Policy, error) {
	p := &Policy{allowConnect: map[string]bool{}, allowAddrs: map[string]bool{}, allowLoopback: cfg.AllowLoopback, resolver: cfg.Resolver}
	if p.resolver == nil {
		p.resolver = net.DefaultResolver
	}
	for _, d := range cfg.DataDirs {
		d = strings.TrimSpace(d)
		if d == "" {
			continue
		}
		r, err := resolveRoot(d)
		if err != nil {
			return nil, fmt.Errorf("access: %s %s: %w", FlagDataDir, d, err)
		}
		p.dataRoots = append(p.dataRoots, r)
	}
	if cfg.CheckpointRoot != "" {
		r, err := resolveRoot(cfg.CheckpointRoot)
		if err != nil {
			return nil, fmt.Errorf("access: %s %s: %w", FlagCheckpoint, cfg.CheckpointRoot, err)
		}
		p.ckRoot = r
	}
	for _, e := range cfg.AllowConnect {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		host, port, err := net.SplitHostPort(e)
		if err != nil || host == "" || port == "" {
			return nil, fmt.Errorf("access: %s %q: want host:port", FlagAllowConnect, e)
		}
		p.addEndpoint(host, port)
	}
	return p, nil
}

// resolveRoot makes a configured root absolute with its links evaluated.
func resolveRoot(d string) (string, error) {
	abs, err := filepath.Abs(d)
	if err != nil {
		return "", err
	}
	r, err := filepath.EvalSymlinks(abs)
	if err != nil {
		return "", err
	}
	st, err := os.Stat(r)
	if err != nil {
		return "", err
	}
	if !st.IsDir() {
		return "", errors.New("not a directory")
	}
	return r, nil
}

// DataRoots returns the resolved data directories.
func (p *Policy) DataRoots() []string {
	if p == nil {
		return nil
	}
	return append([]string(nil), p.dataRoots...)
}

// CheckDataPath checks a file source's or sink's path option (a file, a
// directory or a glob) and returns it resolved. option names the option in
// errors ("path", "sourceArchiveDir").
func (p *Policy) CheckDataPath(option, path string) (string, error) {
	if p == nil {
		return path, nil
	}
	if len(p.dataRoots) == 0 {
		return "", fmt.Errorf("%w: option %s %q: this server allows no file access (start it with %s DIR)", ErrDenied, option, path, FlagDataDir)
	}
	if hasDotDot(path) {
		return "", fmt.Errorf("%w: option %s %q: \"..\" is not allowed in paths; name a path inside the data directories %s (%s)",
			ErrDenied, option, path, strings.Join(p.dataRoots, ", "), FlagDataDir)
	}
	resolved, err := resolve(path)
	if err != nil {
		return "", fmt.Errorf("%w: option %s %q: %v", ErrDenied, option, path, err)
	}
	if !p.inData(resolved) {
		return "", p.outside(option, path, resolved)
	}
	if hasGlob(path) {
		matches, err := filepath.Glob(path)
		if err != nil {
			return "", fmt.Errorf("option %s %q: bad glob: %w", option, path, err)
		}
		for _, m := range matches {
			r, err := resolve(m)
			if err != nil || !p.inData(r) {
				return "", p.outside(option, m, r)
			}
		}
	}
	return resolved, nil
}

// CheckDataFile reports whether a file a source found while listing (a
// glob match or a directory entry that may be a symbolic link) lies inside
// a data root.
func (p *Policy) CheckDataFile(path string) error {
	if p == nil {
		return nil
	}
	r, err := resolve(path)
	if err != nil || !p.inData(r) {
		return p.outside("path", path, r)
	}
	return nil
}

func (p *Policy) outside(option, path, resolved string) error {
	via := ""
	if resolved != "" && resolved != filepath.Clean(path) {
		via = fmt.Sprintf(" (resolves to %s)", resolved)
	}
	return fmt.Errorf("%w: option %s %q%s is outside the data directories %s: add a directory with %s",
		ErrDenied, option, path, via, strings.Join(p.dataRoots, ", "), FlagDataDir)
}

func (p *Policy) inData(resolved string) bool {
	for _, r := range p.dataRoots {
		if within(r, resolved) {
			return true
		}
	}
	return false
}

// CheckCheckpoint checks a query's checkpoint: its name (used as a
// directory under the root) and, when set, its checkpointLocation option.
// It returns the location resolved ("" when none was given).
func (p *Policy) CheckCheckpoint(name, location string) (string, error) {
	if p == nil {
		return location, nil
	}
	if location == "" {
		if err := CheckName(name); err != nil {
			return "", err
		}
		return "", nil
	}
	if p.ckRoot == "" {
		return "", fmt.Errorf("%w: checkpointLocation %q: this server has no checkpoint root (set %s)", ErrDenied, location, FlagCheckpoint)
	}
	if hasDotDot(location) {
		return "", fmt.Errorf("%w: checkpointLocation %q: \"..\" is not allowed; give a directory under the checkpoint root %s (%s)", ErrDenied, location, p.ckRoot, FlagCheckpoint)
	}
	loc := location
	if !filepath.IsAbs(loc) {
		loc = filepath.Join(p.ckRoot, loc)
	}
	r, err := resolve(loc)
	if err != nil {
		return "", fmt.Errorf("%w: checkpointLocation %q: %v", ErrDenied, location, err)
	}
	if !within(p.ckRoot, r) || r == p.ckRoot {
		return "", fmt.Errorf("%w: checkpointLocation %q is outside the checkpoint root %s: use a subdirectory of it (the root is set by %s)",
			ErrDenied, location, p.ckRoot, FlagCheckpoint)
	}
	return r, nil
}

// CheckName checks a table or query name that names a directory under
// the checkpoint root (a streaming table's or a named query's checkpoint,
// a durable static table's rows): filepath.Join resolves "." and ".." and
// a name with a path separator elsewhere, and the OS cannot store NUL.
// It is the one rule: the arrowstream package's table name check calls it
// too. The empty name is not refused: an unnamed query gets a temporary
// checkpoint. A refused name is quoted shortened (names may be long).
func CheckName(name string) error {
	switch {
	case name == "." || name == "..":
		return fmt.Errorf("%w: table name %q cannot name the table's directory under the checkpoint root", ErrDenied, name)
	case strings.ContainsAny(name, `/\`+"\x00"):
		return fmt.Errorf("%w: table name %q contains a path separator or NUL: it cannot name the table's directory under the checkpoint root",
			ErrDenied, clip.Text(name, shownNameBytes))
	}
	return nil
}

// shownNameBytes bounds a refused name quoted in an error.
const shownNameBytes = 64

// CheckLocalDir checks a working directory option (a state store's local
// directory): it must be inside the checkpoint root or a data directory.
func (p *Policy) CheckLocalDir(option, dir string) error {
	if p == nil || dir == "" {
		return nil
	}
	r, err := resolve(dir)
	if err == nil && (p.ckRoot != "" && within(p.ckRoot, r) || p.inData(r)) {
		return nil
	}
	return fmt.Errorf("%w: option %s %q is outside the checkpoint root and the data directories (%s, %s)", ErrDenied, option, dir, FlagCheckpoint, FlagDataDir)
}

// CheckEndpoint checks a host:port a source or sink connects to. option
// names the option in errors.
func (p *Policy) CheckEndpoint(option, hostport string) error {
	if p == nil {
		return nil
	}
	host, port, err := net.SplitHostPort(strings.TrimSpace(hostport))
	if err != nil {
		return fmt.Errorf("%w: option %s %q: not host:port: %v", ErrDenied, option, hostport, err)
	}
	if p.allowConnect[endpointKey(host, port)] {
		return nil
	}
	if p.allowLoopback && isLoopbackHost(host) {
		return nil
	}
	if p.endpointAllowedByAddress(host, port) {
		return nil
	}
	allowed := "loopback addresses"
	if !p.allowLoopback {
		allowed = "no endpoints"
	}
	if len(p.allowConnect) > 0 {
		allowed += " and the listed endpoints"
	}
	return fmt.Errorf("%w: option %s: endpoint %s is not allowed (this server allows %s): add it with %s %s",
		ErrDenied, option, net.JoinHostPort(host, port), allowed, FlagAllowConnect, net.JoinHostPort(host, port))
}

func endpointKey(host, port string) string {
	return net.JoinHostPort(strings.ToLower(strings.Trim(host, "[]")), port)
}

// isLoopbackHost is true for literal loopback addresses and "localhost".
// Other names are resolved by endpointAllowedByAddress, and connections
// checked again by Control.
func isLoopbackHost(host string) bool {
	if strings.EqualFold(host, "localhost") {
		return true
	}
	ip := net.ParseIP(strings.Trim(host, "[]"))
	return ip != nil && ip.IsLoopback()
}
