package maintain_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/lakecore"
	"github.com/benthos-paimon/benthos-paimon/lakecore/maintain"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage/faultfs"
)

// history is a table with six snapshots:
//
//	1 APPEND    +f1(1,2)
//	2 APPEND    +f2(3)
//	3 COMPACT   -f1 -f2 +c1(1,2,3)
//	4 APPEND    +f3(4)
//	5 OVERWRITE -c1 -f3 +f4(5)     base list = one merged manifest of state 4
//	6 APPEND    +f5(6)
type history struct {
	*fakeTable
	snaps              []*snapshot.Snapshot // index i = snapshot i+1
	f1, f2, c1, f3, f4 manifest.Entry
	f5                 manifest.Entry
	now                time.Time
}

var testNow = time.UnixMilli(1_800_000_000_000)

// newHistory builds the history; snapshot i is committed at times[i-1]
// (default: all ten hours before testNow).
func newHistory(t *testing.T, options map[string]string, times ...time.Time) *history {
	t.Helper()
	h := &history{fakeTable: newFakeTable(t, false, options), now: testNow}
	at := func(i int) int64 {
		if i < len(times) {
			return times[i].UnixMilli()
		}
		return testNow.Add(-10*time.Hour).UnixMilli() + int64(i)
	}
	h.f1 = h.dataFile("data-f1.parquet", "", 1, 2)
	h.snaps = append(h.snaps, h.commit(snapshot.CommitAppend, at(0), false, []manifest.Entry{h.f1}))
	h.f2 = h.dataFile("data-f2.parquet", "", 3)
	h.snaps = append(h.snaps, h.commit(snapshot.CommitAppend, at(1), false, []manifest.Entry{h.f2}))
	h.c1 = h.dataFile("data-c1.parquet", "", 1, 2, 3)
	h.snaps = append(h.snaps, h.commit(snapshot.CommitCompact, at(2), false, []manifest.Entry{h.c1}, "data-f1.parquet", "data-f2.parquet"))
	h.f3 = h.dataFile("data-f3.parquet", "", 4)
	h.snaps = append(h.snaps, h.commit(snapshot.CommitAppend, at(3), false, []manifest.Entry{h.f3}))
	h.f4 = h.dataFile("data-f4.parquet", "", 5)
	h.snaps = append(h.snaps, h.commit(snapshot.CommitOverwrite, at(4), true, []manifest.Entry{h.f4}, "data-c1.parquet", "data-f3.parquet"))
	h.f5 = h.dataFile("data-f5.parquet", "", 6)
	h.snaps = append(h.snaps, h.commit(snapshot.CommitAppend, at(5), false, []manifest.Entry{h.f5}))
	return h
}

func (h *history) expire(t *testing.T, o maintain.ExpireSnapshotsOptions) *maintain.Report {
	t.Helper()
	if o.Now == nil {
		o.Now = func() time.Time { return h.now }
	}
	rep, err := maintain.ExpireSnapshots(context.Background(), h.fio, h.path, o)
	if err != nil {
		t.Fatalf("ExpireSnapshots: %v", err)
	}
	return rep
}

// expectFiles checks the exact set of files left in the table.
func (h *history) expectFiles(t *testing.T, snapshots []int64, earliest string, manifests []string, data []string) {
	t.Helper()
	want := []string{"schema/schema-0", "snapshot/LATEST"}
	if earliest != "" {
		want = append(want, "snapshot/EARLIEST")
	}
	for _, id := range snapshots {
		want = append(want, "snapshot/snapshot-"+itoa(id))
	}
	for _, m := range manifests {
		want = append(want, "manifest/"+m)
	}
	for _, d := range data {
		want = append(want, "bucket-0/"+d)
	}
	sort.Strings(want)
	want = slices.Compact(want)
	got := h.filesOnDisk()
	got = slices.DeleteFunc(got, func(p string) bool {
		return strings.HasPrefix(p, "consumer/") || strings.HasPrefix(p, "tag/") || strings.HasPrefix(p, "index/") ||
			strings.HasPrefix(p, "statistics/") || strings.HasPrefix(p, "manifest/index-manifest-")
	})
	if d := diff(want, got); d != "" {
		t.Errorf("files after expiry:%s", d)
	}
	if earliest != "" {
		b, err := os.ReadFile(filepath.Join(h.tableDir(), "snapshot", "EARLIEST"))
		if err != nil || string(b) != earliest {
			t.Errorf("EARLIEST = %q, %v; want %q", b, err, earliest)
		}
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }

func (h *history) manifestsOf(ids ...int64) []string {
	var out []string
	for _, id := range ids {
		out = append(out, h.manifestFiles(h.snaps[id-1])...)
	}
	sort.Strings(out)
	return slices.Compact(out)
}

// readIDs reads snapshot id through the facade and returns the ids, sorted.
func (h *history) readIDs(t *testing.T, id int64) []int32 {
	t.Helper()
	tb, err := lakecore.NewCatalog(h.fio).OpenTable(context.Background(), "db", "t")
	if err != nil {
		t.Fatal(err)
	}
	rows, err := tb.ReadAll(context.Background(), id)
	if err != nil {
		t.Fatalf("read snapshot %d: %v", id, err)
	}
	var ids []int32
	for _, r := range rows {
		ids = append(ids, r[0].(int32))
	}
	slices.Sort(ids)
	return ids
}

func TestExpireSnapshotsRetainMin(t *testing.T) {
	h := newHistory(t, nil)
	rep := h.expire(t, maintain.ExpireSnapshotsOptions{RetainMin: 2})
	// latest 6, retain-min 2: [1, 5) expire. The deltas of 2..5 delete f1, f2
	// (snapshot 3) and c1, f3 (snapshot 5); snapshot 5's merged base made
	// the delta manifests of 1..4 unused.
	h.expectFiles(t, []int64{5, 6}, "5", h.manifestsOf(5, 6), names(h.f4, h.f5))
	if rep.SnapshotsExpired != 4 || rep.ExpiredFrom != 1 || rep.ExpiredUntil != 5 {
		t.Errorf("report: expired %d [%d, %d), want 4 [1, 5)", rep.SnapshotsExpired, rep.ExpiredFrom, rep.ExpiredUntil)
	}
	wantBytes := h.f1.File.FileSize + h.f2.File.FileSize + h.c1.File.FileSize + h.f3.File.FileSize
	if rep.RemovedData.Files != 4 || rep.RemovedData.Bytes != wantBytes {
		t.Errorf("removed data %+v, want 4 files, %d bytes", rep.RemovedData, wantBytes)
	}
	// 4 snapshot files, 8 manifest lists, the 4 delta manifests of 1..4.
	if rep.RemovedMeta.Files != 16 {
		t.Errorf("removed metadata files = %d, want 16: %v", rep.RemovedMeta.Files, rep.Removed)
	}
	if got := h.readIDs(t, 5); !slices.Equal(got, []int32{5}) {
		t.Errorf("snapshot 5 reads %v, want [5]", got)
	}
	if got := h.readIDs(t, 6); !slices.Equal(got, []int32{5, 6}) {
		t.Errorf("snapshot 6 reads %v, want [5 6]", got)
	}
	if s := rep.Summary(); !strings.Contains(s, "expired 4 snapshots [1, 5)") || !strings.Contains(s, "4 data files") {
		t.Errorf("summary %q", s)
	}

	// Nothing more to do with the same settings.
	rep = h.expire(t, maintain.ExpireSnapshotsOptions{RetainMin: 2})
	if rep.SnapshotsExpired != 0 || rep.RemovedData.Files+rep.RemovedMeta.Files != 0 {
		t.Errorf("second run removed %+v %+v", rep.RemovedData, rep.RemovedMeta)
	}
}

func TestExpireSnapshotsConsumerPins(t *testing.T) {
	h := newHistory(t, nil)
	h.consumer("reader-1", 3)
	h.consumer("reader-2", 5)
	h.expire(t, maintain.ExpireSnapshotsOptions{RetainMin: 1})
	// The smallest nextSnapshot (3) caps the range: [1, 3) expire, 3..6
	// survive with every file they use; f1 and f2 go (deleted by snapshot 3).
	h.expectFiles(t, []int64{3, 4, 5, 6}, "3", h.manifestsOf(3, 4, 5, 6), names(h.c1, h.f3, h.f4, h.f5))
	for id, want := range map[int64][]int32{3: {1, 2, 3}, 4: {1, 2, 3, 4}, 5: {5}, 6: {5, 6}} {
		if got := h.readIDs(t, id); !slices.Equal(got, want) {
			t.Errorf("snapshot %d reads %v, want %v", id, got, want)
		}
	}
	// With consumer.changelog-only consumers do not protect snapshots.
	h2 := newHistory(t, map[string]string{"consumer.changelog-only": "true"})
	h2.consumer("reader-1", 3)
	h2.expire(t, maintain.ExpireSnapshotsOptions{RetainMin: 1})
	h2.expectFiles(t, []int64{6}, "6", h2.manifestsOf(6), names(h2.f4, h2.f5))
}

func TestExpireSnapshotsTagKeepsFiles(t *testing.T) {
	h := newHistory(t, nil)
	h.tag("t2", 2)
	h.expire(t, maintain.ExpireSnapshotsOptions{RetainMin: 1})
	// [1, 6) expire. f1 and f2, deleted by snapshot 3, are in tag t2 (the
	// nearest tag before 3) and stay; c1 and f3 go. The tag's manifests
	// stay too.
	h.expectFiles(t, []int64{6}, "6", h.manifestsOf(2, 6), names(h.f1, h.f2, h.f4, h.f5))
	// The tag is still readable.
	tag, err := snapshot.NewTagManager(h.fio, h.path).Get(context.Background(), "t2")
	if err != nil {
		t.Fatal(err)
	}
	tb, err := lakecore.NewCatalog(h.fio).OpenTable(context.Background(), "db", "t")
	if err != nil {
		t.Fatal(err)
	}
	plan, err := tb.Planner().Full(context.Background(), tag.Snapshot, nil)
	if err != nil {
		t.Fatalf("plan tag: %v", err)
	}
	if plan.RowCount() != 3 {
		t.Errorf("tag t2 plans %d rows, want 3", plan.RowCount())
	}
}

func TestExpireSnapshotsTagAfterDelete(t *testing.T) {
	h := newHistory(t, nil)
	h.tag("t4", 4) // holds c1 and f3
	h.expire(t, maintain.ExpireSnapshotsOptions{RetainMin: 1})
	// f1, f2 (deleted by 3: the nearest earlier tag is none) go; c1, f3
	// (deleted by 5: nearest earlier tag t4 holds them) stay.
	h.expectFiles(t, []int64{6}, "6", h.manifestsOf(4, 6), names(h.c1, h.f3, h.f4, h.f5))
}

func TestExpireSnapshotsRetainMaxForcesYoung(t *testing.T) {
	var times []time.Time
	for i := 0; i < 6; i++ {
		times = append(times, testNow.Add(-time.Minute))
	}
	h := newHistory(t, nil, times...)
	// All snapshots are younger than the 1 h default, so only retain-max
	// expires: min = 6 - 3 + 1 = 4, and the first young snapshot from 4 on
	// ends the range: [1, 4).
	h.expire(t, maintain.ExpireSnapshotsOptions{RetainMin: 1, RetainMax: 3})
	h.expectFiles(t, []int64{4, 5, 6}, "4", h.manifestsOf(4, 5, 6), names(h.c1, h.f3, h.f4, h.f5))
}

func TestExpireSnapshotsTimeRetained(t *testing.T) {
	var times []time.Time
	for i := 0; i < 6; i++ {
		times = append(times, testNow.Add(-time.Duration(60-10*i)*time.Minute))
	}
	// Snapshots at -60, -50, -40, -30, -20, -10 minutes; 35 min retained.
	h := newHistory(t, map[string]string{"snapshot.time-retained": "35 min", "snapshot.num-retained.min": "1"}, times...)
	h.expire(t, maintain.ExpireSnapshotsOptions{})
	h.expectFiles(t, []int64{4, 5, 6}, "4", h.manifestsOf(4, 5, 6), names(h.c1, h.f3, h.f4, h.f5))

	// older_than overrides the option.
	h2 := newHistory(t, map[string]string{"snapshot.num-retained.min": "1"}, times...)
	h2.expire(t, maintain.ExpireSnapshotsOptions{OlderThan: testNow.Add(-45 * time.Minute)})
	h2.expectFiles(t, []int64{3, 4, 5, 6}, "3", h2.manifestsOf(3, 4, 5, 6), names(h2.c1, h2.f3, h2.f4, h2.f5))
}

func TestExpireSnapshotsLimit(t *testing.T) {
	h := newHistory(t, map[string]string{"snapshot.expire.limit": "2"})
	h.expire(t, maintain.ExpireSnapshotsOptions{RetainMin: 1})
	h.expectFiles(t, []int64{3, 4, 5, 6}, "3", h.manifestsOf(3, 4, 5, 6), names(h.c1, h.f3, h.f4, h.f5))
	h.expire(t, maintain.ExpireSnapshotsOptions{RetainMin: 1, MaxDeletes: 10})
	h.expectFiles(t, []int64{6}, "6", h.manifestsOf(6), names(h.f4, h.f5))
}

func TestExpireSnapshotsDefaultsKeepTen(t *testing.T) {
	h := newHistory(t, nil)
	before := h.filesOnDisk()
	rep := h.expire(t, maintain.ExpireSnapshotsOptions{})
	if rep.SnapshotsExpired != 0 {
		t.Fatalf("expired %d snapshots with retain-min 10", rep.SnapshotsExpired)
	}
	// Only the missing EARLIEST hint is written.
	after := h.filesOnDisk()
	if d := diff(append(before, "snapshot/EARLIEST"), after); d != "" {
		t.Errorf("files:%s", d)
	}
	if !strings.Contains(rep.Summary(), "nothing to expire") {
		t.Errorf("summary %q", rep.Summary())
	}
}

func TestExpireSnapshotsDryRun(t *testing.T) {
	h := newHistory(t, nil)
	before := h.filesOnDisk()
	last := map[string]maintain.Event{}
	dry := h.expire(t, maintain.ExpireSnapshotsOptions{RetainMin: 2, DryRun: true, Progress: func(e maintain.Event) {
		if e.Done > last[e.Phase].Done {
			last[e.Phase] = e
		}
	}})
	for phase, n := range map[string]int{"delete data files": 4, "delete manifests": 12, "delete snapshot files": 4} {
		if e := last[phase]; e.Done != n || e.Total != n || e.Operation != maintain.OpExpireSnapshots {
			t.Errorf("progress of %s: %+v, want %d of %d", phase, e, n, n)
		}
	}
	if d := diff(before, h.filesOnDisk()); d != "" {
		t.Fatalf("dry run changed files:%s", d)
	}
	real := h.expire(t, maintain.ExpireSnapshotsOptions{RetainMin: 2})
	if !slices.Equal(dry.Removed, real.Removed) || dry.RemovedData != real.RemovedData || dry.RemovedMeta != real.RemovedMeta {
		t.Errorf("dry run listed %v (%+v %+v), the run removed %v (%+v %+v)", dry.Removed, dry.RemovedData, dry.RemovedMeta,
			real.Removed, real.RemovedData, real.RemovedMeta)
	}
	if !strings.Contains(dry.String(), "db.db/t/bucket-0/data-f1.parquet") || !strings.Contains(dry.Summary(), "would expire 4 snapshots") {
		t.Errorf("dry run report:\n%s", dry)
	}
}

// TestExpireSnapshotsIndexAndStatistics: index files (in index/, or with
// index-file-in-data-file-dir in their bucket directory, as Java's
// IndexInDataFileDirPathFactory puts them) and statistics files go with
// the last snapshot that used them.
func TestExpireSnapshotsIndexAndStatistics(t *testing.T) {
	for _, inDataDir := range []bool{false, true} {
		t.Run(fmt.Sprintf("index-file-in-data-file-dir=%v", inDataDir), func(t *testing.T) {
			f := newFakeTable(t, true, map[string]string{"index-file-in-data-file-dir": fmt.Sprint(inDataDir)})
			rel := func(p string) string { return strings.TrimPrefix(p, f.path+"/") }
			old := testNow.Add(-5 * time.Hour).UnixMilli()
			idxA := f.writeIndex("index-a")
			f.writeStatistics("stat-a")
			f.commit(snapshot.CommitAppend, old, false, []manifest.Entry{f.dataFile("data-1.parquet", "a", 1)})
			f.commit(snapshot.CommitAppend, old+1, false, []manifest.Entry{f.dataFile("data-2.parquet", "a", 2)})
			idxB := f.writeIndex("index-b")
			f.writeStatistics("stat-b")
			f.commit(snapshot.CommitAppend, old+2, false, []manifest.Entry{f.dataFile("data-3.parquet", "a", 3)})
			f.commit(snapshot.CommitAppend, old+3, false, []manifest.Entry{f.dataFile("data-4.parquet", "a", 4)})
			rep, err := maintain.ExpireSnapshots(context.Background(), f.fio, f.path, maintain.ExpireSnapshotsOptions{RetainMin: 2, Now: func() time.Time { return testNow }})
			if err != nil {
				t.Fatal(err)
			}
			if rep.SnapshotsExpired != 2 {
				t.Fatalf("expired %d", rep.SnapshotsExpired)
			}
			got := f.filesOnDisk()
			for _, gone := range []string{rel(f.indexFilePath("index-a")), "statistics/stat-a", "manifest/" + idxA} {
				if slices.Contains(got, gone) {
					t.Errorf("%s still there", gone)
				}
			}
			for _, kept := range []string{rel(f.indexFilePath("index-b")), "statistics/stat-b", "manifest/" + idxB} {
				if !slices.Contains(got, kept) {
					t.Errorf("%s was deleted", kept)
				}
			}
		})
	}
}

func TestExpireSnapshotsToleratesInterruptedRun(t *testing.T) {
	h := newHistory(t, nil)
	// An earlier run was killed after deleting snapshot 1's manifest lists.
	for _, l := range []string{h.snaps[0].BaseManifestList, h.snaps[0].DeltaManifestList} {
		if err := os.Remove(filepath.Join(h.tableDir(), "manifest", l)); err != nil {
			t.Fatal(err)
		}
	}
	h.expire(t, maintain.ExpireSnapshotsOptions{RetainMin: 2})
	h.expectFiles(t, []int64{5, 6}, "5", h.manifestsOf(5, 6), names(h.f4, h.f5))
}

func TestExpireSnapshotsInvalidOptions(t *testing.T) {
	h := newHistory(t, nil)
	for name, o := range map[string]maintain.ExpireSnapshotsOptions{
		"max below min": {RetainMax: 2, RetainMin: 3},
		"min below one": {RetainMin: -1},
	} {
		_, err := maintain.ExpireSnapshots(context.Background(), h.fio, h.path, o)
		if !errors.Is(err, maintain.ErrInvalidOptions) {
			t.Errorf("%s: err = %v, want ErrInvalidOptions", name, err)
		}
	}
	h2 := newHistory(t, map[string]string{"changelog.num-retained.max": "5", "changelog.num-retained.min": "20"})
	if _, err := maintain.ExpireSnapshots(context.Background(), h2.fio, h2.path, maintain.ExpireSnapshotsOptions{}); !errors.Is(err, maintain.ErrInvalidOptions) {
		t.Errorf("changelog max below min: err = %v, want ErrInvalidOptions", err)
	}
}

func TestExpireSnapshotsDeleteFailures(t *testing.T) {
	h := newHistory(t, nil)
	faulty := faultfs.New(h.fio, 1, faultfs.Fault{Ops: faultfs.OpDelete, Path: "db.db/t/bucket-0/data-f1.parquet"})
	rep, err := maintain.ExpireSnapshots(context.Background(), faulty, h.path, maintain.ExpireSnapshotsOptions{RetainMin: 2, Now: func() time.Time { return testNow }})
	if !errors.Is(err, maintain.ErrIncomplete) {
		t.Fatalf("err = %v, want ErrIncomplete", err)
	}
	if rep.FailedDeletes != 1 || !strings.Contains(rep.FirstFailure, "data-f1.parquet") {
		t.Errorf("failures %d %q", rep.FailedDeletes, rep.FirstFailure)
	}
	// Everything else went as planned; the journal stays, and the next
	// expiry deletes what is left.
	if _, err := os.Stat(filepath.Join(h.tableDir(), "snapshot", "EXPIRING-5")); err != nil {
		t.Fatalf("the expiry journal: %v", err)
	}
	if rep := h.expire(t, maintain.ExpireSnapshotsOptions{RetainMin: 2}); !slices.Equal(rep.Removed, []string{"db.db/t/bucket-0/data-f1.parquet"}) {
		t.Errorf("the next expiry removed %v, want the file left behind", rep.Removed)
	}
	h.expectFiles(t, []int64{5, 6}, "5", h.manifestsOf(5, 6), names(h.f4, h.f5))
}

// TestExpireSnapshotsStopsAtSnapshotDeleteFailure: a snapshot file that
// cannot be deleted stops the run before any data file or manifest goes
// (the older snapshot files are gone, the younger ones stay, all readable);
// the journal lets the next run finish.
func TestExpireSnapshotsStopsAtSnapshotDeleteFailure(t *testing.T) {
	h := newHistory(t, nil)
	before := h.filesOnDisk()
	faulty := faultfs.New(h.fio, 1, faultfs.Fault{Ops: faultfs.OpDelete, Path: "db.db/t/snapshot/snapshot-2"})
	_, err := maintain.ExpireSnapshots(context.Background(), faulty, h.path, maintain.ExpireSnapshotsOptions{RetainMin: 2, Now: func() time.Time { return testNow }})
	if err == nil || !strings.Contains(err.Error(), "snapshot-2") {
		t.Fatalf("err = %v, want the failed deletion of snapshot-2", err)
	}
	want := append(slices.DeleteFunc(slices.Clone(before), func(p string) bool { return p == "snapshot/snapshot-1" }), "snapshot/EXPIRING-5")
	sort.Strings(want)
	if d := diff(want, h.filesOnDisk()); d != "" {
		t.Fatalf("files after the failed run:%s", d)
	}
	for id := int64(2); id <= 6; id++ {
		if got := h.readIDs(t, id); len(got) == 0 {
			t.Errorf("snapshot %d reads no rows", id)
		}
	}
	rep := h.expire(t, maintain.ExpireSnapshotsOptions{RetainMin: 2})
	if rep.SnapshotsExpired != 3 {
		t.Errorf("the next run expired %d snapshots, want 3 (2..4)", rep.SnapshotsExpired)
	}
	h.expectFiles(t, []int64{5, 6}, "5", h.manifestsOf(5, 6), names(h.f4, h.f5))
}

// TestExpireSnapshotsJavaFixture expires a table Java wrote: snapshot 4
// compacted three files of f1=10/bucket-0 into one; expiring 1..3 deletes
// exactly those three and keeps the rows of snapshot 4.
func TestExpireSnapshotsJavaFixture(t *testing.T) {
	dst := fixturetest.CopyWarehouse(t, "cpp-java11-append-fixed-bucket-complex-types")
	fio, err := storage.NewLocal(dst)
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	tb, err := lakecore.NewCatalog(fio).OpenTable(ctx, "default", "append_complex_data")
	if err != nil {
		t.Fatal(err)
	}
	before, err := tb.ReadAll(ctx, 4)
	if err != nil {
		t.Fatal(err)
	}
	tableDir := filepath.Join(dst, "default.db", "append_complex_data")
	filesBefore := fixturetest.ListFiles(t, tableDir)
	snap3, err := tb.Snapshots().Get(ctx, 3)
	if err != nil {
		t.Fatal(err)
	}
	live3, err := tb.Planner().LiveEntries(ctx, snap3, nil)
	if err != nil {
		t.Fatal(err)
	}
	snap4, _ := tb.Snapshots().Get(ctx, 4)
	live4, err := tb.Planner().LiveEntries(ctx, snap4, nil)
	if err != nil {
		t.Fatal(err)
	}
	var compacted []string
	for _, e := range live3 {
		if !slices.ContainsFunc(live4, func(l manifest.Entry) bool { return l.File.FileName == e.File.FileName }) {
			compacted = append(compacted, e.File.FileName)
		}
	}
	if len(compacted) != 3 {
		t.Fatalf("fixture: %d files compacted away, want 3", len(compacted))
	}

	rep, err := maintain.ExpireSnapshots(ctx, fio, tb.Path(), maintain.ExpireSnapshotsOptions{RetainMin: 1})
	if err != nil {
		t.Fatal(err)
	}
	if rep.SnapshotsExpired != 3 || rep.RemovedData.Files != 3 {
		t.Errorf("expired %d snapshots and %d data files, want 3 and 3", rep.SnapshotsExpired, rep.RemovedData.Files)
	}
	after := fixturetest.ListFiles(t, tableDir)
	for _, p := range filesBefore {
		if slices.Contains(after, p) {
			continue
		}
		base := path.Base(p)
		switch {
		case slices.Contains(compacted, base),
			strings.HasPrefix(p, "snapshot/snapshot-") && base != "snapshot-4",
			strings.HasPrefix(p, "manifest/"):
		default:
			t.Errorf("%s was deleted", p)
		}
	}
	for _, c := range compacted {
		for _, p := range after {
			if path.Base(p) == c {
				t.Errorf("compacted input %s still there", p)
			}
		}
	}
	rows, err := tb.ReadAll(ctx, 4)
	if err != nil {
		t.Fatalf("read snapshot 4 after expiry: %v", err)
	}
	if len(rows) != len(before) || len(rows) != 8 {
		t.Errorf("snapshot 4 has %d rows after expiry, %d before, want 8", len(rows), len(before))
	}
}
