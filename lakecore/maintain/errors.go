package maintain

import "errors"

// Sentinel errors of the maintenance operations. Test with errors.Is; the
// message around them names the table and what went wrong.
var (
	// ErrInvalidOptions is returned (wrapped) when the options of a call or
	// the table options it reads are inconsistent: num-retained.min < 1,
	// num-retained.max < num-retained.min, a negative limit, no
	// partition.expiration-time, an older_than in the future and the like.
	// Nothing was changed.
	ErrInvalidOptions = errors.New("invalid maintenance options")

	// ErrUnsupported is returned (wrapped) for a table whose maintenance
	// needs machinery lakecore does not implement: the update-time
	// partition expiration strategy, compaction of tables with deletion vectors, Compact of a
	// primary-key table (the lakecore facade compacts those itself).
	// Nothing was changed; run the operation with Java Paimon.
	ErrUnsupported = errors.New("unsupported by lakecore maintenance")

	// ErrIncomplete is returned (wrapped), together with a complete Report,
	// when an operation finished its work but some files it meant to delete
	// could not be deleted. The table is consistent; the files are left as
	// orphans for RemoveOrphanFiles. The Report lists how many.
	ErrIncomplete = errors.New("some files could not be deleted")

	// ErrUnsafe is returned (wrapped) by RemoveOrphanFiles when a file that
	// a live snapshot or tag refers to cannot be read: cleaning on would risk
	// deleting files that are in use, so nothing was deleted.
	ErrUnsafe = errors.New("refusing to clean: referenced metadata unreadable")
)
