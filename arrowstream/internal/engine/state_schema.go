package engine

import (
	"path/filepath"
	"strconv"

	"github.com/arrowstream/arrowstream/checkpoint"
)

// stateSchemaRecorder is implemented by executors with stateful operators.
// A new checkpoint in the v2 layout records their state schemas in its
// metadata file, which the query writes anyway when it is created
// (checkpoint.QueryMetadata.StateSchemas), instead of one
// state/<op>/_metadata/schema file per operator written in the first
// epoch: that file cost three directories and a file created per
// operator (each 0.2-0.5 ms of CPU on ext4) and is only read back when
// the query restarts, to refuse a changed query's state.
type stateSchemaRecorder interface {
	// StateSchemas returns the state schema of every stateful operator
	// the plan may run, by operator id (decimal); nil without any.
	StateSchemas() map[string]string
	// UseRecordedStateSchemas gives the checkpoint's metadata, read or
	// just created, from which later epochs check the operators' schemas.
	UseRecordedStateSchemas(checkpointDir string, meta checkpoint.QueryMetadata)
}

// recordsStateSchemas reports whether a checkpoint created by w records
// the state schemas in its metadata: the v2 layout does; Spark's v1
// layout (one file per epoch in offsets/ and commits/) keeps Spark's
// state/<op>/_metadata/schema files.
func recordsStateSchemas(w *checkpoint.Writer) bool {
	return w == nil || w.LogFormat != 1
}

// StateSchemas implements stateSchemaRecorder. The copies of a shared
// subplan (shared_subplan.go) are listed too: whether they run is settled
// by the first epoch's conf, and their ids are the same either way.
func (e *streamExec) StateSchemas() map[string]string {
	if e.state == nil || len(e.state.ops) == 0 {
		return nil
	}
	m := make(map[string]string, len(e.state.ops))
	for _, op := range e.state.ops {
		m[strconv.Itoa(op.decl.OpID)] = op.decl.Schema
	}
	return m
}

// UseRecordedStateSchemas implements stateSchemaRecorder.
func (e *streamExec) UseRecordedStateSchemas(checkpointDir string, meta checkpoint.QueryMetadata) {
	if e.state == nil {
		return
	}
	e.state.recordedDir = checkpointDir
	e.state.recorded = meta
}

// recordedSchema returns the state schema of operator opID recorded in the
// metadata of checkpointDir, and the metadata file's path.
func (l *stateLifecycle) recordedSchema(checkpointDir string, opID int) (schema, path string, ok bool) {
	if l.recordedDir == "" || filepath.Clean(l.recordedDir) != filepath.Clean(checkpointDir) {
		return "", "", false
	}
	schema, ok = l.recorded.StateSchema(opID)
	return schema, filepath.Join(checkpointDir, "metadata"), ok
}
