package manifest_test

import (
	"context"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

// liveFile is what the replay asserts about one live data file.
type liveFile struct {
	prefix   string // data file name prefix
	rows     int64
	minSeq   int64
	maxSeq   int64
	bucket   int32
	schemaID int64
}

// TestReplaySnapshots plans every snapshot of every Avro fixture table the way
// Java does (base list, then delta list, each manifest's entries in order,
// merged with MergeEntries) and checks that only ADDs survive, that their row
// counts add up to the snapshot's totalRecordCount, and, where the fixtures
// README lists them, the exact live files.
func TestReplaySnapshots(t *testing.T) {
	ctx := context.Background()
	// Expected live files at the latest snapshot (fixtures README).
	want := map[string][]liveFile{
		"cpp-java11-append-fixed-bucket-complex-types": {
			{prefix: "data-f8754699-", rows: 6, minSeq: 0, maxSeq: 5, bucket: 0},
			{prefix: "data-ac0894ca-", rows: 1, minSeq: 0, maxSeq: 0, bucket: 0},
			{prefix: "data-e0a6a424-", rows: 1, minSeq: 0, maxSeq: 0, bucket: 1},
		},
	}
	liveCounts := map[string]int{
		"cpp-java11-append-fixed-bucket-complex-types":  3,
		"cpp-java12-append-unaware-schema-evolution":    4,
		"cpp-java12-append-unaware-type-cast-evolution": 4,
		"cpp-java12-append-unaware-file-index":          1,
		"cpp-java13snap-append-unaware-timestamps":      1,
		"cpp-java09-pk-table-avro-manifest-reference":   3,
	}
	for _, tb := range tables(t) {
		t.Run(tb.name, func(t *testing.T) {
			warehouse := filepath.Dir(filepath.Dir(tb.dir))
			fio, err := storage.NewLocal(warehouse)
			if err != nil {
				t.Fatal(err)
			}
			tablePath := "default.db/" + filepath.Base(tb.dir)
			ids := snapshotIDs(t, tb.dir)
			var live []manifest.Entry
			for _, id := range ids {
				s := readSnapshot(t, tb.dir, id)
				var all []manifest.Entry
				for _, l := range []struct {
					name string
					size *int64
				}{{s.BaseManifestList, s.BaseManifestListSize}, {s.DeltaManifestList, s.DeltaManifestListSize}} {
					if l.size != nil {
						st, err := os.Stat(filepath.Join(tb.dir, "manifest", l.name))
						if err != nil {
							t.Fatal(err)
						}
						if st.Size() != *l.size {
							t.Errorf("snapshot %d: %s is %d bytes, snapshot says %d", id, l.name, st.Size(), *l.size)
						}
					}
					metas, err := manifest.ReadFileMetas(ctx, fio, tablePath, l.name)
					if err != nil {
						t.Fatal(err)
					}
					for _, m := range metas {
						entries, err := manifest.ReadEntries(ctx, fio, tablePath, m.FileName)
						if err != nil {
							t.Fatal(err)
						}
						all = append(all, entries...)
					}
				}
				live, err = manifest.MergeEntries(all)
				if err != nil {
					t.Fatalf("snapshot %d: %v", id, err)
				}
				var rows int64
				for _, e := range live {
					if e.Kind != manifest.FileKindAdd {
						t.Errorf("snapshot %d: DELETE of %s survives the merge", id, e.File.FileName)
					}
					rows += e.File.RowCount
				}
				if rows != s.TotalRecordCount {
					t.Errorf("snapshot %d: live files hold %d rows, totalRecordCount is %d", id, rows, s.TotalRecordCount)
				}
				if s.IndexManifest != nil {
					if _, err := manifest.ReadIndexEntries(ctx, fio, tablePath, *s.IndexManifest); err != nil {
						t.Errorf("snapshot %d: %v", id, err)
					}
				}
			}
			if n, ok := liveCounts[tb.name]; ok && len(live) != n {
				t.Errorf("latest snapshot has %d live files, want %d", len(live), n)
			}
			if files, ok := want[tb.name]; ok {
				for _, w := range files {
					found := false
					for _, e := range live {
						if strings.HasPrefix(e.File.FileName, w.prefix) {
							found = true
							if e.File.RowCount != w.rows || e.File.MinSequenceNumber != w.minSeq || e.File.MaxSequenceNumber != w.maxSeq ||
								e.Bucket != w.bucket || e.File.SchemaID != w.schemaID {
								t.Errorf("%s: got %+v, want %+v", e.File.FileName, e, w)
							}
						}
					}
					if !found {
						t.Errorf("live file %s… missing", w.prefix)
					}
				}
			}
		})
	}
}

// TestReplayCompactionFileSource checks the COMPACT snapshot 4 of the 1.1
// fixed-bucket fixture: 3 DELETEs and 1 ADD whose file has _FILE_SOURCE=1.
func TestReplayCompactionFileSource(t *testing.T) {
	dir := filepath.Join(fixturetest.Dir(t), "cpp-java11-append-fixed-bucket-complex-types", "warehouse", "default.db", "append_complex_data")
	s := readSnapshot(t, dir, 4)
	metas, err := manifest.DecodeFileMetas(readFile(t, filepath.Join(dir, "manifest", s.DeltaManifestList)))
	if err != nil {
		t.Fatal(err)
	}
	var adds, deletes int
	for _, m := range metas {
		entries, err := manifest.DecodeEntries(readFile(t, filepath.Join(dir, "manifest", m.FileName)))
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			switch e.Kind {
			case manifest.FileKindAdd:
				adds++
				if e.File.FileSource == nil || *e.File.FileSource != 1 || !strings.HasPrefix(e.File.FileName, "data-f8754699-") {
					t.Errorf("compaction output %+v", e.File)
				}
			case manifest.FileKindDelete:
				deletes++
				// A DELETE carries a full copy of the deleted file's metadata.
				if e.File.RowCount <= 0 || e.File.CreationTimeMillis == nil {
					t.Errorf("delete entry %+v", e.File)
				}
			}
		}
	}
	if adds != 1 || deletes != 3 {
		t.Errorf("%d adds, %d deletes; want 1 and 3", adds, deletes)
	}
}

func snapshotIDs(t *testing.T, table string) []int {
	t.Helper()
	names, err := filepath.Glob(filepath.Join(table, "snapshot", "snapshot-*"))
	if err != nil {
		t.Fatal(err)
	}
	var ids []int
	for _, n := range names {
		id, err := strconv.Atoi(strings.TrimPrefix(filepath.Base(n), "snapshot-"))
		if err != nil {
			t.Fatal(err)
		}
		ids = append(ids, id)
	}
	sort.Ints(ids)
	if len(ids) == 0 {
		t.Fatalf("no snapshots in %s", table)
	}
	return ids
}
