package access

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// fixture is a data root, a checkpoint root and an outside directory with
// links between them.
type fixture struct {
	data, ck, outside string
	p                 *Policy
}

func newFixture(t testing.TB) fixture {
	t.Helper()
	base := t.TempDir()
	f := fixture{data: filepath.Join(base, "data"), ck: filepath.Join(base, "ck"), outside: filepath.Join(base, "outside")}
	for _, d := range []string{f.data, f.ck, f.outside, filepath.Join(f.data, "in")} {
		if err := os.MkdirAll(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	must := func(err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
	}
	must(os.WriteFile(filepath.Join(f.outside, "secret.csv"), []byte("a\n1\n"), 0o644))
	must(os.WriteFile(filepath.Join(f.data, "in", "ok.csv"), []byte("a\n1\n"), 0o644))
	must(os.Symlink(f.outside, filepath.Join(f.data, "escape")))                                   // dir link out
	must(os.Symlink(filepath.Join(f.outside, "secret.csv"), filepath.Join(f.data, "in", "x.csv"))) // file link out
	must(os.Symlink(filepath.Join(f.data, "in"), filepath.Join(f.data, "alias")))                  // link inside
	p, err := New(Config{DataDirs: []string{f.data}, CheckpointRoot: f.ck, AllowConnect: []string{"kafka.example:9092"}, AllowLoopback: true})
	must(err)
	f.p = p
	return f
}

func TestCheckDataPath(t *testing.T) {
	f := newFixture(t)
	cases := []struct {
		path string
		ok   bool
	}{
		{filepath.Join(f.data, "in", "ok.csv"), true},
		{filepath.Join(f.data, "in"), true},
		{filepath.Join(f.data, "alias", "ok.csv"), true},
		{filepath.Join(f.data, "new", "dir", "out"), true}, // a sink's future directory
		{filepath.Join(f.data, "in", "*.txt"), true},       // matches nothing
		{f.data, true},
		{"/etc/passwd", false},
		{"/proc/self/environ", false},
		{filepath.Join(f.outside, "secret.csv"), false},
		{f.data + "/../outside/secret.csv", false},
		{f.data + "/in/../in/ok.csv", false}, // ".." refused outright
		{filepath.Join(f.data, "escape", "secret.csv"), false},
		{filepath.Join(f.data, "escape"), false},
		{filepath.Join(f.data, "escape", "new"), false},
		{filepath.Join(f.data, "in", "x.csv"), false},
		{filepath.Join(f.data, "in", "*.csv"), false}, // a match is a link out
		{filepath.Join(f.data, "esc*", "*.csv"), false},
		{filepath.Join(f.data+"x", "a.csv"), false}, // a sibling sharing the prefix
		{"", false},
		{"a\x00b", false},
	}
	for _, c := range cases {
		_, err := f.p.CheckDataPath("path", c.path)
		if (err == nil) != c.ok {
			t.Errorf("CheckDataPath(%q) = %v, want ok=%v", c.path, err, c.ok)
		}
		if err != nil && !errors.Is(err, ErrDenied) && c.path != "" {
			t.Errorf("CheckDataPath(%q): error %v does not wrap ErrDenied", c.path, err)
		}
		if err != nil && c.path != "" && !strings.Contains(err.Error(), "path") {
			t.Errorf("CheckDataPath(%q): error %q does not name the option", c.path, err)
		}
	}
	_, err := f.p.CheckDataPath("path", "/etc/passwd")
	if !strings.Contains(err.Error(), "/etc/passwd") || !strings.Contains(err.Error(), FlagDataDir) {
		t.Errorf("refusal %q must name the path and %s", err, FlagDataDir)
	}
}

func TestNilPolicyAllowsEverything(t *testing.T) {
	var p *Policy
	if _, err := p.CheckDataPath("path", "/etc/passwd"); err != nil {
		t.Error(err)
	}
	if _, err := p.CheckCheckpoint("../x", "/etc/x"); err != nil {
		t.Error(err)
	}
	if err := p.CheckEndpoint("host", "10.1.2.3:22"); err != nil {
		t.Error(err)
	}
}

func TestNoDataDirsRefusesFiles(t *testing.T) {
	p, err := New(Config{AllowLoopback: true})
	if err != nil {
		t.Fatal(err)
	}
	_, err = p.CheckDataPath("path", t.TempDir())
	if err == nil || !strings.Contains(err.Error(), FlagDataDir) {
		t.Fatalf("got %v, want a refusal naming %s", err, FlagDataDir)
	}
}

func TestCheckCheckpoint(t *testing.T) {
	f := newFixture(t)
	if err := os.Symlink(f.outside, filepath.Join(f.ck, "link")); err != nil {
		t.Fatal(err)
	}
	cases := []struct {
		name, loc string
		ok        bool
	}{
		{"counts", "", true},
		{"../../x", "", false},
		{"a/b", "", false},
		{`a\b`, "", false},
		{"..", "", false},
		{"counts", filepath.Join(f.ck, "counts2"), true},
		{"counts", "sub/dir", true}, // relative to the root
		{"counts", "/etc/x", false},
		{"counts", "../outside", false},
		{"counts", f.ck + "/../outside", false},
		{"counts", filepath.Join(f.ck, "link", "q"), false},
		{"counts", f.ck, false}, // the root itself holds every table
	}
	for _, c := range cases {
		_, err := f.p.CheckCheckpoint(c.name, c.loc)
		if (err == nil) != c.ok {
			t.Errorf("CheckCheckpoint(%q, %q) = %v, want ok=%v", c.name, c.loc, err, c.ok)
		}
	}
	if _, err := f.p.CheckCheckpoint("q", "/etc/x"); err == nil || !strings.Contains(err.Error(), FlagCheckpoint) || !strings.Contains(err.Error(), "/etc/x") {
		t.Errorf("refusal %v must name the location and %s", err, FlagCheckpoint)
	}
}

func TestCheckEndpoint(t *testing.T) {
	f := newFixture(t)
	cases := []struct {
		ep string
		ok bool
	}{
		{"127.0.0.1:9999", true},
		{"localhost:9092", true},
		{"[::1]:80", true},
		{"kafka.example:9092", true},
		{"KAFKA.example:9092", true},
		{"kafka.example:9093", false},
		{"10.0.0.1:22", false},
		{"169.254.169.254:80", false},
		{"example.org", false},
	}
	for _, c := range cases {
		err := f.p.CheckEndpoint("kafka.bootstrap.servers", c.ep)
		if (err == nil) != c.ok {
			t.Errorf("CheckEndpoint(%q) = %v, want ok=%v", c.ep, err, c.ok)
		}
	}
	err := f.p.CheckEndpoint("host", "10.0.0.1:22")
	if !strings.Contains(err.Error(), "10.0.0.1:22") || !strings.Contains(err.Error(), FlagAllowConnect) {
		t.Errorf("refusal %q must name the endpoint and %s", err, FlagAllowConnect)
	}
	noLoop, _ := New(Config{})
	if noLoop.CheckEndpoint("host", "127.0.0.1:1") == nil {
		t.Error("a policy without AllowLoopback allowed a loopback endpoint")
	}
}

func TestNewRejectsBadConfig(t *testing.T) {
	if _, err := New(Config{DataDirs: []string{filepath.Join(t.TempDir(), "missing")}}); err == nil {
		t.Error("a missing data dir was accepted")
	}
	if _, err := New(Config{AllowConnect: []string{"nohost"}}); err == nil {
		t.Error("an endpoint without a port was accepted")
	}
}

// FuzzCheckDataPath: whatever the path, an accepted one resolves inside
// the data root, and nothing panics.
func FuzzCheckDataPath(f *testing.F) {
	fx := newFixture(f)
	for _, s := range []string{"/etc/passwd", fx.data + "/in/ok.csv", fx.data + "/../x", fx.data + "/escape/a", fx.data + "/in/*.csv", "rel/../../x", "\x00", fx.data + "/[", fx.data + "//in//./ok.csv"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, p string) {
		resolved, err := fx.p.CheckDataPath("path", p)
		if err != nil {
			return
		}
		if !within(fx.p.dataRoots[0], resolved) {
			t.Fatalf("accepted %q resolving to %q, outside %s", p, resolved, fx.p.dataRoots[0])
		}
		if hasDotDot(p) {
			t.Fatalf("accepted %q with ..", p)
		}
	})
}
