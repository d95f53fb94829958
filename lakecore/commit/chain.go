package commit

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore/internal/pause"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

// Stale ("ghost") snapshots.
//
// The exclusive create of snapshot-N guards against another writer's
// snapshot-N only while that file exists. Snapshot expiry deletes snapshot
// files, so a writer that read latest = N-1, and then took long enough for
// others to commit N, N+1, ... and for an expiry (snapshot.num-retained.min
// 1, say) to delete N, creates snapshot-N "successfully": a snapshot built
// on a stale base, below the retained ones, that no later snapshot
// continues. Its rows are not in the table, yet the writer would report
// them committed; worse, its LATEST hint (trusted while N+1 is absent)
// would make other writers build on it, and on manifests expiry deleted.
// Java's RenamingSnapshotCommit has the same window.
//
// So after creating snapshot-N, and before writing the LATEST hint, the
// committer confirms that N continues the table:
//   - no snapshot above N exists: N is the latest, hence not stale (expiry
//     never deletes the latest snapshot, so once the old N was deleted some
//     snapshot above N exists at every moment after); see confirm for how
//     that is checked with two small reads;
//   - else the lowest snapshot M above N is read: if N's delta manifests are
//     in M's base manifest list, or M's base manifests that N's lists do not
//     have (merged ones) hold an ADD of a file N added, M continues N;
//   - if not and M = N+1 while N added files, N is proven stale (N+1 always
//     carries the previous snapshot's ADDs in its base); so it is when N
//     only deleted files (partition expiry's OVERWRITE) and one of them is
//     live in N+1 (a deleted file never comes back in an append table). Its
//     file is deleted, nothing references its other files, and the commit
//     is retried from the new latest snapshot;
//   - otherwise (M > N+1: an expiry is deleting the snapshots between, or N
//     added no files) the outcome is unknown: snapshot-N is deleted when
//     M > N+1 (it is being expired either way), the files stay, and the
//     commit ends with ErrCommitAmbiguous for the caller to resolve.

// chainVerdict is the outcome of confirming a created snapshot.
type chainVerdict int

const (
	continues chainVerdict = iota // the table continues from it
	stale                         // proven stale: nothing continues from it
	unclear                       // cannot tell
)

// ownFiles describes what one snapshot of this committer references: its
// base and delta manifest names and the data files its delta adds and
// deletes.
type ownFiles struct {
	base, delta   []string
	adds, deletes map[string]bool
}

func addedFiles(entries []manifest.Entry) map[string]bool {
	return filesOfKind(entries, manifest.FileKindAdd)
}

func filesOfKind(entries []manifest.Entry, kind manifest.FileKind) map[string]bool {
	out := map[string]bool{}
	for i := range entries {
		if entries[i].Kind == kind {
			out[entries[i].File.FileName] = true
		}
	}
	return out
}

// readOwnFiles reads ownFiles of a snapshot this committer created in an
// earlier attempt (found by FindCommit).
func (c *Committer) readOwnFiles(ctx context.Context, s *snapshot.Snapshot) (ownFiles, error) {
	var o ownFiles
	base, err := c.manifests.ReadList(ctx, manifest.BaseList(s))
	if err != nil {
		return o, err
	}
	delta, err := c.manifests.ReadList(ctx, manifest.DeltaList(s))
	if err != nil {
		return o, err
	}
	o.base, o.delta, o.adds, o.deletes = fileNames(base), fileNames(delta), map[string]bool{}, map[string]bool{}
	for i := range delta {
		entries, err := c.readEntries(ctx, &delta[i])
		if err != nil {
			return o, err
		}
		for f := range addedFiles(entries) {
			o.adds[f] = true
		}
		for f := range filesOfKind(entries, manifest.FileKindDelete) {
			o.deletes[f] = true
		}
	}
	return o, nil
}

// confirm decides whether s, a snapshot this committer created, continues
// the table (see "Stale snapshots" above). It also returns the lowest
// snapshot id above s found (0 if none). An error means it could not tell.
//
// The common case costs two small reads: snapshot-(N+1) does not exist and
// the LATEST hint is at most N. A stale N always has a snapshot above it;
// if that is not N+1, N+1 was expired, which takes a snapshot above N+1
// whose writer wrote LATEST right after creating it (a hint write that
// failed, or is not yet visible, leaves that case undetected).
func (c *Committer) confirm(ctx context.Context, s *snapshot.Snapshot, own ownFiles) (chainVerdict, int64, error) {
	// The reads are retried: a transient storage error must not turn a
	// commit that landed into an unknown outcome.
	wait := 50 * time.Millisecond
	for try := 1; ; try++ {
		v, next, err := c.confirmOnce(ctx, s, own)
		if err == nil || try == confirmAttempts || ctx.Err() != nil {
			return v, next, err
		}
		if pause.For(ctx, wait) != nil {
			return v, next, err
		}
		wait *= 2
	}
}

// confirmAttempts bounds the tries of confirm.
const confirmAttempts = 4

func (c *Committer) confirmOnce(ctx context.Context, s *snapshot.Snapshot, own ownFiles) (chainVerdict, int64, error) {
	next := s.ID + 1
	there, err := c.snapshots.Exists(ctx, next)
	if err != nil {
		return unclear, 0, err
	}
	if !there {
		// A hint that cannot be read is not a missing one: it may name the
		// snapshot that shows s to be stale.
		h, ok, err := c.snapshots.ReadLatestHint(ctx)
		if err != nil {
			return unclear, 0, err
		}
		if !ok || h <= s.ID {
			return continues, 0, nil
		}
		if next, err = c.lowestAbove(ctx, s.ID); err != nil || next == 0 {
			return continues, 0, err
		}
	}
	for attempt := 0; ; attempt++ {
		m, err := c.snapshots.Get(ctx, next)
		if errors.Is(err, snapshot.ErrSnapshotNotFound) && attempt < 3 {
			// Expired meanwhile: look again.
			if next, err = c.lowestAbove(ctx, s.ID); err != nil || next == 0 {
				return continues, 0, err
			}
			continue
		}
		if err != nil {
			return unclear, next, err
		}
		v, err := c.continuesFrom(ctx, m, own)
		switch {
		case err != nil:
			return unclear, next, err
		case v:
			return continues, next, nil
		case next == s.ID+1 && len(own.adds) > 0:
			return stale, next, nil
		case next == s.ID+1 && len(own.deletes) > 0:
			back, err := c.keepsDeleted(ctx, m, own)
			switch {
			case err != nil:
				return unclear, next, err
			case back:
				return stale, next, nil
			}
			return unclear, next, nil
		default:
			return unclear, next, nil
		}
	}
}

// keepsDeleted reports whether a file own deleted is live in m: then m does
// not continue the snapshot own describes.
func (c *Committer) keepsDeleted(ctx context.Context, m *snapshot.Snapshot, own ownFiles) (bool, error) {
	live, err := c.liveEntries(ctx, m, nil)
	if err != nil {
		return false, fmt.Errorf("read the live files of snapshot %d: %w", m.ID, err)
	}
	for i := range live {
		if own.deletes[live[i].File.FileName] {
			return true, nil
		}
	}
	return false, nil
}

// lowestAbove returns the lowest snapshot id above id, 0 if there is none.
func (c *Committer) lowestAbove(ctx context.Context, id int64) (int64, error) {
	ids, err := c.snapshots.ListIDs(ctx)
	if err != nil {
		return 0, err
	}
	next := int64(0)
	for _, x := range ids {
		if x > id && (next == 0 || x < next) {
			next = x
		}
	}
	return next, nil
}

// continuesFrom reports whether m's base manifests carry what own added.
func (c *Committer) continuesFrom(ctx context.Context, m *snapshot.Snapshot, own ownFiles) (bool, error) {
	metas, err := c.manifests.ReadList(ctx, manifest.BaseList(m))
	if err != nil {
		return false, fmt.Errorf("read the base manifest list of snapshot %d: %w", m.ID, err)
	}
	in := make(map[string]bool, len(metas))
	for _, mm := range metas {
		in[mm.FileName] = true
	}
	if len(own.delta) > 0 {
		all := true
		for _, n := range own.delta {
			all = all && in[n]
		}
		if all {
			return true, nil
		}
	}
	if len(own.adds) == 0 {
		return false, nil
	}
	mine := map[string]bool{}
	for _, n := range own.base {
		mine[n] = true
	}
	for _, n := range own.delta {
		mine[n] = true
	}
	for i := range metas {
		if mine[metas[i].FileName] {
			continue
		}
		entries, err := c.readEntries(ctx, &metas[i])
		if err != nil {
			return false, fmt.Errorf("read manifest %s of snapshot %d: %w", metas[i].FileName, m.ID, err)
		}
		for j := range entries {
			if entries[j].Kind == manifest.FileKindAdd && own.adds[entries[j].File.FileName] {
				return true, nil
			}
		}
	}
	return false, nil
}

// settle acts on the verdict about s, a snapshot this committer created:
// it writes the LATEST hint when s continues the table, deletes s when it
// is stale (or unclear while expiry is deleting the snapshots above it), and
// returns a non-nil error unless s continues: wrapping ErrStaleSnapshot
// when s is or may be stale, a plain one when the confirmation could not
// read what it needed (cerr; s most likely landed).
func (c *Committer) settle(ctx context.Context, s *snapshot.Snapshot, v chainVerdict, next int64, cerr error) error {
	switch {
	case v == continues:
		if next == 0 || next == s.ID+1 {
			// Best effort, like RenamingSnapshotCommit. Not when snapshot
			// N+1 is gone: readers trust LATEST = N while N+1 is absent.
			_ = c.snapshots.WriteLatestHint(ctx, s.ID)
		}
		return nil
	case v == stale || (cerr == nil && next > s.ID+1):
		if err := c.snapshots.Delete(context.WithoutCancel(ctx), s.ID); err != nil {
			return fmt.Errorf("%w: snapshot %d was created on a stale base (snapshot %d does not continue it) and could not be deleted: %w",
				ErrStaleSnapshot, s.ID, next, err)
		}
		if v == stale {
			return fmt.Errorf("%w: snapshot %d was created on a stale base after expiry deleted an earlier snapshot-%d; snapshot %d does not continue it, so it was deleted",
				ErrStaleSnapshot, s.ID, s.ID, next)
		}
		return fmt.Errorf("%w: snapshot %d was created while snapshots up to %d were being expired; it was deleted and whether its files reached the table is unknown",
			ErrStaleSnapshot, s.ID, next-1)
	case cerr != nil:
		// Not ErrStaleSnapshot: the snapshot most likely landed; the
		// caller resolves the unknown outcome by commit user.
		return fmt.Errorf("confirming that snapshot %d continues the table failed: %w", s.ID, cerr)
	default:
		return fmt.Errorf("%w: snapshot %d is followed by snapshot %d, which does not show its files", ErrStaleSnapshot, s.ID, next)
	}
}

// errRetry marks a snapshot found by FindCommit that was stale and is
// deleted: the commit goes on with a new attempt.
var errRetry = errors.New("retry")

// confirmFound confirms a snapshot of this committer that FindCommit found
// after an attempt with an unknown outcome, as the attempt itself would
// have: it returns s when s continues the table; an error wrapping errRetry
// when s was stale and is deleted; another error (the outcome stays
// unknown) otherwise.
func (c *Committer) confirmFound(ctx context.Context, s *snapshot.Snapshot) (*snapshot.Snapshot, error) {
	own, err := c.readOwnFiles(ctx, s)
	if err != nil {
		return nil, fmt.Errorf("confirm snapshot %d: read its manifest lists: %w", s.ID, err)
	}
	v, next, cerr := c.confirm(ctx, s, own)
	if err := c.settle(ctx, s, v, next, cerr); err != nil {
		if v == stale {
			return nil, fmt.Errorf("%w: %w", errRetry, err)
		}
		return nil, err
	}
	return s, nil
}

// baseExpired reports whether an attempt failed because snapshot expiry
// was deleting its base snapshot (and the files only it used) while the
// attempt read them: a file was missing and the base is no longer the
// latest snapshot (expiry deletes the manifests before the snapshot file,
// and never touches the latest snapshot's). The commit then starts over from
// the new latest snapshot instead of failing; it could not have created the
// next snapshot on that base anyway.
func (c *Committer) baseExpired(ctx context.Context, base *snapshot.Snapshot, err error) bool {
	if base == nil || !errors.Is(err, storage.ErrNotExist) {
		return false
	}
	there, xerr := c.snapshots.Exists(ctx, base.ID)
	if xerr != nil {
		return false
	}
	if !there {
		return true
	}
	newer, xerr := c.snapshots.Exists(ctx, base.ID+1)
	return xerr == nil && newer
}

// CommitRecovered commits msgs as Commit does, with the check Java adds
// when a job commits again after a failure (TableCommitImpl
// filterAndCommitMultiple with checkAppendFiles): the new files are checked
// against the live files of their partitions in the latest snapshot, so a
// file that is already in the table fails the commit with an error wrapping
// ErrConflict and manifest.ErrDuplicateFile instead of being added twice.
// Use it to commit again what an earlier Commit with an unknown outcome
// (ErrCommitAmbiguous) held, when FilterCommitted cannot see that commit:
// its snapshot may have been expired already.
func (c *Committer) CommitRecovered(ctx context.Context, identifier int64, msgs []Message, opts ...CommitOption) (*snapshot.Snapshot, error) {
	return c.commit(ctx, identifier, msgs, true, opts)
}
