package commit

import (
	"errors"
	"fmt"
)

// Sentinel errors of the committer. Test with errors.Is; the message around
// them names the table, the snapshot id and what went wrong.
var (
	// ErrConflict is returned (wrapped) by a COMPACT or OVERWRITE commit, or
	// an APPEND that deletes files, when the latest snapshot no longer
	// allows it: a file to delete is not live any more (another compaction
	// or overwrite removed it), the commit adds and deletes the same file, or
	// the total bucket count of a partition would change. It is not retried
	// (Paimon's "files conflict", ConflictDetection.checkConflicts); the
	// caller must re-plan, e.g. compact again from the new snapshot. Nothing
	// was committed.
	ErrConflict = errors.New("commit conflict")

	// ErrSequenceConflict is returned (wrapped, with ErrConflict) by the
	// commit of new files of a primary-key table when another writer
	// committed records to one of its buckets after this writer restored
	// the bucket: both numbered their records from the same point, and
	// their sequence numbers would not order the changes
	// (apache/paimon#5872). Nothing was committed. Rewrite the batch with a
	// new writer, which restores the bucket again and numbers after the
	// other writer's records.
	ErrSequenceConflict = fmt.Errorf("%w: another writer wrote to the bucket", ErrConflict)

	// ErrIndexConflict is returned (wrapped, with ErrConflict) by the
	// commit of a dynamic-bucket writer (bucket = -1) when the HASH index
	// files of a partition it wrote new keys to changed since it restored
	// them, or when one commit carries two writers' new keys of one
	// partition (Message.IndexBase): another writer assigned buckets to
	// keys of the partition meanwhile, and the two may have put one key in
	// two buckets, which readers would return twice. Nothing was committed. Dynamic-bucket
	// tables take one writer at a time (Java: "Dynamic Bucket only support
	// single write job"); rewrite the batch with a new writer, which
	// restores the partition's index again.
	ErrIndexConflict = fmt.Errorf("%w: another writer assigned dynamic buckets in the partition", ErrConflict)

	// ErrRetriesExhausted is returned (wrapped) when another writer took the
	// snapshot id on every attempt until commit.max-retries or
	// commit.timeout ran out. Nothing was committed (unless the error also
	// wraps ErrCommitAmbiguous). Committing the same messages again with the
	// same identifier is safe after FilterCommitted.
	ErrRetriesExhausted = errors.New("commit retries exhausted")

	// ErrCompactionConflict is returned (wrapped) by Commit and Overwrite
	// when the append part was committed, and is returned as the snapshot,
	// but the compaction part of the same messages conflicted with another
	// writer's commit and was not: the new data is in the table, the
	// compaction outputs are unreferenced files (remove-orphan-files deletes
	// them). Treat the batch as committed; a writer whose compaction failed
	// must be replaced, since its view of the bucket's levels is stale. It
	// does not wrap ErrConflict, which means nothing was committed.
	ErrCompactionConflict = errors.New("compaction dropped after a conflict; the append part was committed")

	// ErrCommitAmbiguous is returned (wrapped) when the committer gave up
	// (context done, retries exhausted) right after a snapshot write whose
	// outcome it could not learn: the snapshot may or may not exist. Call
	// FilterCommitted (or snapshot.Manager.FindCommit) before committing the
	// same identifier again. The files of such an attempt are never deleted.
	ErrCommitAmbiguous = errors.New("commit outcome unknown")

	// ErrStaleSnapshot is wrapped when a snapshot this committer created
	// turned out to sit on a stale base: snapshot expiry had deleted an
	// earlier snapshot of the same id, so the exclusive create succeeded
	// although the table had moved on (see chain.go). A snapshot proven
	// stale is deleted and the commit retried; when it cannot be told, the
	// error returned also wraps ErrCommitAmbiguous.
	ErrStaleSnapshot = errors.New("snapshot created on a stale base")

	// ErrInvalidMessage is returned (wrapped) for commit messages that
	// cannot be committed as given: a partition that does not decode with
	// the table's partition keys, files outside the partitions being
	// overwritten, compaction input in a plain Compact call and the like.
	ErrInvalidMessage = errors.New("invalid commit message")
)
