package lakecore

import (
	"errors"

	"github.com/benthos-paimon/benthos-paimon/lakecore/read"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"

	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
)

// Errors callers of the facade branch on (test with errors.Is). Most are the
// sentinels of the package that detects the condition, re-exported so that
// users of the facade need not import those packages.
var (
	// ErrTableNotFound is returned (wrapped) by OpenTable and Open when the
	// table has no schema file.
	ErrTableNotFound = schema.ErrTableNotFound

	// ErrTableExists is returned (wrapped) by CreateTable when the table
	// already exists, including when another writer created it first.
	ErrTableExists = schema.ErrTableExists

	// ErrPrimaryKeyTable is returned (wrapped) by the operations lakecore
	// does not offer on a table with primary keys: the append writer
	// (NewWriter; use NewKeyValueWriter).
	ErrPrimaryKeyTable = schema.ErrPrimaryKeyTable

	// ErrUnsupported is returned (wrapped) by OpenTable and CreateTable for
	// a table that uses a feature lakecore does not implement, such as ORC
	// manifests (manifest.format=orc).
	ErrUnsupported = schema.ErrUnsupported

	// ErrSnapshotNotFound is returned (wrapped) when a requested snapshot
	// does not exist (never written, or expired).
	ErrSnapshotNotFound = snapshot.ErrSnapshotNotFound

	// ErrSnapshotExpired is returned (wrapped) by a stream whose next
	// snapshot expired before it was read.
	ErrSnapshotExpired = scan.ErrSnapshotExpired

	// ErrEndOfScan is returned by a bounded stream once it is done.
	ErrEndOfScan = scan.ErrEndOfScan

	// ErrInvalidName is returned (wrapped) for a database or table name that
	// cannot be a directory name: empty, ".", "..", or containing "/", "\"
	// or a NUL byte.
	ErrInvalidName = errors.New("invalid database or table name")
)

// IsPermanent reports whether err is one that retrying the same operation
// cannot fix, so a caller should stop rather than retry: the table does
// not exist (for a caller that does not create it), its schema is invalid
// or uses a feature lakecore does not implement (ErrUnsupported, an
// unsupported data file, a primary-key table where it is not supported),
// an invalid name, or a storage error storage.IsPermanent reports (missing
// bucket, access denied). Damaged files are not: a damaged snapshot,
// manifest or data file can be repaired, and the reader must not end its
// read early (a schema file that does not parse counts as invalid:
// schema files are written whole, once); nor are time-outs, refused
// connections and 5xx answers.
func IsPermanent(err error) bool {
	for _, target := range []error{ErrTableNotFound, schema.ErrInvalidSchema, ErrUnsupported, read.ErrUnsupportedFile,
		ErrPrimaryKeyTable, ErrInvalidName} {
		if errors.Is(err, target) {
			return true
		}
	}
	return storage.IsPermanent(err)
}
