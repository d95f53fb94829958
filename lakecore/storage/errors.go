package storage

import (
	"errors"
	"io/fs"
)

// ErrExist is returned (wrapped) by WriteExclusive when the target already
// exists; the existing file is left untouched. It is fs.ErrExist so that
// errors.Is works with both.
var ErrExist = fs.ErrExist

// ErrNotExist is returned (wrapped) when a file does not exist. It is
// fs.ErrNotExist so that errors.Is works with both.
var ErrNotExist = fs.ErrNotExist

// ErrAmbiguous is wrapped by WriteExclusive when the outcome is unknown: the
// request may or may not have created the file (a time-out, a dropped
// connection or a server error after the request was sent). The caller must
// read the file before deciding: its own content means the write happened,
// other content means another writer won, no file means nothing happened.
var ErrAmbiguous = errors.New("outcome of write unknown")

// ErrInvalidPath is wrapped when a path breaks the rules of [ValidatePath];
// nothing is read or written.
var ErrInvalidPath = errors.New("invalid path")

// ErrUnsupportedScheme is wrapped by [Open] and [SplitURI] for a URI scheme
// that has no FileIO (for example hdfs:// or oss://).
var ErrUnsupportedScheme = errors.New("unsupported storage scheme")

// ErrClosed is wrapped when a Writer is used after Close or Abort.
var ErrClosed = errors.New("writer already closed")
