package maintain

import (
	"context"
	"errors"
	"fmt"
	"path"
	"strconv"

	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

// expireChangelogs expires the long-lived changelogs (changelog/changelog-<id>)
// of a table whose changelog is decoupled from its snapshots, as Java's
// writers do right after expiring snapshots (apache/paimon 1.4:
// paimon-core/.../table/ExpireChangelogImpl.java expire, and
// AbstractFileStoreTable.newExpireRunnable):
//
//   - with latest the newest snapshot and [earliestCL, latestCL] the
//     changelogs, the changelogs [earliestCL, end) expire, where end is the
//     smallest of latest - changelog.num-retained.min + 1, the smallest
//     nextSnapshot of the consumers, earliestCL + snapshot.expire.limit and
//     latestCL, and the first changelog from max(latest -
//     changelog.num-retained.max + 1, earliestCL) on that is not older than
//     changelog.time-retained;
//   - a changelog with a changelog manifest list loses the files it added
//     and that list; one without (changelog-producer none) loses the files
//     the DELETE entries of its delta removed (unless the nearest earlier
//     tag holds them) and its delta and base manifest lists, except what
//     changelog end, the earliest snapshot and the tags in the range use
//     (ChangelogDeletion);
//   - then the EARLIEST hint of the changelog directory is end.
//
// Java deletes each changelog's files before its changelog-<id>; lakecore
// deletes the changelog-<id> files first (oldest first, stopping at a
// failure) and the files after, so that a crash leaves orphans, never a
// changelog whose files are gone. It returns how many changelogs expired.
func (e *expirer) expireChangelogs(ctx context.Context) (int, error) {
	t := e.t
	cm := snapshot.NewChangelogManager(t.fio, t.path)
	latest, ok, err := t.snapshots.LatestID(ctx)
	if err != nil || !ok {
		return 0, err
	}
	ids, err := cm.ListIDs(ctx)
	if err != nil || len(ids) == 0 {
		return 0, err
	}
	earliestCL, latestCL := ids[0], ids[len(ids)-1]
	lo := max(latest-int64(e.cfg.changelogRetainMax)+1, earliestCL)
	maxExclusive := latest - int64(e.cfg.changelogRetainMin) + 1
	next, has, err := snapshot.NewConsumerManager(t.fio, t.path).MinNextSnapshot(ctx)
	if err != nil {
		return 0, err
	}
	if has {
		maxExclusive = min(maxExclusive, next)
	}
	maxExclusive = min(maxExclusive, earliestCL+int64(e.cfg.maxDeletes), latestCL)
	end := maxExclusive
	for id := lo; id <= maxExclusive; id++ {
		c, err := cm.Get(ctx, id)
		if errors.Is(err, snapshot.ErrSnapshotNotFound) {
			continue
		}
		if err != nil {
			return 0, err
		}
		if e.cfg.changelogOlderThanMillis <= c.TimeMillis {
			end = id
			break
		}
	}
	return e.expireChangelogsUntil(ctx, cm, earliestCL, end)
}

// expireChangelogsUntil is ExpireChangelogImpl.expireUntil: it expires the
// changelogs [earliest, end).
func (e *expirer) expireChangelogsUntil(ctx context.Context, cm *snapshot.ChangelogManager, earliest, end int64) (int, error) {
	t := e.t
	if end <= earliest {
		// Nothing expires; Java still writes the hint. lakecore writes it
		// only when it is not right, which also finishes a run that
		// crashed before writing it.
		if e.dryRun {
			return 0, nil
		}
		hint, err := t.fio.ReadFile(ctx, path.Join(cm.Dir(), snapshot.EarliestHint))
		if err != nil && !errors.Is(err, storage.ErrNotExist) {
			return 0, err
		}
		if string(hint) != strconv.FormatInt(earliest, 10) {
			return 0, cm.WriteEarliestHint(ctx, earliest)
		}
		return 0, nil
	}
	var expiring []*snapshot.Snapshot
	for id := earliest; id < end; id++ {
		c, err := cm.Get(ctx, id)
		if errors.Is(err, snapshot.ErrSnapshotNotFound) {
			continue // expired meanwhile by another process
		}
		if err != nil {
			return 0, err
		}
		expiring = append(expiring, c)
	}
	last, err := cm.Get(ctx, end)
	if err != nil {
		return 0, err
	}
	tags, err := e.taggedSnapshots(ctx)
	if err != nil {
		return 0, err
	}
	skipping := append(skippingTags(tags, earliest, end), last)
	if id, ok, err := t.snapshots.EarliestID(ctx); err != nil {
		return 0, err
	} else if ok {
		s, err := t.snapshots.Get(ctx, id)
		if err != nil {
			return 0, err
		}
		skipping = append(skipping, s)
	}
	skip, err := e.changelogSkippingSet(ctx, skipping)
	if err != nil {
		return 0, err
	}

	var data, files []fileRef
	for _, c := range expiring {
		if _, ok := manifest.ChangelogList(c); ok {
			added, err := e.planChangelogFiles(ctx, []*snapshot.Snapshot{c})
			if err != nil {
				return 0, err
			}
			data = append(data, added...)
			metas, err := e.planManifests(ctx, []*snapshot.Snapshot{c}, skip, manifestCleaning{changelog: true})
			if err != nil {
				return 0, err
			}
			files = append(files, metas...)
			continue
		}
		removed, _, err := e.planDataFiles(ctx, []*snapshot.Snapshot{c}, tags, false)
		if err != nil {
			return 0, err
		}
		data = append(data, removed...)
		metas, err := e.planManifests(ctx, []*snapshot.Snapshot{c}, skip, manifestCleaning{dataLists: true})
		if err != nil {
			return 0, err
		}
		files = append(files, metas...)
	}
	clFiles := make([]fileRef, len(expiring))
	for i, c := range expiring {
		clFiles[i] = fileRef{path: cm.Path(c.ID), size: -1}
	}
	if err := e.del.deleteInOrder(ctx, "delete changelog files", clFiles); err != nil {
		return 0, fmt.Errorf("%w; the files of this and younger changelogs are kept", err)
	}
	if !e.dryRun {
		if err := cm.WriteEarliestHint(ctx, end); err != nil {
			return len(expiring), err
		}
	}
	if err := e.del.delete(ctx, "delete changelog data files", data); err != nil {
		return len(expiring), err
	}
	return len(expiring), e.del.delete(ctx, "delete changelog manifests", files)
}

// changelogSkippingSet is ChangelogDeletion.manifestSkippingSet: the base
// and delta manifest lists (when they still exist) with their manifests,
// the index manifests with their index files and the statistics files of
// the given snapshots and changelogs.
func (e *expirer) changelogSkippingSet(ctx context.Context, snaps []*snapshot.Snapshot) (map[string]bool, error) {
	t := e.t
	skip := map[string]bool{}
	for _, s := range snaps {
		for _, l := range manifest.DataLists(s) {
			metas, err := t.manifests.ReadList(ctx, l)
			if errors.Is(err, storage.ErrNotExist) {
				continue
			}
			if err != nil {
				return nil, fmt.Errorf("snapshot %d: %w", s.ID, err)
			}
			skip[l.Name] = true
			for _, m := range metas {
				skip[m.FileName] = true
			}
		}
		if s.IndexManifest != nil && *s.IndexManifest != "" {
			entries, err := t.manifests.ReadIndexEntries(ctx, *s.IndexManifest)
			switch {
			case errors.Is(err, storage.ErrNotExist):
			case err != nil:
				return nil, fmt.Errorf("snapshot %d: %w", s.ID, err)
			default:
				skip[*s.IndexManifest] = true
				for _, ie := range entries {
					skip[ie.FileName] = true
				}
			}
		}
		if s.Statistics != nil && *s.Statistics != "" {
			skip[*s.Statistics] = true
		}
	}
	return skip, nil
}
