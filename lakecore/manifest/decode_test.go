package manifest_test

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
)

// TestDecodeEveryFixtureFile decodes every manifest, manifest list and index
// manifest of the fixtures and cross-checks each manifest-list record against
// the manifest it describes: exact _FILE_SIZE, ADD/DELETE counts, schema id
// and bucket/level ranges.
func TestDecodeEveryFixtureFile(t *testing.T) {
	var lists, manifests, indexes, orc int
	for _, p := range manifestFiles(t) {
		name := filepath.Base(p)
		rel := strings.TrimPrefix(p, fixturetest.Dir(t)+string(filepath.Separator))
		data := readFile(t, p)
		t.Run(rel, func(t *testing.T) {
			if strings.Contains(p, "orc-manifest") {
				orc++
				_, err := manifest.DecodeEntries(data)
				if !errors.Is(err, manifest.ErrUnsupportedFormat) || !strings.Contains(err.Error(), "ORC manifests are not supported") {
					t.Fatalf("DecodeEntries of an ORC manifest: got %v, want ErrUnsupportedFormat naming ORC", err)
				}
				if _, err := manifest.DecodeFileMetas(data); !errors.Is(err, manifest.ErrUnsupportedFormat) {
					t.Fatalf("DecodeFileMetas of an ORC manifest list: got %v", err)
				}
				return
			}
			switch {
			case strings.HasPrefix(name, "index-manifest-"):
				indexes++
				entries, err := manifest.DecodeIndexEntries(data)
				if err != nil {
					t.Fatal(err)
				}
				if len(entries) == 0 {
					t.Fatal("no index entries")
				}
				for _, e := range entries {
					if e.Kind != manifest.FileKindAdd || e.FileName == "" || len(e.Partition) < 12 {
						t.Errorf("implausible index entry %+v", e)
					}
				}
			case strings.HasPrefix(name, "manifest-list-"):
				lists++
				metas, err := manifest.DecodeFileMetas(data)
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range metas {
					checkFileMeta(t, filepath.Dir(p), m)
				}
			case strings.HasPrefix(name, "manifest-"):
				manifests++
				entries, err := manifest.DecodeEntries(data)
				if err != nil {
					t.Fatal(err)
				}
				if len(entries) == 0 {
					t.Fatal("no entries")
				}
				for _, e := range entries {
					f := e.File
					if f.FileName == "" || f.RowCount <= 0 || f.FileSize <= 0 || f.MinSequenceNumber > f.MaxSequenceNumber ||
						f.ExtraFiles == nil || f.KeyStats.NullCounts == nil || f.ValueStats.NullCounts == nil || f.CreationTimeMillis == nil {
						t.Errorf("implausible entry %+v", e)
					}
				}
			default:
				t.Fatalf("unexpected file %s", name)
			}
		})
	}
	// Counts of the fixture files (see shared/fixtures/paimon).
	if lists != 49 || manifests != 25 || indexes != 3 || orc != 6 {
		t.Errorf("decoded %d lists, %d manifests, %d index manifests, %d ORC files; want 49, 25, 3, 6", lists, manifests, indexes, orc)
	}
}

// checkFileMeta compares a manifest-list record with the manifest it names,
// when that manifest exists (the paimon-rust samples are synthetic).
func checkFileMeta(t *testing.T, dir string, m manifest.FileMeta) {
	t.Helper()
	p := filepath.Join(dir, m.FileName)
	st, err := os.Stat(p)
	if errors.Is(err, os.ErrNotExist) && strings.Contains(dir, "rust-java08") {
		return
	}
	if err != nil {
		t.Fatal(err)
	}
	if m.FileSize != st.Size() {
		t.Errorf("%s: _FILE_SIZE %d, file has %d bytes", m.FileName, m.FileSize, st.Size())
	}
	entries, err := manifest.DecodeEntries(readFile(t, p))
	if err != nil {
		t.Fatal(err)
	}
	var added, deleted, schemaID int64 = 0, 0, -1
	minB, maxB, minL, maxL := int32(1<<31-1), int32(-1<<31), int32(1<<31-1), int32(-1<<31)
	for _, e := range entries {
		if e.Kind == manifest.FileKindAdd {
			added++
		} else {
			deleted++
		}
		schemaID = max(schemaID, e.File.SchemaID)
		minB, maxB = min(minB, e.Bucket), max(maxB, e.Bucket)
		minL, maxL = min(minL, e.File.Level), max(maxL, e.File.Level)
	}
	if m.NumAddedFiles != added || m.NumDeletedFiles != deleted || m.SchemaID != schemaID {
		t.Errorf("%s: list says +%d -%d schema %d, manifest has +%d -%d schema %d",
			m.FileName, m.NumAddedFiles, m.NumDeletedFiles, m.SchemaID, added, deleted, schemaID)
	}
	for _, c := range []struct {
		name string
		got  *int32
		want int32
	}{{"_MIN_BUCKET", m.MinBucket, minB}, {"_MAX_BUCKET", m.MaxBucket, maxB}, {"_MIN_LEVEL", m.MinLevel, minL}, {"_MAX_LEVEL", m.MaxLevel, maxL}} {
		if c.got != nil && *c.got != c.want {
			t.Errorf("%s: %s %d, entries give %d", m.FileName, c.name, *c.got, c.want)
		}
	}
}

// TestRustJava08Samples asserts the values of the Paimon <= 0.8 snappy files
// (fixtures README §9).
func TestRustJava08Samples(t *testing.T) {
	dir := filepath.Join(fixturetest.Dir(t), "rust-java08-manifest-samples", "manifest")
	metas, err := manifest.DecodeFileMetas(readFile(t, filepath.Join(dir, "manifest-list-5c7399a0-46ae-4a5e-9c13-3ab07212cdb6-0")))
	if err != nil {
		t.Fatal(err)
	}
	stats := unhex(t, "00000002 0000000000000000 0100000000000000 3100000000000081")
	ps := manifest.SimpleStats{MinValues: stats, MaxValues: stats, NullCounts: []*int64{i64(1), i64(2)}}
	want := []manifest.FileMeta{
		{FileName: "manifest-19d138df-233f-46f7-beb6-fadaf4741c0e", FileSize: 10, NumAddedFiles: 10, NumDeletedFiles: 10, PartitionStats: ps, SchemaID: 1},
		{FileName: "manifest-a703ee48-c411-413e-b84e-c03bdb179631", FileSize: 11, NumAddedFiles: 0, NumDeletedFiles: 10, PartitionStats: ps, SchemaID: 2},
	}
	if !reflect.DeepEqual(metas, want) {
		t.Errorf("manifest list:\n got %+v\nwant %+v", metas, want)
	}

	entries, err := manifest.DecodeEntries(readFile(t, filepath.Join(dir, "manifest-8ded1f09-fcda-489e-9167-582ac0f9f846-0")))
	if err != nil {
		t.Fatal(err)
	}
	part := unhex(t, "00000001 0000000000000000 0100000000000000")
	st := unhex(t, "00000002 0000000000000000 3100000000000081 0100000000000000")
	s := manifest.SimpleStats{MinValues: st, MaxValues: st, NullCounts: []*int64{i64(1), i64(2)}}
	created := time.Date(2024, 9, 6, 7, 45, 55, 39e6, time.UTC).UnixMilli()
	file := func(name string, deleteRows int64) manifest.DataFileMeta {
		return manifest.DataFileMeta{FileName: name, FileSize: 10, RowCount: 100, MinKey: part, MaxKey: part,
			KeyStats: s, ValueStats: s, MinSequenceNumber: 1, MaxSequenceNumber: 100, SchemaID: 0, Level: 1,
			ExtraFiles: []string{}, CreationTimeMillis: &created, DeleteRowCount: &deleteRows}
	}
	wantEntries := []manifest.Entry{
		{Kind: manifest.FileKindDelete, Partition: part, Bucket: 1, TotalBuckets: 10, File: file("f1.parquet", 0)},
		{Kind: manifest.FileKindAdd, Partition: part, Bucket: 2, TotalBuckets: 10, File: file("f2.parquet", 1)},
	}
	if !reflect.DeepEqual(entries, wantEntries) {
		t.Errorf("manifest:\n got %+v\nwant %+v", entries, wantEntries)
	}
}

// TestComplexTypesManifestListRecord asserts the Paimon 1.1 manifest-list
// record quoted in paimon-format.md §5 and the stats bytes of §7.4(c).
func TestComplexTypesManifestListRecord(t *testing.T) {
	dir := filepath.Join(fixturetest.Dir(t), "cpp-java11-append-fixed-bucket-complex-types", "warehouse", "default.db", "append_complex_data", "manifest")
	metas, err := manifest.DecodeFileMetas(readFile(t, filepath.Join(dir, "manifest-list-3f657391-04c4-4dc3-8a2c-1fb7b41dd807-0")))
	if err != nil {
		t.Fatal(err)
	}
	var got *manifest.FileMeta
	for i := range metas {
		if metas[i].FileName == "manifest-f0b7a2bd-cad4-48c9-9464-516aabdd3e66-0" {
			got = &metas[i]
		}
	}
	if got == nil {
		t.Fatalf("manifest-f0b7a2bd... not in the list: %+v", metas)
	}
	want := manifest.FileMeta{
		FileName: "manifest-f0b7a2bd-cad4-48c9-9464-516aabdd3e66-0", FileSize: 2072, NumAddedFiles: 2, NumDeletedFiles: 0,
		PartitionStats: manifest.SimpleStats{
			MinValues:  unhex(t, "0000000100000000000000000a00000000000000"),
			MaxValues:  unhex(t, "0000000100000000000000001400000000000000"),
			NullCounts: []*int64{i64(0)},
		},
		SchemaID: 0, MinBucket: i32(0), MaxBucket: i32(0), MinLevel: i32(0), MaxLevel: i32(0),
	}
	if !reflect.DeepEqual(*got, want) {
		t.Errorf("got  %+v\nwant %+v", *got, want)
	}

	entries, err := manifest.DecodeEntries(readFile(t, filepath.Join(dir, got.FileName)))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 2 {
		t.Fatalf("%d entries, want 2", len(entries))
	}
	e := entries[0]
	maxStats := unhex(t, `00000006 0028000000000000 0a00000000000000 0100000000000000 c54d000000000000 0000000038000000
		0a00000040000000 0000000000000000 0000000000000000 029d42b6a72a9dc7070e000000000000`)
	if e.File.FileName != "data-35f2719c-ffae-4697-960e-af95a0b4bd51-0.parquet" || e.TotalBuckets != 2 || e.File.RowCount != 2 ||
		!bytes.Equal(e.Partition, want.PartitionStats.MinValues) || !bytes.Equal(e.File.ValueStats.MaxValues, maxStats) ||
		e.File.FileSource == nil || *e.File.FileSource != 0 || e.File.ValueStatsCols != nil || e.File.ExternalPath != nil ||
		len(e.File.ValueStats.NullCounts) != 6 || *e.File.CreationTimeMillis != time.Date(2025, 8, 25, 17, 13, 28, 337e6, time.UTC).UnixMilli() {
		t.Errorf("entry 0: %+v", e)
	}
}

// TestTimestampsNullCounts checks the 1.3-SNAPSHOT value stats of
// paimon-format.md §6.3: null counts [0,0,2,1,0,1,0,1], header byte 1 0x88.
func TestTimestampsNullCounts(t *testing.T) {
	dir := filepath.Join(fixturetest.Dir(t), "cpp-java13snap-append-unaware-timestamps", "warehouse", "default.db",
		"append_with_multiple_ts_precision_and_timezone", "manifest")
	entries, err := manifest.DecodeEntries(readFile(t, filepath.Join(dir, "manifest-ed1bcdf9-ebcf-4853-80b8-e63189d2bfad-0")))
	if err != nil {
		t.Fatal(err)
	}
	if len(entries) != 1 {
		t.Fatalf("%d entries", len(entries))
	}
	f := entries[0].File
	var counts []int64
	for _, c := range f.ValueStats.NullCounts {
		counts = append(counts, *c)
	}
	if !reflect.DeepEqual(counts, []int64{0, 0, 2, 1, 0, 1, 0, 1}) || f.ValueStats.MinValues[5] != 0x88 || f.ValueStats.MaxValues[5] != 0x88 {
		t.Errorf("null counts %v, header bytes %#x %#x", counts, f.ValueStats.MinValues[5], f.ValueStats.MaxValues[5])
	}
	if entries[0].TotalBuckets != -1 || entries[0].Bucket != 0 || f.MinSequenceNumber != 0 || f.MaxSequenceNumber != 2 || f.RowCount != 3 {
		t.Errorf("entry %+v", entries[0])
	}
	// 1.3-SNAPSHOT has _FIRST_ROW_ID but not _WRITE_COLS yet.
	if f.FirstRowID != nil || f.WriteCols != nil {
		t.Errorf("row tracking fields %v %v", f.FirstRowID, f.WriteCols)
	}
}

// TestFileIndexExtraFiles checks _EXTRA_FILES of the 1.2 file-index fixture.
func TestFileIndexExtraFiles(t *testing.T) {
	dir := filepath.Join(fixturetest.Dir(t), "cpp-java12-append-unaware-file-index", "warehouse", "default.db", "append_with_bitmap_no_embedding", "manifest")
	entries, err := manifest.DecodeEntries(readFile(t, filepath.Join(dir, "manifest-6ac3eb4e-8b98-4ad5-8d1a-833cf2cea7fa-0")))
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"data-783929b2-49d4-4006-a898-194a62e3278d-0.parquet.index"}
	if len(entries) != 1 || !reflect.DeepEqual(entries[0].File.ExtraFiles, want) || entries[0].File.EmbeddedIndex != nil || entries[0].File.RowCount != 8 {
		t.Errorf("entries %+v", entries)
	}
}
