package pebblestore

import (
	"github.com/cockroachdb/pebble/v2/vfs"
)

// noSyncFS is the file system of the working Pebble directories: fsync is
// a no-op there, because that directory is never recovered after a crash
// (a restart rebuilds it from the checkpoint). Durability is the upload's
// job: it fsyncs every file it puts into the checkpoint.
type noSyncFS struct{ vfs.FS }

func (fs noSyncFS) Create(name string, c vfs.DiskWriteCategory) (vfs.File, error) {
	return wrapNoSync(fs.FS.Create(name, c))
}

func (fs noSyncFS) Open(name string, opts ...vfs.OpenOption) (vfs.File, error) {
	return wrapNoSync(fs.FS.Open(name, opts...))
}

func (fs noSyncFS) OpenReadWrite(name string, c vfs.DiskWriteCategory, opts ...vfs.OpenOption) (vfs.File, error) {
	return wrapNoSync(fs.FS.OpenReadWrite(name, c, opts...))
}

func (fs noSyncFS) OpenDir(name string) (vfs.File, error) {
	return wrapNoSync(fs.FS.OpenDir(name))
}

func (fs noSyncFS) ReuseForWrite(oldname, newname string, c vfs.DiskWriteCategory) (vfs.File, error) {
	return wrapNoSync(fs.FS.ReuseForWrite(oldname, newname, c))
}

func wrapNoSync(f vfs.File, err error) (vfs.File, error) {
	if err != nil {
		return nil, err
	}
	return noSyncFile{f}, nil
}

type noSyncFile struct{ vfs.File }

func (noSyncFile) Sync() error                { return nil }
func (noSyncFile) SyncData() error            { return nil }
func (noSyncFile) SyncTo(int64) (bool, error) { return true, nil }
