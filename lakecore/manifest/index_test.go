package manifest_test

import (
	"context"
	"errors"
	"path/filepath"
	"reflect"
	"slices"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
)

func pk09(t *testing.T) (storage.FileIO, string) {
	t.Helper()
	wh := filepath.Join(fixturetest.Dir(t), "cpp-java09-pk-table-avro-manifest-reference", "warehouse")
	fio, err := storage.NewLocal(wh)
	if err != nil {
		t.Fatal(err)
	}
	return fio, "default.db/pk_09"
}

// TestDecodeIndexManifestFixtures asserts the 0.9 union-wrapped DV index
// manifests and the 2.0 global-index one.
func TestDecodeIndexManifestFixtures(t *testing.T) {
	ctx := context.Background()
	fio, table := pk09(t)
	part10 := unhex(t, "00000001 0000000000000000 0a00000000000000")
	got, err := manifest.ReadIndexEntries(ctx, fio, table, "index-manifest-03e2700b-8409-499b-8c27-a09ccee9348c-0")
	if err != nil {
		t.Fatal(err)
	}
	dv1 := manifest.IndexEntry{Kind: manifest.FileKindAdd, Partition: part10, Bucket: 1, IndexType: "DELETION_VECTORS",
		FileName: "index-ff7801ad-df90-49b2-9619-586eab9c68e3-1", FileSize: 31, RowCount: 1,
		DVRanges: []manifest.DVRange{{DataFile: "data-6d416200-c9db-49ff-bc27-79837bf1aaab-0.parquet", Offset: 1, Length: 22}}}
	want := []manifest.IndexEntry{dv1, {
		Kind: manifest.FileKindAdd, Partition: part10, Bucket: 0, IndexType: "DELETION_VECTORS",
		FileName: "index-ff7801ad-df90-49b2-9619-586eab9c68e3-0", FileSize: 61, RowCount: 2,
		DVRanges: []manifest.DVRange{
			{DataFile: "data-0f3a001e-ce2f-4f01-bb47-08d9901cb76c-1.parquet", Offset: 1, Length: 22},
			{DataFile: "data-0f3a001e-ce2f-4f01-bb47-08d9901cb76c-0.parquet", Offset: 31, Length: 22},
		},
	}}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("index manifest 0:\n got %+v\nwant %+v", got, want)
	}

	got, err = manifest.ReadIndexEntries(ctx, fio, table, "index-manifest-03e2700b-8409-499b-8c27-a09ccee9348c-1")
	if err != nil {
		t.Fatal(err)
	}
	want = []manifest.IndexEntry{
		dv1,
		{Kind: manifest.FileKindAdd, Partition: part10, Bucket: 0, IndexType: "DELETION_VECTORS",
			FileName: "index-ff7801ad-df90-49b2-9619-586eab9c68e3-2", FileSize: 1, RowCount: 0, DVRanges: []manifest.DVRange{}},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("index manifest 1:\n got %+v\nwant %+v", got, want)
	}

	data := readFile(t, filepath.Join(fixturetest.Dir(t), "paimon-java20snap-pk-table-manifest-reference", "warehouse", "default.db",
		"test_pk_global_index_golden", "manifest", "index-manifest-9280e97a-019f-4a95-b519-3bef0eae422a-0"))
	g, err := manifest.DecodeIndexEntries(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(g) != 2 || g[0].IndexType != "bitmap" || g[1].IndexType != "btree" || g[0].GlobalIndex == nil ||
		g[0].GlobalIndex.RowRangeEnd != 3 || g[0].GlobalIndex.IndexFieldID != 2 || g[1].GlobalIndex.IndexFieldID != 1 ||
		g[0].DVRanges != nil || g[0].GlobalIndex.ExtraFieldIDs != nil || string(g[1].GlobalIndex.IndexMeta[4:10]) != "name-1" {
		t.Errorf("2.0 index manifest: %+v", g)
	}
}

// TestReadDeletionVectorsFixture reads the Java-written 32-bit deletion
// vectors of the 0.9 primary-key fixture.
func TestReadDeletionVectorsFixture(t *testing.T) {
	ctx := context.Background()
	fio, table := pk09(t)
	cases := map[string]map[string][]int64{
		// snapshots 6 and 7
		"index-manifest-03e2700b-8409-499b-8c27-a09ccee9348c-0": {
			"data-0f3a001e-ce2f-4f01-bb47-08d9901cb76c-1.parquet": {0},
			"data-0f3a001e-ce2f-4f01-bb47-08d9901cb76c-0.parquet": {0},
			"data-6d416200-c9db-49ff-bc27-79837bf1aaab-0.parquet": {4},
		},
		// snapshot 8: bucket 0 was compacted and its vectors dropped
		"index-manifest-03e2700b-8409-499b-8c27-a09ccee9348c-1": {
			"data-6d416200-c9db-49ff-bc27-79837bf1aaab-0.parquet": {4},
		},
	}
	for name, want := range cases {
		dvs, err := manifest.ReadDeletionVectors(ctx, fio, table, name)
		if err != nil {
			t.Fatal(err)
		}
		got := map[string][]int64{}
		for f, dv := range dvs {
			got[f] = slices.Collect(dv.All())
			if dv.Cardinality() != int64(len(got[f])) {
				t.Errorf("%s: cardinality %d of %v", f, dv.Cardinality(), got[f])
			}
		}
		if !reflect.DeepEqual(got, want) {
			t.Errorf("%s: got %v, want %v", name, got, want)
		}
	}
	// The 2.0 fixture's index manifest has only global indexes, no DVs.
	wh := filepath.Join(fixturetest.Dir(t), "paimon-java20snap-pk-table-manifest-reference", "warehouse")
	fio2, err := storage.NewLocal(wh)
	if err != nil {
		t.Fatal(err)
	}
	dvs, err := manifest.ReadDeletionVectors(ctx, fio2, "default.db/test_pk_global_index_golden", "index-manifest-9280e97a-019f-4a95-b519-3bef0eae422a-0")
	if err != nil || len(dvs) != 0 {
		t.Errorf("global-index-only manifest: %v, %d vectors", err, len(dvs))
	}
}

// goldenDV describes testdata/dv32.bin and dv64.bin, written by pyroaring
// (testdata/gen_dv.py): the ranges it printed and the positions it stored.
var goldenDV = []struct {
	file      string
	dataFile  string
	offset    int32
	length    int32
	positions func() []int64
}{
	{"dv32.bin", "data-a.parquet", 1, 28, func() []int64 { return []int64{0, 3, 7, 100} }},
	{"dv32.bin", "data-b.parquet", 37, 8215, func() []int64 {
		var p []int64
		for i := int64(0); i < 15000; i += 3 {
			p = append(p, i)
		}
		for i := int64(70000); i < 70010; i++ {
			p = append(p, i)
		}
		return p
	}},
	{"dv32.bin", "data-c.parquet", 8260, 65, func() []int64 { return seq(0, 200000) }},
	{"dv32.bin", "data-d.parquet", 8333, 23, func() []int64 { return append(seq(5, 11), seq(1000, 2001)...) }},
	{"dv64.bin", "data-64.parquet", 1, 85, func() []int64 {
		return append([]int64{1, 5, 1<<32 + 7}, seq(3<<32+100, 3<<32+201)...)
	}},
}

func seq(from, to int64) []int64 {
	var p []int64
	for i := from; i < to; i++ {
		p = append(p, i)
	}
	return p
}

// TestDeletionVectorGolden reads 32-bit (array, bitmap and run containers,
// with and without the offset header) and 64-bit vectors written by an
// independent RoaringBitmap implementation, through an index manifest.
func TestDeletionVectorGolden(t *testing.T) {
	ctx := context.Background()
	wh := t.TempDir()
	fio, err := storage.NewLocal(wh)
	if err != nil {
		t.Fatal(err)
	}
	table := "db.db/t"
	var entries []manifest.IndexEntry
	for _, file := range []string{"dv32.bin", "dv64.bin"} {
		data := readFile(t, filepath.Join("testdata", file))
		if err := fio.WriteFile(ctx, table+"/index/"+file, data); err != nil {
			t.Fatal(err)
		}
		e := manifest.IndexEntry{Partition: emptyRow, IndexType: manifest.IndexTypeDeletionVectors, FileName: file,
			FileSize: int64(len(data)), DVRanges: []manifest.DVRange{}}
		for _, g := range goldenDV {
			if g.file == file {
				card := int64(len(g.positions()))
				e.DVRanges = append(e.DVRanges, manifest.DVRange{DataFile: g.dataFile, Offset: g.offset, Length: g.length, Cardinality: &card})
			}
		}
		e.RowCount = int64(len(e.DVRanges))
		entries = append(entries, e)
	}
	// Other index types are ignored.
	entries = append(entries, manifest.IndexEntry{Partition: emptyRow, IndexType: "HASH", FileName: "missing-hash-index"})
	data, err := manifest.EncodeIndexEntries(entries, manifest.Codec{})
	if err != nil {
		t.Fatal(err)
	}
	if err := fio.WriteFile(ctx, table+"/manifest/index-manifest-x-0", data); err != nil {
		t.Fatal(err)
	}
	dvs, err := manifest.ReadDeletionVectors(ctx, fio, table, "index-manifest-x-0")
	if err != nil {
		t.Fatal(err)
	}
	if len(dvs) != len(goldenDV) {
		t.Errorf("%d vectors, want %d", len(dvs), len(goldenDV))
	}
	for _, g := range goldenDV {
		dv := dvs[g.dataFile]
		if dv == nil {
			t.Errorf("%s: no vector", g.dataFile)
			continue
		}
		want := g.positions()
		if got := slices.Collect(dv.All()); !slices.Equal(got, want) {
			t.Errorf("%s: %d positions, want %d", g.dataFile, len(got), len(want))
		}
		if dv.Cardinality() != int64(len(want)) {
			t.Errorf("%s: cardinality %d, want %d", g.dataFile, dv.Cardinality(), len(want))
		}
		set := map[int64]bool{}
		for _, p := range want {
			set[p] = true
			if !dv.IsDeleted(p) {
				t.Errorf("%s: %d not deleted", g.dataFile, p)
			}
		}
		for _, p := range []int64{-1, 1, 2, 4, 99, 101, 14998, 15000, 69999, 70010, 199999, 200000, 2001, 1 << 32, 1<<32 + 7, 3<<32 + 99, 3<<32 + 201, 1 << 40} {
			if dv.IsDeleted(p) != set[p] {
				t.Errorf("%s: IsDeleted(%d) = %v", g.dataFile, p, !set[p])
			}
		}
	}
}

func TestDeletionVectorCorrupt(t *testing.T) {
	good := readFile(t, filepath.Join("testdata", "dv32.bin"))[1:]
	if _, n, err := manifest.DecodeDeletionVector(good, 28); err != nil || n != 36 {
		t.Fatalf("good vector: %d bytes, %v", n, err)
	}
	mutate := func(f func(b []byte)) []byte {
		b := append([]byte{}, good...)
		f(b)
		return b
	}
	cases := []struct {
		name   string
		data   []byte
		length int32
		want   error
	}{
		{"crc", mutate(func(b []byte) { b[33] ^= 1 }), 28, manifest.ErrCorrupt},
		{"bitmap byte", mutate(func(b []byte) { b[20] ^= 0x40 }), 28, manifest.ErrCorrupt},
		{"length mismatch", good, 27, manifest.ErrCorrupt},
		{"magic", mutate(func(b []byte) { b[4] = 0 }), 28, manifest.ErrUnsupportedIndex},
		{"size too big", mutate(func(b []byte) { b[0] = 0x7f }), 0x7f00001c, manifest.ErrCorrupt},
		{"short", good[:6], 28, manifest.ErrCorrupt},
	}
	for _, c := range cases {
		if _, _, err := manifest.DecodeDeletionVector(c.data, c.length); !errors.Is(err, c.want) {
			t.Errorf("%s: got %v, want %v", c.name, err, c.want)
		}
	}
	for _, file := range []string{"dv32.bin", "dv64.bin"} {
		data := readFile(t, filepath.Join("testdata", file))
		for _, g := range goldenDV {
			if g.file != file {
				continue
			}
			end := int(g.offset) + int(g.length) // a 64-bit range covers its size and CRC
			if file == "dv32.bin" {
				end += 8
			}
			if _, n, err := manifest.DecodeDeletionVector(data[g.offset:end], g.length); err != nil || n != end-int(g.offset) {
				t.Fatalf("%s: %d bytes, %v", g.dataFile, n, err)
			}
			for cut := int(g.offset); cut < end; cut++ {
				if _, _, err := manifest.DecodeDeletionVector(data[g.offset:cut], g.length); err == nil {
					t.Fatalf("%s cut at %d: no error", g.dataFile, cut)
				}
			}
		}
	}
}

// TestReadDeletionVectorsErrors: a bad version byte or an external path
// outside the warehouse must fail rather than resurrect deleted rows.
func TestReadDeletionVectorsErrors(t *testing.T) {
	ctx := context.Background()
	fio, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	table := "db.db/t"
	dv := readFile(t, filepath.Join("testdata", "dv32.bin"))
	bad := append([]byte{2}, dv[1:]...)
	if err := fio.WriteFile(ctx, table+"/index/v2", bad); err != nil {
		t.Fatal(err)
	}
	write := func(name string, e manifest.IndexEntry) {
		data, err := manifest.EncodeIndexEntries([]manifest.IndexEntry{e}, manifest.Codec{})
		if err != nil {
			t.Fatal(err)
		}
		if err := fio.WriteFile(ctx, table+"/manifest/"+name, data); err != nil {
			t.Fatal(err)
		}
	}
	rng := []manifest.DVRange{{DataFile: "d", Offset: 1, Length: 28}}
	write("version", manifest.IndexEntry{Partition: emptyRow, IndexType: "DELETION_VECTORS", FileName: "v2", DVRanges: rng})
	write("external", manifest.IndexEntry{Partition: emptyRow, IndexType: "DELETION_VECTORS", FileName: "x", DVRanges: rng,
		ExternalPath: str("s3://elsewhere/x")})
	write("missing", manifest.IndexEntry{Partition: emptyRow, IndexType: "DELETION_VECTORS", FileName: "nope", DVRanges: rng})
	for name, want := range map[string]error{"version": manifest.ErrUnsupportedIndex, "external": manifest.ErrUnsupportedIndex, "missing": storage.ErrNotExist} {
		if _, err := manifest.ReadDeletionVectors(ctx, fio, table, name); !errors.Is(err, want) {
			t.Errorf("%s: got %v, want %v", name, err, want)
		}
	}
}
