package maintain

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"slices"
	"strconv"
	"strings"

	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

// Crash safety of snapshot expiry.
//
// Java deletes the expired snapshots' data files and manifests first and
// their snapshot files last (ExpireSnapshotsImpl.innerExpireUntil): a crash
// in between leaves snapshots that are listed but whose files are gone,
// and readers that start at the earliest snapshot fail until the next
// expiry. lakecore decides everything first and then changes the table in
// an order where every crash point leaves each listed snapshot complete:
//
//  1. plan: read the snapshots, tags and manifests and compute every file
//     to delete (nothing is deleted yet);
//  2. write the plan as a journal, snapshot/EXPIRING-<end>, with one
//     atomic, durable WriteFile;
//  3. delete the expired snapshot files one at a time, oldest first, so
//     that the listing always starts at a complete snapshot and never has
//     a hole; a failure stops here;
//  4. write the EARLIEST hint (= end). On a local disk this also syncs the
//     snapshot directory, which makes the deletions of step 3 durable
//     before any file they referred to goes;
//  5. delete the data, changelog and metadata files of the plan, which no
//     listed snapshot uses any more;
//  6. delete the journal, unless a file could not be deleted.
//
// A crash after step 2 leaves a journal; the next ExpireSnapshots or
// RemoveOrphanFiles redoes it from step 3 (every step is idempotent)
// before anything else, so what a crash leaves behind is deleted by the
// next run, not only by an orphan clean a day later. Readers need nothing
// new: EARLIEST is trusted only when its snapshot exists, and during step
// 3 it names a deleted one, so they list.
//
// The journal is named like a hint file, so Java ignores it when it lists
// snapshots; Java's remove_orphan_files deletes it as a stray file once it
// is older than its older_than, and the leftovers are then ordinary
// orphans.

// journalPrefix names the journals in the snapshot directory.
const journalPrefix = "EXPIRING-"

// expiryJournal is the redo record of one expiry run. Paths are relative to
// the table directory.
type expiryJournal struct {
	// Snapshots are the ids to delete, oldest first.
	Snapshots []int64 `json:"snapshots"`
	// Earliest is the EARLIEST hint to write once they are gone.
	Earliest int64 `json:"earliest"`
	// Changelogs are the snapshots to keep as changelog/changelog-<id>
	// (a decoupled changelog), copied before any snapshot file goes.
	Changelogs []int64 `json:"changelogs,omitempty"`
	// Data are data and changelog files; Files the manifests, manifest
	// lists, index and statistics files.
	Data  []string `json:"data,omitempty"`
	Files []string `json:"files,omitempty"`
}

func (t *table) journalPath(earliest int64) string {
	return path.Join(t.snapshots.Dir(), journalPrefix+strconv.FormatInt(earliest, 10))
}

// isJournal reports whether name (a base name in the snapshot directory) is
// an expiry journal.
func isJournal(name string) bool {
	rest, ok := strings.CutPrefix(name, journalPrefix)
	return ok && rest != "" && strings.Trim(rest, "0123456789") == ""
}

func (t *table) relToTable(refs []fileRef) []string {
	out := make([]string, len(refs))
	for i, r := range refs {
		out[i] = strings.TrimPrefix(r.path, t.path+"/")
	}
	return out
}

func (t *table) refsOf(rels []string, data bool) []fileRef {
	out := make([]fileRef, len(rels))
	for i, r := range rels {
		out[i] = fileRef{path: path.Join(t.path, r), size: -1, data: data}
	}
	return out
}

// expiryRun is one expiry to carry out: the journal and, for the run that
// planned it, the files with their sizes.
type expiryRun struct {
	journal     expiryJournal
	data, files []fileRef
	// bucketDirs are the directories of the data files, for
	// snapshot.clean-empty-directories (only in the run that planned).
	bucketDirs map[string]bool
}

// writeJournal makes the plan durable (step 2).
func (t *table) writeJournal(ctx context.Context, r *expiryRun) error {
	data, err := json.Marshal(r.journal)
	if err != nil {
		return err
	}
	p := t.journalPath(r.journal.Earliest)
	if err := t.fio.WriteFile(ctx, p, data); err != nil {
		return fmt.Errorf("write expiry journal %s: %w", p, err)
	}
	return nil
}

// apply carries out steps 3 to 6 of r.
func (t *table) applyExpiry(ctx context.Context, del *deleter, r *expiryRun, cleanEmptyDirs bool) error {
	j := &r.journal
	if err := t.commitChangelogs(ctx, j.Changelogs); err != nil {
		return err
	}
	snaps := make([]fileRef, len(j.Snapshots))
	for i, id := range j.Snapshots {
		snaps[i] = fileRef{path: t.snapshots.Path(id), size: -1}
	}
	if err := del.deleteInOrder(ctx, "delete snapshot files", snaps); err != nil {
		return fmt.Errorf("%w; its files and those of younger snapshots are kept, the next expiry finishes the run (%s)", err, t.journalPath(j.Earliest))
	}
	// Step 4 must succeed before any file goes: on a local disk it is what
	// makes the deletions above durable.
	hint, has, err := t.snapshots.ReadEarliestHint(ctx)
	if err != nil {
		return err
	}
	if !has || hint < j.Earliest {
		if err := t.snapshots.WriteEarliestHint(ctx, j.Earliest); err != nil {
			return err
		}
	}
	failed := del.failures()
	if err := del.delete(ctx, "delete data files", r.data); err != nil {
		return err
	}
	if cleanEmptyDirs && len(r.bucketDirs) > 0 {
		t.removeEmptyDirs(ctx, r.bucketDirs)
	}
	if err := del.delete(ctx, "delete manifests", r.files); err != nil {
		return err
	}
	if del.failures() > failed {
		return nil // the journal stays: the next run tries again
	}
	if err := t.fio.Delete(ctx, t.journalPath(j.Earliest)); err != nil {
		return fmt.Errorf("delete expiry journal: %w", err)
	}
	return nil
}

// finishPendingExpiries redoes the journals that interrupted expiry runs
// left, oldest first, and returns how many snapshot files they deleted. A
// journal that does not parse is left alone (and logged): it was not
// written by lakecore.
func (t *table) finishPendingExpiries(ctx context.Context, del *deleter) (int, error) {
	infos, err := t.fio.List(ctx, t.snapshots.Dir(), false)
	if err != nil {
		return 0, err
	}
	var runs []*expiryRun
	listed := map[string]bool{}
	for _, fi := range infos {
		listed[fi.Path] = true
	}
	for _, fi := range infos {
		if fi.IsDir || !isJournal(path.Base(fi.Path)) {
			continue
		}
		data, err := t.fio.ReadFile(ctx, fi.Path)
		if err != nil {
			if ctx.Err() != nil || !errors.Is(err, storage.ErrNotExist) {
				return 0, err
			}
			continue // finished meanwhile by another process
		}
		r := &expiryRun{}
		if err := json.Unmarshal(data, &r.journal); err != nil || r.journal.Earliest <= 0 || t.journalPath(r.journal.Earliest) != fi.Path {
			t.log.Warn("ignoring a file in the snapshot directory that is not an expiry journal", "table", t.path, "file", fi.Path, "error", err)
			continue
		}
		r.data = t.refsOf(r.journal.Data, true)
		r.files = t.refsOf(r.journal.Files, false)
		runs = append(runs, r)
	}
	slices.SortFunc(runs, func(a, b *expiryRun) int { return int(a.journal.Earliest - b.journal.Earliest) })
	n := 0
	for _, r := range runs {
		t.log.Info("finishing an interrupted snapshot expiry", "table", t.path, "snapshots", r.journal.Snapshots, "files", len(r.data)+len(r.files))
		if err := t.applyExpiry(ctx, del, r, false); err != nil {
			return n, fmt.Errorf("finish the interrupted expiry of %s: %w", t.journalPath(r.journal.Earliest), err)
		}
		for _, id := range r.journal.Snapshots {
			if listed[t.snapshots.Path(id)] {
				n++
			}
		}
	}
	return n, nil
}

// commitChangelogs copies snapshot-<id> to changelog/changelog-<id> for
// every id whose snapshot file is still there (on a redo, the ones already
// deleted were copied before), oldest first, each followed by the LATEST
// hint of the changelog directory (ExpireSnapshotsImpl.commitChangelog).
// The copy is the snapshot's JSON: Java's Changelog serializes the same
// fields.
func (t *table) commitChangelogs(ctx context.Context, ids []int64) error {
	cm := snapshot.NewChangelogManager(t.fio, t.path)
	for _, id := range ids {
		data, err := t.fio.ReadFile(ctx, t.snapshots.Path(id))
		if errors.Is(err, storage.ErrNotExist) {
			continue
		}
		if err != nil {
			return fmt.Errorf("keep snapshot %d as a changelog: %w", id, err)
		}
		if err := cm.Commit(ctx, id, data); err != nil {
			return err
		}
	}
	return nil
}

// failures is the number of deletions that failed so far.
func (d *deleter) failures() int {
	d.report.mu.Lock()
	defer d.report.mu.Unlock()
	return d.report.FailedDeletes
}
