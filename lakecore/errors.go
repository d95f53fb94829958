package lakecore

import (
	"errors"

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
