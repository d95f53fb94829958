package lakecore_test

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"os"
	"path"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/maintain"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/scan"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// referencedFiles is what the snapshots and tags of a table refer to, read
// from their metadata independently of maintain's DELETE-entry walk: the
// live data files (with extra files) and changelog files of each, and every
// manifest list, manifest, index manifest and index file.
type referencedFiles struct {
	data, meta, index map[string]bool
}

func referenced(t *testing.T, tbl *lakecore.Table) referencedFiles {
	t.Helper()
	ctx := context.Background()
	r := manifest.NewReader(tbl.FileIO(), tbl.Path(), manifest.ReaderOptions{})
	ids, err := tbl.Snapshots().ListIDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	var snaps []*snapshot.Snapshot
	for _, id := range ids {
		s, err := tbl.Snapshots().Get(ctx, id)
		if err != nil {
			t.Fatal(err)
		}
		snaps = append(snaps, s)
	}
	tags, err := tbl.Tags().List(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, tag := range tags {
		snaps = append(snaps, tag.Snapshot)
	}
	out := referencedFiles{data: map[string]bool{}, meta: map[string]bool{}, index: map[string]bool{}}
	for _, s := range snaps {
		lists := manifest.DataLists(s)
		live, err := r.LiveEntries(ctx, s, nil)
		if err != nil {
			t.Fatalf("snapshot %d: %v", s.ID, err)
		}
		for _, e := range live {
			out.data[e.File.FileName] = true
			for _, x := range e.File.ExtraFiles {
				out.data[x] = true
			}
		}
		if l, ok := manifest.ChangelogList(s); ok {
			lists = append(lists, l)
			metas, err := r.ReadList(ctx, l)
			if err != nil {
				t.Fatal(err)
			}
			for i := range metas {
				entries, err := r.ReadManifest(ctx, &metas[i])
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range entries {
					out.data[e.File.FileName] = true
				}
			}
		}
		for _, l := range lists {
			out.meta[l.Name] = true
			metas, err := r.ReadList(ctx, l)
			if err != nil {
				t.Fatalf("snapshot %d: %v", s.ID, err)
			}
			for _, m := range metas {
				out.meta[m.FileName] = true
			}
		}
		if s.IndexManifest != nil {
			out.meta[*s.IndexManifest] = true
			entries, err := r.ReadIndexEntries(ctx, *s.IndexManifest)
			if err != nil {
				t.Fatal(err)
			}
			for _, e := range entries {
				out.index[e.FileName] = true
			}
		}
	}
	return out
}

// filesOnDisk returns the base names of the files of the table directory
// dir: those in bucket directories, in manifest/ and in index/.
func filesOnDisk(t *testing.T, dir string) referencedFiles {
	t.Helper()
	out := referencedFiles{data: map[string]bool{}, meta: map[string]bool{}, index: map[string]bool{}}
	for _, p := range fixturetest.ListFiles(t, dir) {
		base := path.Base(p)
		switch {
		case strings.HasPrefix(p, "manifest/"):
			out.meta[base] = true
		case strings.HasPrefix(p, "index/"):
			out.index[base] = true
		case strings.Contains(p, "bucket-"):
			out.data[base] = true
		}
	}
	return out
}

// checkOnlyReferenced fails unless the files on disk are exactly those the
// retained snapshots and tags refer to.
func checkOnlyReferenced(t *testing.T, tbl *lakecore.Table, dir, when string) {
	t.Helper()
	want, got := referenced(t, tbl), filesOnDisk(t, dir)
	for _, c := range []struct {
		what      string
		want, got map[string]bool
	}{{"data and changelog files", want.data, got.data}, {"manifests", want.meta, got.meta}, {"index files", want.index, got.index}} {
		for n := range c.want {
			if !c.got[n] {
				t.Errorf("%s: %s %s is referenced but missing", when, c.what, n)
			}
		}
		for n := range c.got {
			if !c.want[n] {
				t.Errorf("%s: %s %s is left but no retained snapshot refers to it", when, c.what, n)
			}
		}
	}
}

// pkHistory is what a table gave before maintenance: the merged rows of
// every snapshot and the streamed changes of every snapshot.
type pkHistory struct {
	rows    map[int64][]string
	changes map[int64][]string
}

func readHistory(t *testing.T, tbl *lakecore.Table, from int64) pkHistory {
	t.Helper()
	ctx := context.Background()
	h := pkHistory{rows: map[int64][]string{}, changes: map[int64][]string{}}
	ids, err := tbl.Snapshots().ListIDs(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, id := range ids {
		if id < from {
			continue
		}
		rows, err := tbl.ReadAll(ctx, id)
		if err != nil {
			t.Fatalf("read snapshot %d: %v", id, err)
		}
		h.rows[id] = renderRows(rows)
		slices.Sort(h.rows[id])
	}
	ss := tbl.NewStreamScan(scan.StreamOptions{Mode: scan.ModeFromSnapshot, SnapshotID: from, Bounded: true})
	for {
		plan, err := ss.Next(ctx)
		if errors.Is(err, scan.ErrEndOfScan) {
			break
		}
		if err != nil {
			t.Fatal(err)
		}
		id := plan.Snapshot.ID
		if err := tbl.ReadChanges(ctx, plan, func(kinds []kv.RowKind, rows [][]any) error {
			for i := range rows {
				h.changes[id] = append(h.changes[id], fmt.Sprint(kinds[i], rows[i]))
			}
			return nil
		}); err != nil {
			t.Fatal(err)
		}
		slices.Sort(h.changes[id])
	}
	return h
}

// writePKCommits writes commits of random changes to a (dt, k) -> v table
// (or k -> v when dts is nil) and returns the final state as rows. -U rows
// precede +U as a CDC source sends them. Every fourth commit is followed
// by a full compaction, so that COMPACT snapshots delete files.
func writePKCommits(t *testing.T, tbl *lakecore.Table, commits int, dts []string) [][]any {
	t.Helper()
	ctx := context.Background()
	committer := tbl.NewCommitter("pk-maintain-test")
	rng := rand.New(rand.NewPCG(11, 12))
	type key struct {
		dt string
		k  int64
	}
	state := map[key]string{}
	row := func(k key, v string) []any {
		if dts == nil {
			return []any{k.k, v}
		}
		return []any{k.dt, k.k, v}
	}
	for c := 1; c <= commits; c++ {
		w, err := tbl.NewKeyValueWriter(ctx)
		if err != nil {
			t.Fatal(err)
		}
		for range 12 {
			k := key{k: int64(rng.IntN(10))}
			if dts != nil {
				k.dt = dts[rng.IntN(len(dts))]
			}
			v := fmt.Sprintf("v%d", rng.IntN(1000))
			var kinds []kv.RowKind
			var rows [][]any
			switch old, ok := state[k]; {
			case !ok:
				kinds, rows = []kv.RowKind{kv.Insert}, [][]any{row(k, v)}
				state[k] = v
			case rng.IntN(4) == 0:
				kinds, rows = []kv.RowKind{kv.Delete}, [][]any{row(k, old)}
				delete(state, k)
			default:
				kinds, rows = []kv.RowKind{kv.UpdateBefore, kv.UpdateAfter}, [][]any{row(k, old), row(k, v)}
				state[k] = v
			}
			for i := range kinds {
				if err := w.Write(ctx, kinds[i], rows[i]); err != nil {
					t.Fatal(err)
				}
			}
		}
		msgs, err := w.Prepare(ctx)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := committer.Commit(ctx, int64(c), msgs); err != nil {
			t.Fatal(err)
		}
		if c%4 == 0 {
			if _, err := tbl.Compact(ctx, maintain.CompactOptions{Full: true}); err != nil {
				t.Fatal(err)
			}
		}
	}
	var out [][]any
	for k, v := range state {
		out = append(out, row(k, v))
	}
	return out
}

func tableDir(t *testing.T, tbl *lakecore.Table) string {
	t.Helper()
	root := strings.TrimPrefix(tbl.FileIO().String(), "file://")
	return filepath.Join(root, filepath.FromSlash(tbl.Path()))
}

// TestPrimaryKeyExpireSnapshots expires primary-key tables written by the
// KeyValueWriter (changelog-producer none and input, with full compactions
// in between) and checks, as Java's ExpireSnapshotsImpl leaves them, that
// exactly the files the retained snapshots refer to remain (data files,
// changelog files, manifests); that the compaction inputs and the changelog
// files of expired snapshots are gone; and that the retained snapshots
// still read the same merged rows and stream the same changes.
func TestPrimaryKeyExpireSnapshots(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		name      string
		options   map[string]string
		retainMax int
	}{
		{"producer none", map[string]string{"bucket": "2"}, 3},
		{"producer none retain 1", map[string]string{"bucket": "2"}, 1},
		{"producer input", map[string]string{"bucket": "2", "changelog-producer": "input"}, 3},
		{"producer input retain 1", map[string]string{"bucket": "1", "changelog-producer": "input"}, 1},
		{"producer input, changelog retention equal to snapshots'", map[string]string{
			"bucket": "2", "changelog-producer": "input",
			"changelog.num-retained.max": "3", "changelog.num-retained.min": "1", "changelog.time-retained": "1 h",
			"snapshot.num-retained.max": "3", "snapshot.num-retained.min": "1",
		}, 0},
	} {
		t.Run(c.name, func(t *testing.T) {
			tbl := createPKTable(t, c.options)
			want := writePKCommits(t, tbl, 9, nil)
			dir := tableDir(t, tbl)
			checkOnlyReferenced(t, tbl, dir, "before expiry")
			ids, err := tbl.Snapshots().ListIDs(ctx)
			if err != nil {
				t.Fatal(err)
			}
			latest := ids[len(ids)-1]
			retain := c.retainMax
			if retain == 0 {
				retain = 3 // snapshot.num-retained.max of the table
			}
			earliest := latest - int64(retain) + 1
			before := filesOnDisk(t, dir)
			hist := readHistory(t, tbl, earliest)

			// Every snapshot counts as young: snapshot.num-retained.max
			// decides alone (snapshot.num-retained.min is 1).
			rep, err := tbl.ExpireSnapshots(ctx, maintain.ExpireSnapshotsOptions{RetainMax: c.retainMax, RetainMin: 1, OlderThan: time.UnixMilli(1)})
			if err != nil {
				t.Fatal(err)
			}
			if rep.SnapshotsExpired != int(earliest-1) {
				t.Fatalf("expired %d snapshots, want %d: %s", rep.SnapshotsExpired, earliest-1, rep.Summary())
			}
			if got, ok, err := tbl.Snapshots().EarliestID(ctx); err != nil || !ok || got != earliest {
				t.Fatalf("earliest snapshot %d %v %v, want %d", got, ok, err, earliest)
			}
			checkOnlyReferenced(t, tbl, dir, "after expiry")

			after := filesOnDisk(t, dir)
			var removedData, removedChangelog int
			for n := range before.data {
				if !after.data[n] {
					removedData++
					if strings.HasPrefix(n, "changelog-") {
						removedChangelog++
					}
				}
			}
			if removedData == 0 || rep.RemovedData.Files != int64(removedData) {
				t.Errorf("%d data and changelog files left the disk, the report says %d", removedData, rep.RemovedData.Files)
			}
			if c.options["changelog-producer"] == "input" && removedChangelog == 0 {
				t.Errorf("no changelog file of an expired snapshot was deleted")
			}

			rows, err := tbl.ReadAll(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			assertRows(t, rows, want)
			if got := readHistory(t, tbl, earliest); !equalHistory(got, hist) {
				t.Errorf("retained snapshots read differently after expiry:\n got  %v\n want %v", got, hist)
			}
			if _, err := tbl.ReadAll(ctx, earliest-1); !errors.Is(err, lakecore.ErrSnapshotNotFound) {
				t.Errorf("reading expired snapshot %d: %v", earliest-1, err)
			}
		})
	}
}

func equalHistory(a, b pkHistory) bool {
	if len(a.rows) != len(b.rows) || len(a.changes) != len(b.changes) {
		return false
	}
	for id, r := range a.rows {
		if !slices.Equal(r, b.rows[id]) {
			return false
		}
	}
	for id, c := range a.changes {
		if !slices.Equal(c, b.changes[id]) {
			return false
		}
	}
	return true
}

// TestPrimaryKeyExpireDecoupledChangelog: a table whose changelog outlives
// its snapshots (Java's ExpireConfig.isChangelogDecoupled) keeps each
// expired snapshot as changelog/changelog-N, byte for byte its snapshot
// file, with everything its changelog needs: the changelog files and
// changelog manifests (changelog-producer input), or the level-0 files and
// the delta manifests (none). The changelogs then expire by their own
// retention; what the remaining ones refer to is all still there, orphan
// cleanup keeps it, the table reads the same, and a stream from snapshot 1
// starts at the earliest changelog and gives the same changes for every
// changelog and snapshot retained as before the expiry.
func TestPrimaryKeyExpireDecoupledChangelog(t *testing.T) {
	ctx := context.Background()
	for _, producer := range []string{"input", "none"} {
		t.Run(producer, func(t *testing.T) {
			tbl := createPKTable(t, map[string]string{
				"bucket": "2", "changelog-producer": producer,
				"snapshot.num-retained.max": "3", "snapshot.num-retained.min": "1",
				"changelog.num-retained.max": "6", "changelog.num-retained.min": "1",
			})
			want := writePKCommits(t, tbl, 9, nil)
			dir := tableDir(t, tbl)
			ids, err := tbl.Snapshots().ListIDs(ctx)
			if err != nil {
				t.Fatal(err)
			}
			latest := ids[len(ids)-1]
			snapshotFiles := map[int64][]byte{}
			for _, id := range ids {
				if snapshotFiles[id], err = os.ReadFile(filepath.Join(dir, "snapshot", fmt.Sprint("snapshot-", id))); err != nil {
					t.Fatal(err)
				}
			}
			streamed := readHistory(t, tbl, 1).changes
			// Two readers that read snapshot 2 and then fall behind.
			behind := map[string]*scan.StreamScanner{}
			for _, onExpired := range []string{scan.OnExpiredError, scan.OnExpiredEarliest} {
				ss := tbl.NewStreamScan(scan.StreamOptions{Mode: scan.ModeFromSnapshot, SnapshotID: 2, OnExpired: onExpired})
				if p, err := ss.Next(ctx); err != nil || p.Snapshot.ID != 2 {
					t.Fatalf("stream before expiry: %v %v", p, err)
				}
				behind[onExpired] = ss
			}
			// Every snapshot counts as young: the counts decide.
			rep, err := tbl.ExpireSnapshots(ctx, maintain.ExpireSnapshotsOptions{OlderThan: time.UnixMilli(1)})
			if err != nil {
				t.Fatal(err)
			}
			// Snapshots [latest-2, latest] stay; the changelogs made of
			// [1, latest-3] keep the last 6 ids counted from latest, of
			// which latest-5 .. latest-3 are changelogs.
			if rep.SnapshotsExpired != int(latest-3) || rep.ChangelogsExpired != int(latest-6) {
				t.Fatalf("expired %d snapshots and %d changelogs, want %d and %d: %s", rep.SnapshotsExpired, rep.ChangelogsExpired, latest-3, latest-6, rep.Summary())
			}
			cm := snapshot.NewChangelogManager(tbl.FileIO(), tbl.Path())
			clIDs, err := cm.ListIDs(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if !slices.Equal(clIDs, []int64{latest - 5, latest - 4, latest - 3}) {
				t.Fatalf("changelogs %v, want %d..%d", clIDs, latest-5, latest-3)
			}
			for hint, id := range map[string]int64{"LATEST": latest - 3, "EARLIEST": latest - 5} {
				if b, err := os.ReadFile(filepath.Join(dir, "changelog", hint)); err != nil || string(b) != fmt.Sprint(id) {
					t.Errorf("changelog/%s = %q %v, want %d", hint, b, err, id)
				}
			}
			r := manifest.NewReader(tbl.FileIO(), tbl.Path(), manifest.ReaderOptions{})
			onDisk := filesOnDisk(t, dir)
			for _, id := range clIDs {
				b, err := os.ReadFile(filepath.Join(dir, "changelog", fmt.Sprint("changelog-", id)))
				if err != nil || !slices.Equal(b, snapshotFiles[id]) {
					t.Errorf("changelog-%d is not the bytes of snapshot-%d (%v)", id, id, err)
				}
				c, err := cm.Get(ctx, id)
				if err != nil {
					t.Fatal(err)
				}
				// What the changelog is read from must all be there.
				lists := []manifest.List{manifest.DeltaList(c)}
				if producer == "input" {
					lists = nil
					if l, ok := manifest.ChangelogList(c); ok {
						lists = append(lists, l)
					}
				}
				for _, l := range lists {
					metas, err := r.ReadList(ctx, l)
					if err != nil {
						t.Fatalf("changelog %d: %v", id, err)
					}
					for i := range metas {
						entries, err := r.ReadManifest(ctx, &metas[i])
						if err != nil {
							t.Fatalf("changelog %d: %v", id, err)
						}
						for _, e := range entries {
							if e.Kind == manifest.FileKindAdd && !onDisk.data[e.File.FileName] {
								t.Errorf("changelog %d: file %s was deleted", id, e.File.FileName)
							}
						}
					}
				}
			}
			// Long-lived changelogs are roots for orphan cleanup.
			old := time.Now().Add(-48 * time.Hour)
			for _, p := range fixturetest.ListFiles(t, dir) {
				if err := os.Chtimes(filepath.Join(dir, filepath.FromSlash(p)), old, old); err != nil {
					t.Fatal(err)
				}
			}
			orep, err := tbl.RemoveOrphanFiles(ctx, maintain.RemoveOrphanFilesOptions{DryRun: true})
			if err != nil || len(orep.Removed) != 0 {
				t.Errorf("orphan cleanup after expiry: %v, would remove %v", err, orep.Removed)
			}
			rows, err := tbl.ReadAll(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			assertRows(t, rows, want)
			if _, err := behind[scan.OnExpiredError].Next(ctx); !errors.Is(err, scan.ErrSnapshotExpired) {
				t.Errorf("a reader behind the earliest changelog: %v, want ErrSnapshotExpired", err)
			}
			if p, err := behind[scan.OnExpiredEarliest].Next(ctx); err != nil || p.Snapshot.ID != latest-5 || p.ExpiredFrom != 3 {
				t.Errorf("a reader behind the earliest changelog with OnExpiredEarliest: %+v %v, want changelog %d, expired from 3", p, err, latest-5)
			}
			after := readHistory(t, tbl, 1).changes
			for id := int64(1); id <= latest; id++ {
				switch {
				case id < latest-5 && after[id] != nil:
					t.Errorf("snapshot %d streamed after its changelog expired", id)
				case id >= latest-5 && !slices.Equal(after[id], streamed[id]):
					t.Errorf("snapshot %d streams %v after expiry, %v before", id, after[id], streamed[id])
				}
			}
		})
	}
}

// TestPrimaryKeyExpirePartitions drops an old partition of a partitioned
// primary-key table with changelog files: one OVERWRITE snapshot deletes
// every file of every level of the partition; the rows go, the other
// partition's stay; snapshot expiry then deletes the partition's data and
// changelog files from disk.
func TestPrimaryKeyExpirePartitions(t *testing.T) {
	ctx := context.Background()
	fio, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := lakecore.NewCatalog(fio).CreateTable(ctx, "db", "t", lakecore.TableSpec{
		Fields: []types.DataField{
			{Name: "dt", Type: types.StringType().NotNull()},
			{Name: "k", Type: types.BigIntType().NotNull()},
			{Name: "v", Type: types.StringType()},
		},
		PartitionKeys: []string{"dt"},
		PrimaryKeys:   []string{"dt", "k"},
		Options:       map[string]string{"bucket": "2", "changelog-producer": "input", "partition.expiration-time": "1 d"},
	})
	if err != nil {
		t.Fatal(err)
	}
	state := writePKCommits(t, tbl, 6, []string{"2020-01-01", "2999-01-01"})
	rep, err := tbl.ExpirePartitions(ctx, maintain.ExpirePartitionsOptions{})
	if err != nil || !slices.Equal(rep.PartitionsDropped, []string{"dt=2020-01-01"}) || rep.DroppedFiles.Files == 0 {
		t.Fatalf("expire partitions: %v %v", err, rep)
	}
	latest := mustLatest(t, tbl)
	if latest.CommitKind != snapshot.CommitOverwrite || latest.ChangelogManifestList != nil {
		t.Fatalf("latest snapshot %s with changelog %v, want an OVERWRITE without changelog", latest.CommitKind, latest.ChangelogManifestList)
	}
	var want [][]any
	for _, r := range state {
		if r[0] == "2999-01-01" {
			want = append(want, r)
		}
	}
	rows, err := tbl.ReadAll(ctx, 0)
	if err != nil {
		t.Fatal(err)
	}
	assertRows(t, rows, want)

	rep, err = tbl.ExpireSnapshots(ctx, maintain.ExpireSnapshotsOptions{RetainMax: 1, RetainMin: 1, OlderThan: time.Now().Add(time.Minute)})
	if err != nil || rep.SnapshotsExpired == 0 {
		t.Fatalf("expire snapshots: %v %v", err, rep)
	}
	dir := tableDir(t, tbl)
	checkOnlyReferenced(t, tbl, dir, "after expiry")
	for _, p := range fixturetest.ListFiles(t, dir) {
		if strings.HasPrefix(p, "dt=2020-01-01/") {
			t.Errorf("%s of the dropped partition is left after expiry", p)
		}
	}
	if rows, err = tbl.ReadAll(ctx, 0); err != nil {
		t.Fatal(err)
	}
	assertRows(t, rows, want)
}

// TestPrimaryKeyRemoveOrphanFiles plants orphans among the files of
// primary-key tables (a data file and a changelog file in a bucket
// directory, a manifest, an index file): orphan cleanup deletes exactly
// those and keeps every data, changelog, manifest and index file a
// snapshot refers to. The Java-written tables with deletion vectors check
// the index files; pk_with_bitmap_dv the extra (file index) files.
func TestPrimaryKeyRemoveOrphanFiles(t *testing.T) {
	ctx := context.Background()
	goTable := func(options map[string]string) func(t *testing.T) (*lakecore.Table, string) {
		return func(t *testing.T) (*lakecore.Table, string) {
			tbl := createPKTable(t, options)
			writePKCommits(t, tbl, 6, nil)
			return tbl, tableDir(t, tbl)
		}
	}
	cppTable := func(name string) func(t *testing.T) (*lakecore.Table, string) {
		return func(t *testing.T) (*lakecore.Table, string) {
			fio, err := storage.NewLocal(fixturetest.CopyCppPKWarehouse(t, name))
			if err != nil {
				t.Fatal(err)
			}
			tbl, err := lakecore.NewCatalog(fio).OpenTable(ctx, "default", name)
			if err != nil {
				t.Fatal(err)
			}
			return tbl, tableDir(t, tbl)
		}
	}
	for _, c := range []struct {
		name  string
		table func(t *testing.T) (*lakecore.Table, string)
	}{
		{"go producer none", goTable(map[string]string{"bucket": "2"})},
		{"go producer input", goTable(map[string]string{"bucket": "2", "changelog-producer": "input"})},
		{"java deletion vectors", cppTable("pk_table_scan_and_read_dv")},
		{"java deletion vectors with cardinality", cppTable("pk_table_with_dv_cardinality")},
		{"java bitmap file index", cppTable("pk_with_bitmap_dv")},
	} {
		t.Run(c.name, func(t *testing.T) {
			tbl, dir := c.table(t)
			rowsBefore, err := tbl.ReadAll(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			bucketDir := ""
			for _, p := range fixturetest.ListFiles(t, dir) {
				if strings.Contains(p, "bucket-") {
					bucketDir = path.Dir(p)
					break
				}
			}
			planted := []string{
				path.Join(bucketDir, "data-00000000-orphan-0.parquet"),
				path.Join(bucketDir, "changelog-00000000-orphan-0.parquet"),
				"manifest/manifest-00000000-orphan-0",
				"index/index-00000000-orphan-0",
			}
			for _, p := range planted {
				full := filepath.Join(dir, filepath.FromSlash(p))
				if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
					t.Fatal(err)
				}
				if err := os.WriteFile(full, []byte("orphan"), 0o644); err != nil {
					t.Fatal(err)
				}
			}
			old := time.Now().Add(-48 * time.Hour)
			for _, p := range fixturetest.ListFiles(t, dir) {
				if err := os.Chtimes(filepath.Join(dir, filepath.FromSlash(p)), old, old); err != nil {
					t.Fatal(err)
				}
			}
			before := fixturetest.ListFiles(t, dir)
			rep, err := tbl.RemoveOrphanFiles(ctx, maintain.RemoveOrphanFilesOptions{})
			if err != nil {
				t.Fatal(err)
			}
			var removed []string
			for _, p := range rep.Removed {
				removed = append(removed, strings.TrimPrefix(p, tbl.Path()+"/"))
			}
			slices.Sort(removed)
			slices.Sort(planted)
			if !slices.Equal(removed, planted) {
				t.Errorf("removed %v, want the planted orphans %v", removed, planted)
			}
			after := fixturetest.ListFiles(t, dir)
			kept := slices.DeleteFunc(slices.Clone(before), func(p string) bool { return slices.Contains(planted, p) })
			if !slices.Equal(after, kept) {
				t.Errorf("files after cleanup:\n %v\nwant\n %v", after, kept)
			}
			checkOnlyReferenced(t, tbl, dir, "after orphan cleanup")
			rows, err := tbl.ReadAll(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			assertRows(t, rows, rowsBefore)
		})
	}
}

// TestPrimaryKeyExpireJavaIndexFiles expires the Java-written primary-key
// tables with deletion vectors down to their latest snapshot: the
// deletion-vector index files only older snapshots listed go (with their
// index manifests), the latest snapshot's stay, and it reads the same rows.
// In pk_09 (Java 0.9) snapshot 8 replaced bucket 0's deletion-vector file
// of snapshot 6 by an empty one, so that one goes; the paimon-cpp tables
// never replaced one.
func TestPrimaryKeyExpireJavaIndexFiles(t *testing.T) {
	ctx := context.Background()
	for _, c := range []struct {
		db, table  string
		warehouse  func(t *testing.T) string
		indexFiles [2]int // before, after
	}{
		{"default", "pk_09", func(t *testing.T) string {
			return fixturetest.CopyWarehouse(t, "cpp-java09-pk-table-avro-manifest-reference")
		}, [2]int{3, 2}},
		{"default", "pk_table_scan_and_read_dv", nil, [2]int{2, 2}},
		{"default", "pk_table_with_dv_cardinality", nil, [2]int{2, 2}},
		{"default", "pk_with_bitmap_dv", nil, [2]int{1, 1}},
	} {
		t.Run(c.table, func(t *testing.T) {
			var wh string
			if c.warehouse != nil {
				wh = c.warehouse(t)
			} else {
				wh = fixturetest.CopyCppPKWarehouse(t, c.table)
			}
			fio, err := storage.NewLocal(wh)
			if err != nil {
				t.Fatal(err)
			}
			tbl, err := lakecore.NewCatalog(fio).OpenTable(ctx, c.db, c.table)
			if err != nil {
				t.Fatal(err)
			}
			dir := tableDir(t, tbl)
			rowsBefore, err := tbl.ReadAll(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			indexBefore := filesOnDisk(t, dir).index
			rep, err := tbl.ExpireSnapshots(ctx, maintain.ExpireSnapshotsOptions{RetainMax: 1, RetainMin: 1, OlderThan: time.UnixMilli(1)})
			if err != nil || rep.SnapshotsExpired == 0 {
				t.Fatalf("expire: %v %v", err, rep)
			}
			checkOnlyReferenced(t, tbl, dir, "after expiry")
			latest := mustLatest(t, tbl)
			entries, err := manifest.NewReader(fio, tbl.Path(), manifest.ReaderOptions{}).ReadIndexEntries(ctx, *latest.IndexManifest)
			if err != nil {
				t.Fatal(err)
			}
			indexAfter := filesOnDisk(t, dir).index
			if got := [2]int{len(indexBefore), len(indexAfter)}; got != c.indexFiles || len(indexAfter) != len(entries) {
				t.Errorf("index files %d -> %d, want %d -> %d; the latest index manifest lists %d", got[0], got[1], c.indexFiles[0], c.indexFiles[1], len(entries))
			}
			rows, err := tbl.ReadAll(ctx, 0)
			if err != nil {
				t.Fatal(err)
			}
			assertRows(t, rows, rowsBefore)
		})
	}
}

// TestPartitionStatsSortedRuns: each level-0 file of a bucket is a sorted
// run, each higher level one; a full compaction leaves one.
func TestPartitionStatsSortedRuns(t *testing.T) {
	ctx := context.Background()
	fio, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	tbl, err := lakecore.NewCatalog(fio).CreateTable(ctx, "db", "t", lakecore.TableSpec{
		Fields:      []types.DataField{{Name: "k", Type: types.BigIntType().NotNull()}, {Name: "v", Type: types.StringType()}},
		PrimaryKeys: []string{"k"},
		Options:     map[string]string{"bucket": "1", "write-only": "true"},
	})
	if err != nil {
		t.Fatal(err)
	}
	runs := func() int {
		t.Helper()
		s, err := tbl.Snapshots().Latest(ctx)
		if err != nil {
			t.Fatal(err)
		}
		stats, err := tbl.PartitionStats(ctx, s)
		if err != nil || len(stats) != 1 {
			t.Fatalf("stats %v %v", stats, err)
		}
		return stats[0].SortedRunsMax
	}
	writePKCommits(t, tbl, 3, nil) // write-only: no compaction, three level-0 files
	if got := runs(); got != 3 {
		t.Fatalf("after 3 commits: %d sorted runs, want 3", got)
	}
	if _, err := tbl.Compact(ctx, maintain.CompactOptions{Full: true}); err != nil {
		t.Fatal(err)
	}
	if got := runs(); got != 1 {
		t.Fatalf("after a full compaction: %d sorted runs, want 1", got)
	}
}
