package commit_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore/commit"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/snapshot"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage/faultfs"
)

func TestCommitSnapshots(t *testing.T) {
	fio := localFIO(t)
	createTable(t, fio, nil)
	ctx := context.Background()
	now := time.UnixMilli(1_750_000_000_123)
	c := commit.New(fio, tablePath, commit.Options{CommitUser: "alice", Now: func() time.Time { return now }})

	s1, err := c.Commit(ctx, 7, []commit.Message{msg(1, file("a", 10), file("b", 5)), msg(2, file("c", 1))})
	if err != nil {
		t.Fatal(err)
	}
	if s1.ID != 1 || s1.Version != 3 || s1.SchemaID != 0 || s1.CommitUser != "alice" || s1.CommitIdentifier != 7 ||
		s1.CommitKind != snapshot.CommitAppend || s1.TimeMillis != now.UnixMilli() || *s1.TotalRecordCount != 16 ||
		*s1.DeltaRecordCount != 16 || *s1.NextRowID != 0 || s1.IndexManifest != nil || s1.Watermark != nil ||
		s1.ChangelogManifestList != nil || s1.Properties != nil {
		t.Fatalf("snapshot 1: %+v", s1)
	}
	// What is on disk parses to the same, the sizes are exact, the base
	// list of a first commit is empty and LATEST points at it.
	mdir := filepath.Join(fio.Root(), tablePath, "manifest")
	for _, l := range []struct {
		name  string
		size  int64
		metas int
	}{{s1.BaseManifestList, *s1.BaseManifestListSize, 0}, {s1.DeltaManifestList, *s1.DeltaManifestListSize, 1}} {
		data, err := os.ReadFile(filepath.Join(mdir, l.name))
		if err != nil {
			t.Fatal(err)
		}
		if int64(len(data)) != l.size {
			t.Fatalf("%s: %d bytes, snapshot says %d", l.name, len(data), l.size)
		}
		metas, err := manifest.DecodeFileMetas(data)
		if err != nil || len(metas) != l.metas {
			t.Fatalf("%s: %d metas (%v), want %d", l.name, len(metas), err, l.metas)
		}
	}
	if b, _ := os.ReadFile(filepath.Join(fio.Root(), tablePath, "snapshot/LATEST")); string(b) != "1" {
		t.Fatalf("LATEST = %q", b)
	}
	if got := names(live(t, fio)); strings.Join(got, ",") != "a,b,c" {
		t.Fatalf("live files %v", got)
	}

	s2, err := c.Commit(ctx, 8, []commit.Message{msg(1, file("d", 4))})
	if err != nil {
		t.Fatal(err)
	}
	if s2.ID != 2 || *s2.TotalRecordCount != 20 || *s2.DeltaRecordCount != 4 {
		t.Fatalf("snapshot 2: %+v", s2)
	}
	base, err := manifest.ReadFileMetas(ctx, fio, tablePath, s2.BaseManifestList)
	if err != nil || len(base) != 1 {
		t.Fatalf("base list of snapshot 2: %v %v (want the delta manifest of snapshot 1)", base, err)
	}
	delta1, _ := manifest.ReadFileMetas(ctx, fio, tablePath, s1.DeltaManifestList)
	if base[0].FileName != delta1[0].FileName {
		t.Fatalf("base of 2 is %s, want delta manifest %s of 1", base[0].FileName, delta1[0].FileName)
	}

	// Empty commits: written by default (Java's streaming writers), ignored
	// on request.
	s3, err := c.Commit(ctx, 9, nil)
	if err != nil || s3 == nil || s3.ID != 3 || *s3.DeltaRecordCount != 0 || *s3.TotalRecordCount != 20 {
		t.Fatalf("empty commit: %+v %v", s3, err)
	}
	ig := commit.New(fio, tablePath, commit.Options{CommitUser: "alice", IgnoreEmptyCommit: true})
	if s, err := ig.Commit(ctx, 10, nil); s != nil || err != nil {
		t.Fatalf("ignored empty commit: %+v %v", s, err)
	}
	if ids, err := snapshot.NewManager(fio, tablePath).ListIDs(ctx); err != nil || fmt.Sprint(ids) != "[1 2 3]" {
		t.Fatalf("snapshot ids %v %v, want [1 2 3]", ids, err)
	}
}

func TestFilterCommitted(t *testing.T) {
	fio := localFIO(t)
	createTable(t, fio, nil)
	ctx := context.Background()
	a := commit.New(fio, tablePath, commit.Options{CommitUser: "a"})
	b := commit.New(fio, tablePath, commit.Options{CommitUser: "b"})
	if got, err := a.FilterCommitted(ctx, []int64{1, 2}); err != nil || fmt.Sprint(got) != "[1 2]" {
		t.Fatalf("before any commit: %v %v", got, err)
	}
	for id := int64(1); id <= 3; id++ {
		if _, err := a.Commit(ctx, id, []commit.Message{msg(1, file(fmt.Sprint("a", id), 1))}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := b.Commit(ctx, 100, []commit.Message{msg(1, file("b", 1))}); err != nil {
		t.Fatal(err)
	}
	if got, err := a.FilterCommitted(ctx, []int64{2, 3, 4, 5}); err != nil || fmt.Sprint(got) != "[4 5]" {
		t.Fatalf("a: %v %v, want [4 5]", got, err)
	}
	if got, err := b.FilterCommitted(ctx, []int64{99, 100, 101}); err != nil || fmt.Sprint(got) != "[101]" {
		t.Fatalf("b: %v %v, want [101]", got, err)
	}
	other := commit.New(fio, tablePath, commit.Options{CommitUser: "c"})
	if got, err := other.FilterCommitted(ctx, []int64{1}); err != nil || fmt.Sprint(got) != "[1]" {
		t.Fatalf("c: %v %v", got, err)
	}
	if _, err := a.FilterCommitted(ctx, []int64{3, 2}); err == nil {
		t.Fatal("unsorted identifiers accepted")
	}
}

func TestCompactConflict(t *testing.T) {
	fio := faultfs.New(localFIO(t), 1)
	createTable(t, fio, nil)
	ctx := context.Background()
	w := commit.New(fio, tablePath, commit.Options{CommitUser: "writer"})
	if _, err := w.Commit(ctx, 1, []commit.Message{msg(1, file("f1", 10), file("f2", 10))}); err != nil {
		t.Fatal(err)
	}
	c1 := commit.New(fio, tablePath, commit.Options{CommitUser: "compactor-1"})
	c2 := commit.New(fio, tablePath, commit.Options{CommitUser: "compactor-2"})
	compaction := func(out string) []commit.Message {
		return []commit.Message{{Partition: part(1), Bucket: 0, TotalBuckets: -1,
			CompactBefore: []manifest.DataFileMeta{file("f1", 10), file("f2", 10)}, CompactAfter: []manifest.DataFileMeta{file(out, 20)}}}
	}
	s, err := c1.Compact(ctx, 1, compaction("g1"))
	if err != nil {
		t.Fatal(err)
	}
	if s.ID != 2 || s.CommitKind != snapshot.CommitCompact || *s.DeltaRecordCount != 0 || *s.TotalRecordCount != 20 {
		t.Fatalf("compact snapshot %+v", s)
	}
	// The delta holds DELETE f1, DELETE f2, ADD g1 in one manifest.
	dl, _ := manifest.ReadFileMetas(ctx, fio, tablePath, s.DeltaManifestList)
	if len(dl) != 1 || dl[0].NumAddedFiles != 1 || dl[0].NumDeletedFiles != 2 {
		t.Fatalf("compact delta %+v", dl)
	}
	writes := fio.Calls(faultfs.OpWriteExclusive)
	_, err = c2.Compact(ctx, 1, compaction("g2"))
	if !errors.Is(err, commit.ErrConflict) {
		t.Fatalf("second compaction of the same files: %v, want ErrConflict", err)
	}
	if n := fio.Calls(faultfs.OpWriteExclusive) - writes; n != 0 {
		t.Fatalf("a conflicting compaction wrote %d files", n)
	}
	if got := names(live(t, fio)); strings.Join(got, ",") != "g1" {
		t.Fatalf("live %v", got)
	}
	// Changing the bucket count of a partition without overwrite conflicts.
	bad := []commit.Message{{Partition: part(1), Bucket: 0, TotalBuckets: 2,
		CompactBefore: []manifest.DataFileMeta{file("g1", 20)}, CompactAfter: []manifest.DataFileMeta{file("h", 20)}}}
	if _, err := commit.New(fio, tablePath, commit.Options{}).Compact(ctx, 1, append(bad, commit.Message{Partition: part(1), Bucket: 1, TotalBuckets: 3,
		CompactAfter: []manifest.DataFileMeta{file("h2", 1)}})); !errors.Is(err, commit.ErrConflict) {
		t.Fatalf("bucket count change: %v, want ErrConflict", err)
	}
	// Deleting through Commit makes an OVERWRITE snapshot, conflict checked.
	s, err = w.Commit(ctx, 2, []commit.Message{{Partition: part(1), TotalBuckets: -1, DeletedFiles: []manifest.DataFileMeta{file("g1", 20)}}})
	if err != nil || s.CommitKind != snapshot.CommitOverwrite || *s.TotalRecordCount != 0 {
		t.Fatalf("commit with a deletion: %+v %v", s, err)
	}
	if _, err := w.Commit(ctx, 3, []commit.Message{{Partition: part(1), TotalBuckets: -1, DeletedFiles: []manifest.DataFileMeta{file("g1", 20)}}}); !errors.Is(err, commit.ErrConflict) {
		t.Fatalf("deleting a deleted file: %v, want ErrConflict", err)
	}
	if _, err := w.Compact(ctx, 4, []commit.Message{msg(1, file("x", 1))}); !errors.Is(err, commit.ErrInvalidMessage) {
		t.Fatalf("Compact with new files: %v, want ErrInvalidMessage", err)
	}
}

func TestOverwrite(t *testing.T) {
	fio := localFIO(t)
	createTable(t, fio, nil)
	ctx := context.Background()
	c := commit.New(fio, tablePath, commit.Options{CommitUser: "u"})
	if _, err := c.Commit(ctx, 1, []commit.Message{msg(1, file("p1a", 1), file("p1b", 2)), msg(2, file("p2a", 3)), msg(3, file("p3a", 4))}); err != nil {
		t.Fatal(err)
	}
	s, err := c.Overwrite(ctx, 2, [][]byte{part(1), part(3)}, []commit.Message{msg(1, file("p1new", 10))})
	if err != nil {
		t.Fatal(err)
	}
	if s.CommitKind != snapshot.CommitOverwrite || *s.DeltaRecordCount != 10-1-2-4 || *s.TotalRecordCount != 13 {
		t.Fatalf("overwrite snapshot %+v", s)
	}
	if got := names(live(t, fio)); strings.Join(got, ",") != "p1new,p2a" {
		t.Fatalf("after overwriting p=1 and p=3: %v", got)
	}
	if _, err := c.Overwrite(ctx, 3, [][]byte{part(1)}, []commit.Message{msg(2, file("wrong", 1))}); !errors.Is(err, commit.ErrInvalidMessage) {
		t.Fatalf("new file outside the overwritten partitions: %v", err)
	}
	if got := commit.PartitionsOf([]commit.Message{msg(2), msg(1), msg(2)}); len(got) != 2 {
		t.Fatalf("PartitionsOf: %x", got)
	}
	s, err = c.Overwrite(ctx, 4, nil, []commit.Message{msg(5, file("all", 7))})
	if err != nil || *s.TotalRecordCount != 7 {
		t.Fatalf("whole-table overwrite: %+v %v", s, err)
	}
	if got := names(live(t, fio)); strings.Join(got, ",") != "all" {
		t.Fatalf("after overwriting the table: %v", got)
	}
}

// TestManifestMergeBounded commits 100 times and checks that the base
// manifest list never holds more than manifest.merge-min-count manifests
// (ManifestFileMerger's minor compaction) while every file stays live.
func TestManifestMergeBounded(t *testing.T) {
	fio := localFIO(t)
	createTable(t, fio, nil)
	ctx := context.Background()
	c := commit.New(fio, tablePath, commit.Options{CommitUser: "u"})
	maxLen, merges := 0, 0
	prev := 0
	for i := 1; i <= 100; i++ {
		s, err := c.Commit(ctx, int64(i), []commit.Message{msg(int32(i%3), file(fmt.Sprintf("f%03d", i), 1))})
		if err != nil {
			t.Fatal(err)
		}
		base, err := manifest.ReadFileMetas(ctx, fio, tablePath, s.BaseManifestList)
		if err != nil {
			t.Fatal(err)
		}
		maxLen = max(maxLen, len(base))
		if len(base) < prev {
			merges++
		}
		prev = len(base)
	}
	if maxLen > 30 {
		t.Fatalf("base list grew to %d manifests, want at most manifest.merge-min-count = 30", maxLen)
	}
	if merges < 3 {
		t.Fatalf("%d merges in 100 commits, want at least 3", merges)
	}
	if got := live(t, fio); len(got) != 100 {
		t.Fatalf("%d live files, want 100", len(got))
	}
	// Orphans: every manifest file is referenced by some snapshot.
	referenced := map[string]bool{}
	sm := snapshot.NewManager(fio, tablePath)
	for id := int64(1); id <= 100; id++ {
		s, _ := sm.Get(ctx, id)
		for _, l := range []string{s.BaseManifestList, s.DeltaManifestList} {
			referenced[l] = true
			metas, _ := manifest.ReadFileMetas(ctx, fio, tablePath, l)
			for _, m := range metas {
				referenced[m.FileName] = true
			}
		}
	}
	files, _ := os.ReadDir(filepath.Join(fio.Root(), tablePath, "manifest"))
	for _, f := range files {
		if !referenced[f.Name()] {
			t.Errorf("orphan manifest file %s", f.Name())
		}
	}
}

// TestManifestFullCompaction makes every manifest small enough to trigger
// ManifestFileMerger.tryFullCompaction and checks that the base list drops
// the DELETE entries of a compaction and the files they delete.
func TestManifestFullCompaction(t *testing.T) {
	fio := localFIO(t)
	createTable(t, fio, nil)
	ctx := context.Background()
	o := commit.Options{CommitUser: "u", ManifestTargetFileSize: 4 << 10, ManifestFullCompactionThreshold: 12 << 10}
	c := commit.New(fio, tablePath, o)
	var before []manifest.DataFileMeta
	for i := 1; i <= 12; i++ {
		f := file(fmt.Sprintf("f%02d", i), 1)
		if i%2 == 0 {
			before = append(before, f)
		}
		if _, err := c.Commit(ctx, int64(i), []commit.Message{msg(int32(i%2), f)}); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Compact(ctx, 13, []commit.Message{{Partition: part(0), TotalBuckets: -1, CompactBefore: before,
		CompactAfter: []manifest.DataFileMeta{file("compacted", 6)}}}); err != nil {
		t.Fatal(err)
	}
	s, err := c.Commit(ctx, 14, []commit.Message{msg(1, file("last", 1))})
	if err != nil {
		t.Fatal(err)
	}
	base, err := manifest.ReadFileMetas(ctx, fio, tablePath, s.BaseManifestList)
	if err != nil {
		t.Fatal(err)
	}
	var entries []manifest.Entry
	for _, m := range base {
		if m.NumDeletedFiles != 0 {
			t.Errorf("base manifest %s still has %d DELETE entries after full compaction", m.FileName, m.NumDeletedFiles)
		}
		e, err := manifest.ReadEntries(ctx, fio, tablePath, m.FileName)
		if err != nil {
			t.Fatal(err)
		}
		entries = append(entries, e...)
	}
	if len(base) > 2 {
		t.Errorf("base list has %d manifests after full compaction", len(base))
	}
	want := "compacted,f01,f03,f05,f07,f09,f11,last"
	if got := names(live(t, fio)); strings.Join(got, ",") != want {
		t.Fatalf("live %v, want %s", got, want)
	}
	if len(entries) != 7 { // all but "last", which is in the delta
		t.Fatalf("base holds %d entries, want the 7 live files before the last commit", len(entries))
	}
}

func TestOptionsFromSchema(t *testing.T) {
	s := schema.NewTableSchema(nil, nil, map[string]string{
		"commit.max-retries": "3", "commit.min-retry-wait": "5 ms", "commit.max-retry-wait": "1 s", "commit.timeout": "30 s",
		"manifest.compression": "snappy", "manifest.target-file-size": "2 mb", "manifest.merge-min-count": "5",
		"manifest.full-compaction-threshold-size": "4 mb", "snapshot.ignore-empty-commit": "true",
	}, nil)
	o := commit.OptionsFromSchema(s, "me")
	want := commit.Options{CommitUser: "me", MaxRetries: 3, MinRetryWait: 5 * time.Millisecond, MaxRetryWait: time.Second,
		Timeout: 30 * time.Second, ManifestCodec: manifest.Codec{Name: "snappy", ZstdLevel: 1}, ManifestTargetFileSize: 2 << 20,
		ManifestMergeMinCount: 5, ManifestFullCompactionThreshold: 4 << 20, IgnoreEmptyCommit: true}
	if fmt.Sprintf("%+v", o) != fmt.Sprintf("%+v", want) {
		t.Fatalf("options\n%+v\nwant\n%+v", o, want)
	}
	d := commit.New(nil, "", commit.OptionsFromSchema(schema.NewTableSchema(nil, nil, nil, nil), "")).Options()
	if d.MaxRetries != 10 || d.MinRetryWait != 10*time.Millisecond || d.MaxRetryWait != 10*time.Second || d.Timeout != 0 ||
		d.ManifestTargetFileSize != 8<<20 || d.ManifestMergeMinCount != 30 || d.ManifestFullCompactionThreshold != 16<<20 ||
		d.IgnoreEmptyCommit || d.CommitUser == "" || d.ManifestCodec.Name != "zstd" {
		t.Fatalf("defaults %+v", d)
	}
}

// Properties given to a commit are in its snapshot, on disk, and only in
// its snapshot; an ambiguous-outcome retry (CommitRecovered) carries them
// too.
func TestCommitProperties(t *testing.T) {
	fio := localFIO(t)
	createTable(t, fio, nil)
	ctx := context.Background()
	c := commit.New(fio, tablePath, commit.Options{CommitUser: "alice"})
	props := map[string]string{"benthos.source-positions": `{"t/0":{"offset":"41"}}`, "z": "last"}
	s1, err := c.Commit(ctx, 1, []commit.Message{msg(1, file("a", 1))}, commit.WithProperties(props))
	if err != nil {
		t.Fatal(err)
	}
	props["z"] = "changed after the commit"
	got, err := snapshot.NewManager(fio, tablePath).Get(ctx, s1.ID)
	if err != nil {
		t.Fatal(err)
	}
	if len(got.Properties) != 2 || got.Properties["benthos.source-positions"] != `{"t/0":{"offset":"41"}}` || got.Properties["z"] != "last" {
		t.Fatalf("snapshot 1 properties on disk: %v", got.Properties)
	}
	s2, err := c.Commit(ctx, 2, []commit.Message{msg(1, file("b", 1))})
	if err != nil || s2.Properties != nil {
		t.Fatalf("a commit without properties: %+v %v", s2, err)
	}
	s3, err := c.CommitRecovered(ctx, 3, []commit.Message{msg(1, file("c", 1))}, commit.WithProperties(map[string]string{"k": "v"}))
	if err != nil {
		t.Fatal(err)
	}
	if got, err := snapshot.NewManager(fio, tablePath).Get(ctx, s3.ID); err != nil || got.Properties["k"] != "v" {
		t.Fatalf("recovered commit properties: %v %v", got, err)
	}
}

// TestOverwritePostponeBucket: an overwrite leaves the files of bucket -2
// alone, except on a postpone-bucket table (bucket = -2), whose
// overwrites drop them too (CommitScanner.readOverwriteChanges).
func TestOverwritePostponeBucket(t *testing.T) {
	for _, c := range []struct {
		postpone bool
		want     string
	}{{false, "postponed"}, {true, ""}} {
		t.Run(fmt.Sprintf("PostponeBucket=%v", c.postpone), func(t *testing.T) {
			fio := localFIO(t)
			createTable(t, fio, nil)
			ctx := context.Background()
			cm := commit.New(fio, tablePath, commit.Options{CommitUser: "u", PostponeBucket: c.postpone})
			postponed := commit.Message{Partition: part(1), Bucket: -2, TotalBuckets: -2, NewFiles: []manifest.DataFileMeta{file("postponed", 2)}}
			if _, err := cm.Commit(ctx, 1, []commit.Message{msg(1, file("compacted", 1)), postponed}); err != nil {
				t.Fatal(err)
			}
			if _, err := cm.Overwrite(ctx, 2, [][]byte{part(1)}, nil); err != nil {
				t.Fatal(err)
			}
			if got := strings.Join(names(live(t, fio)), ","); got != c.want {
				t.Errorf("live after dropping p=1: %q, want %q", got, c.want)
			}
		})
	}
}
