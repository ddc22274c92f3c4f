package file

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"time"
)

// source is where the scanner reads the directory from: the operating
// system's filesystem, or an fs.FS.
type source interface {
	// readDir lists the directory, sorted by name.
	readDir() ([]fs.DirEntry, error)
	// stat describes a file of the directory, following symlinks.
	stat(name string) (fs.FileInfo, error)
	// open opens a file of the directory for reading.
	open(name string) (fs.File, error)
	// path names a file of the directory in errors and logs.
	path(name string) string
}

// osSource is a directory of the operating system's filesystem.
type osSource struct{ dir string }

func (s osSource) readDir() ([]fs.DirEntry, error)       { return os.ReadDir(s.dir) }
func (s osSource) stat(name string) (fs.FileInfo, error) { return os.Stat(s.path(name)) }
func (s osSource) open(name string) (fs.File, error)     { return os.Open(s.path(name)) }
func (s osSource) path(name string) string               { return filepath.Join(s.dir, name) }

// fsSource is a directory of an fs.FS.
type fsSource struct {
	fsys fs.FS
	dir  string
}

func (s fsSource) readDir() ([]fs.DirEntry, error)       { return fs.ReadDir(s.fsys, s.dir) }
func (s fsSource) stat(name string) (fs.FileInfo, error) { return fs.Stat(s.fsys, s.path(name)) }
func (s fsSource) open(name string) (fs.File, error)     { return s.fsys.Open(s.path(name)) }
func (s fsSource) path(name string) string               { return path.Join(s.dir, name) }

// racyWindow is how far in the past a file's modification time must be for
// its size and modification time to vouch for its contents. A file changed
// again within the timestamp granularity of its filesystem (up to 2s on
// FAT, a kernel tick elsewhere) may keep both; such a recent file is read
// and compared by content instead.
const racyWindow = 2 * time.Second

// sameFile reports whether info describes the very file last read, as
// described then by old, unchanged since: same file (device and inode), size,
// mode and modification time. It is false for files of an fs.FS, which
// cannot tell.
func sameFile(old, info fs.FileInfo) bool {
	return old != nil && old.Size() == info.Size() && old.Mode() == info.Mode() &&
		old.ModTime().Equal(info.ModTime()) && os.SameFile(old, info)
}

// tooLarge is the error for a file over the size limit, of the given size
// when known (zero when not).
func tooLarge(size, limit int64) error {
	if size > 0 {
		return fmt.Errorf("%w: %d bytes, over the limit of %d bytes", ErrTooLarge, size, limit)
	}
	return fmt.Errorf("%w: over the limit of %d bytes", ErrTooLarge, limit)
}

// readFile reads a file of src, refusing one larger than limit bytes (no
// limit when limit <= 0). It returns the description of the file opened,
// which is the one read even if the name now leads elsewhere.
func readFile(src source, name string, limit int64) ([]byte, fs.FileInfo, error) {
	f, err := src.open(name)
	if err != nil {
		return nil, nil, err
	}
	defer f.Close()
	info, err := f.Stat()
	if err != nil {
		return nil, nil, err
	}
	if !info.Mode().IsRegular() {
		return nil, nil, errors.New("not a regular file")
	}
	size := info.Size()
	if limit > 0 && size > limit {
		return nil, nil, tooLarge(size, limit)
	}
	var buf bytes.Buffer
	buf.Grow(int(size) + 512) // a file may grow while read
	r := io.Reader(f)
	if limit > 0 {
		r = io.LimitReader(f, limit+1)
	}
	if _, err := buf.ReadFrom(r); err != nil {
		return nil, nil, err
	}
	if limit > 0 && int64(buf.Len()) > limit {
		return nil, nil, tooLarge(0, limit) // it grew: its size is unknown
	}
	return buf.Bytes(), info, nil
}
