package manifest_test

import (
	"bytes"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/testenv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
)

// pythonOracle is a script for Apache Avro's own Python implementation
// (python3-avro, with python3-zstandard and python3-snappy for the codecs).
// It decodes each file named on the command line and prints its records as
// JSON: bytes as hex, timestamps as epoch milliseconds.
const pythonOracle = `
import sys, json, datetime
import avro.datafile, avro.io

def plain(v):
    if isinstance(v, bytes):
        return {"hex": v.hex()}
    if isinstance(v, datetime.datetime):
        return {"millis": round(v.timestamp() * 1000)}
    if isinstance(v, dict):
        return {k: plain(x) for k, x in v.items()}
    if isinstance(v, list):
        return [plain(x) for x in v]
    return v

out = {}
for path in sys.argv[1:]:
    with open(path, "rb") as f:
        r = avro.datafile.DataFileReader(f, avro.io.DatumReader())
        out[path] = {"codec": r.get_meta("avro.codec").decode(), "schema": r.get_meta("avro.schema").decode(),
                     "records": [plain(x) for x in r]}
print(json.dumps(out))
`

// TestPythonAvroOracle decodes files this package wrote with Apache Avro's
// Python implementation, an independent reader, and compares every field.
// It skips when /usr/bin/python3 lacks the avro module, and fails then
// under REQUIRE_PYTHON_AVRO=1: CI installs python3-avro python3-zstandard
// python3-snappy and requires it.
func TestPythonAvroOracle(t *testing.T) {
	const python = "/usr/bin/python3"
	if err := exec.Command(python, "-c", "import avro.datafile, zstandard, snappy").Run(); err != nil {
		testenv.Missingf(t, testenv.RequirePythonAvro, "%s cannot import avro, zstandard and snappy (apt-get install python3-avro python3-zstandard python3-snappy): %v", python, err)
	}
	dir := t.TempDir()
	entries := []manifest.Entry{fullEntry(0), fullEntry(1), minimalEntry()}
	metas := []manifest.FileMeta{fullFileMeta(0), {FileName: "m", PartitionStats: manifest.EmptyStats()}}
	card := int64(3)
	indexes := []manifest.IndexEntry{
		{Partition: emptyRow, IndexType: "DELETION_VECTORS", FileName: "index-1", FileSize: 31, RowCount: 1,
			DVRanges: []manifest.DVRange{{DataFile: "data-1.parquet", Offset: 1, Length: 22, Cardinality: &card}}},
		{Kind: manifest.FileKindDelete, Partition: emptyRow, Bucket: 3, IndexType: "btree", FileName: "index-2",
			GlobalIndex: &manifest.GlobalIndexMeta{RowRangeEnd: 9, IndexFieldID: 2, ExtraFieldIDs: []int32{4}, IndexMeta: []byte{1}}},
	}
	want := map[string]any{}
	var files []string
	for _, c := range codecs {
		for kind, enc := range map[string]func() ([]byte, error){
			"manifest":       func() ([]byte, error) { return manifest.EncodeEntries(entries, c) },
			"manifest-list":  func() ([]byte, error) { return manifest.EncodeFileMetas(metas, c) },
			"index-manifest": func() ([]byte, error) { return manifest.EncodeIndexEntries(indexes, c) },
		} {
			data, err := enc()
			if err != nil {
				t.Fatal(err)
			}
			p := filepath.Join(dir, fmt.Sprintf("%s-%s-%d", kind, c.Name, c.ZstdLevel))
			if err := os.WriteFile(p, data, 0o644); err != nil {
				t.Fatal(err)
			}
			files = append(files, p)
			var recs []any
			switch kind {
			case "manifest":
				for _, e := range entries {
					recs = append(recs, entryGeneric(e))
				}
			case "manifest-list":
				for _, m := range metas {
					recs = append(recs, fileMetaGeneric(m))
				}
			default:
				for _, e := range indexes {
					recs = append(recs, indexGeneric(e))
				}
			}
			want[p] = recs
		}
	}
	cmd := exec.Command(python, append([]string{"-c", pythonOracle}, files...)...)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("python avro: %v\n%s", err, stderr.String())
	}
	var got map[string]struct {
		Codec   string `json:"codec"`
		Schema  string `json:"schema"`
		Records []any  `json:"records"`
	}
	dec := json.NewDecoder(bytes.NewReader(out))
	dec.UseNumber()
	if err := dec.Decode(&got); err != nil {
		t.Fatal(err)
	}
	for _, p := range files {
		g, ok := got[p]
		if !ok {
			t.Fatalf("python did not read %s", p)
		}
		w := normalize(t, want[p])
		if !reflect.DeepEqual(g.Records, w) {
			t.Errorf("%s: python avro read\n%v\nwant\n%v", filepath.Base(p), g.Records, w)
		}
		if !strings.HasPrefix(g.Schema, `{"type":"record","name":"record","namespace":"org.apache.paimon.avro.generated","fields":[{"name":"_VERSION","type":"int"}`) {
			t.Errorf("%s: schema %s", p, g.Schema)
		}
	}
}

// normalize round-trips v through JSON so numbers compare as json.Number.
func normalize(t *testing.T, v any) any {
	b, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out any
	if err := dec.Decode(&out); err != nil {
		t.Fatal(err)
	}
	return out
}

func hexOf(b []byte) any {
	if b == nil {
		return nil
	}
	return map[string]any{"hex": hex.EncodeToString(b)}
}

func statsGeneric(s manifest.SimpleStats) map[string]any {
	counts := []any{}
	for _, c := range s.NullCounts {
		if c == nil {
			counts = append(counts, nil)
		} else {
			counts = append(counts, *c)
		}
	}
	return map[string]any{"_MIN_VALUES": hexOf(s.MinValues), "_MAX_VALUES": hexOf(s.MaxValues), "_NULL_COUNTS": counts}
}

func opt[T any](p *T) any {
	if p == nil {
		return nil
	}
	return *p
}

func entryGeneric(e manifest.Entry) map[string]any {
	f := e.File
	var created any
	if f.CreationTimeMillis != nil {
		created = map[string]any{"millis": *f.CreationTimeMillis}
	}
	return map[string]any{
		"_VERSION": 2, "_KIND": int(e.Kind), "_PARTITION": hexOf(e.Partition), "_BUCKET": e.Bucket, "_TOTAL_BUCKETS": e.TotalBuckets,
		"_FILE": map[string]any{
			"_FILE_NAME": f.FileName, "_FILE_SIZE": f.FileSize, "_ROW_COUNT": f.RowCount,
			"_MIN_KEY": hexOf(f.MinKey), "_MAX_KEY": hexOf(f.MaxKey),
			"_KEY_STATS": statsGeneric(f.KeyStats), "_VALUE_STATS": statsGeneric(f.ValueStats),
			"_MIN_SEQUENCE_NUMBER": f.MinSequenceNumber, "_MAX_SEQUENCE_NUMBER": f.MaxSequenceNumber,
			"_SCHEMA_ID": f.SchemaID, "_LEVEL": f.Level, "_EXTRA_FILES": f.ExtraFiles,
			"_CREATION_TIME": created, "_DELETE_ROW_COUNT": opt(f.DeleteRowCount), "_EMBEDDED_FILE_INDEX": hexOf(f.EmbeddedIndex),
			"_FILE_SOURCE": opt(f.FileSource), "_VALUE_STATS_COLS": opt(f.ValueStatsCols), "_EXTERNAL_PATH": opt(f.ExternalPath),
			"_FIRST_ROW_ID": opt(f.FirstRowID), "_WRITE_COLS": opt(f.WriteCols),
		},
	}
}

func fileMetaGeneric(m manifest.FileMeta) map[string]any {
	return map[string]any{
		"_VERSION": 2, "_FILE_NAME": m.FileName, "_FILE_SIZE": m.FileSize, "_NUM_ADDED_FILES": m.NumAddedFiles,
		"_NUM_DELETED_FILES": m.NumDeletedFiles, "_PARTITION_STATS": statsGeneric(m.PartitionStats), "_SCHEMA_ID": m.SchemaID,
		"_MIN_BUCKET": opt(m.MinBucket), "_MAX_BUCKET": opt(m.MaxBucket), "_MIN_LEVEL": opt(m.MinLevel), "_MAX_LEVEL": opt(m.MaxLevel),
		"_MIN_ROW_ID": opt(m.MinRowID), "_MAX_ROW_ID": opt(m.MaxRowID),
	}
}

func indexGeneric(e manifest.IndexEntry) map[string]any {
	var ranges any
	if e.DVRanges != nil {
		rs := []any{}
		for _, r := range e.DVRanges {
			rs = append(rs, map[string]any{"f0": r.DataFile, "f1": r.Offset, "f2": r.Length, "_CARDINALITY": opt(r.Cardinality)})
		}
		ranges = rs
	}
	var global any
	if g := e.GlobalIndex; g != nil {
		var extra any
		if g.ExtraFieldIDs != nil {
			extra = g.ExtraFieldIDs
		}
		global = map[string]any{"_ROW_RANGE_START": g.RowRangeStart, "_ROW_RANGE_END": g.RowRangeEnd, "_INDEX_FIELD_ID": g.IndexFieldID,
			"_EXTRA_FIELD_IDS": extra, "_INDEX_META": hexOf(g.IndexMeta), "_SOURCE_META": hexOf(g.SourceMeta)}
	}
	return map[string]any{
		"_VERSION": 1, "_KIND": int(e.Kind), "_PARTITION": hexOf(e.Partition), "_BUCKET": e.Bucket, "_INDEX_TYPE": e.IndexType,
		"_FILE_NAME": e.FileName, "_FILE_SIZE": e.FileSize, "_ROW_COUNT": e.RowCount, "_DELETIONS_VECTORS_RANGES": ranges,
		"_EXTERNAL_PATH": opt(e.ExternalPath), "_GLOBAL_INDEX": global,
	}
}
