package checkpoint

import (
	"crypto/rand"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
)

// QueryMetadata is the checkpoint's metadata file: the stable query id.
type QueryMetadata struct {
	ID string `json:"id"`
	// Version is the file's format version; absent (0) means 1, the only
	// one so far. A later format sets it, and this build refuses it.
	Version int `json:"version,omitempty"`
	// StateSchemas are the state schemas of the query's stateful
	// operators, by operator id (decimal), recorded when the checkpoint
	// was created. They replace the state/<op>/_metadata/schema file
	// Spark writes in the first epoch: three directories and a file per
	// operator that a run never reads back (an optional field: a build
	// without it ignores it and writes the files). Absent in checkpoints
	// written before, and for operators the query gained later.
	StateSchemas map[string]string `json:"stateSchemas,omitempty"`
}

// StateSchema returns the state schema recorded for operator opID.
func (m QueryMetadata) StateSchema(opID int) (string, bool) {
	s, ok := m.StateSchemas[strconv.Itoa(opID)]
	return s, ok
}

// MetadataVersion is the newest metadata file format this build reads.
const MetadataVersion = 1

// LoadOrCreateMetadata reads <checkpoint>/metadata, creating it with a new
// random id when the checkpoint is new. The file is written once and never
// overwritten; a concurrent creator wins and its id is returned.
func LoadOrCreateMetadata(checkpointDir string, w *Writer) (QueryMetadata, error) {
	return LoadOrCreateMetadataWith(checkpointDir, w, nil)
}

// LoadOrCreateMetadataWith is LoadOrCreateMetadata that records
// stateSchemas (QueryMetadata.StateSchemas) in a metadata file it
// creates; an existing file is returned as it is.
func LoadOrCreateMetadataWith(checkpointDir string, w *Writer, stateSchemas map[string]string) (QueryMetadata, error) {
	if err := w.MkdirAll(checkpointDir); err != nil {
		return QueryMetadata{}, err
	}
	path := filepath.Join(checkpointDir, "metadata")
	m, err := readMetadata(path)
	if err == nil || !errors.Is(err, os.ErrNotExist) {
		return m, err
	}
	m = QueryMetadata{ID: NewUUID(), StateSchemas: stateSchemas}
	data, _ := json.Marshal(m)
	if err := w.WriteSealedFile(path, data, false); err != nil && !errors.Is(err, ErrExists) {
		return QueryMetadata{}, err
	}
	return readMetadata(path)
}

func readMetadata(path string) (QueryMetadata, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return QueryMetadata{}, err
	}
	return parseMetadata(path, data)
}

// parseMetadata decodes a metadata file: Spark's JSON, sealed with a
// checksum trailer (Seal) since the trailer existed, so that a damaged
// byte that still leaves a well-formed id (one hex digit for another) is
// caught rather than silently changing the query's identity. A file
// written before has no trailer; its id must at least be a well-formed
// UUID.
func parseMetadata(path string, data []byte) (QueryMetadata, error) {
	data, _, err := Unseal(path, data)
	if err != nil {
		return QueryMetadata{}, err
	}
	var m QueryMetadata
	if err := json.Unmarshal(data, &m); err != nil || m.ID == "" {
		return QueryMetadata{}, fmt.Errorf("checkpoint: %s: not a query metadata file ({\"id\":...}): %w", path, ErrCorrupt)
	}
	if m.Version > MetadataVersion || m.Version < 0 {
		return QueryMetadata{}, newerFormat(path, "metadata", m.Version, MetadataVersion)
	}
	if !isUUID(m.ID) {
		return QueryMetadata{}, fmt.Errorf("checkpoint: %s: query id %q is not a UUID (damaged file?): %w", path, m.ID, ErrCorrupt)
	}
	return m, nil
}

// isUUID checks the 8-4-4-4-12 hex layout (any version, either case).
func isUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case '0' <= c && c <= '9', 'a' <= c && c <= 'f', 'A' <= c && c <= 'F':
		default:
			return false
		}
	}
	return true
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
