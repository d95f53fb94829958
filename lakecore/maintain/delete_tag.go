package maintain

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

// DeleteTagOptions tune DeleteTag.
type DeleteTagOptions struct {
	// DryRun reports the files that would be removed without deleting the
	// tag or anything else.
	DryRun   bool
	Progress Progress
	Logger   *slog.Logger
}

// DeleteTag deletes tag name of the table at tablePath as Java's
// TagManager.deleteTag does (apache/paimon 1.4:
// paimon-core/.../utils/TagManager.java, operation/TagDeletion.java):
//
//   - while the tagged snapshot still exists, or another tag names the
//     same snapshot, only the tag file goes: the snapshot's files are
//     still in use;
//   - otherwise the tag file goes first and then the data files of the
//     tagged snapshot that neither the previous tag nor the nearest later
//     snapshot (the earliest snapshot, or the next tag if that is older)
//     uses, and the manifest lists, manifests, index and statistics files
//     of the tagged snapshot those two do not use (TagManager.doClean).
//     When the files of those two cannot be read, the files stay, as in
//     Java.
//
// A missing tag gives an error wrapping snapshot.ErrTagNotFound (Java only
// logs a warning; a command should say so). Failed deletes are counted in
// the Report and the error wraps ErrIncomplete: the files are orphans that
// RemoveOrphanFiles removes later.
func DeleteTag(ctx context.Context, fio storage.FileIO, tablePath, name string, o DeleteTagOptions) (*Report, error) {
	start := time.Now()
	rep := newReport(OpDeleteTag, tablePath, o.DryRun)
	defer rep.finish(start)
	t, err := loadTable(ctx, fio, tablePath, o.Logger)
	if err != nil {
		return rep, fmt.Errorf("delete tag %q: %w", name, err)
	}
	rep.Table = t.path
	if err := snapshot.CheckTagName(name); err != nil {
		return rep, err
	}
	tm := snapshot.NewTagManager(fio, t.path)
	tag, err := tm.Get(ctx, name)
	if err != nil {
		return rep, fmt.Errorf("delete tag %q of %s: %w", name, t.path, err)
	}
	tagged := tag.TrimToSnapshot()
	del := newDeleter(fio, rep, o.DryRun, o.Progress)
	tagFile := []fileRef{{path: tm.Path(name), size: -1}}

	exists, err := t.snapshots.Exists(ctx, tagged.ID)
	if err != nil {
		return rep, fmt.Errorf("delete tag %q of %s: %w", name, t.path, err)
	}
	// Every tag is read before the tag file goes: tags are found by their
	// files.
	var taggedSnaps []*snapshot.Snapshot
	shared := false
	if !exists {
		tags, err := tm.List(ctx)
		if err != nil {
			return rep, fmt.Errorf("delete tag %q of %s: %w", name, t.path, err)
		}
		for _, other := range tags {
			if other.Snapshot.ID == tagged.ID && other.Name != name {
				shared = true
			}
			if len(taggedSnaps) == 0 || taggedSnaps[len(taggedSnaps)-1].ID != other.Snapshot.ID {
				taggedSnaps = append(taggedSnaps, other.Snapshot)
			}
		}
	}
	if err := del.deleteInOrder(ctx, "delete tag file", tagFile); err != nil {
		return rep, fmt.Errorf("delete tag %q of %s: %w", name, t.path, err)
	}
	if exists || shared {
		return rep, rep.incomplete()
	}

	// The left neighbour tag and the nearest right neighbour.
	var skipping []*snapshot.Snapshot
	index := -1
	for i, s := range taggedSnaps {
		if s.ID == tagged.ID {
			index = i
		}
	}
	if index > 0 {
		skipping = append(skipping, taggedSnaps[index-1])
	}
	right, err := earliestSnapshot(ctx, t.snapshots)
	if err != nil {
		return rep, fmt.Errorf("delete tag %q of %s: %w", name, t.path, err)
	}
	if index >= 0 && index+1 < len(taggedSnaps) && (right == nil || taggedSnaps[index+1].ID < right.ID) {
		right = taggedSnaps[index+1]
	}
	if right != nil {
		skipping = append(skipping, right)
	}

	e := &expirer{t: t, rep: rep, del: del, dryRun: o.DryRun}
	data, dirs, ok, err := e.planTagDataFiles(ctx, tagged, skipping)
	if err != nil {
		return rep, fmt.Errorf("delete tag %q of %s: %w", name, t.path, err)
	}
	if ok {
		if err := del.delete(ctx, "delete data files", data); err != nil {
			return rep, err
		}
		if !o.DryRun {
			clean, err := t.opts.SnapshotCleanEmptyDirectories()
			if err == nil && clean {
				t.removeEmptyDirs(ctx, dirs)
			}
		}
	}
	skip, err := e.manifestSkippingSet(ctx, skipping)
	if err != nil {
		if ctx.Err() != nil {
			return rep, ctx.Err()
		}
		t.log.Warn("skip cleaning manifest files: cannot build the set of manifests in use", "table", t.path, "tag", name, "error", err)
		return rep, rep.incomplete()
	}
	files, err := e.planManifests(ctx, []*snapshot.Snapshot{tagged}, skip, manifestCleaning{dataLists: true, indexes: true})
	if err != nil {
		return rep, fmt.Errorf("delete tag %q of %s: %w", name, t.path, err)
	}
	if err := del.delete(ctx, "delete manifests", files); err != nil {
		return rep, err
	}
	return rep, rep.incomplete()
}

// earliestSnapshot reads the earliest snapshot, nil when there is none.
func earliestSnapshot(ctx context.Context, sm *snapshot.Manager) (*snapshot.Snapshot, error) {
	for {
		id, ok, err := sm.EarliestID(ctx)
		if err != nil || !ok {
			return nil, err
		}
		s, err := sm.Get(ctx, id)
		if errors.Is(err, snapshot.ErrSnapshotNotFound) {
			continue // expired meanwhile
		}
		return s, err
	}
}

// planTagDataFiles is TagDeletion.cleanUnusedDataFiles with the skipper of
// dataFileSkipper: every data file (with its extra files) of tagged that
// no snapshot of skipping uses, and their bucket directories. ok is false
// when the files of skipping or of tagged cannot be read: then nothing is
// deleted.
func (e *expirer) planTagDataFiles(ctx context.Context, tagged *snapshot.Snapshot, skipping []*snapshot.Snapshot) (files []fileRef, dirs map[string]bool, ok bool, err error) {
	t := e.t
	used := bucketFiles{}
	for _, s := range skipping {
		entries, err := t.liveEntries(ctx, s)
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, false, ctx.Err()
			}
			t.log.Warn("skip cleaning data files: cannot build the set of files in use", "table", t.path, "snapshot", s.ID, "error", err)
			return nil, nil, false, nil
		}
		for _, en := range entries {
			used.add(en.Partition, en.Bucket, en.File.FileName)
		}
	}
	entries, err := t.liveEntries(ctx, tagged)
	if err != nil {
		if ctx.Err() != nil {
			return nil, nil, false, ctx.Err()
		}
		t.log.Warn("skip cleaning data files: cannot read the tagged snapshot", "table", t.path, "snapshot", tagged.ID, "error", err)
		return nil, nil, false, nil
	}
	dirs = map[string]bool{}
	for i := range entries {
		en := &entries[i]
		if used.has(en.Partition, en.Bucket, en.File.FileName) {
			continue
		}
		file, extras, reachable, err := t.dataFilePaths(en.Partition, en.Bucket, &en.File)
		if err != nil {
			return nil, nil, false, fmt.Errorf("tagged snapshot %d: %w", tagged.ID, err)
		}
		if !reachable {
			continue
		}
		files = append(files, fileRef{path: file, size: en.File.FileSize, data: true})
		for _, x := range extras {
			files = append(files, fileRef{path: x, size: -1, data: true})
		}
		dirs[path.Dir(file)] = true
	}
	return files, dirs, true, nil
}
