// Package storage is the single seam through which lakecore touches files:
// a small FileIO interface with a local-disk ([Local]) and an S3 ([S3])
// implementation chosen by the warehouse URI's scheme ([Open]). Test
// machinery lives beside it, not in it: package storage/faultfs wraps any
// FileIO to inject faults, and storage/memfs is an in-memory FileIO that
// simulates crashes (unsynced changes lost) at every mutating step.
//
// Paths are slash-separated and relative to the FileIO's root (the
// warehouse), for example "default.db/t/snapshot/snapshot-1". They never
// start with "/" and never contain empty, "." or ".." elements
// ([ValidatePath]); a bad path fails with [ErrInvalidPath] before any I/O.
//
// Directories exist on a local disk but not on S3, where they are only key
// prefixes. Code that must run on both never relies on an empty directory
// and asks List, not Stat, whether a directory has entries.
//
// The exclusive create of WriteExclusive is the commit point of Paimon's
// protocol (paimon-format.md §10): snapshot-N and schema-N are published
// with it. Java's FileIO.tryToWriteAtomic (apache/paimon:
// paimon-common/src/main/java/org/apache/paimon/fs/FileIO.java) writes a
// temporary file and renames it; on a local disk that rename is
// check-then-act across processes, so we use renameat2(RENAME_NOREPLACE) or
// link(2) instead, and on S3 a conditional PUT.
package storage

import (
	"context"
	"errors"
	"io"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"
)

// FileInfo describes one file or, in a non-recursive listing, one directory.
type FileInfo struct {
	// Path relative to the FileIO root, without a trailing slash.
	Path string
	// Size in bytes; 0 for directories.
	Size    int64
	ModTime time.Time
	IsDir   bool
}

// File is an open file for random-access reads. ReadAt may be called from
// several goroutines at once. ReadAt follows io.ReaderAt: a read reaching
// past the end returns the bytes there are and io.EOF.
type File interface {
	io.ReaderAt
	io.Closer
	// Size is the file length in bytes, fixed when the file was opened.
	Size() int64
}

// Writer streams a new file. Nothing is visible at the path until Close
// returns nil; Abort discards what was written. Exactly one of Close or
// Abort must be called (Abort after a failed Close is allowed and cleans
// up). A Writer is not safe for concurrent use.
type Writer interface {
	io.Writer
	// Close publishes the file, replacing any file at the path. After an
	// error nothing new is visible at the path, with one exception: a
	// failure to make the publication durable (a directory fsync) after the
	// file became visible.
	Close() error
	// Abort discards the file; it is safe to call after a failed Close and
	// is a no-op after a successful one.
	Abort() error
	// Written is the number of bytes accepted by Write so far.
	Written() int64
}

// FileIO is the storage of one warehouse. Implementations are safe for
// concurrent use. Every error names the operation and the full location
// (file:///lake/a/b or s3://bucket/prefix/a/b).
type FileIO interface {
	// Open opens path for reading. A missing file gives an error wrapping
	// ErrNotExist. ctx may also govern the reads of the File (it does on
	// S3, where every ReadAt is a request), so keep it alive while reading.
	Open(ctx context.Context, path string) (File, error)
	// ReadFile reads the whole file. A missing file gives an error wrapping
	// ErrNotExist.
	ReadFile(ctx context.Context, path string) ([]byte, error)
	// Create starts writing path; the file appears atomically on Close.
	// ctx governs the whole life of the Writer, including Close.
	Create(ctx context.Context, path string) (Writer, error)
	// WriteFile writes data to path atomically, replacing any file there.
	WriteFile(ctx context.Context, path string, data []byte) error
	// WriteExclusive creates path with data only if nothing exists there;
	// otherwise it returns an error wrapping ErrExist and leaves the
	// existing file untouched. It never exposes a partial file. On a
	// local disk it uses renameat2(RENAME_NOREPLACE) or link(2); on S3 a
	// PUT with If-None-Match: "*". When the outcome is unknown the error
	// wraps ErrAmbiguous (see there); any other error means nothing was
	// written.
	WriteExclusive(ctx context.Context, path string, data []byte) error
	// Stat describes path; a missing file gives an error wrapping
	// ErrNotExist. On S3 a key prefix ("directory") is missing too.
	Stat(ctx context.Context, path string) (FileInfo, error)
	// List returns the entries under dir ("" = the root) sorted by path.
	// Non-recursive listings include subdirectories (IsDir); recursive
	// listings return files only. A missing directory is an empty
	// listing, not an error.
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

// ListVersioned returns, in ascending order, the n of every file
// dir/<prefix><n> (n decimal digits, no sign), as Java's
// FileUtils.listVersionedFiles (apache/paimon:
// paimon-common/src/main/java/org/apache/paimon/utils/FileUtils.java) lists
// schema-N and snapshot-N. Other names, such as hint files and hidden
// temporary files (".snapshot-3.<uuid>.tmp"), are ignored; a missing
// directory has none.
func ListVersioned(ctx context.Context, fio FileIO, dir, prefix string) ([]int64, error) {
	infos, err := fio.List(ctx, dir, false)
	if err != nil {
		return nil, err
	}
	var ids []int64
	for _, fi := range infos {
		if fi.IsDir {
			continue
		}
		rest, ok := strings.CutPrefix(path.Base(fi.Path), prefix)
		if !ok || rest == "" || strings.Trim(rest, "0123456789") != "" {
			continue
		}
		if id, err := strconv.ParseInt(rest, 10, 64); err == nil {
			ids = append(ids, id)
		}
	}
	slices.Sort(ids)
	return ids, nil
}

// The implementations.
var (
	_ FileIO = (*Local)(nil)
	_ FileIO = (*S3)(nil)
)
