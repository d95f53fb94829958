package maintain_test

import (
	"context"
	"fmt"
	"path"
	"slices"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/maintain"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage/memfs"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// The crash tests run each maintenance operation on a memfs copy of one
// table and crash it at every mutating step, in both durability models
// (memfs package doc), on a local disk keeping each prefix of the directory
// changes not synced yet. After each crash:
//   - every snapshot still listed plans and reads (all its files exist) and
//     the listing, LATEST and EARLIEST agree;
//   - the operation, run again to completion, and RemoveOrphanFiles leave
//     exactly the files the listed snapshots use, with the rows an
//     uninterrupted run leaves: what the crash left behind was only
//     unreferenced files.

const crashTablePath = "db.db/t"

// crashStage is how far crashHistory builds the table.
type crashStage int

const (
	stageAppended    crashStage = iota // snapshots 1-3: appends
	stageCompacted                     // 4 COMPACT, 5 append
	stagePartitioned                   // 6 OVERWRITE dropping dt=2024-01-01, 7 and 8 appends
)

// crashHistory builds, on a new memfs, the table db.t (id INT, dt STRING,
// partitioned by dt, unaware bucket) up to stage.
func crashHistory(t *testing.T, model memfs.Model, stage crashStage) *memfs.FS {
	t.Helper()
	ctx := context.Background()
	fs := memfs.New(model)
	tb, err := lakecore.NewCatalog(fs).CreateTable(ctx, "db", "t", lakecore.TableSpec{
		Fields:        []types.DataField{{Name: "id", Type: types.IntType()}, {Name: "dt", Type: types.StringType()}},
		PartitionKeys: []string{"dt"},
		Options:       map[string]string{"partition.expiration-time": "2 d"},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := tb.NewCommitter("writer")
	var ident int64
	app := func(rows ...[]any) {
		t.Helper()
		if _, err := appendWith(ctx, tb, c, &ident, rows); err != nil {
			t.Fatal(err)
		}
	}
	app([]any{int32(1), "2024-01-01"}, []any{int32(2), "2024-01-01"}, []any{int32(3), "2024-01-09"})
	app([]any{int32(4), "2024-01-01"}, []any{int32(5), "2024-01-09"})
	app([]any{int32(6), "2024-01-09"})
	if stage == stageAppended {
		return fs
	}
	if _, err := crashOps["compact"].run(ctx, fs); err != nil {
		t.Fatal(err)
	}
	app([]any{int32(7), "2024-01-09"})
	if stage == stageCompacted {
		return fs
	}
	if _, err := crashOps["expire-partitions"].run(ctx, fs); err != nil {
		t.Fatal(err)
	}
	app([]any{int32(8), "2024-01-09"})
	app([]any{int32(9), "2024-01-09"})
	// A tag on snapshot 2 keeps its files (and so files that snapshot 4's
	// compaction removed) through the expiry.
	data, err := fs.ReadFile(ctx, tb.Snapshots().Path(2))
	if err != nil {
		t.Fatal(err)
	}
	if err := fs.WriteFile(ctx, tb.Tags().Path("two"), data); err != nil {
		t.Fatal(err)
	}
	return fs
}

// crashOp is one maintenance operation under test.
type crashOp struct {
	stage crashStage
	run   func(ctx context.Context, fs *memfs.FS) (*maintain.Report, error)
}

// crashFuture is the clock of RemoveOrphanFiles in these tests: every file
// is old enough.
var crashFuture = time.Now().Add(48 * time.Hour)

var crashOps = map[string]crashOp{
	"expire-snapshots": {stagePartitioned, func(ctx context.Context, fs *memfs.FS) (*maintain.Report, error) {
		return maintain.ExpireSnapshots(ctx, fs, crashTablePath, maintain.ExpireSnapshotsOptions{
			RetainMin: 2, OlderThan: time.Now().Add(time.Hour),
		})
	}},
	"expire-partitions": {stageCompacted, func(ctx context.Context, fs *memfs.FS) (*maintain.Report, error) {
		return maintain.ExpirePartitions(ctx, fs, crashTablePath, partitionOpts(maintain.ExpirePartitionsOptions{}))
	}},
	"compact": {stageAppended, func(ctx context.Context, fs *memfs.FS) (*maintain.Report, error) {
		return maintain.Compact(ctx, fs, crashTablePath, maintain.CompactOptions{
			CommitUser: "compactor", TargetFileSize: 1 << 20, MinFileNum: 2,
		})
	}},
	"remove-orphan-files": {stagePartitioned, removeOrphans},
}

func removeOrphans(ctx context.Context, fs *memfs.FS) (*maintain.Report, error) {
	return maintain.RemoveOrphanFiles(ctx, fs, crashTablePath, maintain.RemoveOrphanFilesOptions{
		Now: func() time.Time { return crashFuture }, OlderThan: crashFuture.Add(-time.Second),
	})
}

// orphanLeftovers adds what interrupted writers leave: an uncommitted data
// file and a manifest of a failed commit attempt.
func orphanLeftovers(t *testing.T, fs *memfs.FS) {
	t.Helper()
	ctx := context.Background()
	for _, p := range []string{"dt=2024-01-09/bucket-0/data-orphan.parquet", "manifest/manifest-orphan-0"} {
		if err := fs.WriteFile(ctx, path.Join(crashTablePath, p), []byte("orphan")); err != nil {
			t.Fatal(err)
		}
	}
}

func TestCrashPointsOfMaintenance(t *testing.T) {
	for _, name := range []string{"expire-snapshots", "expire-partitions", "compact", "remove-orphan-files"} {
		op := crashOps[name]
		for _, model := range []memfs.Model{memfs.ObjectStore, memfs.LocalDisk} {
			t.Run(name+"/"+model.String(), func(t *testing.T) {
				base := crashHistory(t, model, op.stage)
				if name == "remove-orphan-files" {
					orphanLeftovers(t, base)
				}
				runCrashPoints(t, base, op)
			})
		}
	}
}

// runCrashPoints crashes op at every step on clones of base.
func runCrashPoints(t *testing.T, base *memfs.FS, op crashOp) {
	ctx := context.Background()
	// The uninterrupted run.
	ref := base.Clone()
	if _, err := op.run(ctx, ref); err != nil {
		t.Fatal(err)
	}
	steps := ref.Steps()
	finish(t, ref, op)
	wantIDs, wantRows := tableState(t, ref, "uninterrupted run")
	if steps == 0 {
		t.Fatal("the operation took no step")
	}
	states := 0
	for n := 1; ; n++ {
		// On a local disk the crash may also keep the oldest k of the
		// directory changes not synced yet (memfs.FS.KeepUnsynced).
		for k := 0; ; k++ {
			fs := base.Clone()
			fs.CrashAt(n)
			fs.KeepUnsynced(k)
			_, err := op.run(ctx, fs)
			if !fs.Crashed() {
				if err != nil {
					t.Fatalf("no crash at step %d, but %v", n, err)
				}
				if n <= steps {
					t.Fatalf("finished after %d steps, the uninterrupted run took %d", n-1, steps)
				}
				t.Logf("%d crash points, %d crash states", n-1, states)
				return
			}
			states++
			unsynced, kept := fs.LastCrash()
			at := fmt.Sprintf("crash at step %d of %d (%s) keeping %d of %d unsynced changes", n, steps, fs.Trace()[n-1], kept, unsynced)
			fs.Restart()
			checkListed(t, fs, at)
			finish(t, fs, op)
			ids, rows := tableState(t, fs, at+", then the operation and remove-orphan-files")
			if !slices.Equal(ids, wantIDs) || !slices.Equal(rows, wantRows) {
				t.Errorf("%s: snapshots %v with rows %v; the uninterrupted run leaves %v with %v", at, ids, rows, wantIDs, wantRows)
			}
			if t.Failed() {
				return
			}
			if k >= unsynced {
				break
			}
		}
	}
}

// finish runs op again until it commits nothing more (a compaction may
// take two runs to pack all files), then RemoveOrphanFiles.
func finish(t *testing.T, fs *memfs.FS, op crashOp) {
	t.Helper()
	ctx := context.Background()
	for range 5 {
		rep, err := op.run(ctx, fs)
		if err != nil {
			t.Fatalf("the operation after the crash: %v", err)
		}
		if len(rep.Snapshots) == 0 {
			break
		}
	}
	if _, err := removeOrphans(ctx, fs); err != nil {
		t.Fatalf("remove orphan files after the crash: %v", err)
	}
}

// checkListed checks that the listing, LATEST and EARLIEST agree and that
// every listed snapshot plans and reads its totalRecordCount rows.
func checkListed(t *testing.T, fs *memfs.FS, at string) {
	t.Helper()
	ctx := context.Background()
	tb, err := lakecore.NewCatalog(fs).OpenTable(ctx, "db", "t")
	if err != nil {
		t.Fatalf("%s: open: %v", at, err)
	}
	sm := tb.Snapshots()
	ids, err := sm.ListIDs(ctx)
	if err != nil || len(ids) == 0 {
		t.Fatalf("%s: list snapshots: %v, %v", at, ids, err)
	}
	for i := 1; i < len(ids); i++ {
		if ids[i] != ids[i-1]+1 {
			t.Errorf("%s: snapshot ids %v not contiguous", at, ids)
		}
	}
	if e, ok, err := sm.EarliestID(ctx); err != nil || !ok || e != ids[0] {
		t.Errorf("%s: EarliestID = %d, %v, %v; the listing starts at %d", at, e, ok, err, ids[0])
	}
	if l, ok, err := sm.LatestID(ctx); err != nil || !ok || l != ids[len(ids)-1] {
		t.Errorf("%s: LatestID = %d, %v, %v; the listing ends at %d", at, l, ok, err, ids[len(ids)-1])
	}
	for _, id := range ids {
		s, err := sm.Get(ctx, id)
		if err != nil {
			t.Errorf("%s: snapshot %d: %v", at, id, err)
			continue
		}
		if _, err := tb.Planner().Full(ctx, s, nil); err != nil {
			t.Errorf("%s: snapshot %d does not plan: %v", at, id, err)
			continue
		}
		rows, err := tb.ReadAll(ctx, id)
		if err != nil {
			t.Errorf("%s: snapshot %d does not read: %v", at, id, err)
		} else if s.TotalRecordCount != nil && int64(len(rows)) != *s.TotalRecordCount {
			t.Errorf("%s: snapshot %d reads %d rows, totalRecordCount %d", at, id, len(rows), *s.TotalRecordCount)
		}
	}
}

// tableState checks that the table holds exactly the files its listed
// snapshots and its tags use (their snapshot and tag files, manifest
// lists, manifests and live data files), the schema and the hints, and returns the snapshot ids and
// the latest snapshot's rows.
func tableState(t *testing.T, fs *memfs.FS, at string) ([]int64, []string) {
	t.Helper()
	ctx := context.Background()
	checkListed(t, fs, at)
	tb, err := lakecore.NewCatalog(fs).OpenTable(ctx, "db", "t")
	if err != nil {
		t.Fatal(err)
	}
	ids, err := tb.Snapshots().ListIDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]bool{}
	var roots []*snapshot.Snapshot
	for _, id := range ids {
		s, err := tb.Snapshots().Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		want[tb.Snapshots().Path(id)] = true
		roots = append(roots, s)
	}
	tags, err := tb.Tags().List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tag := range tags {
		want[tb.Tags().Path(tag.Name)] = true
		roots = append(roots, tag.Snapshot)
	}
	for _, s := range roots {
		for _, l := range []string{s.BaseManifestList, s.DeltaManifestList} {
			want[manifest.FilePath(crashTablePath, l)] = true
			metas, err := manifest.ReadFileMetas(ctx, fs, crashTablePath, l)
			if err != nil {
				t.Fatalf("%s: %v", at, err)
			}
			for _, m := range metas {
				want[manifest.FilePath(crashTablePath, m.FileName)] = true
			}
		}
		plan, err := tb.Planner().Full(ctx, s, nil)
		if err != nil {
			t.Fatalf("%s: %v", at, err)
		}
		for _, sp := range plan.Splits {
			for _, f := range sp.Files {
				want[path.Join(crashTablePath, "dt="+sp.PartitionValues[0].(string), fmt.Sprintf("bucket-%d", sp.Bucket), f.FileName)] = true
			}
		}
	}
	infos, err := fs.List(ctx, crashTablePath, true)
	if err != nil {
		t.Fatal(err)
	}
	var extra []string
	for _, fi := range infos {
		rel := strings.TrimPrefix(fi.Path, crashTablePath+"/")
		switch {
		case want[fi.Path]:
			delete(want, fi.Path)
		case rel == "snapshot/LATEST" || rel == "snapshot/EARLIEST" || rel == "schema/schema-0":
		default:
			extra = append(extra, rel)
		}
	}
	var missing []string
	for p := range want {
		missing = append(missing, p)
	}
	sort.Strings(missing)
	if len(extra) > 0 || len(missing) > 0 {
		t.Errorf("%s: files no listed snapshot uses: %v; files missing: %v", at, extra, missing)
	}
	rows, err := tb.ReadAll(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	return ids, sortedKeys(rows)
}

// TestRemoveOrphanFilesFinishesExpiry: the journal of an expiry that
// crashed after deleting its first snapshot is finished by
// RemoveOrphanFiles alone, whatever the age of the files it lists.
func TestRemoveOrphanFilesFinishesExpiry(t *testing.T) {
	ctx := context.Background()
	op := crashOps["expire-snapshots"]
	base := crashHistory(t, memfs.ObjectStore, op.stage)
	ref := base.Clone()
	if _, err := op.run(ctx, ref); err != nil {
		t.Fatal(err)
	}
	wantIDs, wantRows := tableState(t, ref, "uninterrupted expiry")

	fs := base.Clone()
	fs.CrashAt(3) // the journal, snapshot-1, then the crash
	if _, err := op.run(ctx, fs); !fs.Crashed() {
		t.Fatalf("no crash: %v", err)
	}
	if tr := fs.Trace(); !strings.Contains(tr[0], "EXPIRING-") || !strings.HasSuffix(tr[1], "snapshot/snapshot-1") {
		t.Fatalf("steps %q, want the journal and snapshot-1 first", tr)
	}
	fs.Restart()
	rep, err := maintain.RemoveOrphanFiles(ctx, fs, crashTablePath, maintain.RemoveOrphanFilesOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.SnapshotsExpired != 5 {
		t.Errorf("remove-orphan-files finished the expiry of %d snapshots, want 5 (2..6)", rep.SnapshotsExpired)
	}
	ids, rows := tableState(t, fs, "remove-orphan-files after the crash")
	if !slices.Equal(ids, wantIDs) || !slices.Equal(rows, wantRows) {
		t.Errorf("snapshots %v with rows %v; the uninterrupted run leaves %v with %v", ids, rows, wantIDs, wantRows)
	}
}

// decoupledHistory builds, on a new memfs, a primary-key table k -> v with
// changelog-producer input whose changelog outlives its snapshots (3
// snapshots retained, and changelogs up to 6 ids back), written by the
// KeyValueWriter in 9 commits (and its compactions).
func decoupledHistory(t *testing.T, model memfs.Model) *memfs.FS {
	t.Helper()
	ctx := context.Background()
	fs := memfs.New(model)
	tb, err := lakecore.NewCatalog(fs).CreateTable(ctx, "db", "t", lakecore.TableSpec{
		Fields:      []types.DataField{{Name: "k", Type: types.BigIntType().NotNull()}, {Name: "v", Type: types.StringType()}},
		PrimaryKeys: []string{"k"},
		Options: map[string]string{"bucket": "1", "changelog-producer": "input",
			"snapshot.num-retained.max": "3", "snapshot.num-retained.min": "1",
			"changelog.num-retained.max": "6", "changelog.num-retained.min": "1"},
	})
	if err != nil {
		t.Fatal(err)
	}
	c := tb.NewCommitter("writer")
	for i := 1; i <= 9; i++ {
		w, err := tb.NewKeyValueWriter(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for k := range 3 {
			if err := w.Write(ctx, kv.Insert, []any{int64((i + k) % 5), fmt.Sprint("v", i)}); err != nil {
				t.Fatal(err)
			}
		}
		msgs, err := w.Prepare(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := c.Commit(ctx, int64(i), msgs); err != nil {
			t.Fatal(err)
		}
	}
	return fs
}

// allFiles lists every file of the table on fs.
func allFiles(t *testing.T, fs *memfs.FS) []string {
	t.Helper()
	infos, err := fs.List(context.Background(), crashTablePath, true)
	if err != nil {
		t.Fatal(err)
	}
	var out []string
	for _, fi := range infos {
		out = append(out, strings.TrimPrefix(fi.Path, crashTablePath+"/"))
	}
	sort.Strings(out)
	return out
}

// checkSnapshotsRead checks that the listed snapshots are contiguous and
// each reads (merged rows do not match totalRecordCount on a primary-key
// table, so checkListed does not apply).
func checkSnapshotsRead(t *testing.T, fs *memfs.FS, at string) {
	t.Helper()
	ctx := context.Background()
	tb, err := lakecore.NewCatalog(fs).OpenTable(ctx, "db", "t")
	if err != nil {
		t.Fatalf("%s: open: %v", at, err)
	}
	ids, err := tb.Snapshots().ListIDs(ctx)
	if err != nil || len(ids) == 0 {
		t.Fatalf("%s: list snapshots: %v, %v", at, ids, err)
	}
	for i, id := range ids {
		if i > 0 && id != ids[i-1]+1 {
			t.Errorf("%s: snapshot ids %v not contiguous", at, ids)
		}
		if _, err := tb.ReadAll(ctx, id); err != nil {
			t.Errorf("%s: snapshot %d does not read: %v", at, id, err)
		}
	}
}

// checkChangelogsComplete checks that every long-lived changelog still
// listed has its changelog manifests and changelog files.
func checkChangelogsComplete(t *testing.T, fs *memfs.FS, at string) {
	t.Helper()
	ctx := context.Background()
	cm := snapshot.NewChangelogManager(fs, crashTablePath)
	ids, err := cm.ListIDs(ctx)
	if err != nil {
		t.Fatalf("%s: %v", at, err)
	}
	r := manifest.NewReader(fs, crashTablePath, manifest.ReaderOptions{})
	for _, id := range ids {
		c, err := cm.Get(ctx, id)
		if err != nil {
			t.Fatalf("%s: %v", at, err)
		}
		l, ok := manifest.ChangelogList(c)
		if !ok {
			continue
		}
		metas, err := r.ReadList(ctx, l)
		if err != nil {
			t.Errorf("%s: changelog %d: %v", at, id, err)
			continue
		}
		for i := range metas {
			entries, err := r.ReadManifest(ctx, &metas[i])
			if err != nil {
				t.Errorf("%s: changelog %d: %v", at, id, err)
				continue
			}
			for _, e := range entries {
				if there, err := storage.Exists(ctx, fs, path.Join(crashTablePath, "bucket-0", e.File.FileName)); err != nil || !there {
					t.Errorf("%s: changelog %d: file %s is gone", at, id, e.File.FileName)
				}
			}
		}
	}
}

// TestCrashPointsOfDecoupledChangelogExpiry crashes the expiry of a table
// whose changelog outlives its snapshots at every step: afterwards every
// listed snapshot reads and every listed changelog has its files; the
// expiry run again and RemoveOrphanFiles then leave exactly the files of
// the uninterrupted run.
func TestCrashPointsOfDecoupledChangelogExpiry(t *testing.T) {
	ctx := context.Background()
	expire := func(fs *memfs.FS) error {
		_, err := maintain.ExpireSnapshots(ctx, fs, crashTablePath, maintain.ExpireSnapshotsOptions{OlderThan: time.UnixMilli(1)})
		return err
	}
	for _, model := range []memfs.Model{memfs.ObjectStore, memfs.LocalDisk} {
		t.Run(model.String(), func(t *testing.T) {
			base := decoupledHistory(t, model)
			ref := base.Clone()
			if err := expire(ref); err != nil {
				t.Fatal(err)
			}
			steps := ref.Steps()
			if _, err := removeOrphans(ctx, ref); err != nil {
				t.Fatal(err)
			}
			want := allFiles(t, ref)
			// 3 snapshots and 6 - 3 changelogs are retained.
			var changelogs []string
			for _, f := range want {
				if strings.HasPrefix(f, "changelog/changelog-") {
					changelogs = append(changelogs, f)
				}
			}
			if len(changelogs) != 3 {
				t.Fatalf("the uninterrupted run leaves changelogs %v, want 3", changelogs)
			}
			for n := 1; n <= steps; n++ {
				fs := base.Clone()
				fs.CrashAt(n)
				if err := expire(fs); !fs.Crashed() {
					t.Fatalf("no crash at step %d of %d: %v", n, steps, err)
				}
				at := fmt.Sprintf("crash at step %d of %d (%s)", n, steps, fs.Trace()[n-1])
				fs.Restart()
				checkSnapshotsRead(t, fs, at)
				checkChangelogsComplete(t, fs, at)
				if err := expire(fs); err != nil {
					t.Fatalf("%s: expiry again: %v", at, err)
				}
				if _, err := removeOrphans(ctx, fs); err != nil {
					t.Fatalf("%s: remove orphan files: %v", at, err)
				}
				if got := allFiles(t, fs); !slices.Equal(got, want) {
					t.Errorf("%s: files %v, the uninterrupted run leaves %v", at, got, want)
				}
				if t.Failed() {
					return
				}
			}
			t.Logf("%d crash points", steps)
		})
	}
}
