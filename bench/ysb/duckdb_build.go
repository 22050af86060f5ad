package ysb

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"time"
)

// BuildDuckDBPeer builds the peer program pkg (for example
// "./cmd/ysbpeer") of the DuckDB module in dir into a temporary directory
// and returns the binary and a cleanup. When the module does not build
// (missing go.sum entries, a broken cgo toolchain, no network for a
// module download) it returns no binary and skip, the reason, so that the
// benchmark skips the peer instead of failing; err is only for a
// cancelled context.
func BuildDuckDBPeer(ctx context.Context, dir, pkg string) (bin string, cleanup func(), skip string, err error) {
	tmp, err := os.MkdirTemp("", "duckdbpeer-")
	if err != nil {
		return "", nil, fmt.Sprintf("no temporary directory for the peer binary: %v", err), nil
	}
	cleanup = func() { os.RemoveAll(tmp) }
	ctx, cancel := context.WithTimeout(ctx, 15*time.Minute) // a cold cgo build takes minutes
	defer cancel()
	bin = filepath.Join(tmp, filepath.Base(pkg))
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, pkg)
	cmd.Dir = dir
	var out bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if berr := cmd.Run(); berr != nil {
		cleanup()
		if ctx.Err() != nil && context.Cause(ctx) != context.DeadlineExceeded {
			return "", nil, "", ctx.Err()
		}
		return "", nil, fmt.Sprintf("the DuckDB peer does not build (go build %s in %s: %v): %s", pkg, dir, berr, lastLines(out.String(), 5)), nil
	}
	return bin, cleanup, "", nil
}
