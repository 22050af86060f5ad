package files

import (
	"bufio"
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/arrowstream/arrowstream/checkpoint"
)

// ManifestDir is the file sink's manifest log directory inside its output
// directory (Spark's _spark_metadata): entry <epoch> lists the files the
// epoch committed, one JSON object per line.
const ManifestDir = "_arrowstream_metadata"

// manifestFile is one line of a manifest entry. Path is relative to the
// output directory, so that the directory can be moved.
type manifestFile struct {
	Path    string `json:"path"`
	Size    int64  `json:"size"`
	Rows    int64  `json:"rows"`
	MtimeMs int64  `json:"modificationTime"`
}

func encodeManifest(files []manifestFile) []byte {
	var b bytes.Buffer
	for _, f := range files {
		line, _ := json.Marshal(f)
		b.Write(line)
		b.WriteByte('\n')
	}
	return b.Bytes()
}

func decodeManifest(where string, body []byte) ([]manifestFile, error) {
	var out []manifestFile
	sc := bufio.NewScanner(bytes.NewReader(body))
	sc.Buffer(nil, 1<<20)
	for sc.Scan() {
		if len(bytes.TrimSpace(sc.Bytes())) == 0 {
			continue
		}
		var f manifestFile
		if err := json.Unmarshal(sc.Bytes(), &f); err != nil {
			return nil, fmt.Errorf("files: manifest %s: %w", where, err)
		}
		if f.Path == "" || f.Path == "." || f.Path == ".." || filepath.IsAbs(f.Path) || filepath.Base(f.Path) != f.Path {
			return nil, fmt.Errorf("files: manifest %s: bad file name %q", where, f.Path)
		}
		out = append(out, f)
	}
	return out, sc.Err()
}

// readManifest returns the committed files of a sink output directory,
// and false when dir has no manifest.
func readManifest(dir string) ([]fileInfo, bool, error) {
	mdir := filepath.Join(dir, ManifestDir)
	if st, err := os.Stat(mdir); errors.Is(err, fs.ErrNotExist) || (err == nil && !st.IsDir()) {
		return nil, false, nil
	}
	log, err := checkpoint.OpenLog(mdir, &checkpoint.Writer{NoSync: true})
	if err != nil {
		return nil, false, err
	}
	epochs, err := log.Epochs()
	if err != nil {
		return nil, false, err
	}
	var out []fileInfo
	for _, e := range epochs {
		body, ok, err := log.Get(e)
		if err != nil {
			return nil, false, err
		}
		if !ok {
			continue
		}
		files, err := decodeManifest(fmt.Sprintf("%s/%d", mdir, e), body)
		if err != nil {
			return nil, false, err
		}
		for _, f := range files {
			out = append(out, fileInfo{Path: filepath.Join(dir, f.Path), Size: f.Size, MtimeMs: f.MtimeMs})
		}
	}
	return out, true, nil
}
