package maintain_test

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore/maintain"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
)

// orphanTable is a partitioned table with three snapshots, a tag on the
// first, a consumer, and every file two days old; then stray files are
// added, old and young.
func orphanTable(t *testing.T) (f *fakeTable, orphans, young []string) {
	t.Helper()
	f = newFakeTable(t, true, nil)
	old := time.Now().Add(-48 * time.Hour)
	a1 := f.dataFile("data-a1.parquet", "a", 1)
	b1 := f.dataFile("data-b1.parquet", "b", 2)
	f.commit(snapshot.CommitAppend, old.UnixMilli(), false, []manifest.Entry{a1, b1})
	f.tag("first", 1)
	a2 := f.dataFile("data-a2.parquet", "a", 3)
	f.commit(snapshot.CommitAppend, old.UnixMilli()+1, false, []manifest.Entry{a2})
	ac := f.dataFile("data-ac.parquet", "a", 1, 3)
	f.commit(snapshot.CommitCompact, old.UnixMilli()+2, true, []manifest.Entry{ac}, "data-a1.parquet", "data-a2.parquet")
	f.consumer("reader", 2)
	f.writeIndex("index-live")
	f.writeStatistics("stat-live")
	f.commit(snapshot.CommitAppend, old.UnixMilli()+3, false, nil)

	write := func(rel string) {
		p := filepath.Join(f.tableDir(), filepath.FromSlash(rel))
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, []byte("stray"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	orphans = []string{
		"p=a/bucket-0/data-orphan.parquet",
		"p=a/bucket-0/.data-x.parquet.5b8c6a6e-6a4c-4b7e-9d43-0f4c7c4f1d2a.tmp",
		"p=c/bucket-3/data-lost.parquet",
		"manifest/manifest-orphan-0",
		"manifest/.manifest-list-x-0.0f4c.tmp",
		"index/index-orphan",
		"statistics/stat-orphan",
		"snapshot/.snapshot-5.7d1f.tmp",
	}
	young = []string{
		"p=a/bucket-0/data-being-written.parquet",
		"manifest/manifest-being-written-0",
		"snapshot/.snapshot-5.young.tmp",
	}
	kept := []string{
		"schema/.schema-1.old.tmp",
		"consumer/.consumer-x.tmp",
		"tag/.tag-x.tmp",
		"p=a/not-a-bucket/file",
		"other/file",
		"snapshot/snapshot-99-not-a-number",
	}
	for _, p := range slices.Concat(orphans, kept) {
		write(p)
	}
	setOld(t, f.tableDir(), old)
	for _, p := range young {
		write(p)
	}
	slices.Sort(orphans)
	return f, orphans, young
}

func TestRemoveOrphanFiles(t *testing.T) {
	f, orphans, young := orphanTable(t)
	before := f.filesOnDisk()
	ctx := context.Background()

	dry, err := maintain.RemoveOrphanFiles(ctx, f.fio, f.path, maintain.RemoveOrphanFilesOptions{DryRun: true})
	if err != nil {
		t.Fatal(err)
	}
	if d := diff(before, f.filesOnDisk()); d != "" {
		t.Fatalf("dry run changed files:%s", d)
	}
	rep, err := maintain.RemoveOrphanFiles(ctx, f.fio, f.path, maintain.RemoveOrphanFilesOptions{})
	if err != nil {
		t.Fatal(err)
	}
	var want []string
	for _, o := range orphans {
		want = append(want, f.path+"/"+o)
	}
	if d := diff(want, rep.Removed); d != "" {
		t.Errorf("removed:%s", d)
	}
	if !slices.Equal(dry.Removed, rep.Removed) {
		t.Errorf("dry run listed %v, the run removed %v", dry.Removed, rep.Removed)
	}
	if rep.RemovedData.Files != 3 || rep.RemovedMeta.Files != 5 || rep.RemovedData.Bytes != 15 || rep.RemovedMeta.Bytes != 25 {
		t.Errorf("counts: data %+v meta %+v", rep.RemovedData, rep.RemovedMeta)
	}
	after := f.filesOnDisk()
	for _, p := range before {
		if slices.Contains(orphans, p) == slices.Contains(after, p) {
			t.Errorf("%s: orphan %v, still there %v", p, slices.Contains(orphans, p), slices.Contains(after, p))
		}
	}
	for _, y := range young {
		if !slices.Contains(after, y) {
			t.Errorf("young file %s was deleted", y)
		}
	}
	// The emptied bucket directory of p=c went with its partition.
	if _, err := os.Stat(filepath.Join(f.tableDir(), "p=c")); !errors.Is(err, os.ErrNotExist) {
		t.Errorf("p=c still exists: %v", err)
	}
	// The table is intact: every snapshot and the tag plan and read.
	for _, id := range []int64{1, 2, 3, 4} {
		tbl := &history{fakeTable: f}
		_ = tbl.readIDs(t, id)
	}
	if s := rep.Summary(); !strings.Contains(s, "removed 8 files (40 B)") {
		t.Errorf("summary %q", s)
	}

	// Once more: nothing left to do.
	rep, err = maintain.RemoveOrphanFiles(ctx, f.fio, f.path, maintain.RemoveOrphanFilesOptions{})
	if err != nil || len(rep.Removed) != 0 {
		t.Errorf("second run: %v, removed %v", err, rep.Removed)
	}
}

func TestRemoveOrphanFilesKeepsTaggedAndExpiredFiles(t *testing.T) {
	h := newHistory(t, nil)
	h.tag("t2", 2)
	h.expire(t, maintain.ExpireSnapshotsOptions{RetainMin: 1})
	setOld(t, h.tableDir(), time.Now().Add(-72*time.Hour))
	before := h.filesOnDisk()
	rep, err := maintain.RemoveOrphanFiles(context.Background(), h.fio, h.path, maintain.RemoveOrphanFilesOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Removed) != 0 {
		t.Errorf("removed %v from a table without orphans", rep.Removed)
	}
	if d := diff(before, h.filesOnDisk()); d != "" {
		t.Errorf("files changed:%s", d)
	}
}

func TestRemoveOrphanFilesOlderThan(t *testing.T) {
	f, orphans, _ := orphanTable(t)
	ctx := context.Background()
	// Files are two days old: older_than three days ago removes nothing.
	rep, err := maintain.RemoveOrphanFiles(ctx, f.fio, f.path, maintain.RemoveOrphanFilesOptions{OlderThan: time.Now().Add(-72 * time.Hour)})
	if err != nil || len(rep.Removed) != 0 {
		t.Fatalf("older_than 3 days: %v, removed %v", err, rep.Removed)
	}
	// One minute ago: the young files go too.
	_, err = maintain.RemoveOrphanFiles(ctx, f.fio, f.path, maintain.RemoveOrphanFilesOptions{OlderThan: time.Now().Add(time.Second)})
	if !errors.Is(err, maintain.ErrInvalidOptions) {
		t.Fatalf("older_than in the future: err = %v", err)
	}
	time.Sleep(10 * time.Millisecond) // the young files must be strictly older than older_than
	rep, err = maintain.RemoveOrphanFiles(ctx, f.fio, f.path, maintain.RemoveOrphanFilesOptions{OlderThan: time.Now()})
	if err != nil {
		t.Fatal(err)
	}
	if len(rep.Removed) != len(orphans)+3 {
		t.Errorf("removed %d files, want %d: %v", len(rep.Removed), len(orphans)+3, rep.Removed)
	}
}

func TestRemoveOrphanFilesRefusesWhenMetadataMissing(t *testing.T) {
	f, orphans, _ := orphanTable(t)
	// A manifest of the latest snapshot is gone: the table is damaged and
	// nothing may be judged unused.
	latest, err := snapshot.NewManager(f.fio, f.path).Latest(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	metas, err := manifest.ReadFileMetas(context.Background(), f.fio, f.path, latest.BaseManifestList)
	if err != nil || len(metas) == 0 {
		t.Fatal(err, len(metas))
	}
	if err := os.Remove(filepath.Join(f.tableDir(), "manifest", metas[0].FileName)); err != nil {
		t.Fatal(err)
	}
	rep, err := maintain.RemoveOrphanFiles(context.Background(), f.fio, f.path, maintain.RemoveOrphanFilesOptions{})
	if !errors.Is(err, maintain.ErrUnsafe) {
		t.Fatalf("err = %v, want ErrUnsafe", err)
	}
	after := f.filesOnDisk()
	for _, o := range orphans {
		if !slices.Contains(after, o) {
			t.Errorf("%s deleted although the run was refused", o)
		}
	}
	if len(rep.Removed) != 0 {
		t.Errorf("removed %v", rep.Removed)
	}
}
