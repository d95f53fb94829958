// Package storage is the single seam through which lakecore touches files:
// a small FileIO interface with a local-disk and an S3 implementation chosen
// by the warehouse URI's scheme, and a fault-injecting wrapper for tests.
//
// Paths are slash-separated and relative to the FileIO's root (the
// warehouse), for example "default.db/t/snapshot/snapshot-1". They never
// start with "/" and never contain "." or ".." elements.
package storage

import (
	"context"
	"errors"
	"io"
	"io/fs"
	"time"
)

// ErrExist is returned by WriteExclusive when the target already exists.
// It is fs.ErrExist so that errors.Is works with both.
var ErrExist = fs.ErrExist

// ErrNotExist is returned (wrapped) when a file does not exist. It is
// fs.ErrNotExist so that errors.Is works with both.
var ErrNotExist = fs.ErrNotExist

// ErrAmbiguous is wrapped by WriteExclusive when the outcome is unknown: the
// request may or may not have created the file (a time-out or a dropped
// connection after the request was sent). Callers must check before retrying.
var ErrAmbiguous = errors.New("outcome of write unknown")

// FileInfo describes one file or, in a non-recursive listing, one directory.
type FileInfo struct {
	// Path relative to the FileIO root.
	Path    string
	Size    int64
	ModTime time.Time
	IsDir   bool
}

// File is an open file for random-access reads.
type File interface {
	io.ReaderAt
	io.Closer
	// Size is the file length in bytes.
	Size() int64
}

// Writer streams a new file. Nothing is visible at the path until Close
// returns nil; Abort discards what was written. Exactly one of Close or
// Abort must be called.
type Writer interface {
	io.Writer
	// Close publishes the file, replacing any file at the path.
	Close() error
	// Abort discards the file; it is safe to call after a failed Close.
	Abort() error
	// Written is the number of bytes written so far.
	Written() int64
}

// FileIO is the storage of one warehouse. Implementations are safe for
// concurrent use.
type FileIO interface {
	// Open opens path for reading. A missing file gives an error wrapping
	// ErrNotExist.
	Open(ctx context.Context, path string) (File, error)
	// ReadFile reads the whole file.
	ReadFile(ctx context.Context, path string) ([]byte, error)
	// Create starts writing path; the file appears atomically on Close.
	Create(ctx context.Context, path string) (Writer, error)
	// WriteFile writes data to path atomically, replacing any file there.
	WriteFile(ctx context.Context, path string, data []byte) error
	// WriteExclusive creates path with data only if nothing exists there;
	// otherwise it returns an error wrapping ErrExist and leaves the
	// existing file untouched. It never exposes a partial file. On a
	// local disk it uses link(2); on S3 a PUT with If-None-Match: "*".
	// When the outcome is unknown the error wraps ErrAmbiguous.
	WriteExclusive(ctx context.Context, path string, data []byte) error
	// Stat describes path; a missing file gives an error wrapping
	// ErrNotExist.
	Stat(ctx context.Context, path string) (FileInfo, error)
	// List returns the entries under dir sorted by path. Non-recursive
	// listings include subdirectories (IsDir); recursive listings return
	// files only. A missing directory is an empty listing, not an error.
	List(ctx context.Context, dir string, recursive bool) ([]FileInfo, error)
	// Delete removes path; deleting a missing file is not an error.
	Delete(ctx context.Context, path string) error
	// String names the root, for error messages ("file:///lake", "s3://b/p").
	String() string
}

// Exists reports whether path exists.
func Exists(ctx context.Context, fio FileIO, path string) (bool, error) {
	_, err := fio.Stat(ctx, path)
	if err == nil {
		return true, nil
	}
	if errors.Is(err, ErrNotExist) {
		return false, nil
	}
	return false, err
}
