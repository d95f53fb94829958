package paimon

import (
	"path/filepath"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

// Snapshot discovery without polling delay.
//
// A reader that has caught up waits discovery_interval before it looks for
// the next snapshot again, so a commit is seen up to one interval late. On
// a local warehouse (Linux) the reader also watches the table's snapshot
// directory with inotify and looks as soon as a file is created or renamed
// into it (a new snapshot-N, or the LATEST hint); the interval stays the
// fallback, and the only mechanism on local disks of other systems. On
// S3 and other non-local storage the reader probes for the next snapshot
// instead (probe.go). A watch that cannot be set up (the directory does
// not exist before the first commit) is tried again at the next wait.

// snapshotDir is the local directory of tbl's snapshots, or "" when the
// table is not on a local disk.
func snapshotDir(tbl *lakecore.Table) string {
	l, ok := tbl.FileIO().(*storage.Local)
	if !ok {
		return ""
	}
	return filepath.Join(l.Root(), filepath.FromSlash(tbl.Path()), "snapshot")
}
