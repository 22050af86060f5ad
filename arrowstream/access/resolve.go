package access

import (
	"errors"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// maxLinkHops bounds the symbolic links followed while resolving a path.
const maxLinkHops = 40

func hasGlob(p string) bool { return strings.ContainsAny(p, "*?[") }

// hasDotDot reports a ".." element in a path as written.
func hasDotDot(p string) bool {
	for _, e := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == filepath.Separator }) {
		if e == ".." {
			return true
		}
	}
	return false
}

// within reports whether path is root or below it (both resolved).
func within(root, path string) bool {
	rel, err := filepath.Rel(root, path)
	if err != nil {
		return false
	}
	return rel == "." || (rel != ".." && !strings.HasPrefix(rel, ".."+string(filepath.Separator)) && !filepath.IsAbs(rel))
}

// resolve makes p absolute and evaluates the symbolic links of its longest
// existing prefix. The part after the first glob element, and the part
// that does not exist yet, are appended cleaned: a glob element cannot
// contain a separator, so the result's prefix bounds every match's
// directory (the matches themselves are checked separately, since a match
// may be a link).
func resolve(p string) (string, error) {
	if p == "" {
		return "", errors.New("empty path")
	}
	if strings.ContainsRune(p, 0) {
		return "", errors.New("path contains NUL")
	}
	abs, err := filepath.Abs(p)
	if err != nil {
		return "", err
	}
	// Cut at the first element with glob characters.
	parts := strings.Split(abs, string(filepath.Separator))
	fixed := parts
	var rest []string
	for i, e := range parts {
		if hasGlob(e) {
			fixed, rest = parts[:i], parts[i:]
			break
		}
	}
	base := filepath.Clean(string(filepath.Separator) + filepath.Join(fixed...))
	// Walk up to the longest existing prefix.
	var missing []string
	cur := base
	for {
		_, err := os.Lstat(cur)
		if err == nil {
			break
		}
		if !errors.Is(err, fs.ErrNotExist) {
			return "", err
		}
		parent := filepath.Dir(cur)
		if parent == cur {
			break
		}
		missing = append([]string{filepath.Base(cur)}, missing...)
		cur = parent
	}
	real, err := filepath.EvalSymlinks(cur)
	if err != nil {
		return "", err
	}
	// filepath.Abs cleaned "..", so missing and rest hold none: the
	// result cannot climb above real.
	out := filepath.Join(append(append([]string{real}, missing...), rest...)...)
	return out, nil
}
