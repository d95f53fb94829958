package maintain

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"strings"
	"sync"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore/internal/parallel"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

// DefaultOrphanAge is how old an unreferenced file must be before
// RemoveOrphanFiles deletes it when OlderThan is not given: one day, as
// OrphanFilesClean.olderThanMillis. Writers publish their data files and
// manifests before the snapshot that refers to them, so keep the time
// between writing a file and committing it far below this.
const DefaultOrphanAge = 24 * time.Hour

// readAttempts is OrphanFilesClean.READ_FILE_RETRY_NUM.
const readAttempts = 3

// RemoveOrphanFilesOptions are the arguments of Paimon's
// remove_orphan_files procedure.
type RemoveOrphanFilesOptions struct {
	// OlderThan: only files last modified before it are deleted; zero
	// means now - DefaultOrphanAge. It must lie in the past.
	OlderThan time.Time
	// DryRun lists the files that would be deleted without deleting them.
	DryRun bool

	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Progress, when set, is told about the phases and the files deleted.
	Progress Progress
	// Logger receives notes about skipped snapshots; nil discards them.
	Logger *slog.Logger
}

// RemoveOrphanFiles deletes the files of the table at tablePath that no
// snapshot, tag or changelog (of the table or of one of its branches)
// refers to and that were last modified before OlderThan, as Java's
// LocalOrphanFilesClean does (apache/paimon 1.4:
// paimon-core/src/main/java/org/apache/paimon/operation/OrphanFilesClean.java,
// LocalOrphanFilesClean.java):
//
//   - first, what interrupted snapshot expiries left: their journals
//     (snapshot/EXPIRING-N) are finished as ExpireSnapshots finishes them;
//   - in snapshot/ and changelog/ every file that is not snapshot-N /
//     changelog-N, a hint or an expiry journal (leftover
//     .snapshot-N.<uuid>.tmp and the like);
//   - in manifest/, index/, statistics/ and the bucket directories of the
//     data (<partition>/bucket-N/) every file whose name no manifest list,
//     manifest, index manifest, statistics file, data file or extra file
//     of a retained snapshot, tag or changelog has.
//
// Snapshots a consumer pins are retained snapshots, so their files stay.
// schema/, consumer/, tag/ and branch metadata are never touched. Emptied
// bucket and partition directories are removed on a local disk.
//
// A metadata file that a snapshot or tag still refers to and that cannot be
// read stops the run before anything is deleted (the error wraps
// ErrUnsafe); Java instead treats it as empty when it is missing, which
// lakecore only does when the snapshot that referred to it was expired
// meanwhile. Files that cannot be deleted are counted in the Report and the
// error wraps ErrIncomplete.
func RemoveOrphanFiles(ctx context.Context, fio storage.FileIO, tablePath string, o RemoveOrphanFilesOptions) (*Report, error) {
	start := time.Now()
	now := orNow(o.Now)
	rep := newReport(OpRemoveOrphanFiles, tablePath, o.DryRun)
	defer rep.finish(start)
	olderThan := o.OlderThan
	if olderThan.IsZero() {
		olderThan = now().Add(-DefaultOrphanAge)
	} else if !olderThan.Before(now()) {
		return rep, fmt.Errorf("remove orphan files of %s: %w: older_than %s must be before now, or files being written would be deleted",
			tablePath, ErrInvalidOptions, olderThan.Format(time.RFC3339))
	}
	t, err := loadTable(ctx, fio, tablePath, o.Logger)
	if err != nil {
		return rep, fmt.Errorf("remove orphan files: %w", err)
	}
	rep.Table = t.path
	progress := serialize(o.Progress)
	c := &orphanCleaner{t: t, olderThan: olderThan, rep: rep, del: newDeleter(fio, rep, o.DryRun, progress), progress: progress}
	if err := c.clean(ctx); err != nil {
		return rep, fmt.Errorf("remove orphan files of %s: %w", t.path, err)
	}
	return rep, rep.incomplete()
}

type orphanCleaner struct {
	t         *table
	olderThan time.Time
	rep       *Report
	del       *deleter
	progress  Progress
}

func (c *orphanCleaner) event(phase string, done, total int) {
	if c.progress != nil {
		c.progress(Event{Operation: OpRemoveOrphanFiles, Phase: phase, Done: done, Total: total})
	}
}

func (c *orphanCleaner) oldEnough(fi storage.FileInfo) bool {
	return !fi.IsDir && fi.ModTime.Before(c.olderThan)
}

// candidate is a file that may be an orphan.
type candidate struct {
	info storage.FileInfo
	data bool
}

func (c *orphanCleaner) clean(ctx context.Context) error {
	t := c.t
	if !c.del.dryRun {
		// What an interrupted snapshot expiry left is deleted by its journal,
		// young or old (expire_journal.go).
		n, err := t.finishPendingExpiries(ctx, c.del)
		c.rep.SnapshotsExpired += n
		if err != nil {
			return err
		}
	}
	roots, err := c.branchRoots(ctx)
	if err != nil {
		return err
	}
	// Stray files of the snapshot and changelog directories; they are
	// deleted with the other orphans, after the files in use were read
	// successfully.
	var stray []fileRef
	for _, root := range roots {
		for _, d := range []struct{ dir, prefix string }{{"snapshot", "snapshot-"}, {"changelog", "changelog-"}} {
			infos, err := t.fio.List(ctx, path.Join(root, d.dir), false)
			if err != nil {
				return err
			}
			for _, fi := range infos {
				name := path.Base(fi.Path)
				if c.oldEnough(fi) && !strings.HasPrefix(name, d.prefix) && name != snapshot.EarliestHint && name != snapshot.LatestHint && !isJournal(name) {
					stray = append(stray, fileRef{path: fi.Path, size: fi.Size})
				}
			}
		}
	}

	// Candidates before the files in use: a file committed meanwhile is
	// young, so it is never a candidate.
	c.event("list files", 0, 0)
	cands, err := c.candidates(ctx)
	if err != nil {
		return err
	}
	used := map[string]bool{}
	if len(cands) > 0 {
		c.event("read metadata", 0, 0)
		if used, err = c.usedFiles(ctx, roots); err != nil {
			return err
		}
	}
	orphans := stray
	dirs := map[string]bool{}
	for _, cd := range cands {
		if used[path.Base(cd.info.Path)] {
			continue
		}
		orphans = append(orphans, fileRef{path: cd.info.Path, size: cd.info.Size, data: cd.data})
		if cd.data {
			dirs[path.Dir(cd.info.Path)] = true
		}
	}
	if err := c.del.delete(ctx, "delete orphan files", orphans); err != nil {
		return err
	}
	if !c.del.dryRun {
		t.removeEmptyDirs(ctx, dirs)
	}
	return nil
}

// branchRoots returns the table path and the paths of its branches
// (branch/branch-<name>); a branch without a schema stops the run, as in
// OrphanFilesClean.validBranches.
func (c *orphanCleaner) branchRoots(ctx context.Context) ([]string, error) {
	t := c.t
	roots := []string{t.path}
	infos, err := t.fio.List(ctx, path.Join(t.path, "branch"), false)
	if err != nil {
		return nil, err
	}
	for _, fi := range infos {
		if !fi.IsDir || !strings.HasPrefix(path.Base(fi.Path), "branch-") {
			continue
		}
		if _, err := schema.NewManager(t.fio, fi.Path).Latest(ctx); err != nil {
			return nil, fmt.Errorf("%w: branch %s has no readable schema (%v); check it manually", ErrUnsafe, fi.Path, err)
		}
		roots = append(roots, fi.Path)
	}
	return roots, nil
}

// candidates lists the old-enough files of manifest/, index/, statistics/
// and the bucket directories (OrphanFilesClean.listPaimonFileDirs).
func (c *orphanCleaner) candidates(ctx context.Context) ([]candidate, error) {
	t := c.t
	var out []candidate
	for _, d := range []string{"manifest", "index", "statistics"} {
		infos, err := t.fio.List(ctx, path.Join(t.path, d), false)
		if err != nil {
			return nil, err
		}
		for _, fi := range infos {
			if c.oldEnough(fi) {
				out = append(out, candidate{info: fi})
			}
		}
	}
	buckets, err := c.bucketDirs(ctx, t.dataRoot(), len(t.partFields))
	if err != nil {
		return nil, err
	}
	for _, b := range buckets {
		infos, err := t.fio.List(ctx, b, false)
		if err != nil {
			return nil, err
		}
		for _, fi := range infos {
			if c.oldEnough(fi) {
				out = append(out, candidate{info: fi, data: true})
			}
		}
	}
	return out, nil
}

// bucketDirs descends level partition levels (directories whose names
// contain "=") and returns the bucket-* directories below.
func (c *orphanCleaner) bucketDirs(ctx context.Context, dir string, level int) ([]string, error) {
	infos, err := c.t.fio.List(ctx, dir, false)
	if err != nil {
		return nil, err
	}
	var out []string
	for _, fi := range infos {
		if !fi.IsDir {
			continue
		}
		name := path.Base(fi.Path)
		if level == 0 {
			if strings.HasPrefix(name, "bucket-") {
				out = append(out, fi.Path)
			}
			continue
		}
		if strings.Contains(name, "=") {
			sub, err := c.bucketDirs(ctx, fi.Path, level-1)
			if err != nil {
				return nil, err
			}
			out = append(out, sub...)
		}
	}
	return out, nil
}

// metaRoot is a snapshot, tag or changelog whose files are in use, with
// the file that defines it: if a file it refers to is missing, the root
// still existing means the table is damaged, not that it expired.
type metaRoot struct {
	snap *snapshot.Snapshot
	file string
	// changelog marks a long-lived changelog: snapshot expiry deleted the
	// base and delta manifest lists and index manifest of one whose
	// changelog-producer writes changelog files, so a missing file it
	// names is expected, and read as empty as Java does
	// (OrphanFilesClean.retryReadingFiles).
	changelog bool
}

// usedFiles returns the names of every file the retained snapshots, tags
// and changelogs of all roots use (OrphanFilesClean.collectWithoutDataFile
// and LocalOrphanFilesClean.getUsedFiles).
func (c *orphanCleaner) usedFiles(ctx context.Context, roots []string) (map[string]bool, error) {
	t := c.t
	var metas []metaRoot
	for _, root := range roots {
		rs, err := c.rootsOf(ctx, root)
		if err != nil {
			return nil, err
		}
		metas = append(metas, rs...)
	}
	var mu sync.Mutex
	used := map[string]bool{}
	// manifest name -> its record and the defining file of a root using it
	type manifestUse struct {
		meta manifest.FileMeta
		root metaRoot
	}
	manifests := map[string]manifestUse{}
	use := func(names ...string) {
		mu.Lock()
		for _, n := range names {
			used[n] = true
		}
		mu.Unlock()
	}
	err := parallel.ForEach(ctx, ioParallelism, len(metas), func(ctx context.Context, i int) error {
		r := metas[i]
		s := r.snap
		lists := manifest.DataLists(s)
		if l, ok := manifest.ChangelogList(s); ok {
			lists = append(lists, l)
		}
		for _, l := range lists {
			if l.Name == "" {
				continue
			}
			use(l.Name)
			var ms []manifest.FileMeta
			gone, err := c.read(ctx, r, func() error {
				var err error
				ms, err = t.manifests.ReadList(ctx, l)
				return err
			})
			if err != nil {
				return err
			}
			if gone {
				if r.changelog {
					continue // a list snapshot expiry deleted; the others still count
				}
				return nil
			}
			mu.Lock()
			for _, m := range ms {
				used[m.FileName] = true
				if _, ok := manifests[m.FileName]; !ok {
					manifests[m.FileName] = manifestUse{meta: m, root: r}
				}
			}
			mu.Unlock()
		}
		if s.IndexManifest != nil && *s.IndexManifest != "" {
			name := *s.IndexManifest
			var entries []manifest.IndexEntry
			gone, err := c.read(ctx, r, func() error {
				var err error
				entries, err = t.manifests.ReadIndexEntries(ctx, name)
				return err
			})
			if err != nil {
				return err
			}
			if !gone {
				use(name)
				for _, e := range entries {
					use(e.FileName)
				}
			}
		}
		if s.Statistics != nil && *s.Statistics != "" {
			use(*s.Statistics)
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	names := make([]string, 0, len(manifests))
	for n := range manifests {
		names = append(names, n)
	}
	err = parallel.ForEach(ctx, ioParallelism, len(names), func(ctx context.Context, i int) error {
		var entries []manifest.Entry
		m := manifests[names[i]]
		gone, err := c.read(ctx, m.root, func() error {
			var err error
			entries, err = t.manifests.ReadManifest(ctx, &m.meta)
			return err
		})
		if err != nil || gone {
			return err
		}
		mu.Lock()
		for j := range entries {
			used[entries[j].File.FileName] = true
			for _, x := range entries[j].File.ExtraFiles {
				used[x] = true
			}
		}
		mu.Unlock()
		c.event("read metadata", i+1, len(names))
		return nil
	})
	if err != nil {
		return nil, err
	}
	return used, nil
}

// read runs fn up to readAttempts times. A missing file is fine (gone is
// true) only when the root that referred to it no longer exists; any other
// failure wraps ErrUnsafe.
func (c *orphanCleaner) read(ctx context.Context, r metaRoot, fn func() error) (gone bool, err error) {
	for attempt := 0; attempt < readAttempts; attempt++ {
		err = fn()
		if err == nil {
			return false, nil
		}
		if ctx.Err() != nil {
			return false, ctx.Err()
		}
		if errors.Is(err, storage.ErrNotExist) {
			if r.changelog {
				return true, nil
			}
			there, serr := storage.Exists(ctx, c.t.fio, r.file)
			if serr != nil {
				return false, fmt.Errorf("%w: %v", ErrUnsafe, serr)
			}
			if !there {
				c.t.log.Info("skip expired snapshot while collecting used files", "file", r.file)
				return true, nil
			}
			return false, fmt.Errorf("%w: %v, but %s still refers to it", ErrUnsafe, err, r.file)
		}
	}
	return false, fmt.Errorf("%w: %v", ErrUnsafe, err)
}

// rootsOf returns the snapshots, tags and changelogs of one branch root.
func (c *orphanCleaner) rootsOf(ctx context.Context, root string) ([]metaRoot, error) {
	t := c.t
	sm := snapshot.NewManager(t.fio, root)
	ids, err := sm.ListIDs(ctx)
	if err != nil {
		return nil, err
	}
	snaps := make([]*snapshot.Snapshot, len(ids))
	err = parallel.ForEach(ctx, ioParallelism, len(ids), func(ctx context.Context, i int) error {
		s, err := sm.Get(ctx, ids[i])
		if errors.Is(err, snapshot.ErrSnapshotNotFound) {
			return nil // expired while listing
		}
		if err != nil {
			return fmt.Errorf("%w: %v", ErrUnsafe, err)
		}
		snaps[i] = s
		return nil
	})
	if err != nil {
		return nil, err
	}
	var out []metaRoot
	for i, s := range snaps {
		if s != nil {
			out = append(out, metaRoot{snap: s, file: sm.Path(ids[i])})
		}
	}
	tm := snapshot.NewTagManager(t.fio, root)
	tags, err := tm.List(ctx)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrUnsafe, err)
	}
	for _, tag := range tags {
		out = append(out, metaRoot{snap: tag.Snapshot, file: tm.Path(tag.Name)})
	}
	// Long-lived changelogs (changelog/changelog-N) are snapshot-shaped.
	infos, err := t.fio.List(ctx, path.Join(root, "changelog"), false)
	if err != nil {
		return nil, err
	}
	for _, fi := range infos {
		name := path.Base(fi.Path)
		if fi.IsDir || !strings.HasPrefix(name, "changelog-") {
			continue
		}
		data, err := t.fio.ReadFile(ctx, fi.Path)
		if errors.Is(err, storage.ErrNotExist) {
			continue
		}
		if err != nil {
			return nil, fmt.Errorf("%w: %v", ErrUnsafe, err)
		}
		s, err := snapshot.Parse(data)
		if err != nil {
			return nil, fmt.Errorf("%w: changelog %s: %v", ErrUnsafe, fi.Path, err)
		}
		out = append(out, metaRoot{snap: s, file: fi.Path, changelog: true})
	}
	return out, nil
}
