package checkpoint

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
)

// QueryMetadata is the checkpoint's metadata file: the stable query id.
type QueryMetadata struct {
	ID string `json:"id"`
}

// LoadOrCreateMetadata reads <checkpoint>/metadata, creating it with a new
// random id when the checkpoint is new. The file is written once and never
// overwritten; a concurrent creator wins and its id is returned.
func LoadOrCreateMetadata(checkpointDir string, w *Writer) (QueryMetadata, error) {
	if err := w.MkdirAll(checkpointDir); err != nil {
		return QueryMetadata{}, err
	}
	path := filepath.Join(checkpointDir, "metadata")
	m, err := readMetadata(path)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		return m, err
	}
	m = QueryMetadata{ID: NewUUID()}
	data, _ := json.Marshal(m)
	if err := w.WriteFile(path, data, false); err != nil && !errors.Is(err, ErrExists) {
		return QueryMetadata{}, err
	}
	return readMetadata(path)
}

func readMetadata(path string) (QueryMetadata, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return QueryMetadata{}, err
	}
	var m QueryMetadata
	if err := json.Unmarshal(data, &m); err != nil || m.ID == "" {
		return QueryMetadata{}, fmt.Errorf("checkpoint: %s: not a query metadata file ({\"id\":...}): %w", path, ErrCorrupt)
	}
	return m, nil
}

// NewUUID returns a random (version 4) UUID string.
func NewUUID() string {
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(fmt.Sprintf("checkpoint: crypto/rand failed: %v", err))
	}
	b[6] = b[6]&0x0f | 0x40
	b[8] = b[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", b[0:4], b[4:6], b[6:8], b[8:10], b[10:16])
}
