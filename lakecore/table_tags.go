package lakecore

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore/maintain"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
)

// CreateTag creates tag name of snapshot id, or of the latest snapshot when
// id is 0, as Java's create_tag does (AbstractFileStoreTable.createTag,
// TagManager.createTag): a snapshot that has expired is still found when a
// tag holds it (findSnapshot); timeRetained nil takes the table's
// tag.default-time-retained, and without either the tag file is the
// snapshot's JSON alone. An existing tag wraps snapshot.ErrTagExists, a
// missing snapshot snapshot.ErrSnapshotNotFound. It returns the tagged
// snapshot.
func (t *Table) CreateTag(ctx context.Context, name string, id int64, timeRetained *time.Duration) (*snapshot.Snapshot, error) {
	if err := snapshot.CheckTagName(name); err != nil {
		return nil, fmt.Errorf("create tag of %s.%s: %w", t.db, t.name, err)
	}
	snap, err := t.findSnapshot(ctx, id)
	if err != nil {
		return nil, fmt.Errorf("create tag %q of %s.%s: %w", name, t.db, t.name, err)
	}
	if timeRetained == nil {
		if v, ok := t.Schema().Opts().Get("tag.default-time-retained"); ok {
			d, err := schema.ParseDuration(v)
			if err != nil {
				return nil, fmt.Errorf("create tag %q of %s.%s: tag.default-time-retained: %w", name, t.db, t.name, err)
			}
			timeRetained = &d
		}
	}
	if err := t.Tags().Create(ctx, name, snap, timeRetained, time.Now()); err != nil {
		return nil, err
	}
	return snap, nil
}

// findSnapshot is AbstractFileStoreTable.findSnapshot: snapshot id, else
// the snapshot of a tag with that id; id 0 is the latest snapshot.
func (t *Table) findSnapshot(ctx context.Context, id int64) (*snapshot.Snapshot, error) {
	if id == 0 {
		s, err := t.snapshots.Latest(ctx)
		if err == nil && s == nil {
			err = fmt.Errorf("%w: the table has no snapshot yet", snapshot.ErrSnapshotNotFound)
		}
		return s, err
	}
	s, err := t.snapshots.Get(ctx, id)
	if !errors.Is(err, snapshot.ErrSnapshotNotFound) {
		return s, err
	}
	tags, lerr := t.Tags().List(ctx)
	if lerr != nil {
		return nil, lerr
	}
	for _, tag := range tags {
		if tag.Snapshot.ID == id {
			return (&tag).TrimToSnapshot(), nil
		}
	}
	return nil, fmt.Errorf("%w: snapshot %d doesn't exist (expired or never written) and no tag holds it", snapshot.ErrSnapshotNotFound, id)
}

// DeleteTag deletes tag name and, when its snapshot has expired and no
// other tag holds it, the files only that snapshot used
// (maintain.DeleteTag, Java's TagManager.deleteTag).
func (t *Table) DeleteTag(ctx context.Context, name string, o maintain.DeleteTagOptions) (*maintain.Report, error) {
	return maintain.DeleteTag(ctx, t.fio, t.path, name, o)
}

// RollbackTo rolls the table back to a snapshot or tag, deleting the newer
// snapshots, long-lived changelogs and tags (snapshot.Rollback, Java's
// rollback_to). Stop the table's writers first.
func (t *Table) RollbackTo(ctx context.Context, to snapshot.RollbackTarget, dryRun bool) (*snapshot.RollbackResult, error) {
	return snapshot.Rollback(ctx, t.fio, t.path, to, dryRun)
}
