package manifest_test

// The measurements behind the decision in doc.go to keep the package's own
// Avro object container reader and writer rather than use hamba/avro's
// ocf package: speed and allocations on the planning benchmark's manifests,
// the bytes each writes compared with Java's, and what each does with
// corrupt input.

import (
	"bytes"
	"fmt"
	"reflect"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hamba/avro/v2"
	"github.com/hamba/avro/v2/ocf"
	"github.com/klauspost/compress/zstd"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// hambaStats and the types below mirror the manifest schema for hamba's
// struct decoder, which matches fields by name as Java does. Nested records
// are pointers: Paimon 0.8 and early 0.9 write them as ["null", record],
// which hamba decodes into a non-pointer struct as zero values, silently.
type hambaStats struct {
	MinValues  []byte    `avro:"_MIN_VALUES"`
	MaxValues  []byte    `avro:"_MAX_VALUES"`
	NullCounts *[]*int64 `avro:"_NULL_COUNTS"`
}

type hambaFile struct {
	FileName          string      `avro:"_FILE_NAME"`
	FileSize          int64       `avro:"_FILE_SIZE"`
	RowCount          int64       `avro:"_ROW_COUNT"`
	MinKey            []byte      `avro:"_MIN_KEY"`
	MaxKey            []byte      `avro:"_MAX_KEY"`
	KeyStats          *hambaStats `avro:"_KEY_STATS"`
	ValueStats        *hambaStats `avro:"_VALUE_STATS"`
	MinSequenceNumber int64       `avro:"_MIN_SEQUENCE_NUMBER"`
	MaxSequenceNumber int64       `avro:"_MAX_SEQUENCE_NUMBER"`
	SchemaID          int64       `avro:"_SCHEMA_ID"`
	Level             int32       `avro:"_LEVEL"`
	ExtraFiles        []string    `avro:"_EXTRA_FILES"`
	CreationTime      *int64      `avro:"_CREATION_TIME"`
	DeleteRowCount    *int64      `avro:"_DELETE_ROW_COUNT"`
	EmbeddedIndex     *[]byte     `avro:"_EMBEDDED_FILE_INDEX"`
	FileSource        *int32      `avro:"_FILE_SOURCE"`
	ValueStatsCols    *[]string   `avro:"_VALUE_STATS_COLS"`
	ExternalPath      *string     `avro:"_EXTERNAL_PATH"`
	FirstRowID        *int64      `avro:"_FIRST_ROW_ID"`
	WriteCols         *[]string   `avro:"_WRITE_COLS"`
}

type hambaEntry struct {
	Version      int32      `avro:"_VERSION"`
	Kind         int32      `avro:"_KIND"`
	Partition    []byte     `avro:"_PARTITION"`
	Bucket       int32      `avro:"_BUCKET"`
	TotalBuckets int32      `avro:"_TOTAL_BUCKETS"`
	File         *hambaFile `avro:"_FILE"`
}

func (s *hambaStats) stats() manifest.SimpleStats {
	if s == nil {
		return manifest.SimpleStats{}
	}
	out := manifest.SimpleStats{MinValues: s.MinValues, MaxValues: s.MaxValues}
	if s.NullCounts != nil {
		out.NullCounts = *s.NullCounts
	}
	return out
}

func (h *hambaEntry) entry() manifest.Entry {
	f := h.File
	if f == nil {
		f = &hambaFile{}
	}
	e := manifest.Entry{Kind: manifest.FileKind(h.Kind), Partition: h.Partition, Bucket: h.Bucket, TotalBuckets: h.TotalBuckets,
		File: manifest.DataFileMeta{
			FileName: f.FileName, FileSize: f.FileSize, RowCount: f.RowCount, MinKey: f.MinKey, MaxKey: f.MaxKey,
			KeyStats: f.KeyStats.stats(), ValueStats: f.ValueStats.stats(),
			MinSequenceNumber: f.MinSequenceNumber, MaxSequenceNumber: f.MaxSequenceNumber, SchemaID: f.SchemaID, Level: f.Level,
			ExtraFiles: f.ExtraFiles, CreationTimeMillis: f.CreationTime, DeleteRowCount: f.DeleteRowCount,
			FileSource: f.FileSource, ValueStatsCols: f.ValueStatsCols, ExternalPath: f.ExternalPath,
			FirstRowID: f.FirstRowID, WriteCols: f.WriteCols,
		}}
	if f.EmbeddedIndex != nil {
		e.File.EmbeddedIndex = *f.EmbeddedIndex
	}
	return e
}

func hambaStatsOf(s manifest.SimpleStats) *hambaStats {
	h := &hambaStats{MinValues: s.MinValues, MaxValues: s.MaxValues}
	if s.NullCounts != nil {
		h.NullCounts = &s.NullCounts
	}
	return h
}

func hambaEntryOf(e *manifest.Entry) hambaEntry {
	f := &e.File
	h := hambaEntry{Version: 2, Kind: int32(e.Kind), Partition: e.Partition, Bucket: e.Bucket, TotalBuckets: e.TotalBuckets,
		File: &hambaFile{
			FileName: f.FileName, FileSize: f.FileSize, RowCount: f.RowCount, MinKey: f.MinKey, MaxKey: f.MaxKey,
			KeyStats: hambaStatsOf(f.KeyStats), ValueStats: hambaStatsOf(f.ValueStats),
			MinSequenceNumber: f.MinSequenceNumber, MaxSequenceNumber: f.MaxSequenceNumber, SchemaID: f.SchemaID, Level: f.Level,
			ExtraFiles: f.ExtraFiles, CreationTime: f.CreationTimeMillis, DeleteRowCount: f.DeleteRowCount,
			FileSource: f.FileSource, ValueStatsCols: f.ValueStatsCols, ExternalPath: f.ExternalPath,
			FirstRowID: f.FirstRowID, WriteCols: f.WriteCols,
		}}
	if f.EmbeddedIndex != nil {
		h.File.EmbeddedIndex = &f.EmbeddedIndex
	}
	return h
}

// hambaReader decodes manifests with hamba's OCF reader, keeping what a
// planner would keep across files: the zstd decoder and a schema cache.
type hambaReader struct {
	zstd   *zstd.Decoder
	schema *avro.SchemaCache
}

func newHambaReader(tb testing.TB) *hambaReader {
	zd, err := zstd.NewReader(nil, zstd.WithDecoderConcurrency(1))
	if err != nil {
		tb.Fatal(err)
	}
	tb.Cleanup(zd.Close)
	return &hambaReader{zstd: zd, schema: &avro.SchemaCache{}}
}

func (h *hambaReader) decodeEntries(data []byte) (entries []manifest.Entry, err error) {
	dec, err := ocf.NewDecoder(bytes.NewReader(data), ocf.WithZStandardDecoder(h.zstd), ocf.WithDecoderSchemaCache(h.schema))
	if err != nil {
		return nil, err
	}
	for dec.HasNext() {
		// A pointer, so that the ["null", record] top level of Paimon 0.8
		// and early 0.9 files decodes (into a zero struct otherwise).
		var r *hambaEntry
		if err := dec.Decode(&r); err != nil {
			return nil, err
		}
		if r == nil {
			return nil, fmt.Errorf("null row")
		}
		entries = append(entries, r.entry())
	}
	return entries, dec.Error()
}

// planEntries builds one manifest of BenchmarkPlanFull100kFiles (lakecore/scan):
// 100 ADD entries of a 5-column table, value stats as Java stores them.
func planEntries(tb testing.TB) []manifest.Entry {
	valueTypes := []types.DataType{types.StringType(), types.BigIntType(), types.IntType(), types.StringType(), types.DoubleType()}
	part, err := binrow.Serialize([]types.DataType{types.StringType()}, []any{"2024-01-03"})
	if err != nil {
		tb.Fatal(err)
	}
	mins, err := binrow.Serialize(valueTypes, []any{"2024-01-03", int64(2000), int32(0), "aaaa", 0.5})
	if err != nil {
		tb.Fatal(err)
	}
	maxs, err := binrow.Serialize(valueTypes, []any{"2024-01-03", int64(2999), int32(1000), "zzzz", 99.5})
	if err != nil {
		tb.Fatal(err)
	}
	created, zero, source := int64(1_700_000_000_000), int64(0), int32(0)
	nulls := []*int64{&zero, &zero, &zero, &zero, &zero}
	entries := make([]manifest.Entry, 100)
	for i := range entries {
		entries[i] = manifest.Entry{Kind: manifest.FileKindAdd, Partition: part, TotalBuckets: -1, File: manifest.DataFileMeta{
			FileName: fmt.Sprintf("data-%08x-2d1c-4f7e-9a55-%012x-0.parquet", i, i), FileSize: 128 << 20, RowCount: 1_000_000,
			MinKey: binrow.EmptyRow, MaxKey: binrow.EmptyRow, KeyStats: manifest.EmptyStats(),
			ValueStats:        manifest.SimpleStats{MinValues: mins, MaxValues: maxs, NullCounts: nulls},
			MinSequenceNumber: int64(i) * 1_000_000, MaxSequenceNumber: int64(i+1)*1_000_000 - 1,
			ExtraFiles: []string{}, CreationTimeMillis: &created, DeleteRowCount: &zero, FileSource: &source,
		}}
	}
	return entries
}

// BenchmarkDecodeManifestOursVsHamba decodes one manifest of the planning
// benchmark (100 entries, zstd) into []manifest.Entry, with the package's
// Decoder and with hamba's OCF reader into tagged structs; a full plan of
// BenchmarkPlanFull100kFiles decodes 1,000 of them.
func BenchmarkDecodeManifestOursVsHamba(b *testing.B) {
	data, err := manifest.EncodeEntries(planEntries(b), manifest.Codec{})
	if err != nil {
		b.Fatal(err)
	}
	ours := manifest.NewDecoder()
	theirs := newHambaReader(b)
	// hamba's ocf.Decoder parses the header's schema JSON again for every
	// file; its value decoder alone, given the schema parsed once and the
	// block already framed and decompressed, is the lower bound of any
	// design built on it (no framing, no checks of ours).
	schema, err := avro.Parse(string(headerMeta(b, data)["avro.schema"]))
	if err != nil {
		b.Fatal(err)
	}
	plain, err := manifest.EncodeEntries(planEntries(b), manifest.Codec{Name: "null"})
	if err != nil {
		b.Fatal(err)
	}
	records := plain[bytes.Index(plain, plain[len(plain)-16:])+16 : len(plain)-16]
	_, n1 := readVarint(records)
	_, n2 := readVarint(records[n1:])
	records = records[n1+n2:]
	valuesOnly := func([]byte) ([]manifest.Entry, error) {
		dec := avro.NewDecoderForSchema(schema, bytes.NewReader(records))
		entries := make([]manifest.Entry, 0, 100)
		for range 100 {
			var r hambaEntry
			if err := dec.Decode(&r); err != nil {
				return nil, err
			}
			entries = append(entries, r.entry())
		}
		return entries, nil
	}
	variants := []struct {
		name   string
		decode func([]byte) ([]manifest.Entry, error)
	}{
		{"ours", ours.DecodeEntries},
		{"ours-uncompressed", func([]byte) ([]manifest.Entry, error) { return ours.DecodeEntries(plain) }},
		{"hamba", theirs.decodeEntries},
		{"hamba-values-only", valuesOnly},
	}
	for _, bc := range variants {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(data)))
			b.ReportAllocs()
			for b.Loop() {
				entries, err := bc.decode(data)
				if err != nil || len(entries) != 100 {
					b.Fatal(len(entries), err)
				}
			}
		})
	}
	interleaved(b, len(variants), func(i int) string { return variants[i].name }, func(i int) error {
		_, err := variants[i].decode(data)
		return err
	})
}

// interleaved runs n variants in turn within each iteration, so that on a
// shared machine they see the same load, and reports each one's time per
// call as a metric named after it.
func interleaved(b *testing.B, n int, name func(int) string, run func(int) error) {
	b.Run("interleaved", func(b *testing.B) {
		spent := make([]time.Duration, n)
		for b.Loop() {
			for i := range n {
				t0 := time.Now()
				if err := run(i); err != nil {
					b.Fatal(err)
				}
				spent[i] += time.Since(t0)
			}
		}
		for i := range n {
			b.ReportMetric(float64(spent[i].Nanoseconds())/float64(b.N), name(i)+"-ns/op")
		}
		b.ReportMetric(0, "ns/op")
	})
}

// BenchmarkEncodeManifestOursVsHamba encodes the same manifest (zstd level
// 1) with the package's Encoder and with hamba's OCF writer configured for
// Java's layout (see hambaEncoder), sharing one zstd encoder across files as
// the committer does.
func BenchmarkEncodeManifestOursVsHamba(b *testing.B) {
	entries := planEntries(b)
	ours := manifest.NewEncoder(manifest.Codec{})
	data, err := ours.EncodeEntries(entries)
	if err != nil {
		b.Fatal(err)
	}
	schemaText := string(headerMeta(b, data)["avro.schema"])
	zw, err := zstd.NewWriter(nil, zstd.WithEncoderLevel(zstd.SpeedFastest), zstd.WithEncoderConcurrency(1))
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = zw.Close() })
	cfg := avro.Config{DisableBlockSizeHeader: true, BlockLength: 1 << 30}.Freeze()
	// Unlike the reader, the writer can take a schema parsed once.
	schema, err := avro.Parse(schemaText)
	if err != nil {
		b.Fatal(err)
	}
	hamba := func([]manifest.Entry) ([]byte, error) {
		var buf bytes.Buffer
		enc, err := ocf.NewEncoderWithSchema(schema, &buf, ocf.WithCodec(ocf.ZStandard), ocf.WithZStandardEncoder(zw),
			ocf.WithBlockLength(0), ocf.WithBlockSize(64000), ocf.WithEncodingConfig(cfg),
			ocf.WithSchemaMarshaler(func(avro.Schema) ([]byte, error) { return []byte(schemaText), nil }))
		if err != nil {
			return nil, err
		}
		for i := range entries {
			r := hambaEntryOf(&entries[i])
			if err := enc.Encode(&r); err != nil {
				return nil, err
			}
		}
		return buf.Bytes(), enc.Close()
	}
	variants := []struct {
		name   string
		encode func([]manifest.Entry) ([]byte, error)
	}{{"ours", ours.EncodeEntries}, {"hamba", hamba}}
	for _, bc := range variants {
		b.Run(bc.name, func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, err := bc.encode(entries); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	interleaved(b, len(variants), func(i int) string { return variants[i].name }, func(i int) error {
		_, err := variants[i].encode(entries)
		return err
	})
}

// TestHambaDecodesLikeOurs checks that the benchmark compares like with
// like: hamba's reader yields the same entries from the same file.
func TestHambaDecodesLikeOurs(t *testing.T) {
	data, err := manifest.EncodeEntries(append(planEntries(t), fullEntry(1), minimalEntry()), manifest.Codec{})
	if err != nil {
		t.Fatal(err)
	}
	want, err := manifest.DecodeEntries(data)
	if err != nil {
		t.Fatal(err)
	}
	got, err := newHambaReader(t).decodeEntries(data)
	if err != nil {
		t.Fatal(err)
	}
	if len(got) != len(want) {
		t.Fatalf("hamba: %d entries, ours %d", len(got), len(want))
	}
	for i := range want {
		if !reflect.DeepEqual(got[i], want[i]) {
			t.Errorf("entry %d:\nhamba %+v\n ours %+v", i, got[i].File, want[i].File)
		}
	}
}

// TestHambaReadsJavaManifests decodes every manifest Java wrote among the
// fixtures (Paimon 0.8 to 2.0 writer schemas; the fuzz targets' seeds) with
// both readers and counts where hamba's reader fails or disagrees.
func TestHambaReadsJavaManifests(t *testing.T) {
	theirs := newHambaReader(t)
	files, failed, differ := 0, 0, 0
	for _, p := range manifestFiles(t) {
		name := p[strings.LastIndex(p, "/")+1:]
		if !strings.HasPrefix(name, "manifest-") || strings.HasPrefix(name, "manifest-list-") || strings.Contains(p, "orc-manifest") {
			continue
		}
		data := readFile(t, p)
		want, err := manifest.DecodeEntries(data)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		files++
		got, err := theirs.decodeEntries(data)
		switch {
		case err != nil:
			failed++
			t.Errorf("hamba: %s: %v", strings.TrimPrefix(p, fixturetest.Dir(t)+"/"), err)
		case !reflect.DeepEqual(got, want):
			differ++
			t.Errorf("hamba: %s: entries differ from ours: %s", strings.TrimPrefix(p, fixturetest.Dir(t)+"/"), firstDifference(got, want))
		}
	}
	t.Logf("hamba read %d Java manifests: %d failed, %d decoded differently from ours", files, failed, differ)
}

// firstDifference names the first field of the first entry where got and
// want differ.
func firstDifference(got, want []manifest.Entry) string {
	if len(got) != len(want) {
		return fmt.Sprintf("%d entries, want %d", len(got), len(want))
	}
	for i := range want {
		g, w := reflect.ValueOf(got[i].File), reflect.ValueOf(want[i].File)
		for j := range g.NumField() {
			if !reflect.DeepEqual(g.Field(j).Interface(), w.Field(j).Interface()) {
				gv, wv := g.Field(j), w.Field(j)
				if gv.Kind() == reflect.Pointer && !gv.IsNil() && !wv.IsNil() {
					gv, wv = gv.Elem(), wv.Elem()
				}
				return fmt.Sprintf("entry %d: %s: %v, want %v", i, g.Type().Field(j).Name, gv, wv)
			}
		}
		if !reflect.DeepEqual(got[i], want[i]) {
			return fmt.Sprintf("entry %d: %+v, want %+v", i, got[i], want[i])
		}
	}
	return "none"
}

// hambaEncode writes entries' records with hamba's OCF writer, configured as
// close to Java's DataFileWriter as its options allow: Java's schema text,
// blocks ended at 64000 buffered bytes, positive array counts without byte
// sizes, one array block.
func hambaEncode(tb testing.TB, schemaText string, codec ocf.CodecName, sync [16]byte, records []hambaEntry) []byte {
	tb.Helper()
	cfg := avro.Config{DisableBlockSizeHeader: true, BlockLength: 1 << 30}.Freeze()
	var buf bytes.Buffer
	enc, err := ocf.NewEncoder(schemaText, &buf,
		ocf.WithCodec(codec),
		ocf.WithZStandardEncoderOptions(zstd.WithEncoderLevel(zstd.SpeedFastest)),
		ocf.WithBlockLength(0), ocf.WithBlockSize(64000),
		ocf.WithEncodingConfig(cfg),
		ocf.WithSchemaMarshaler(func(avro.Schema) ([]byte, error) { return []byte(schemaText), nil }),
		ocf.WithSyncBlock(sync))
	if err != nil {
		tb.Fatal(err)
	}
	for i := range records {
		if err := enc.Encode(&records[i]); err != nil {
			tb.Fatal(err)
		}
	}
	if err := enc.Close(); err != nil {
		tb.Fatal(err)
	}
	return buf.Bytes()
}

func syncOf(data []byte) (s [16]byte) {
	copy(s[:], data[len(data)-16:])
	return s
}

// TestHambaWriterBytes compares what hamba's OCF writer produces with what
// the package writes (Java's layout, checked against Java's files by
// TestEmptyManifestListMatchesJava and TestRoundTripFixtures), with the same
// records and sync marker, and records how often they agree.
func TestHambaWriterBytes(t *testing.T) {
	ours, err := manifest.EncodeEntries(append(planEntries(t), fullEntry(1), minimalEntry()), manifest.Codec{Name: "null"})
	if err != nil {
		t.Fatal(err)
	}
	schemaText := string(headerMeta(t, ours)["avro.schema"])
	dec, err := ocf.NewDecoder(bytes.NewReader(ours))
	if err != nil {
		t.Fatal(err)
	}
	var records []hambaEntry
	for dec.HasNext() {
		var r hambaEntry
		if err := dec.Decode(&r); err != nil {
			t.Fatal(err)
		}
		records = append(records, r)
	}
	// The header's metadata is a Go map, so its order is the map's
	// iteration order; Java and the package write avro.schema first.
	const runs = 400
	same, firstDiff := 0, -1
	for range runs {
		theirs := hambaEncode(t, schemaText, ocf.Null, syncOf(ours), records)
		if bytes.Equal(theirs, ours) {
			same++
			continue
		}
		i := 0
		for i < len(ours) && i < len(theirs) && ours[i] == theirs[i] {
			i++
		}
		firstDiff = i
	}
	t.Logf("hamba, codec null, %d entries: byte-identical to ours in %d of %d runs; the others differ from byte %d (metadata order)",
		len(records), same, runs, firstDiff)
	if same == 0 {
		t.Errorf("hamba never reproduced the layout")
	}
}

// TestHambaEmptyListMatchesJava: Java's empty manifest list (the header
// only) against hamba's, sync marker and schema text given.
func TestHambaEmptyListMatchesJava(t *testing.T) {
	java := readFile(t, javaEmptyListPath(t))
	schemaText := string(headerMeta(t, java)["avro.schema"])
	javaText := ocf.WithSchemaMarshaler(func(avro.Schema) ([]byte, error) { return []byte(schemaText), nil })
	for _, c := range []struct {
		name string
		opts []ocf.EncoderFunc
	}{
		{"default options", nil},
		{"Java's schema text", []ocf.EncoderFunc{javaText}},
		{"Java's schema text, no block sizes", []ocf.EncoderFunc{javaText, ocf.WithEncodingConfig(avro.Config{DisableBlockSizeHeader: true}.Freeze())}},
	} {
		const runs = 400
		same, size := 0, 0
		for range runs {
			var buf bytes.Buffer
			enc, err := ocf.NewEncoder(schemaText, &buf, append([]ocf.EncoderFunc{ocf.WithCodec(ocf.ZStandard), ocf.WithSyncBlock(syncOf(java))}, c.opts...)...)
			if err != nil {
				t.Fatal(err)
			}
			if err := enc.Close(); err != nil {
				t.Fatal(err)
			}
			if bytes.Equal(buf.Bytes(), java) {
				same++
			}
			size = buf.Len()
		}
		t.Logf("empty manifest list, hamba with %s: %d bytes (Java %d), identical to Java's in %d of %d runs", c.name, size, len(java), same, runs)
		if len(c.opts) == 2 && same == 0 {
			t.Errorf("hamba configured for Java's layout never matched Java's header")
		}
	}
}

func javaEmptyListPath(t testing.TB) string {
	for _, p := range manifestFiles(t) {
		if strings.HasSuffix(p, "manifest-list-fc40d98d-57e5-4aec-9cc5-7c647c40eb30-0") {
			return p
		}
	}
	t.Fatal("Java's empty manifest list fixture not found")
	return ""
}

// corruptOutcome decodes data, recovering a panic, and reports the bytes
// allocated meanwhile.
func corruptOutcome(decode func([]byte) ([]manifest.Entry, error), data []byte) (panicked bool, allocated uint64, err error) {
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	func() {
		defer func() {
			if r := recover(); r != nil {
				panicked, err = true, fmt.Errorf("panic: %v", r)
			}
		}()
		_, err = decode(data)
	}()
	runtime.ReadMemStats(&after)
	return panicked, after.TotalAlloc - before.TotalAlloc, err
}

// TestHambaCorruptInput runs both readers over the inputs of
// TestCorruptFixtures (every truncation and byte flip of Java's files) and
// over crafted lengths: a block size beyond the file, a negative block
// size, an array count far beyond the bytes that remain.
func TestHambaCorruptInput(t *testing.T) {
	if testing.Short() {
		t.Skip("slow")
	}
	theirs := newHambaReader(t)
	readers := []struct {
		name   string
		decode func([]byte) ([]manifest.Entry, error)
	}{{"ours", manifest.NewDecoder().DecodeEntries}, {"hamba", theirs.decodeEntries}}

	// Java-written manifests (not lists): truncations and flips.
	for _, r := range readers {
		panics, accepted, cases := 0, 0, 0
		var maxAlloc uint64
		var firstPanic error
		for _, p := range manifestFiles(t) {
			name := p[strings.LastIndex(p, "/")+1:]
			if !strings.HasPrefix(name, "manifest-") || strings.HasPrefix(name, "manifest-list-") || strings.Contains(p, "orc-manifest") {
				continue
			}
			if !strings.Contains(p, "rust-java08") && !strings.Contains(p, "paimon-java20snap") {
				continue
			}
			data := readFile(t, p)
			var inputs [][]byte
			for n := range len(data) {
				inputs = append(inputs, data[:n])
			}
			for i := range data {
				c := append([]byte{}, data...)
				c[i] ^= 0x5a
				inputs = append(inputs, c)
			}
			for _, in := range inputs {
				cases++
				func() {
					defer func() {
						if v := recover(); v != nil {
							panics++
							if firstPanic == nil {
								firstPanic = fmt.Errorf("%s: %v", name, v)
							}
						}
					}()
					var m0, m1 runtime.MemStats
					runtime.ReadMemStats(&m0)
					if _, err := r.decode(in); err == nil {
						accepted++
					}
					runtime.ReadMemStats(&m1)
					maxAlloc = max(maxAlloc, m1.TotalAlloc-m0.TotalAlloc)
				}()
			}
		}
		t.Logf("%s: %d corrupt inputs of Java manifests: %d panics (first: %v), %d decoded without error, max %d KiB allocated by one decode",
			r.name, cases, panics, firstPanic, accepted, maxAlloc>>10)
		if r.name == "ours" && panics > 0 {
			t.Errorf("our reader panicked: %v", firstPanic)
		}
	}

	// Crafted lengths in a valid file of ours (codec null, so that the
	// record bytes are visible).
	valid, err := manifest.EncodeEntries([]manifest.Entry{minimalEntry()}, manifest.Codec{Name: "null"})
	if err != nil {
		t.Fatal(err)
	}
	header := bytes.Index(valid, valid[len(valid)-16:]) + 16
	block := func(count, size int64, payload []byte) []byte {
		b := append([]byte{}, valid[:header]...)
		b = appendVarint(b, count)
		b = appendVarint(b, size)
		b = append(b, payload...)
		return append(b, valid[len(valid)-16:]...)
	}
	record := valid[header:]
	_, n1 := readVarint(record)
	_, n2 := readVarint(record[n1:])
	rec := record[n1+n2 : len(record)-16]
	// _EXTRA_FILES of minimalEntry is the empty array, a single 0 byte just
	// before the 8 trailing nulls of its optional fields.
	extra := len(rec) - 9
	if rec[extra] != 0 {
		t.Fatalf("unexpected record layout % x", rec)
	}
	hugeArray := append(append(append([]byte{}, rec[:extra]...), appendVarint(nil, 1<<24)...), rec[extra+1:]...)
	crafted := []struct {
		name string
		data []byte
	}{
		{"block size 256 MiB in a small file", block(1, 256<<20, rec)},
		{"block size -1", block(1, -1, rec)},
		{"block size 2^50", block(1, 1<<50, rec)},
		{"array count 2^24 in one record", block(1, int64(len(hugeArray)), hugeArray)},
	}
	for _, c := range crafted {
		for _, r := range readers {
			panicked, alloc, err := corruptOutcome(r.decode, c.data)
			t.Logf("%s: %s (%d bytes): panicked %v, %d MiB allocated, error: %v", r.name, c.name, len(c.data), panicked, alloc>>20, err)
			if r.name == "ours" && (panicked || err == nil || alloc > 1<<20) {
				t.Errorf("ours: %s: panicked %v, %d bytes allocated, error %v", c.name, panicked, alloc, err)
			}
		}
	}
}

func appendVarint(b []byte, v int64) []byte {
	u := uint64(v<<1) ^ uint64(v>>63)
	for u >= 0x80 {
		b = append(b, byte(u)|0x80)
		u >>= 7
	}
	return append(b, byte(u))
}

func readVarint(b []byte) (int64, int) {
	var u uint64
	for i, c := range b {
		u |= uint64(c&0x7f) << (7 * i)
		if c < 0x80 {
			return int64(u>>1) ^ -int64(u&1), i + 1
		}
	}
	return 0, 0
}
