// Package localfile writes the private files lakecore keeps on local disk
// (local lookup files, spill files): created exclusively, written once
// through a buffer, closed without fsync (a crash makes them worthless
// anyway) and removed when writing them fails.
package localfile

import (
	"bufio"
	"os"
)

// File is a local file being written. Write to it, then Finish, or Abort
// to remove it. A File is not safe for concurrent use.
type File struct {
	path string
	f    *os.File // nil once finished or aborted
	out  *bufio.Writer
}

// Create creates the file at path, which must not exist, written through
// a buffer of bufSize bytes. Its error is os.OpenFile's.
func Create(path string, bufSize int) (*File, error) {
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err != nil {
		return nil, err
	}
	return &File{path: path, f: f, out: bufio.NewWriterSize(f, bufSize)}, nil
}

// Write writes p through the buffer.
func (f *File) Write(p []byte) (int, error) { return f.out.Write(p) }

// Finish flushes and closes the file, without fsync. On an error the file
// is removed.
func (f *File) Finish() error {
	err := f.out.Flush()
	if cerr := f.f.Close(); err == nil {
		err = cerr
	}
	f.f = nil
	if err != nil {
		_ = os.Remove(f.path)
	}
	return err
}

// Abort closes and removes the file; after Finish or Abort it does
// nothing.
func (f *File) Abort() {
	if f.f == nil {
		return
	}
	_ = f.f.Close()
	_ = os.Remove(f.path)
	f.f = nil
}
