package lookupfile

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// DirPrefix starts the name of every directory a Dir creates.
const DirPrefix = "paimon-lookup-"

// orphanAge is how old a directory without a lock file must be before
// OpenDir removes it: its creator died between creating it and locking it,
// or is doing so right now.
const orphanAge = 10 * time.Minute

// Dir is the directory of one writer's local lookup files, or of the
// spill files of its write buffer (package spillfile), or of those of a
// pg_cdc input's streamed transactions: a directory of its own under a base
// directory, as Java's IOManager makes paimon-io-<uuid>
// under its temp dirs for both. The owner holds an exclusive
// flock(2) on the directory's LOCK file for as long as the Dir is open;
// the kernel drops it when the process dies, however it dies. OpenDir
// removes every directory of that name under the same base whose lock it
// can take, so the files of a crashed process last only until the next
// writer starts, and never hold table state (they are copies of remote
// data files, or of changes a replication slot sends again). On systems without flock(2) directories of dead processes
// are not found: remove them by hand.
//
// A Dir is not safe for concurrent use.
type Dir struct {
	path string
	lock *os.File
	next int64
}

// OpenDir creates a directory of its own under base (os.TempDir() when
// empty; created if missing), after removing the directories of processes
// that no longer hold them.
func OpenDir(base string) (*Dir, error) {
	if base == "" {
		base = os.TempDir()
	}
	if err := os.MkdirAll(base, 0o700); err != nil {
		return nil, fmt.Errorf("local lookup directory: %w", err)
	}
	removeStale(base)
	p, err := os.MkdirTemp(base, DirPrefix+"*")
	if err != nil {
		return nil, fmt.Errorf("local lookup directory: %w", err)
	}
	// Locked under another name first: a cleaner only takes LOCK, so it
	// never sees the file between its creation and its lock.
	tmp := filepath.Join(p, "LOCK.tmp")
	f, err := os.OpenFile(tmp, os.O_RDWR|os.O_CREATE|os.O_EXCL, 0o600)
	if err == nil {
		if err = lockFile(f, true); err == nil {
			err = os.Rename(tmp, filepath.Join(p, "LOCK"))
		}
		if err != nil {
			_ = f.Close()
		}
	}
	if err != nil {
		_ = os.RemoveAll(p)
		return nil, fmt.Errorf("local lookup directory %s: %w", p, err)
	}
	return &Dir{path: p, lock: f}, nil
}

// removeStale removes the directories under base that a Dir created and
// no live process holds, best effort.
func removeStale(base string) {
	entries, err := os.ReadDir(base)
	if err != nil {
		return
	}
	for _, e := range entries {
		if !e.IsDir() || !strings.HasPrefix(e.Name(), DirPrefix) {
			continue
		}
		p := filepath.Join(base, e.Name())
		f, err := os.OpenFile(filepath.Join(p, "LOCK"), os.O_RDWR, 0)
		if errors.Is(err, os.ErrNotExist) {
			if info, err := e.Info(); err == nil && time.Since(info.ModTime()) > orphanAge {
				_ = os.RemoveAll(p)
			}
			continue
		}
		if err != nil {
			continue
		}
		if lockFile(f, false) == nil {
			// Removed while locked: a concurrent cleaner cannot take it.
			_ = os.RemoveAll(p)
		}
		_ = f.Close()
	}
}

// Path is the directory's path.
func (d *Dir) Path() string { return d.path }

// NewPath returns the path of a new file in the directory whose name ends
// with name (characters other than letters, digits, '-', '_' and '.'
// replaced).
func (d *Dir) NewPath(name string) string {
	d.next++
	clean := strings.Map(func(r rune) rune {
		if r == '-' || r == '_' || r == '.' || r >= '0' && r <= '9' || r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' {
			return r
		}
		return '_'
	}, name)
	return filepath.Join(d.path, strconv.FormatInt(d.next, 10)+"-"+clean)
}

// Close removes the directory with every file in it and releases it.
func (d *Dir) Close() error {
	if d.lock == nil {
		return nil
	}
	err := os.RemoveAll(d.path)
	_ = d.lock.Close() // releases the lock
	d.lock = nil
	if err != nil {
		return fmt.Errorf("remove local lookup directory: %w", err)
	}
	return nil
}
