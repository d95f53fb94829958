package snapshot

import (
	"context"
	"errors"
	"fmt"

	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

// RollbackTarget says where Rollback goes: a snapshot id or a tag name
// (exactly one).
type RollbackTarget struct {
	SnapshotID int64
	Tag        string
}

// RollbackResult is what Rollback did, or in a dry run would do.
type RollbackResult struct {
	// Previous is the latest snapshot before the rollback, Target the
	// snapshot the table is rolled back to (Java's rollback_to procedure
	// returns the two).
	Previous, Target int64
	// ViaTag is the tag the target snapshot was read from: the tag given,
	// or for a snapshot id that has expired, the first tag of that id.
	ViaTag string
	// Snapshots are the snapshot ids deleted, newest first.
	Snapshots []int64
	// Changelogs are the long-lived changelog ids deleted, newest first.
	Changelogs []int64
	// Tags are the tags deleted (their snapshot is newer than Target).
	Tags []string
	// Restored is set when snapshot-<Target> was written back from the tag
	// (it had expired) and EARLIEST now names it.
	Restored bool
}

// Rollback rolls the table at tablePath back to a snapshot or tag as Java
// Paimon 1.2+ does (apache/paimon 1.4: paimon-core/.../table/
// AbstractFileStoreTable.rollbackTo, table/RollbackHelper.java):
//
//   - a snapshot id must exist as a snapshot, or else as the snapshot of a
//     tag, which is then rolled back to as that tag ("Rollback snapshot
//     'N' doesn't exist." otherwise, wrapping ErrSnapshotNotFound); a tag
//     must exist (ErrTagNotFound); the table must have snapshots;
//   - LATEST is set to the target, then every snapshot newer than the
//     target is deleted, newest first; then the long-lived changelogs
//     newer than it (and their LATEST hint: the last one kept, or -1 when
//     none is), then every tag of a newer snapshot;
//   - for a tag whose snapshot had expired, snapshot-<id> is written back
//     from the tag (without the tag fields) and EARLIEST set to it.
//
// Like Java since 1.2 (apache/paimon#5712), data files and manifests are
// not deleted: the files only the removed snapshots used become orphans,
// which RemoveOrphanFiles deletes once older than its threshold. Writers
// must be stopped first: a writer that commits during the rollback, or
// later from state older than it, brings the removed history back in part.
// With dryRun nothing changes and the result lists what would go.
func Rollback(ctx context.Context, fio storage.FileIO, tablePath string, to RollbackTarget, dryRun bool) (*RollbackResult, error) {
	sm := NewManager(fio, tablePath)
	tm := NewTagManager(fio, tablePath)
	latest, ok, err := sm.LatestID(ctx)
	if err != nil {
		return nil, fmt.Errorf("rollback %s: %w", tablePath, err)
	}
	if !ok {
		return nil, fmt.Errorf("rollback %s: %w: the table has no snapshot (latest snapshot is null, can not rollback)", tablePath, ErrSnapshotNotFound)
	}
	earliest, ok, err := sm.EarliestID(ctx)
	if err != nil || !ok {
		return nil, fmt.Errorf("rollback %s: cannot find the earliest snapshot: %w", tablePath, err)
	}
	res := &RollbackResult{Previous: latest}

	var target *Snapshot
	fromTag := to.Tag
	if fromTag == "" {
		target, err = sm.Get(ctx, to.SnapshotID)
		if errors.Is(err, ErrSnapshotNotFound) {
			// An expired snapshot may live on in a tag
			// (AbstractFileStoreTable.rollbackTo(long)).
			tags, lerr := tm.List(ctx)
			if lerr != nil {
				return nil, fmt.Errorf("rollback %s: %w", tablePath, lerr)
			}
			for _, t := range tags {
				if t.Snapshot.ID == to.SnapshotID {
					fromTag = t.Name
					break
				}
			}
			if fromTag == "" {
				return nil, fmt.Errorf("rollback %s: %w: rollback snapshot '%d' doesn't exist (and no tag holds it)", tablePath, ErrSnapshotNotFound, to.SnapshotID)
			}
		} else if err != nil {
			return nil, fmt.Errorf("rollback %s: %w", tablePath, err)
		}
	}
	if fromTag != "" {
		tag, err := tm.Get(ctx, fromTag)
		if err != nil {
			return nil, fmt.Errorf("rollback %s: %w", tablePath, err)
		}
		target = tag.TrimToSnapshot()
		res.ViaTag = fromTag
	}
	res.Target = target.ID

	// Plan: snapshots, changelogs and tags newer than the target.
	for id := latest; id >= max(earliest, target.ID+1); id-- {
		there, err := sm.Exists(ctx, id)
		if err != nil {
			return nil, fmt.Errorf("rollback %s: %w", tablePath, err)
		}
		if there {
			res.Snapshots = append(res.Snapshots, id)
		}
	}
	cm := NewChangelogManager(fio, tablePath)
	changelogs, err := cm.ListIDs(ctx)
	if err != nil {
		return nil, fmt.Errorf("rollback %s: %w", tablePath, err)
	}
	for i := len(changelogs) - 1; i >= 0 && changelogs[i] > target.ID; i-- {
		res.Changelogs = append(res.Changelogs, changelogs[i])
	}
	tags, err := tm.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("rollback %s: %w", tablePath, err)
	}
	for _, t := range tags {
		if t.Snapshot.ID > target.ID {
			res.Tags = append(res.Tags, t.Name)
		}
	}
	restore := false
	if fromTag != "" {
		if restore, err = sm.Exists(ctx, target.ID); err != nil {
			return nil, fmt.Errorf("rollback %s: %w", tablePath, err)
		}
		restore = !restore
	}
	res.Restored = restore
	if dryRun {
		return res, nil
	}

	// RollbackHelper.cleanSnapshots: the hint first, so that a reader
	// never trusts a LATEST naming a deleted snapshot for long.
	if err := sm.WriteLatestHint(ctx, target.ID); err != nil {
		return res, fmt.Errorf("rollback %s: %w", tablePath, err)
	}
	for _, id := range res.Snapshots {
		if err := sm.Delete(ctx, id); err != nil {
			return res, fmt.Errorf("rollback %s: %w", tablePath, err)
		}
	}
	// cleanLongLivedChangelogs.
	if len(res.Changelogs) > 0 {
		hint := target.ID
		if len(res.Changelogs) == len(changelogs) {
			// Every changelog goes: Java does not know the latest any more.
			hint = -1
		}
		if err := writeHint(ctx, fio, cm.Dir(), LatestHint, hint); err != nil {
			return res, fmt.Errorf("rollback %s: %w", tablePath, err)
		}
		for _, id := range res.Changelogs {
			if err := fio.Delete(ctx, cm.Path(id)); err != nil {
				return res, fmt.Errorf("rollback %s: delete changelog %d: %w", tablePath, id, err)
			}
		}
	}
	// cleanTags.
	for _, name := range res.Tags {
		if err := tm.DeleteFile(ctx, name); err != nil {
			return res, fmt.Errorf("rollback %s: %w", tablePath, err)
		}
	}
	// createSnapshotFileIfNeeded.
	if restore {
		data, err := target.Marshal()
		if err != nil {
			return res, fmt.Errorf("rollback %s: %w", tablePath, err)
		}
		if err := fio.WriteExclusive(ctx, sm.Path(target.ID), data); err != nil && !errors.Is(err, storage.ErrExist) {
			return res, fmt.Errorf("rollback %s: restore snapshot %d from tag %s: %w", tablePath, target.ID, fromTag, err)
		}
		if err := sm.WriteEarliestHint(ctx, target.ID); err != nil {
			return res, fmt.Errorf("rollback %s: %w", tablePath, err)
		}
	}
	return res, nil
}
