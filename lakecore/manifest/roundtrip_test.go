package manifest_test

import (
	"bytes"
	"encoding/binary"
	"errors"
	"fmt"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/hamba/avro/v2/ocf"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
)

var codecs = []manifest.Codec{
	{}, // zstd level 1, Java's default
	{Name: "zstd", ZstdLevel: 9},
	{Name: "snappy"},
	{Name: "deflate"},
	{Name: "null"},
}

var emptyRow = []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}

// fullEntry sets every field, including every optional one.
func fullEntry(i int) manifest.Entry {
	cols := []string{"a", "b"}
	write := []string{"a"}
	return manifest.Entry{
		Kind:         manifest.FileKind(i % 2),
		Partition:    []byte{0, 0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, byte(i), 0, 0, 0, 0, 0, 0, 0},
		Bucket:       int32(i % 7),
		TotalBuckets: 7,
		File: manifest.DataFileMeta{
			FileName: fmt.Sprintf("data-%04d.parquet", i), FileSize: 1<<40 + int64(i), RowCount: int64(i + 1),
			MinKey: emptyRow, MaxKey: emptyRow,
			KeyStats: manifest.EmptyStats(),
			ValueStats: manifest.SimpleStats{MinValues: []byte{0, 0, 0, 2, 1, 2, 3}, MaxValues: []byte{0, 0, 0, 2, 4, 5, 6},
				NullCounts: []*int64{i64(0), nil}},
			MinSequenceNumber: -5, MaxSequenceNumber: 1 << 50, SchemaID: 3, Level: 5,
			ExtraFiles:         []string{"x.index", ""},
			CreationTimeMillis: i64(-1), DeleteRowCount: i64(2), EmbeddedIndex: []byte{}, FileSource: i32(1),
			ValueStatsCols: &cols, ExternalPath: str("s3://b/p/data.parquet"), FirstRowID: i64(100), WriteCols: &write,
		},
	}
}

// minimalEntry leaves every optional field null.
func minimalEntry() manifest.Entry {
	return manifest.Entry{Partition: emptyRow, TotalBuckets: -1, File: manifest.DataFileMeta{
		FileName: "data-0.parquet", FileSize: 1, RowCount: 1, MinKey: emptyRow, MaxKey: emptyRow,
		KeyStats: manifest.EmptyStats(), ValueStats: manifest.EmptyStats(), ExtraFiles: []string{},
	}}
}

func fullFileMeta(i int) manifest.FileMeta {
	return manifest.FileMeta{FileName: fmt.Sprintf("manifest-%d", i), FileSize: 2072, NumAddedFiles: 2, NumDeletedFiles: 1,
		PartitionStats: manifest.SimpleStats{MinValues: emptyRow, MaxValues: emptyRow, NullCounts: []*int64{nil, i64(3)}},
		SchemaID:       4, MinBucket: i32(0), MaxBucket: i32(3), MinLevel: i32(0), MaxLevel: i32(5), MinRowID: i64(0), MaxRowID: i64(99)}
}

func TestRoundTrip(t *testing.T) {
	var many []manifest.Entry
	for i := range 3000 { // ~50 blocks of 64 KB
		many = append(many, fullEntry(i))
	}
	entrySets := map[string][]manifest.Entry{
		"empty":   {},
		"full":    {fullEntry(0), fullEntry(1)},
		"minimal": {minimalEntry()},
		"many":    many,
	}
	for _, c := range codecs {
		for name, entries := range entrySets {
			t.Run(c.Name+"/"+name, func(t *testing.T) {
				data, err := manifest.EncodeEntries(entries, c)
				if err != nil {
					t.Fatal(err)
				}
				got, err := manifest.DecodeEntries(data)
				if err != nil {
					t.Fatal(err)
				}
				if len(entries) == 0 && len(got) == 0 {
					return
				}
				if !reflect.DeepEqual(got, entries) {
					t.Errorf("round trip differs:\n got %+v\nwant %+v", got[0], entries[0])
				}
			})
		}
		t.Run(c.Name+"/filemetas", func(t *testing.T) {
			metas := []manifest.FileMeta{fullFileMeta(0), {FileName: "m", PartitionStats: manifest.EmptyStats()}}
			data, err := manifest.EncodeFileMetas(metas, c)
			if err != nil {
				t.Fatal(err)
			}
			got, err := manifest.DecodeFileMetas(data)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(got, metas) {
				t.Errorf("round trip differs:\n got %+v\nwant %+v", got, metas)
			}
		})
	}
}

// TestRoundTripFixtures decodes every Avro fixture file, encodes the records
// again with Java's current schema and decodes that: the values must not
// change. For the 2.0-SNAPSHOT fixture the embedded schema must equal the
// one Java wrote, byte for byte.
func TestRoundTripFixtures(t *testing.T) {
	for _, p := range manifestFiles(t) {
		if strings.Contains(p, "orc-manifest") {
			continue
		}
		name := filepath.Base(p)
		data := readFile(t, p)
		var ours []byte
		switch {
		case strings.HasPrefix(name, "index-manifest-"):
			v, err := manifest.DecodeIndexEntries(data)
			if err != nil {
				t.Fatal(err)
			}
			if ours, err = manifest.EncodeIndexEntries(v, manifest.Codec{}); err != nil {
				t.Fatal(err)
			}
			back, err := manifest.DecodeIndexEntries(ours)
			if err != nil || !reflect.DeepEqual(back, v) {
				t.Errorf("%s: round trip: %v\n got %+v\nwant %+v", name, err, back, v)
			}
		case strings.HasPrefix(name, "manifest-list-"):
			v, err := manifest.DecodeFileMetas(data)
			if err != nil {
				t.Fatal(err)
			}
			if ours, err = manifest.EncodeFileMetas(v, manifest.Codec{}); err != nil {
				t.Fatal(err)
			}
			back, err := manifest.DecodeFileMetas(ours)
			if err != nil || !(len(v) == 0 && len(back) == 0 || reflect.DeepEqual(back, v)) {
				t.Errorf("%s: round trip: %v", name, err)
			}
		default:
			v, err := manifest.DecodeEntries(data)
			if err != nil {
				t.Fatal(err)
			}
			if ours, err = manifest.EncodeEntries(v, manifest.Codec{}); err != nil {
				t.Fatal(err)
			}
			back, err := manifest.DecodeEntries(ours)
			if err != nil || !reflect.DeepEqual(back, v) {
				t.Errorf("%s: round trip: %v", name, err)
			}
		}
		if strings.Contains(p, "paimon-java20snap") {
			javaMeta, oursMeta := headerMeta(t, data), headerMeta(t, ours)
			if !bytes.Equal(javaMeta["avro.schema"], oursMeta["avro.schema"]) {
				t.Errorf("%s: schema differs from Java's:\n java %s\n ours %s", name, javaMeta["avro.schema"], oursMeta["avro.schema"])
			}
			if len(oursMeta) != 2 || string(oursMeta["avro.codec"]) != "zstandard" || string(javaMeta["avro.codec"]) != "zstandard" {
				t.Errorf("%s: metadata %q", name, oursMeta)
			}
		}
	}
}

// TestEmptyManifestListMatchesJava: a header-only list is byte-identical to
// Java's empty base list (1006 bytes with the 1.4+ schema) except for the
// random 16-byte sync marker.
func TestEmptyManifestListMatchesJava(t *testing.T) {
	java := readFile(t, filepath.Join(fixturetest.Dir(t), "paimon-java20snap-pk-table-manifest-reference", "warehouse", "default.db",
		"test_pk_global_index_golden", "manifest", "manifest-list-fc40d98d-57e5-4aec-9cc5-7c647c40eb30-0"))
	ours, err := manifest.EncodeFileMetas(nil, manifest.Codec{})
	if err != nil {
		t.Fatal(err)
	}
	if len(java) != 1006 || len(ours) != len(java) {
		t.Fatalf("sizes: java %d, ours %d", len(java), len(ours))
	}
	if !bytes.Equal(ours[:len(ours)-16], java[:len(java)-16]) {
		t.Errorf("header differs from Java's")
	}
	if got, err := manifest.DecodeFileMetas(ours); err != nil || len(got) != 0 {
		t.Errorf("decode empty list: %v, %d records", err, len(got))
	}
}

// TestCodecsAndBlocks checks avro.codec, the block framing (blocks end once
// 64000 uncompressed bytes are buffered, as Java's DataFileWriter does) and
// that hamba/avro's own OCF reader, an independent decoder, reads our files.
func TestCodecsAndBlocks(t *testing.T) {
	var entries []manifest.Entry
	for i := range 1500 {
		entries = append(entries, fullEntry(i))
	}
	wantCodec := map[string]string{"": "zstandard", "zstd": "zstandard", "snappy": "snappy", "deflate": "deflate", "null": "null"}
	for _, c := range codecs {
		data, err := manifest.EncodeEntries(entries, c)
		if err != nil {
			t.Fatal(err)
		}
		meta := headerMeta(t, data)
		if string(meta["avro.codec"]) != wantCodec[c.Name] || len(meta) != 2 {
			t.Errorf("codec %q: metadata %q", c.Name, meta)
		}
		counts := blockCounts(t, data)
		total := 0
		for _, n := range counts {
			total += n
		}
		if total != len(entries) || len(counts) < 4 {
			t.Errorf("codec %q: %d records in %d blocks", c.Name, total, len(counts))
		}
		if c.Name == "null" {
			// Uncompressed, so block sizes are visible: all but the last
			// just reach 64000 bytes.
			sizes := blockSizes(t, data)
			for i, s := range sizes[:len(sizes)-1] {
				if s < 64000 || s > 64000+2000 {
					t.Errorf("block %d: %d bytes", i, s)
				}
			}
		}
		dec, err := ocf.NewDecoder(bytes.NewReader(data))
		if err != nil {
			t.Fatalf("codec %q: hamba ocf: %v", c.Name, err)
		}
		n := 0
		for dec.HasNext() {
			var rec map[string]any
			if err := dec.Decode(&rec); err != nil {
				t.Fatalf("codec %q: hamba decode: %v", c.Name, err)
			}
			file := rec["_FILE"].(map[string]any)
			if rec["_VERSION"] != 2 || file["_FILE_NAME"] != entries[n].File.FileName {
				t.Fatalf("codec %q record %d: %v", c.Name, n, rec)
			}
			n++
		}
		if dec.Error() != nil || n != len(entries) {
			t.Errorf("codec %q: hamba read %d records: %v", c.Name, n, dec.Error())
		}
	}
	if _, err := manifest.EncodeEntries(nil, manifest.Codec{Name: "bzip2"}); !errors.Is(err, manifest.ErrUnsupportedCodec) {
		t.Errorf("bzip2: %v", err)
	}
}

func TestEncodeRejectsUnreadable(t *testing.T) {
	cases := map[string]func(e *manifest.Entry){
		"kind":        func(e *manifest.Entry) { e.Kind = 2 },
		"partition":   func(e *manifest.Entry) { e.Partition = nil },
		"min key":     func(e *manifest.Entry) { e.File.MinKey = []byte{0} },
		"null counts": func(e *manifest.Entry) { e.File.ValueStats.NullCounts = nil },
		"stats rows":  func(e *manifest.Entry) { e.File.KeyStats.MaxValues = nil },
	}
	for name, mutate := range cases {
		e := minimalEntry()
		mutate(&e)
		if _, err := manifest.EncodeEntries([]manifest.Entry{e}, manifest.Codec{}); err == nil {
			t.Errorf("%s: encoded an entry Java cannot read", name)
		}
	}
	if _, err := manifest.EncodeFileMetas([]manifest.FileMeta{{FileName: "m"}}, manifest.Codec{}); err == nil {
		t.Error("encoded a manifest-list record without partition stats")
	}
}

// headerMeta parses the metadata map of an object container header.
func headerMeta(t testing.TB, data []byte) map[string][]byte {
	t.Helper()
	dec, err := ocf.NewDecoder(bytes.NewReader(data))
	if err != nil {
		t.Fatal(err)
	}
	return dec.Metadata()
}

// blockFrames walks the container framing after the header: (count, size)
// of each block. Written independently of the package's reader.
func blockFrames(t testing.TB, data []byte) (counts, sizes []int) {
	t.Helper()
	r := bytes.NewReader(data[4:])
	varint := func() int {
		v, err := binary.ReadVarint(r)
		if err != nil {
			t.Fatal(err)
		}
		return int(v)
	}
	for n := varint(); n != 0; n = varint() {
		for range n {
			k := varint()
			_, _ = r.Seek(int64(k), 1)
			v := varint()
			_, _ = r.Seek(int64(v), 1)
		}
	}
	_, _ = r.Seek(16, 1)
	for r.Len() > 0 {
		c, s := varint(), varint()
		counts, sizes = append(counts, c), append(sizes, s)
		_, _ = r.Seek(int64(s)+16, 1)
	}
	return counts, sizes
}

func blockCounts(t testing.TB, data []byte) []int { c, _ := blockFrames(t, data); return c }
func blockSizes(t testing.TB, data []byte) []int  { _, s := blockFrames(t, data); return s }
