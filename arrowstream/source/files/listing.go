package files

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
)

// fileInfo is a file the source found (and logs in its seen-files log).
type fileInfo struct {
	Path    string `json:"path"`
	Size    int64  `json:"size"`
	MtimeMs int64  `json:"modificationTime"`
}

// hidden reports names that listings skip: temp files, the sink's
// manifest directory and other tools' metadata (Spark skips names that
// start with _ or .).
func hidden(name string) bool {
	return strings.HasPrefix(name, ".") || strings.HasPrefix(name, "_")
}

// listFiles lists the files path names: a file, the files of a directory,
// or the files matched by a glob (and of the directories it matches). A
// directory written by the file sink is listed through its manifest: only
// committed files. A path that does not exist yet lists nothing.
//
// confine, when not nil, vets every glob match and the path itself (either
// may be a symbolic link leading out of the directories a server allows):
// a refused one fails the listing. Directory entries need no check, since
// listDir skips symbolic links.
func listFiles(path string, confine func(string) error) ([]fileInfo, error) {
	matches := []string{path}
	if hasGlob(path) {
		var err error
		if matches, err = filepath.Glob(path); err != nil {
			return nil, fmt.Errorf("files: path %s: %w", path, err)
		}
	}
	var out []fileInfo
	for _, m := range matches {
		if hidden(filepath.Base(m)) && m != path {
			continue
		}
		if confine != nil {
			if err := confine(m); err != nil {
				return nil, fmt.Errorf("files: %w", err)
			}
		}
		st, err := os.Stat(m)
		if errors.Is(err, fs.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("files: %w", err)
		}
		if !st.IsDir() {
			out = append(out, fileInfo{Path: m, Size: st.Size(), MtimeMs: st.ModTime().UnixMilli()})
			continue
		}
		files, err := listDir(m)
		if err != nil {
			return nil, err
		}
		out = append(out, files...)
	}
	return out, nil
}

func hasGlob(p string) bool { return strings.ContainsAny(p, "*?[") }

// listDir lists the visible files of dir, or its committed files when it
// has a manifest.
func listDir(dir string) ([]fileInfo, error) {
	if m, ok, err := readManifest(dir); err != nil || ok {
		return m, err
	}
	ents, err := os.ReadDir(dir)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("files: %w", err)
	}
	var out []fileInfo
	for _, e := range ents {
		if hidden(e.Name()) || e.IsDir() {
			continue
		}
		info, err := e.Info()
		if errors.Is(err, fs.ErrNotExist) {
			continue // removed since ReadDir
		}
		if err != nil {
			return nil, fmt.Errorf("files: %w", err)
		}
		if !info.Mode().IsRegular() {
			continue
		}
		out = append(out, fileInfo{Path: filepath.Join(dir, e.Name()), Size: info.Size(), MtimeMs: info.ModTime().UnixMilli()})
	}
	return out, nil
}
