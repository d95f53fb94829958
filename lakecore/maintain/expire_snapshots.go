package maintain

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore/internal/parallel"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

// ExpireSnapshotsOptions are the overrides of Paimon's expire_snapshots
// procedure (retain_max, retain_min, older_than, max_deletes); a zero field
// takes the table option named in its comment, as
// ProcedureUtils.fillInSnapshotOptions does.
type ExpireSnapshotsOptions struct {
	// RetainMax is the most snapshots to keep (snapshot.num-retained.max,
	// default Integer.MAX_VALUE).
	RetainMax int
	// RetainMin is the fewest snapshots to keep (snapshot.num-retained.min,
	// default 10); at least 1.
	RetainMin int
	// OlderThan: only snapshots committed before it may expire; zero means
	// now - snapshot.time-retained (default 1 h).
	OlderThan time.Time
	// MaxDeletes is the most snapshots to expire in one run
	// (snapshot.expire.limit, default 50).
	MaxDeletes int
	// DryRun reports what would be deleted without deleting anything or
	// writing the EARLIEST hint.
	DryRun bool

	// Now is the clock (time.Now when nil).
	Now func() time.Time
	// Progress, when set, is told about the files deleted.
	Progress Progress
	// Logger receives the warnings Java logs (unreadable manifests whose
	// files are then kept); nil discards them.
	Logger *slog.Logger
}

// expireConfig is ExpireConfig resolved from the options and the table.
type expireConfig struct {
	retainMax, retainMin, maxDeletes int
	olderThanMillis                  int64
	consumerChangelogOnly            bool
	cleanEmptyDirs                   bool

	// decoupled is ExpireConfig.isChangelogDecoupled: the changelog is
	// retained longer than the snapshots (changelog.num-retained.max/min or
	// changelog.time-retained above the snapshot's), with the changelog's
	// own retention below; produceChangelog is changelog-producer != none
	// (SnapshotDeletion.produceChangelog).
	decoupled                              bool
	produceChangelog                       bool
	changelogRetainMax, changelogRetainMin int
	changelogOlderThanMillis               int64
}

func resolveExpireConfig(o schema.Options, e ExpireSnapshotsOptions, now time.Time) (expireConfig, error) {
	var c expireConfig
	var err error
	if c.retainMax, err = optionOr(e.RetainMax, o.SnapshotNumRetainedMax); err != nil {
		return c, err
	}
	if c.retainMin, err = optionOr(e.RetainMin, o.SnapshotNumRetainedMin); err != nil {
		return c, err
	}
	if c.maxDeletes, err = optionOr(e.MaxDeletes, o.SnapshotExpireLimit); err != nil {
		return c, err
	}
	timeRetained, err := o.SnapshotTimeRetained()
	if err != nil {
		return c, err
	}
	if e.OlderThan.IsZero() {
		c.olderThanMillis = now.Add(-timeRetained).UnixMilli()
	} else {
		c.olderThanMillis = e.OlderThan.UnixMilli()
	}
	switch {
	case c.retainMin < 1:
		return c, fmt.Errorf("%w: snapshot.num-retained.min %d must be at least 1", ErrInvalidOptions, c.retainMin)
	case c.retainMax < c.retainMin:
		return c, fmt.Errorf("%w: retainMax (%d) must not be less than retainMin (%d)", ErrInvalidOptions, c.retainMax, c.retainMin)
	case c.maxDeletes < 0:
		return c, fmt.Errorf("%w: max_deletes %d is negative", ErrInvalidOptions, c.maxDeletes)
	}
	if v, ok := o.Get("consumer.changelog-only"); ok {
		c.consumerChangelogOnly = strings.EqualFold(strings.TrimSpace(v), "true")
	}
	if c.cleanEmptyDirs, err = o.SnapshotCleanEmptyDirectories(); err != nil {
		return c, err
	}
	// The changelog's retention takes the snapshot's where it is not set
	// (ExpireConfig.Builder.build); it is decoupled when it is longer
	// (ExpireConfig.changelogDecoupled, CoreOptions.changelogLifecycleDecoupled).
	c.changelogRetainMax, c.changelogRetainMin, c.changelogOlderThanMillis = c.retainMax, c.retainMin, c.olderThanMillis
	for _, k := range []struct {
		key       string
		snap      int
		changelog *int
	}{{"changelog.num-retained.max", c.retainMax, &c.changelogRetainMax}, {"changelog.num-retained.min", c.retainMin, &c.changelogRetainMin}} {
		if v, ok := o.Get(k.key); ok {
			n, err := parseInt(v)
			if err != nil {
				return c, fmt.Errorf("%w: %s=%q: %v", ErrInvalidOptions, k.key, v, err)
			}
			*k.changelog = n
			c.decoupled = c.decoupled || n > k.snap
		}
	}
	if v, ok := o.Get("changelog.time-retained"); ok {
		d, err := schema.ParseDuration(v)
		if err != nil {
			return c, fmt.Errorf("%w: changelog.time-retained=%q: %v", ErrInvalidOptions, v, err)
		}
		c.changelogOlderThanMillis = now.Add(-d).UnixMilli()
		c.decoupled = c.decoupled || d > timeRetained
	}
	switch {
	case c.changelogRetainMin < 1:
		return c, fmt.Errorf("%w: changelog.num-retained.min %d must be at least 1", ErrInvalidOptions, c.changelogRetainMin)
	case c.changelogRetainMax < c.changelogRetainMin:
		return c, fmt.Errorf("%w: changelog.num-retained.max (%d) must not be less than changelog.num-retained.min (%d)", ErrInvalidOptions, c.changelogRetainMax, c.changelogRetainMin)
	}
	if p, ok := o.Get("changelog-producer"); ok && !strings.EqualFold(strings.TrimSpace(p), "none") {
		c.produceChangelog = true
	}
	return c, nil
}

func parseInt(s string) (int, error) { return strconv.Atoi(strings.TrimSpace(s)) }

// ExpireSnapshots expires old snapshots of the table at tablePath (relative
// to fio's root) as Java's ExpireSnapshotsImpl.expire does (apache/paimon
// 1.4: paimon-core/src/main/java/org/apache/paimon/table/ExpireSnapshotsImpl.java):
//
//   - with latest and earliest the newest and oldest snapshot ids, the
//     snapshots [earliest, end) expire, where end is the smallest of
//     latest - RetainMin + 1, the smallest nextSnapshot of the table's
//     consumers (unless consumer.changelog-only), earliest + MaxDeletes,
//     and the first snapshot from max(latest - RetainMax + 1, earliest) on
//     that is not older than OlderThan;
//   - data files are deleted only when a DELETE entry in the delta of a
//     snapshot in (earliest, end] removed them (and no ADD in the same
//     delta brought them back) and the nearest tag before that snapshot
//     does not hold them (SnapshotDeletion.cleanUnusedDataFiles); changelog
//     files of the expired snapshots go too;
//   - then the manifests, manifest lists, index manifests, index files and
//     statistics files of the expired snapshots that neither snapshot end
//     nor a tag in the range uses (FileDeletionBase.cleanUnusedManifests);
//   - the snapshot files are deleted first, oldest first, then the EARLIEST
//     hint (= end) is written, and only then the files above: Java deletes
//     the snapshot files last, so that a crash leaves listed snapshots
//     without their files. Everything is planned before anything changes,
//     and the plan is kept in a journal that the next ExpireSnapshots or
//     RemoveOrphanFiles finishes after a crash (expire_journal.go): at
//     every point where a crash can stop the run, every listed snapshot
//     keeps all its files.
//
// Primary-key tables follow the same rules (SnapshotDeletion does not tell
// the table kinds apart): a compaction's inputs and a partition drop's
// files go with the DELETE entries of their snapshot, a level upgrade
// (DELETE and ADD of one file in one delta) keeps its file, the changelog
// files of every expired snapshot (changelog-producer input, lookup,
// full-compaction) go with it, and deletion-vector and dynamic-bucket hash
// index files go when the index manifest of snapshot end (and of the tags
// in the range) no longer lists them.
//
// When the changelog is retained longer than the snapshots
// (changelog.num-retained.max/min or changelog.time-retained above the
// snapshot retention: ExpireConfig.isChangelogDecoupled), every expired
// snapshot is kept as changelog/changelog-<id> (its JSON, written before
// any snapshot file goes) with what its changelog needs: its changelog
// files and changelog manifest list, or with changelog-producer none its
// level-0 APPEND files and its base and delta manifest lists
// (SnapshotDeletion with changelogDecoupled). Then the changelogs expire
// by their own retention (expireChangelogs), as Java's writers run
// ExpireChangelogImpl after ExpireSnapshotsImpl; Report.ChangelogsExpired
// counts them. (Java's expire_snapshots procedure instead ignores the
// changelog options and expires changelogs with the snapshots.)
//
// A manifest that cannot be read only keeps files (as in Java): the run
// goes on. Files that cannot be deleted are counted in the Report and the
// error wraps ErrIncomplete; inconsistent retention options wrap
// ErrInvalidOptions.
// It is safe while writers commit; expiring concurrently with another
// expiry is not coordinated (as in Java). Consumers are not expired here:
// Java's writers first delete consumers idle longer than
// consumer.expiration-time (snapshot.ConsumerManager.ExpireBefore), so that
// an abandoned consumer does not pin snapshots forever.
func ExpireSnapshots(ctx context.Context, fio storage.FileIO, tablePath string, o ExpireSnapshotsOptions) (*Report, error) {
	start := time.Now()
	now := orNow(o.Now)
	rep := newReport(OpExpireSnapshots, tablePath, o.DryRun)
	defer rep.finish(start)
	t, err := loadTable(ctx, fio, tablePath, o.Logger)
	if err != nil {
		return rep, fmt.Errorf("expire snapshots: %w", err)
	}
	rep.Table = t.path
	cfg, err := resolveExpireConfig(t.opts, o, now())
	if err != nil {
		return rep, fmt.Errorf("expire snapshots of %s: %w", t.path, err)
	}
	e := &expirer{t: t, cfg: cfg, rep: rep, del: newDeleter(fio, rep, o.DryRun, o.Progress), dryRun: o.DryRun}
	if !o.DryRun {
		n, err := t.finishPendingExpiries(ctx, e.del)
		rep.SnapshotsExpired += n
		if err != nil {
			return rep, fmt.Errorf("expire snapshots of %s: %w", t.path, err)
		}
	}
	if err := e.expire(ctx); err != nil {
		return rep, fmt.Errorf("expire snapshots of %s: %w", t.path, err)
	}
	if cfg.decoupled {
		n, err := e.expireChangelogs(ctx)
		rep.ChangelogsExpired += n
		if err != nil {
			return rep, fmt.Errorf("expire changelogs of %s: %w", t.path, err)
		}
	}
	return rep, rep.incomplete()
}

type expirer struct {
	t      *table
	cfg    expireConfig
	rep    *Report
	del    *deleter
	dryRun bool
}

func (e *expirer) expire(ctx context.Context) error {
	sm := e.t.snapshots
	latest, ok, err := sm.LatestID(ctx)
	if err != nil || !ok {
		return err
	}
	earliest, ok, err := sm.EarliestID(ctx)
	if err != nil || !ok {
		return err
	}
	lo := max(latest-int64(e.cfg.retainMax)+1, earliest)
	maxExclusive := latest - int64(e.cfg.retainMin) + 1
	if !e.cfg.consumerChangelogOnly {
		next, has, err := snapshot.NewConsumerManager(e.t.fio, e.t.path).MinNextSnapshot(ctx)
		if err != nil {
			return err
		}
		if has {
			maxExclusive = min(maxExclusive, next)
		}
	}
	maxExclusive = min(maxExclusive, earliest+int64(e.cfg.maxDeletes))
	for id := lo; id < maxExclusive; id++ {
		s, err := sm.Get(ctx, id)
		if errors.Is(err, snapshot.ErrSnapshotNotFound) {
			continue // expired by another process meanwhile
		}
		if err != nil {
			return err
		}
		if e.cfg.olderThanMillis <= s.TimeMillis {
			return e.expireUntil(ctx, earliest, id)
		}
	}
	return e.expireUntil(ctx, earliest, maxExclusive)
}

// expireUntil is ExpireSnapshotsImpl.innerExpireUntil: it expires the
// snapshots [earliestID, endExclusive).
func (e *expirer) expireUntil(ctx context.Context, earliestID, endExclusive int64) error {
	t := e.t
	if endExclusive <= earliestID {
		// Nothing expires; write the hint if it is missing so that readers
		// find the earliest snapshot directly next time.
		if !e.dryRun {
			there, err := storage.Exists(ctx, t.fio, path.Join(t.snapshots.Dir(), snapshot.EarliestHint))
			if err != nil {
				return err
			}
			if !there {
				return t.snapshots.WriteEarliestHint(ctx, earliestID)
			}
		}
		return nil
	}
	withEnd, err := e.collectSnapshots(ctx, earliestID, endExclusive)
	if err != nil || len(withEnd) == 0 {
		return err
	}
	expiring := withEnd
	if withEnd[len(withEnd)-1].ID == endExclusive {
		expiring = withEnd[:len(withEnd)-1]
	}
	begin := withEnd[0].ID

	tags, err := e.taggedSnapshots(ctx)
	if err != nil {
		return err
	}

	// Plan everything before changing anything (expire_journal.go).
	run := &expiryRun{journal: expiryJournal{Earliest: endExclusive}}
	// Data files deleted by the snapshots (begin, end] are not used by
	// snapshot end or later ones. With a decoupled changelog and
	// changelog-producer none the level-0 files are the changelog: those
	// written by APPEND commits stay for the changelog expiry
	// (SnapshotDeletion.cleanUnusedDataFiles).
	skipAppend := e.cfg.decoupled && !e.cfg.produceChangelog
	if run.data, run.bucketDirs, err = e.planDataFiles(ctx, withEnd[1:], tags, skipAppend); err != nil {
		return err
	}
	// Changelog files of the expired snapshots (none for append tables),
	// unless they outlive the snapshots.
	if !e.cfg.decoupled {
		changelog, err := e.planChangelogFiles(ctx, expiring)
		if err != nil {
			return err
		}
		run.data = append(run.data, changelog...)
	}

	last := withEnd[len(withEnd)-1]
	// When snapshot end is gone (expired by another process) its manifests
	// cannot be protected, so they stay, as in Java.
	if last.ID == endExclusive {
		skipping := append(skippingTags(tags, begin, endExclusive), last)
		skip, err := e.manifestSkippingSet(ctx, skipping)
		if err != nil {
			t.log.Warn("skip cleaning manifest files: cannot build the set of manifests in use", "table", t.path, "error", err)
		} else {
			// SnapshotDeletion.cleanUnusedManifests: a decoupled changelog
			// keeps the changelog lists, and with changelog-producer none
			// also the base and delta lists, for the changelog expiry.
			c := manifestCleaning{
				dataLists: !e.cfg.decoupled || e.cfg.produceChangelog,
				changelog: !e.cfg.decoupled,
				indexes:   true,
			}
			if run.files, err = e.planManifests(ctx, expiring, skip, c); err != nil {
				return err
			}
		}
	}
	for _, s := range expiring {
		run.journal.Snapshots = append(run.journal.Snapshots, s.ID)
	}
	if e.cfg.decoupled {
		// Each expired snapshot lives on as changelog/changelog-<id>
		// (ExpireSnapshotsImpl.commitChangelog), written before any
		// snapshot file goes.
		run.journal.Changelogs = run.journal.Snapshots
	}
	e.rep.SnapshotsExpired += len(expiring)
	if len(expiring) > 0 {
		e.rep.ExpiredFrom, e.rep.ExpiredUntil = begin, endExclusive
	}
	if e.dryRun {
		snapFiles := make([]fileRef, len(expiring))
		for i, s := range expiring {
			snapFiles[i] = fileRef{path: t.snapshots.Path(s.ID), size: -1}
		}
		if err := e.del.delete(ctx, "delete snapshot files", snapFiles); err != nil {
			return err
		}
		if err := e.del.delete(ctx, "delete data files", run.data); err != nil {
			return err
		}
		return e.del.delete(ctx, "delete manifests", run.files)
	}
	run.journal.Data, run.journal.Files = t.relToTable(run.data), t.relToTable(run.files)
	if err := t.writeJournal(ctx, run); err != nil {
		return err
	}
	return t.applyExpiry(ctx, e.del, run, e.cfg.cleanEmptyDirs)
}

// collectSnapshots reads the snapshots [from, to] that exist.
func (e *expirer) collectSnapshots(ctx context.Context, from, to int64) ([]*snapshot.Snapshot, error) {
	got := make([]*snapshot.Snapshot, to-from+1)
	err := parallel.ForEach(ctx, ioParallelism, len(got), func(ctx context.Context, i int) error {
		s, err := e.t.snapshots.Get(ctx, from+int64(i))
		if errors.Is(err, snapshot.ErrSnapshotNotFound) {
			return nil
		}
		got[i] = s
		return err
	})
	if err != nil {
		return nil, err
	}
	return slices.DeleteFunc(got, func(s *snapshot.Snapshot) bool { return s == nil }), nil
}

// taggedSnapshots returns the distinct snapshots of the table's tags,
// sorted by id (TagManager.taggedSnapshots).
func (e *expirer) taggedSnapshots(ctx context.Context) ([]*snapshot.Snapshot, error) {
	tags, err := snapshot.NewTagManager(e.t.fio, e.t.path).List(ctx)
	if err != nil {
		return nil, err
	}
	var out []*snapshot.Snapshot
	for _, tag := range tags {
		if len(out) == 0 || out[len(out)-1].ID != tag.Snapshot.ID {
			out = append(out, tag.Snapshot)
		}
	}
	return out, nil
}

// previousIndex is SnapshotManager.findPreviousSnapshot: the index of the
// last of sorted with id < target, or -1.
func previousIndex(sorted []*snapshot.Snapshot, target int64) int {
	for i := len(sorted) - 1; i >= 0; i-- {
		if sorted[i].ID < target {
			return i
		}
	}
	return -1
}

// skippingTags is ExpireSnapshotsImpl.findSkippingTags: the tags from the
// last one at or before begin to the last one before end.
func skippingTags(tags []*snapshot.Snapshot, begin, end int64) []*snapshot.Snapshot {
	right := previousIndex(tags, end)
	if right < 0 {
		return nil
	}
	left := 0
	for i := len(tags) - 1; i >= 0; i-- {
		if tags[i].ID <= begin {
			left = i
			break
		}
	}
	return slices.Clone(tags[left : right+1])
}

// bucketFiles is a set of data file names per partition and bucket.
type bucketFiles map[string]map[int32]map[string]bool

func (b bucketFiles) add(part []byte, bucket int32, name string) {
	m := b[string(part)]
	if m == nil {
		m = map[int32]map[string]bool{}
		b[string(part)] = m
	}
	if m[bucket] == nil {
		m[bucket] = map[string]bool{}
	}
	m[bucket][name] = true
}

func (b bucketFiles) has(part []byte, bucket int32, name string) bool {
	return b[string(part)][bucket][name]
}

// planDataFiles returns the data files that the deltas of snaps removed,
// unless the nearest earlier tag still holds them
// (FileDeletionBase.createDataFileSkipperForTags, cleanUnusedDataFiles),
// and their bucket directories.
func (e *expirer) planDataFiles(ctx context.Context, snaps []*snapshot.Snapshot, tags []*snapshot.Snapshot, skipAppend bool) ([]fileRef, map[string]bool, error) {
	t := e.t
	// The data files of each tag some snapshot needs; a tag that cannot be
	// read protects nothing, so its snapshots keep their files.
	tagFiles := map[int]bucketFiles{}
	tagFailed := map[int]bool{}
	for _, s := range snaps {
		i := previousIndex(tags, s.ID)
		if i < 0 || tagFiles[i] != nil || tagFailed[i] {
			continue
		}
		entries, err := t.liveEntries(ctx, tags[i])
		if err != nil {
			if ctx.Err() != nil {
				return nil, nil, ctx.Err()
			}
			t.log.Warn("skip cleaning data files: cannot read the tagged snapshot", "table", t.path, "tag_snapshot", tags[i].ID, "error", err)
			tagFailed[i] = true
			continue
		}
		files := bucketFiles{}
		for _, en := range entries {
			files.add(en.Partition, en.Bucket, en.File.FileName)
		}
		tagFiles[i] = files
	}

	perSnap := make([][]fileRef, len(snaps))
	buckets := make([]map[string]bool, len(snaps))
	err := parallel.ForEach(ctx, ioParallelism, len(snaps), func(ctx context.Context, k int) error {
		s := snaps[k]
		ti := previousIndex(tags, s.ID)
		if ti >= 0 && tagFailed[ti] {
			return nil
		}
		entries, ok, err := e.readDelta(ctx, s.DeltaManifestList, s.DeltaManifestListSize)
		if err != nil || !ok {
			return err
		}
		// A DELETE is only a candidate until an ADD of the same path in
		// the same delta brings the file back (a level upgrade).
		type cand struct {
			e    *manifest.Entry
			file string
			ext  []string
		}
		var order []string
		cands := map[string]*cand{}
		for i := range entries {
			en := &entries[i]
			file, extras, reachable, err := t.dataFilePaths(en.Partition, en.Bucket, &en.File)
			if err != nil {
				return fmt.Errorf("snapshot %d: %w", s.ID, err)
			}
			if !reachable {
				continue
			}
			switch en.Kind {
			case manifest.FileKindAdd:
				delete(cands, file)
			case manifest.FileKindDelete:
				if _, ok := cands[file]; !ok {
					order = append(order, file)
				}
				cands[file] = &cand{e: en, file: file, ext: extras}
			}
		}
		dirs := map[string]bool{}
		for _, f := range order {
			c := cands[f]
			if c == nil {
				continue
			}
			if ti >= 0 && tagFiles[ti].has(c.e.Partition, c.e.Bucket, c.e.File.FileName) {
				continue
			}
			// A file without a source is taken for an APPEND one, as Java does.
			if skipAppend && (c.e.File.FileSource == nil || *c.e.File.FileSource == fileSourceAppend) {
				continue
			}
			perSnap[k] = append(perSnap[k], fileRef{path: c.file, size: c.e.File.FileSize, data: true})
			for _, x := range c.ext {
				perSnap[k] = append(perSnap[k], fileRef{path: x, size: -1, data: true})
			}
			dirs[path.Dir(c.file)] = true
		}
		buckets[k] = dirs
		return nil
	})
	if err != nil {
		return nil, nil, err
	}
	var all []fileRef
	dirs := map[string]bool{}
	for k := range snaps {
		all = append(all, perSnap[k]...)
		for d := range buckets[k] {
			dirs[d] = true
		}
	}
	return all, dirs, nil
}

// readDelta reads all entries of a manifest list; ok is false (and the
// reason logged) when the list or one of its manifests cannot be read,
// which cancels the deletion for that list as in Java.
func (e *expirer) readDelta(ctx context.Context, list string, size *int64) ([]manifest.Entry, bool, error) {
	t := e.t
	metas, err := t.readManifestList(ctx, list, size)
	if err != nil {
		if ctx.Err() != nil {
			return nil, false, ctx.Err()
		}
		t.log.Warn("failed to read manifest list; its files are kept", "table", t.path, "error", err)
		return nil, false, nil
	}
	var all []manifest.Entry
	for i := range metas {
		entries, err := t.readManifest(ctx, &metas[i])
		if err != nil {
			if ctx.Err() != nil {
				return nil, false, ctx.Err()
			}
			t.log.Warn("failed to read some manifest files; cancel deletion", "table", t.path, "error", err)
			return nil, false, nil
		}
		all = append(all, entries...)
	}
	return all, true, nil
}

// planChangelogFiles returns the files added by the changelog manifest
// lists of snaps (FileDeletionBase.deleteAddedDataFiles).
func (e *expirer) planChangelogFiles(ctx context.Context, snaps []*snapshot.Snapshot) ([]fileRef, error) {
	t := e.t
	var files []fileRef
	for _, s := range snaps {
		if s.ChangelogManifestList == nil || *s.ChangelogManifestList == "" {
			continue
		}
		metas, err := t.readManifestList(ctx, *s.ChangelogManifestList, s.ChangelogManifestListSize)
		if err != nil {
			t.log.Warn("failed to read changelog manifest list", "table", t.path, "error", err)
			continue
		}
		for i := range metas {
			entries, err := t.readManifest(ctx, &metas[i])
			if err != nil {
				t.log.Info("failed to read changelog manifest; ignore it", "table", t.path, "error", err)
				continue
			}
			for j := range entries {
				en := &entries[j]
				if en.Kind != manifest.FileKindAdd {
					continue
				}
				file, _, ok, err := t.dataFilePaths(en.Partition, en.Bucket, &en.File)
				if err != nil {
					return nil, err
				}
				if ok {
					files = append(files, fileRef{path: file, size: en.File.FileSize, data: true})
				}
			}
		}
	}
	return files, nil
}

// manifestSkippingSet is FileDeletionBase.manifestSkippingSet: every
// manifest list, manifest, index manifest, index file and statistics file
// the given snapshots use.
func (e *expirer) manifestSkippingSet(ctx context.Context, snaps []*snapshot.Snapshot) (map[string]bool, error) {
	t := e.t
	skip := map[string]bool{}
	for _, s := range snaps {
		skip[s.BaseManifestList] = true
		skip[s.DeltaManifestList] = true
		metas, err := t.dataManifests(ctx, s)
		if err != nil {
			return nil, err
		}
		for _, m := range metas {
			skip[m.FileName] = true
		}
		if s.IndexManifest != nil && *s.IndexManifest != "" {
			skip[*s.IndexManifest] = true
			entries, err := manifest.ReadIndexEntries(ctx, t.fio, t.path, *s.IndexManifest)
			if err != nil {
				return nil, fmt.Errorf("snapshot %d: %w", s.ID, err)
			}
			for _, ie := range entries {
				skip[ie.FileName] = true
			}
		}
		if s.Statistics != nil && *s.Statistics != "" {
			skip[*s.Statistics] = true
		}
	}
	return skip, nil
}

// fileSourceAppend is FileSource.APPEND, the _FILE_SOURCE of files a
// writer flushed (COMPACT is 1).
const fileSourceAppend = 0

// manifestCleaning says which metadata of a snapshot planManifests
// deletes: its base and delta manifest lists with their manifests, its
// changelog manifest list with its manifests, its index manifest with the
// index files and its statistics file.
type manifestCleaning struct {
	dataLists, changelog, indexes bool
}

// planManifests returns what the expired snapshots used and skip does not
// hold (FileDeletionBase.cleanUnusedManifests: base and delta manifest
// lists with their manifests, the changelog list, index manifests with
// their index files, statistics), of the kinds c names.
func (e *expirer) planManifests(ctx context.Context, snaps []*snapshot.Snapshot, skip map[string]bool, c manifestCleaning) ([]fileRef, error) {
	t := e.t
	var files []fileRef
	cleanList := func(name string, size *int64) {
		metas, err := t.readManifestList(ctx, name, size)
		if err != nil {
			// Deleted by an interrupted earlier run, or unreadable: keep
			// its manifests (FileDeletionBase.tryReadManifestList).
			t.log.Warn("failed to read manifest list", "table", t.path, "error", err)
		}
		for _, m := range metas {
			if !skip[m.FileName] {
				files = append(files, fileRef{path: t.manifestPath(m.FileName), size: m.FileSize})
				skip[m.FileName] = true // another snapshot's list may share it
			}
		}
		if !skip[name] {
			sz := int64(-1)
			if size != nil {
				sz = *size
			}
			files = append(files, fileRef{path: t.manifestPath(name), size: sz})
		}
	}
	for _, s := range snaps {
		if c.dataLists {
			cleanList(s.BaseManifestList, s.BaseManifestListSize)
			cleanList(s.DeltaManifestList, s.DeltaManifestListSize)
		}
		if c.changelog && s.ChangelogManifestList != nil && *s.ChangelogManifestList != "" {
			cleanList(*s.ChangelogManifestList, s.ChangelogManifestListSize)
		}
		if !c.indexes {
			continue
		}
		if s.IndexManifest != nil && *s.IndexManifest != "" {
			entries, err := manifest.ReadIndexEntries(ctx, t.fio, t.path, *s.IndexManifest)
			switch {
			case errors.Is(err, storage.ErrNotExist):
				// deleted with an earlier snapshot
			case err != nil:
				return nil, fmt.Errorf("snapshot %d: %w", s.ID, err)
			default:
				for i := range entries {
					ie := &entries[i]
					if skip[ie.FileName] {
						continue
					}
					if p, ok := t.indexFilePath(ie); ok {
						files = append(files, fileRef{path: p, size: ie.FileSize})
					}
				}
				if !skip[*s.IndexManifest] {
					files = append(files, fileRef{path: t.manifestPath(*s.IndexManifest), size: -1})
				}
			}
		}
		if s.Statistics != nil && *s.Statistics != "" && !skip[*s.Statistics] {
			files = append(files, fileRef{path: t.statisticsPath(*s.Statistics), size: -1})
		}
	}
	return files, nil
}
