package snapshot

import "errors"

var (
	// ErrSnapshotNotFound is returned (wrapped) by Manager.Get when
	// snapshot-<id> does not exist: never written, or expired.
	ErrSnapshotNotFound = errors.New("snapshot not found")

	// ErrSnapshotExists is returned (wrapped, together with
	// storage.ErrExist) by Manager.Commit when another writer created
	// snapshot-<id> first: re-read the latest snapshot and retry with the
	// next id.
	ErrSnapshotExists = errors.New("snapshot already exists")

	// ErrInvalidSnapshot is wrapped by errors about a snapshot (or tag) file
	// that does not parse, misses a required key, has an unknown commitKind,
	// or holds another id than its name; and by Commit for a snapshot that
	// must not be written.
	ErrInvalidSnapshot = errors.New("invalid snapshot")

	// ErrInvalidConsumer is wrapped by errors about a consumer id ("" or
	// containing "/") or a consumer file that does not parse.
	ErrInvalidConsumer = errors.New("invalid consumer")

	// ErrTagNotFound is returned (wrapped) by TagManager.Get for a missing
	// tag.
	ErrTagNotFound = errors.New("tag not found")

	// ErrTagExists is returned (wrapped) by TagManager.Create for a name
	// that already has a tag (Java: "Tag '<name>' already exists.").
	ErrTagExists = errors.New("tag already exists")

	// ErrInvalidTag is wrapped by errors about a tag name that cannot name
	// a tag file (blank, or containing "/").
	ErrInvalidTag = errors.New("invalid tag name")
)
