package snapshot

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"
	"strings"

	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

const (
	snapshotPrefix = "snapshot-"
	// LatestHint and EarliestHint are the hint files of the snapshot
	// directory (HintFileUtils.LATEST, EARLIEST): a decimal id, no newline.
	LatestHint   = "LATEST"
	EarliestHint = "EARLIEST"
	// hintReadAttempts is HintFileUtils.READ_HINT_RETRY_NUM.
	hintReadAttempts = 3
)

// Manager reads and commits the snapshots of one table, following
// apache/paimon paimon-core/src/main/java/org/apache/paimon/utils/
// SnapshotManager.java and HintFileUtils.java. It keeps no state besides
// its arguments and is safe for concurrent use.
type Manager struct {
	fio       storage.FileIO
	tablePath string
}

// NewManager returns the snapshot manager of the table at tablePath
// (relative to fio's root, e.g. "db.db/t").
func NewManager(fio storage.FileIO, tablePath string) *Manager {
	return &Manager{fio: fio, tablePath: strings.TrimSuffix(tablePath, "/")}
}

// Dir is the table's snapshot directory.
func (m *Manager) Dir() string { return path.Join(m.tablePath, "snapshot") }

// Path is the path of snapshot-<id>.
func (m *Manager) Path(id int64) string {
	return m.Dir() + "/" + snapshotPrefix + strconv.FormatInt(id, 10)
}

// ListIDs returns the ids of all snapshot-<n> files in ascending order.
// Hint files, hidden temporary files (".snapshot-3.<uuid>.tmp") and any
// other name are ignored.
func (m *Manager) ListIDs(ctx context.Context) ([]int64, error) {
	ids, err := storage.ListVersioned(ctx, m.fio, m.Dir(), snapshotPrefix)
	if err != nil {
		return nil, fmt.Errorf("list snapshots of %s: %w", m.tablePath, err)
	}
	return ids, nil
}

// readHint reads a hint file as HintFileUtils.readHint does: a missing
// file, or content that Long.parseLong rejects (such as a trailing
// newline), means no hint; a read that fails 3 times also means no hint
// in Java, and is returned as err besides, for callers that must not take
// a failing store for a missing hint.
func (m *Manager) readHint(ctx context.Context, name string) (id int64, ok bool, err error) {
	p := m.Dir() + "/" + name
	for attempt := 0; attempt < hintReadAttempts; attempt++ {
		var data []byte
		data, err = m.fio.ReadFile(ctx, p)
		if err != nil {
			if errors.Is(err, storage.ErrNotExist) {
				return 0, false, nil
			}
			if ctx.Err() != nil {
				break
			}
			continue
		}
		id, err := strconv.ParseInt(string(data), 10, 64)
		if err != nil {
			return 0, false, nil
		}
		return id, true, nil
	}
	return 0, false, fmt.Errorf("read hint %s: %w", p, err)
}

func (m *Manager) exists(ctx context.Context, id int64) (bool, error) {
	ok, err := storage.Exists(ctx, m.fio, m.Path(id))
	if err != nil {
		return false, fmt.Errorf("check snapshot %s: %w", m.Path(id), err)
	}
	return ok, nil
}

// LatestID returns the id of the latest snapshot; ok is false when the
// table has none. As HintFileUtils.findLatest: LATEST = N is trusted when
// N > 0 and snapshot-(N+1) does not exist (N itself is not checked, as in
// Java); otherwise, including a missing or unreadable hint, the directory
// is listed and the highest id wins.
func (m *Manager) LatestID(ctx context.Context) (id int64, ok bool, err error) {
	if hint, has, _ := m.readHint(ctx, LatestHint); has && hint > 0 {
		next, err := m.exists(ctx, hint+1)
		if err != nil {
			return 0, false, err
		}
		if !next {
			return hint, true, nil
		}
	}
	ids, err := m.ListIDs(ctx)
	if err != nil || len(ids) == 0 {
		return 0, false, err
	}
	return ids[len(ids)-1], true, nil
}

// EarliestID returns the id of the earliest retained snapshot; ok is false
// when the table has none. As HintFileUtils.findEarliest: EARLIEST = N is
// trusted when snapshot-N exists; otherwise the directory is listed and the
// lowest id wins.
func (m *Manager) EarliestID(ctx context.Context) (id int64, ok bool, err error) {
	if hint, has, _ := m.readHint(ctx, EarliestHint); has {
		there, err := m.exists(ctx, hint)
		if err != nil {
			return 0, false, err
		}
		if there {
			return hint, true, nil
		}
	}
	ids, err := m.ListIDs(ctx)
	if err != nil || len(ids) == 0 {
		return 0, false, err
	}
	return ids[0], true, nil
}

// Get reads snapshot-<id>. A missing file (never written, or expired) gives
// an error wrapping ErrSnapshotNotFound; a file that does not parse or holds
// another id wraps ErrInvalidSnapshot. Errors name the file. Java re-reads
// a snapshot that fails to parse up to 10 times (SnapshotManager.tryFromPath)
// for stores that expose partial files; storage.FileIO publishes whole
// files, so Get does not.
func (m *Manager) Get(ctx context.Context, id int64) (*Snapshot, error) {
	return readSnapshotFile(ctx, m.fio, "snapshot", m.Path(id), id)
}

// readSnapshotFile reads the snapshot-shaped file p (a snapshot or a
// long-lived changelog, what names it) that must hold id; a missing file
// wraps ErrSnapshotNotFound.
func readSnapshotFile(ctx context.Context, fio storage.FileIO, what, p string, id int64) (*Snapshot, error) {
	data, err := fio.ReadFile(ctx, p)
	if errors.Is(err, storage.ErrNotExist) {
		return nil, fmt.Errorf("read %s %s: %w: %w", what, p, ErrSnapshotNotFound, err)
	}
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", what, p, err)
	}
	s, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("read %s %s: %w", what, p, err)
	}
	if s.ID != id {
		return nil, fmt.Errorf("read %s %s: %w: the file holds snapshot id %d", what, p, ErrInvalidSnapshot, s.ID)
	}
	return s, nil
}

// Latest reads the latest snapshot, or returns nil, nil when the table has
// no snapshot. A LATEST hint naming a snapshot that does not exist gives an
// error wrapping ErrSnapshotNotFound that names it, as in Java; writers use
// LatestExisting.
func (m *Manager) Latest(ctx context.Context) (*Snapshot, error) {
	id, ok, err := m.LatestID(ctx)
	if err != nil || !ok {
		return nil, err
	}
	return m.Get(ctx, id)
}

// LatestExisting is Latest for writers: a LATEST hint naming a snapshot that
// does not exist (trusted, as in Java, while the next id is absent) gives
// way to the highest snapshot listed, so that a writer neither fails on it
// nor mistakes it for expiry. The listing is repeated a few times should
// its highest snapshot vanish meanwhile (a stale snapshot deleted by its
// committer). It returns nil, nil when the table has no snapshot.
func (m *Manager) LatestExisting(ctx context.Context) (*Snapshot, error) {
	s, err := m.Latest(ctx)
	for attempt := 0; errors.Is(err, ErrSnapshotNotFound) && attempt < 3; attempt++ {
		ids, lerr := m.ListIDs(ctx)
		if lerr != nil || len(ids) == 0 {
			return nil, lerr
		}
		s, err = m.Get(ctx, ids[len(ids)-1])
	}
	return s, err
}

// Commit publishes s as snapshot-<s.ID>: the file is created exclusively
// (storage.FileIO.WriteExclusive), which is the commit point. If the id is
// taken the error wraps ErrSnapshotExists and storage.ErrExist; any other
// error, including storage.ErrAmbiguous (the snapshot may or may not exist
// now: look for it with FindCommit before retrying), is returned wrapped.
// After success the LATEST hint is overwritten, best effort: a failure
// there is ignored because readers verify the hint.
//
// s must have ID >= 1, a valid CommitKind, both manifest list names and a
// commit user; otherwise the error wraps ErrInvalidSnapshot.
func (m *Manager) Commit(ctx context.Context, s *Snapshot) error {
	if err := m.Create(ctx, s); err != nil {
		return err
	}
	_ = m.WriteLatestHint(ctx, s.ID) // best effort, like RenamingSnapshotCommit
	return nil
}

// Create is Commit without the LATEST hint, for a committer that must
// first confirm that the new snapshot continues the table: an exclusive
// create also succeeds when snapshot expiry has just deleted a snapshot of
// that id, and a writer that read the latest snapshot before that would
// then publish a stale "ghost" snapshot below the retained ones
// (commit.Committer checks for that before writing the hint).
func (m *Manager) Create(ctx context.Context, s *Snapshot) error {
	p := m.Path(s.ID)
	switch {
	case s.ID < 1:
		return fmt.Errorf("commit snapshot %s: %w: id %d < 1", p, ErrInvalidSnapshot, s.ID)
	case s.BaseManifestList == "" || s.DeltaManifestList == "":
		return fmt.Errorf("commit snapshot %s: %w: missing manifest list", p, ErrInvalidSnapshot)
	case s.CommitUser == "":
		return fmt.Errorf("commit snapshot %s: %w: empty commit user", p, ErrInvalidSnapshot)
	}
	data, err := s.Marshal()
	if err != nil {
		return fmt.Errorf("commit snapshot %s: %w", p, err)
	}
	if err := m.fio.WriteExclusive(ctx, p, data); err != nil {
		if errors.Is(err, storage.ErrExist) {
			return fmt.Errorf("commit snapshot %s: %w: %w", p, ErrSnapshotExists, err)
		}
		return fmt.Errorf("commit snapshot %s: %w", p, err)
	}
	return nil
}

// ReadLatestHint returns the id in the LATEST hint, unverified; ok is false
// when there is no hint or it does not hold an id. Unlike LatestID, which
// then lists the directory as Java does, it returns an error when the hint
// cannot be read (after 3 attempts) or ctx ends. Use LatestID for the
// latest snapshot.
func (m *Manager) ReadLatestHint(ctx context.Context) (id int64, ok bool, err error) {
	return m.readHint(ctx, LatestHint)
}

// ReadEarliestHint is ReadLatestHint for the EARLIEST hint.
func (m *Manager) ReadEarliestHint(ctx context.Context) (id int64, ok bool, err error) {
	return m.readHint(ctx, EarliestHint)
}

// Exists reports whether snapshot-<id> exists.
func (m *Manager) Exists(ctx context.Context, id int64) (bool, error) {
	return m.exists(ctx, id)
}

// WriteLatestHint overwrites LATEST with id (HintFileUtils.commitLatestHint).
func (m *Manager) WriteLatestHint(ctx context.Context, id int64) error {
	return m.writeHint(ctx, LatestHint, id)
}

// WriteEarliestHint overwrites EARLIEST with id, as snapshot expiration
// does (HintFileUtils.commitEarliestHint).
func (m *Manager) WriteEarliestHint(ctx context.Context, id int64) error {
	return m.writeHint(ctx, EarliestHint, id)
}

func (m *Manager) writeHint(ctx context.Context, name string, id int64) error {
	return writeHint(ctx, m.fio, m.Dir(), name, id)
}

// writeHint writes the hint file dir/name holding id (HintFileUtils.commitHint).
func writeHint(ctx context.Context, fio storage.FileIO, dir, name string, id int64) error {
	p := dir + "/" + name
	if err := fio.WriteFile(ctx, p, []byte(strconv.FormatInt(id, 10))); err != nil {
		return fmt.Errorf("write hint %s: %w", p, err)
	}
	return nil
}

// Delete removes snapshot-<id>; a missing file is not an error.
func (m *Manager) Delete(ctx context.Context, id int64) error {
	if err := m.fio.Delete(ctx, m.Path(id)); err != nil {
		return fmt.Errorf("delete snapshot %s: %w", m.Path(id), err)
	}
	return nil
}

// FindCommit returns the snapshot in (afterID, latest] written by user with
// the given identifier and kind, or nil when there is none. It is how a
// committer whose previous attempt had an unknown outcome learns that the
// attempt did land (FileStoreCommitImpl.tryCommitOnce). The walk starts at
// LatestExisting and stops at the first snapshot that no longer exists
// (expired, and so are all older ones).
func (m *Manager) FindCommit(ctx context.Context, user string, identifier int64, kind CommitKind, afterID int64) (*Snapshot, error) {
	return m.walkBack(ctx, afterID, func(s *Snapshot) bool {
		return s.CommitUser == user && s.CommitIdentifier == identifier && s.CommitKind == kind
	})
}

// LatestOfUser returns the latest snapshot committed by user, or nil: it
// walks back from the latest snapshot and stops at the first one that does
// not exist (expired), as SnapshotManager.latestSnapshotOfUser does. The
// walk starts at LatestExisting: a LATEST hint naming a snapshot that does
// not exist is not taken for an expired one (which would make a writer
// restart its identifiers at 1).
func (m *Manager) LatestOfUser(ctx context.Context, user string) (*Snapshot, error) {
	return m.walkBack(ctx, 0, func(s *Snapshot) bool { return s.CommitUser == user })
}

// walkBack returns the first snapshot, from LatestExisting down to
// afterID+1, that match accepts, or nil when the walk reaches afterID or a
// snapshot that does not exist first.
func (m *Manager) walkBack(ctx context.Context, afterID int64, match func(*Snapshot) bool) (*Snapshot, error) {
	s, err := m.LatestExisting(ctx)
	for err == nil && s != nil && s.ID > afterID {
		if match(s) {
			return s, nil
		}
		if s.ID-1 <= afterID {
			break
		}
		s, err = m.Get(ctx, s.ID-1)
	}
	if err != nil && !errors.Is(err, ErrSnapshotNotFound) {
		return nil, err
	}
	return nil, nil
}

// EarlierThan returns the latest snapshot with TimeMillis < timeMillis, or
// nil if even the earliest retained snapshot is at or after it (a
// from-timestamp stream then starts at the earliest snapshot). It binary
// searches the retained ids, assuming commit times increase with ids, as
// TimeTravelUtil.earlierThanTimeMills does.
func (m *Manager) EarlierThan(ctx context.Context, timeMillis int64) (*Snapshot, error) {
	return m.lastWhere(ctx, func(t int64) bool { return t < timeMillis })
}

// LatestAtOrBefore returns the latest snapshot with TimeMillis <=
// timeMillis, or nil if there is none (the time travel of
// scan.timestamp-millis; SnapshotManager.earlierOrEqualTimeMills).
func (m *Manager) LatestAtOrBefore(ctx context.Context, timeMillis int64) (*Snapshot, error) {
	return m.lastWhere(ctx, func(t int64) bool { return t <= timeMillis })
}

// lastWhere finds the highest retained snapshot whose time satisfies ok,
// where ok holds for a prefix of the ids.
func (m *Manager) lastWhere(ctx context.Context, ok func(int64) bool) (*Snapshot, error) {
	latest, has, err := m.LatestID(ctx)
	if err != nil || !has {
		return nil, err
	}
	earliest, has, err := m.EarliestID(ctx)
	if err != nil || !has {
		return nil, err
	}
	// The earliest snapshot that still exists (one may expire meanwhile).
	var best *Snapshot
	for id := earliest; id <= latest; id++ {
		s, err := m.Get(ctx, id)
		if errors.Is(err, ErrSnapshotNotFound) {
			continue
		}
		if err != nil {
			return nil, err
		}
		best = s
		break
	}
	if best == nil || !ok(best.TimeMillis) {
		return nil, nil
	}
	lo, hi := best.ID, latest
	for lo < hi {
		mid := lo + (hi-lo+1)/2
		s, err := m.Get(ctx, mid)
		if err != nil {
			return nil, err
		}
		if ok(s.TimeMillis) {
			lo, best = mid, s
		} else {
			hi = mid - 1
		}
	}
	return best, nil
}
