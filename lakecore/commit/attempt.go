package commit

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"math/rand/v2"
	"path"
	"strings"
	"time"

	"github.com/google/uuid"

	"github.com/benthos-paimon/benthos-paimon/lakecore/internal/pause"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

// changes is what one attempt commits, computed from the latest snapshot
// (Java's CommitChangesProvider).
type changes struct {
	entries []manifest.Entry
	// changelog are the ADD entries of changelog files, committed in the
	// snapshot's changelog manifest list (primary-key tables).
	changelog []manifest.Entry
	// fixed is true when entries do not depend on the latest snapshot, so
	// the delta manifests are written once for every attempt.
	fixed bool
	// indexManifest, when set, replaces the latest snapshot's index
	// manifest; newIndex says this attempt wrote that file.
	indexManifest *string
	newIndex      bool
	// dvFiles names, per bucket, the data files the commit's new
	// deletion-vectors files hold vectors of; each must be live after the
	// commit.
	dvFiles map[dvBucket][]string
	// properties go into the snapshot's properties (WithProperties).
	properties map[string]string
}

type changesFunc func(ctx context.Context, latest *snapshot.Snapshot) (changes, error)

// withProperties makes every attempt of provide carry props.
func withProperties(provide changesFunc, props map[string]string) changesFunc {
	if len(props) == 0 {
		return provide
	}
	return func(ctx context.Context, latest *snapshot.Snapshot) (changes, error) {
		ch, err := provide(ctx, latest)
		ch.properties = props
		return ch, err
	}
}

// fixedChangesWithLog gives the same entries and changelog files at every
// attempt.
func fixedChangesWithLog(entries, changelog []manifest.Entry) changesFunc {
	return func(context.Context, *snapshot.Snapshot) (changes, error) {
		return changes{entries: entries, changelog: changelog, fixed: true}, nil
	}
}

// overwriteChanges deletes every live file of the partitions keep accepts
// (all when nil) in the latest snapshot and adds adds
// (CommitScanner.readOverwriteChanges). Deletion-vector and other index
// entries of those partitions are dropped from the index manifest.
func (c *Committer) overwriteChanges(keep func([]byte) bool, adds, changelog []manifest.Entry) changesFunc {
	return func(ctx context.Context, latest *snapshot.Snapshot) (changes, error) {
		out := changes{changelog: changelog}
		if latest != nil {
			live, err := c.liveEntries(ctx, latest, keep)
			if err != nil {
				return out, err
			}
			for _, e := range live {
				// Bucket -2 holds a postpone table's uncompacted files; only
				// that table's overwrites drop them.
				if e.Bucket < 0 && !c.o.PostponeBucket {
					continue
				}
				e.Kind = manifest.FileKindDelete
				out.entries = append(out.entries, e)
			}
			if latest.IndexManifest != nil {
				name, written, err := c.dropIndexEntries(ctx, *latest.IndexManifest, keep)
				if err != nil {
					return out, err
				}
				out.indexManifest, out.newIndex = &name, written
			}
		}
		out.entries = append(out.entries, adds...)
		return out, nil
	}
}

// dropIndexEntries writes a new index manifest without the entries of the
// partitions keep accepts, or returns the old name when none is dropped.
func (c *Committer) dropIndexEntries(ctx context.Context, name string, keep func([]byte) bool) (string, bool, error) {
	entries, err := c.manifests.ReadIndexEntries(ctx, name)
	if err != nil {
		return "", false, err
	}
	kept := entries[:0:0]
	for _, e := range entries {
		if e.Kind == manifest.FileKindAdd && (keep == nil || keep(e.Partition)) {
			continue
		}
		kept = append(kept, e)
	}
	if len(kept) == len(entries) {
		return name, false, nil
	}
	data, err := c.encoder.EncodeIndexEntries(kept)
	if err != nil {
		return "", false, err
	}
	newName := "index-manifest-" + uuid.NewString() + "-0"
	if err := c.fio.WriteExclusive(ctx, c.manifestPath(newName), data); err != nil {
		return "", false, fmt.Errorf("write index manifest: %w", err)
	}
	return newName, true, nil
}

// delta is the delta manifests and delta manifest list of a commit, reused
// by every attempt whose entries are the same.
type delta struct {
	signature string
	metas     []manifest.FileMeta
	list      string
	listSize  int64
	// The changelog manifests and list, when the commit has changelog files.
	logMetas    []manifest.FileMeta
	logList     string
	logListSize int64
	// pinned: an attempt with an unknown outcome referenced these files, so
	// they may belong to a snapshot and are never deleted.
	pinned bool
}

type outcome int

const (
	committed  outcome = iota
	idTaken            // another writer created snapshot-<id>: retry
	uncertain          // the snapshot write failed in an unknown way: look, then retry
	failed             // preparing failed or a conflict: give up
	unresolved         // a created snapshot may be stale: give up, outcome unknown
)

// tryCommit is FileStoreCommitImpl.tryCommit: attempts until one commits,
// a conflict or preparation error stops it, or retries run out.
func (c *Committer) tryCommit(ctx context.Context, identifier int64, kind snapshot.CommitKind, detectConflicts bool, provide changesFunc) (*snapshot.Snapshot, error) {
	start := time.Now()
	var d *delta
	checkAfter := int64(-1) // FindCommit lower bound once an attempt was uncertain
	for retry := 0; ; retry++ {
		// A LATEST hint left behind may name a snapshot that expiry deleted.
		latest, err := c.snapshots.LatestExisting(ctx)
		if err != nil {
			return nil, c.giveUp(ctx, d, checkAfter >= 0, fmt.Errorf("commit to %s: read latest snapshot: %w", c.tablePath, err))
		}
		if checkAfter >= 0 {
			// FileStoreCommitImpl.tryCommitOnce: after a CommitFailRetryResult
			// look for our own snapshot before writing another one.
			found, err := c.findLanded(ctx, identifier, kind, checkAfter)
			if found != nil {
				return found, nil
			}
			if err != nil && !errors.Is(err, errRetry) {
				return nil, c.giveUp(ctx, d, true, fmt.Errorf("commit to %s: %w", c.tablePath, err))
			}
		}
		snap, res, err := c.attempt(ctx, latest, identifier, kind, detectConflicts, provide, &d)
		if res == failed && c.baseExpired(ctx, latest, err) {
			res = idTaken // expiry removed the base meanwhile: start from the new latest
		}
		switch res {
		case committed:
			return snap, nil
		case failed:
			return nil, c.giveUp(ctx, d, false, err)
		case unresolved:
			d.pinned = true
			return nil, c.giveUp(ctx, d, true, err)
		case uncertain:
			d.pinned = true
			after := int64(0)
			if latest != nil {
				after = latest.ID
			}
			if checkAfter < 0 || after < checkAfter {
				checkAfter = after
			}
		}
		if (c.o.Timeout > 0 && time.Since(start) > c.o.Timeout) || retry >= c.o.MaxRetries {
			if res == uncertain {
				found, ferr := c.findLanded(ctx, identifier, kind, checkAfter)
				if found != nil {
					return found, nil
				}
				if ferr != nil {
					return nil, c.giveUp(ctx, d, true, fmt.Errorf("commit to %s: %w after %d retries: %w (and looking for it failed: %v)",
						c.tablePath, ErrRetriesExhausted, retry, err, ferr))
				}
			}
			return nil, c.giveUp(ctx, d, false, fmt.Errorf("commit to %s: %w after %d retries in %v, there may be commit conflicts between jobs: %w",
				c.tablePath, ErrRetriesExhausted, retry, time.Since(start).Round(time.Millisecond), err))
		}
		if werr := c.wait(ctx, retry); werr != nil {
			return nil, c.giveUp(ctx, d, res == uncertain, fmt.Errorf("commit to %s: %w (last attempt: %v)", c.tablePath, werr, err))
		}
		if c.o.OnRetry != nil {
			c.o.OnRetry(err)
		}
	}
}

// findLanded looks in (after, latest] for the snapshot of an attempt of
// this commit whose outcome was unknown and confirms it (confirmFound). It
// returns nil, nil when there is none; an error wrapping errRetry when it
// was stale and is deleted; another error when that cannot be told.
func (c *Committer) findLanded(ctx context.Context, identifier int64, kind snapshot.CommitKind, after int64) (*snapshot.Snapshot, error) {
	s, err := c.snapshots.FindCommit(ctx, c.o.CommitUser, identifier, kind, after)
	if err != nil {
		return nil, fmt.Errorf("look for a landed attempt: %w", err)
	}
	if s == nil {
		return nil, nil
	}
	return c.confirmFound(ctx, s)
}

// giveUp deletes the delta files unless an attempt with an unknown outcome
// may have used them, and marks err as ambiguous when the outcome is open.
func (c *Committer) giveUp(ctx context.Context, d *delta, ambiguous bool, err error) error {
	if d != nil && !d.pinned {
		c.deleteDelta(ctx, d)
	}
	if ambiguous {
		return fmt.Errorf("%w: %w", ErrCommitAmbiguous, err)
	}
	return err
}

func (c *Committer) deleteDelta(ctx context.Context, d *delta) {
	ctx = context.WithoutCancel(ctx)
	names := make([]string, 0, len(d.metas)+len(d.logMetas)+2)
	for _, m := range d.metas {
		names = append(names, m.FileName)
	}
	for _, m := range d.logMetas {
		names = append(names, m.FileName)
	}
	names = append(names, d.list, d.logList)
	c.deleteManifests(ctx, names)
}

// deleteManifests removes files of manifest/ best effort: they are
// unreferenced, at worst they stay as orphans.
func (c *Committer) deleteManifests(ctx context.Context, names []string) {
	for _, n := range names {
		if n != "" {
			_ = c.fio.Delete(ctx, c.manifestPath(n))
			c.manifests.Forget(n)
		}
	}
}

// wait is RetryWaiter.retryWait: min(min-wait * 2^retry, max-wait) plus a
// random jitter below 20 % of that.
func (c *Committer) wait(ctx context.Context, retry int) error {
	w := c.o.MaxRetryWait
	if retry < 40 && c.o.MinRetryWait<<retry > 0 && c.o.MinRetryWait<<retry < w {
		w = c.o.MinRetryWait << retry
	}
	w += time.Duration(rand.Int64N(max(1, int64(w/5))))
	return pause.For(ctx, w)
}

// attempt is FileStoreCommitImpl.tryCommitOnce for one latest snapshot.
func (c *Committer) attempt(ctx context.Context, latest *snapshot.Snapshot, identifier int64, kind snapshot.CommitKind,
	detectConflicts bool, provide changesFunc, dp **delta) (*snapshot.Snapshot, outcome, error) {
	newID := int64(1)
	if latest != nil {
		newID = latest.ID + 1
	}
	var created []string // files of this attempt only, deleted unless they may be referenced
	cleanup := func() { c.deleteManifests(context.WithoutCancel(ctx), created) }
	fail := func(err error) (*snapshot.Snapshot, outcome, error) {
		cleanup()
		return nil, failed, fmt.Errorf("commit snapshot %d of %s by user %s with identifier %d and kind %s: %w",
			newID, c.tablePath, c.o.CommitUser, identifier, kind, err)
	}

	ch, err := provide(ctx, latest)
	if err != nil {
		return fail(err)
	}
	if ch.newIndex {
		created = append(created, *ch.indexManifest)
	}
	if detectConflicts {
		if err := c.checkConflicts(ctx, latest, ch.entries, kind, ch.dvFiles); err != nil {
			return fail(err)
		}
	}
	latestSchema, err := c.schemas.Latest(ctx)
	if err != nil {
		return fail(err)
	}
	schemaID := latestSchema.ID

	// The delta manifests: written once, reused while the entries stay the
	// same (always for APPEND and COMPACT; OVERWRITE re-reads the files to
	// delete on every attempt).
	sig := ""
	if !ch.fixed {
		sig = signature(ch.entries)
	}
	if d := *dp; d == nil || d.signature != sig {
		if d != nil && !d.pinned {
			c.deleteDelta(ctx, d)
		}
		*dp = nil
		metas, err := c.writeManifests(ctx, ch.entries, schemaID)
		if err != nil {
			return fail(err)
		}
		name, size, err := c.encoder.WriteManifestList(ctx, c.fio, c.tablePath, metas)
		if err != nil {
			c.deleteManifests(context.WithoutCancel(ctx), fileNames(metas))
			return fail(err)
		}
		nd := &delta{signature: sig, metas: metas, list: name, listSize: size}
		if len(ch.changelog) > 0 {
			// FileStoreCommitImpl: manifestList.write(manifestFile.write(changelogFiles)).
			if nd.logMetas, err = c.writeManifests(ctx, ch.changelog, schemaID); err == nil {
				nd.logList, nd.logListSize, err = c.encoder.WriteManifestList(ctx, c.fio, c.tablePath, nd.logMetas)
			}
			if err != nil {
				c.deleteDelta(ctx, nd)
				return fail(err)
			}
		}
		*dp = nd
	}
	d := *dp

	// The base manifest list: the previous snapshot's base and delta
	// manifests, merged.
	var before []manifest.FileMeta
	var prevTotal int64
	var index, stats *string
	var watermark, nextRowID *int64
	if latest != nil {
		if before, err = c.manifests.ReadLists(ctx, manifest.DataLists(latest)...); err != nil {
			return fail(err)
		}
		if latest.TotalRecordCount != nil {
			prevTotal = *latest.TotalRecordCount
		}
		index, watermark, nextRowID = latest.IndexManifest, latest.Watermark, latest.NextRowID
		if stats, err = c.inheritedStatistics(ctx, latest, schemaID); err != nil {
			return fail(err)
		}
	}
	if ch.indexManifest != nil {
		index = ch.indexManifest
	}
	after, mergedFiles, err := c.mergeManifests(ctx, before, schemaID)
	created = append(created, mergedFiles...)
	if err != nil {
		return fail(err)
	}
	baseList, baseSize, err := c.encoder.WriteManifestList(ctx, c.fio, c.tablePath, after)
	if err != nil {
		return fail(err)
	}
	created = append(created, baseList)

	var deltaRecords int64
	for i := range ch.entries {
		if ch.entries[i].Kind == manifest.FileKindAdd {
			deltaRecords += ch.entries[i].File.RowCount
		} else {
			deltaRecords -= ch.entries[i].File.RowCount
		}
	}
	total := prevTotal + deltaRecords
	// Java 1.4.2 writes nextRowId always: the previous one, or 0.
	next := int64(0)
	if nextRowID != nil {
		next = *nextRowID
	}
	snap := &snapshot.Snapshot{
		Version:               snapshot.CurrentVersion,
		ID:                    newID,
		SchemaID:              schemaID,
		BaseManifestList:      baseList,
		BaseManifestListSize:  &baseSize,
		DeltaManifestList:     d.list,
		DeltaManifestListSize: &d.listSize,
		IndexManifest:         index,
		CommitUser:            c.o.CommitUser,
		CommitIdentifier:      identifier,
		CommitKind:            kind,
		TimeMillis:            c.o.Now().UnixMilli(),
		TotalRecordCount:      &total,
		DeltaRecordCount:      &deltaRecords,
		Watermark:             watermark,
		Statistics:            stats,
		NextRowID:             &next,
		Properties:            maps.Clone(ch.properties),
	}
	if d.logList != "" {
		var logRecords int64
		for i := range ch.changelog {
			logRecords += ch.changelog[i].File.RowCount
		}
		snap.ChangelogManifestList, snap.ChangelogManifestListSize = &d.logList, &d.logListSize
		snap.ChangelogRecordCount = &logRecords
	}
	err = c.snapshots.Create(ctx, snap)
	switch {
	case err == nil:
		own := ownFiles{base: fileNames(after), delta: append(fileNames(d.metas), fileNames(d.logMetas)...), adds: addedFiles(ch.entries),
			deletes: filesOfKind(ch.entries, manifest.FileKindDelete)}
		v, next, cerr := c.confirm(ctx, snap, own)
		if err := c.settle(ctx, snap, v, next, cerr); err != nil {
			if v == stale {
				// Nothing refers to this attempt's base files; the delta is
				// reused by the retry.
				cleanup()
				return nil, idTaken, err
			}
			return nil, unresolved, err
		}
		return snap, committed, nil
	case errors.Is(err, snapshot.ErrSnapshotExists):
		// "Atomic commit failed ... try again": this attempt's base files
		// are certainly unreferenced; the delta is reused.
		cleanup()
		return nil, idTaken, err
	case errors.Is(err, snapshot.ErrInvalidSnapshot):
		return fail(err)
	default:
		// "commit exception, not sure about the situation and should not
		// clean up the files".
		return nil, uncertain, err
	}
}

// signature identifies a list of entries, to tell whether a delta written
// by an earlier attempt can be reused.
func signature(entries []manifest.Entry) string {
	var b strings.Builder
	for i := range entries {
		b.WriteByte(byte(entries[i].Kind))
		b.WriteString(entries[i].Identifier())
	}
	return b.String()
}

func fileNames(metas []manifest.FileMeta) []string {
	out := make([]string, len(metas))
	for i, m := range metas {
		out[i] = m.FileName
	}
	return out
}

func (c *Committer) manifestPath(name string) string {
	return path.Join(c.tablePath, "manifest", name)
}

// inheritedStatistics returns the statistics file of latest when it was
// computed for schemaID, as tryCommitOnce inherits it ("Schema changed,
// stats will not be inherited"). A missing file is not inherited.
func (c *Committer) inheritedStatistics(ctx context.Context, latest *snapshot.Snapshot, schemaID int64) (*string, error) {
	if latest.Statistics == nil {
		return nil, nil
	}
	p := path.Join(c.tablePath, "statistics", *latest.Statistics)
	data, err := c.fio.ReadFile(ctx, p)
	if errors.Is(err, storage.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, fmt.Errorf("read statistics %s: %w", p, err)
	}
	var st struct {
		SchemaID *int64 `json:"schemaId"`
	}
	if err := json.Unmarshal(data, &st); err != nil || st.SchemaID == nil || *st.SchemaID != schemaID {
		return nil, nil
	}
	name := *latest.Statistics
	return &name, nil
}
