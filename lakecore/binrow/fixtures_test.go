package binrow_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/hamba/avro/v2/ocf"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// tableSchema is the part of schema/schema-N these tests need; the schema
// package is not used on purpose.
type tableSchema struct {
	ID            int64             `json:"id"`
	Fields        []types.DataField `json:"fields"`
	PartitionKeys []string          `json:"partitionKeys"`
	PrimaryKeys   []string          `json:"primaryKeys"`
	Options       map[string]string `json:"options"`
}

func (s *tableSchema) fields(names []string) []types.DataField {
	out := make([]types.DataField, 0, len(names))
	for _, n := range names {
		out = append(out, s.Fields[types.FieldByName(s.Fields, n)])
	}
	return out
}

func (s *tableSchema) partitionFields() []types.DataField { return s.fields(s.PartitionKeys) }

// keyFields are the trimmed primary keys (primary keys minus partition keys)
// that a primary-key table stores in _MIN_KEY and the key stats.
func (s *tableSchema) keyFields() []types.DataField {
	var names []string
	for _, k := range s.PrimaryKeys {
		if !slices.Contains(s.PartitionKeys, k) {
			names = append(names, k)
		}
	}
	return s.fields(names)
}

func typesOf(fields []types.DataField) []types.DataType {
	out := make([]types.DataType, len(fields))
	for i, f := range fields {
		out[i] = f.Type
	}
	return out
}

// fixtureTable is one Java-written table (or the bare manifest samples).
type fixtureTable struct {
	name     string // fixture directory
	dir      string // table directory (or the directory holding manifest/)
	schemas  map[int64]*tableSchema
	latest   *tableSchema
	override *rowTypes // for the synthetic samples without a schema
}

// rowTypes fixes the row types of fixtures without schema files.
type rowTypes struct {
	partition, key, keyStats, stats, listPartition []types.DataType
}

// rustSampleTypes describes apache/paimon-rust's synthetic manifests
// (fixtures README §9): partition INT 1, keys INT 1, stats (STRING "1",
// INT 1), manifest-list partition stats (INT 1, STRING "1").
var rustSampleTypes = &rowTypes{
	partition:     []types.DataType{types.IntType()},
	key:           []types.DataType{types.IntType()},
	keyStats:      []types.DataType{types.StringType(), types.IntType()},
	stats:         []types.DataType{types.StringType(), types.IntType()},
	listPartition: []types.DataType{types.IntType(), types.StringType()},
}

func loadFixtureTables(tb testing.TB) []*fixtureTable {
	tb.Helper()
	root := fixturetest.Dir(tb)
	entries, err := os.ReadDir(root)
	if err != nil {
		tb.Fatal(err)
	}
	var out []*fixtureTable
	for _, e := range entries {
		if !e.IsDir() || strings.Contains(e.Name(), "orc-manifest") {
			continue // ORC manifests are not Avro
		}
		if e.Name() == "rust-java08-manifest-samples" {
			out = append(out, &fixtureTable{name: e.Name(), dir: filepath.Join(root, e.Name()), override: rustSampleTypes})
			continue
		}
		tables, _ := filepath.Glob(filepath.Join(root, e.Name(), "warehouse", "default.db", "*"))
		for _, dir := range tables {
			ft := &fixtureTable{name: e.Name(), dir: dir, schemas: map[int64]*tableSchema{}}
			files, _ := filepath.Glob(filepath.Join(dir, "schema", "schema-*"))
			for _, f := range files {
				data, err := os.ReadFile(f)
				if err != nil {
					tb.Fatal(err)
				}
				var s tableSchema
				if err := json.Unmarshal(data, &s); err != nil {
					tb.Fatalf("parse %s: %v", f, err)
				}
				ft.schemas[s.ID] = &s
				if ft.latest == nil || s.ID > ft.latest.ID {
					ft.latest = &s
				}
			}
			if ft.latest == nil {
				tb.Fatalf("no schema in %s", dir)
			}
			out = append(out, ft)
		}
	}
	if len(out) == 0 {
		tb.Fatal("no Avro-manifest fixture found")
	}
	return out
}

// readAvro decodes an Avro OCF (zstandard or snappy) into generic records,
// with ["null", T] union wrappers ({"type name": value}) removed.
func readAvro(tb testing.TB, path string) []map[string]any {
	tb.Helper()
	data, err := os.ReadFile(path)
	if err != nil {
		tb.Fatal(err)
	}
	dec, err := ocf.NewDecoder(bytes.NewReader(data))
	if err != nil {
		tb.Fatalf("open %s: %v", path, err)
	}
	var out []map[string]any
	for dec.HasNext() {
		var rec any
		if err := dec.Decode(&rec); err != nil {
			tb.Fatalf("decode %s: %v", path, err)
		}
		m, ok := unwrapUnion(rec).(map[string]any)
		if !ok {
			tb.Fatalf("%s: record is %T", path, rec)
		}
		out = append(out, m)
	}
	if err := dec.Error(); err != nil {
		tb.Fatalf("decode %s: %v", path, err)
	}
	return out
}

func unwrapUnion(v any) any {
	m, ok := v.(map[string]any)
	if !ok || len(m) != 1 {
		return v
	}
	for k, inner := range m {
		if !strings.HasPrefix(k, "_") && (strings.Contains(k, ".") || k == "array" || k == "bytes" || k == "string" || k == "long" || k == "int") {
			return inner
		}
	}
	return v
}

func field(rec map[string]any, name string) any { return unwrapUnion(rec[name]) }

func record(rec map[string]any, name string) map[string]any {
	m, _ := field(rec, name).(map[string]any)
	return m
}

func asInt(v any) int64 {
	switch x := v.(type) {
	case int:
		return int64(x)
	case int32:
		return int64(x)
	case int64:
		return x
	}
	return -1
}

// fixtureRow is one serialized BinaryRow found in a fixture manifest.
type fixtureRow struct {
	where string
	types []types.DataType
	data  []byte
}

// fixtureEntry is what the partition and bucket tests need from a manifest
// entry.
type fixtureEntry struct {
	table        *fixtureTable
	schema       *tableSchema
	partition    []byte
	bucket       int64
	minV, maxV   []byte
	nullCounts   []any
	valueFields  []types.DataField
	fileName     string
	manifestFile string
}

// collectFixtureRows walks every Avro manifest, manifest list and index
// manifest of the fixtures and returns each BinaryRow with its row types.
func collectFixtureRows(tb testing.TB) ([]fixtureRow, []fixtureEntry) {
	tb.Helper()
	var rows []fixtureRow
	var entries []fixtureEntry
	for _, ft := range loadFixtureTables(tb) {
		files, _ := filepath.Glob(filepath.Join(ft.dir, "manifest", "*"))
		for _, f := range files {
			for i, rec := range readAvro(tb, f) {
				where := fmt.Sprintf("%s/%s record %d", ft.name, filepath.Base(f), i)
				add := func(name string, ts []types.DataType, v any) {
					b, ok := v.([]byte)
					if !ok {
						tb.Fatalf("%s: %s is %T", where, name, v)
					}
					rows = append(rows, fixtureRow{where: where + " " + name, types: ts, data: b})
				}
				rt := ft.override
				var sch *tableSchema
				if rt == nil {
					// _SCHEMA_ID sits in _FILE for entries, at the top for lists.
					sch = ft.latest
					id := asInt(field(rec, "_SCHEMA_ID"))
					if file := record(rec, "_FILE"); file != nil {
						id = asInt(field(file, "_SCHEMA_ID"))
					}
					if ft.schemas[id] != nil {
						sch = ft.schemas[id]
					}
					key := typesOf(sch.keyFields())
					rt = &rowTypes{
						partition:     typesOf(sch.partitionFields()),
						key:           key,
						keyStats:      key,
						listPartition: typesOf(ft.latest.partitionFields()),
					}
				}
				switch {
				case rec["_PARTITION_STATS"] != nil: // manifest list
					st := record(rec, "_PARTITION_STATS")
					add("_PARTITION_STATS._MIN_VALUES", rt.listPartition, st["_MIN_VALUES"])
					add("_PARTITION_STATS._MAX_VALUES", rt.listPartition, st["_MAX_VALUES"])
				case rec["_FILE"] != nil: // manifest entry
					file := record(rec, "_FILE")
					add("_PARTITION", rt.partition, rec["_PARTITION"])
					add("_MIN_KEY", rt.key, file["_MIN_KEY"])
					add("_MAX_KEY", rt.key, file["_MAX_KEY"])
					ks := record(file, "_KEY_STATS")
					add("_KEY_STATS._MIN_VALUES", rt.keyStats, ks["_MIN_VALUES"])
					add("_KEY_STATS._MAX_VALUES", rt.keyStats, ks["_MAX_VALUES"])
					valueFields, statTypes := []types.DataField(nil), rt.stats
					if sch != nil {
						valueFields = sch.Fields
						if cols, ok := field(file, "_VALUE_STATS_COLS").([]any); ok {
							names := make([]string, len(cols))
							for j, c := range cols {
								names[j], _ = c.(string)
							}
							valueFields = sch.fields(names)
						}
						statTypes = typesOf(valueFields)
					}
					vs := record(file, "_VALUE_STATS")
					add("_VALUE_STATS._MIN_VALUES", statTypes, vs["_MIN_VALUES"])
					add("_VALUE_STATS._MAX_VALUES", statTypes, vs["_MAX_VALUES"])
					nc, _ := field(vs, "_NULL_COUNTS").([]any)
					entries = append(entries, fixtureEntry{
						table: ft, schema: sch, partition: rec["_PARTITION"].([]byte),
						bucket: asInt(rec["_BUCKET"]), minV: vs["_MIN_VALUES"].([]byte), maxV: vs["_MAX_VALUES"].([]byte),
						nullCounts: nc, valueFields: valueFields, fileName: fmt.Sprint(file["_FILE_NAME"]), manifestFile: f,
					})
				case rec["_INDEX_TYPE"] != nil: // index manifest
					add("_PARTITION", rt.partition, rec["_PARTITION"])
				default:
					tb.Fatalf("%s: unknown record with keys %v", where, sortedKeys(rec))
				}
			}
		}
	}
	return rows, entries
}

func sortedKeys[V any](m map[string]V) []string { return slices.Sorted(maps.Keys(m)) }

// TestFixtureRowsRoundTrip decodes every BinaryRow of the Java-written
// manifests and checks that encoding the values again gives Java's bytes.
func TestFixtureRowsRoundTrip(t *testing.T) {
	rows, _ := collectFixtureRows(t)
	nonEmpty := 0
	for _, r := range rows {
		vals, err := binrow.Deserialize(r.types, r.data)
		if err != nil {
			t.Errorf("%s: %v", r.where, err)
			continue
		}
		again, err := binrow.Serialize(r.types, vals)
		if err != nil {
			t.Errorf("%s: re-encode %v: %v", r.where, vals, err)
			continue
		}
		if !bytes.Equal(again, r.data) {
			t.Errorf("%s: values %v\n got  %x\n want %x", r.where, vals, again, r.data)
		}
		if len(r.types) > 0 {
			nonEmpty++
		}
	}
	t.Logf("%d fixture rows round-tripped, %d with fields", len(rows), nonEmpty)
	if len(rows) < 200 || nonEmpty < 100 {
		t.Errorf("only %d rows (%d with fields) found in the fixtures", len(rows), nonEmpty)
	}
}

// TestFixtureKnownValues pins decoded values the fixtures README states.
func TestFixtureKnownValues(t *testing.T) {
	rows, _ := collectFixtureRows(t)
	want := map[string]string{
		// spec §7.4 (c): max stats of manifest-f0b7a2bd...-0
		"cpp-java11-append-fixed-bucket-complex-types/manifest-f0b7a2bd": "[10 1 1970-01-01+19909d <nil> 123456789987654321.45678 <nil>]",
	}
	found := 0
	for _, r := range rows {
		for prefix, w := range want {
			if !strings.HasPrefix(r.where, prefix) || !strings.HasSuffix(r.where, "_VALUE_STATS._MAX_VALUES") {
				continue
			}
			vals, err := binrow.Deserialize(r.types, r.data)
			if err != nil {
				t.Fatal(err)
			}
			if got := describe(vals); got == w {
				found++
			}
		}
	}
	if found == 0 {
		t.Errorf("no value-stats row decoded to %v", want)
	}
}

// describe prints values compactly; a DATE is printed as an epoch-day offset.
func describe(vals []any) string {
	parts := make([]string, len(vals))
	for i, v := range vals {
		switch x := v.(type) {
		case types.Date:
			parts[i] = "1970-01-01+" + strconv.Itoa(int(x)) + "d"
		case nil:
			parts[i] = "<nil>"
		default:
			parts[i] = fmt.Sprint(x)
		}
	}
	return "[" + strings.Join(parts, " ") + "]"
}

// TestFixturePartitionPaths checks that every manifest entry's partition
// names an existing directory of the Java-written table, with a bucket
// directory below it.
func TestFixturePartitionPaths(t *testing.T) {
	_, entries := collectFixtureRows(t)
	checked := map[string]bool{}
	for _, e := range entries {
		if e.schema == nil {
			continue // synthetic samples: no table directory
		}
		keys := e.schema.partitionFields()
		vals, err := binrow.Deserialize(typesOf(keys), e.partition)
		if err != nil {
			t.Fatal(err)
		}
		path, err := binrow.PartitionPath(keys, vals, binrow.DefaultPartitionOptions())
		if err != nil {
			t.Fatal(err)
		}
		dir := filepath.Join(e.table.dir, filepath.FromSlash(path), "bucket-"+strconv.FormatInt(e.bucket, 10))
		if st, err := os.Stat(dir); err != nil || !st.IsDir() {
			t.Errorf("%s: partition %v -> %q: no directory %s", e.fileName, vals, path, dir)
		}
		checked[e.table.name+":"+path] = true
	}
	for _, want := range []string{
		"cpp-java11-append-fixed-bucket-complex-types:f1=10",
		"cpp-java11-append-fixed-bucket-complex-types:f1=20",
		"cpp-java12-append-unaware-schema-evolution:key0=0/key1=1",
		"cpp-java12-append-unaware-schema-evolution:key0=1/key1=1",
		"cpp-java09-pk-table-avro-manifest-reference:f1=10",
		"cpp-java13snap-append-unaware-timestamps:",
	} {
		if !checked[want] {
			t.Errorf("partition %q not seen; seen %v", want, sortedKeys(checked))
		}
	}
}

// TestFixtureBuckets recomputes the bucket of every data file of a
// fixed-bucket table whose bucket key has one value in the file (min = max,
// no nulls) and compares it with the bucket Java wrote the file to.
func TestFixtureBuckets(t *testing.T) {
	_, entries := collectFixtureRows(t)
	checked := map[string]int{}
	for _, e := range entries {
		if e.schema == nil {
			continue
		}
		n, err := strconv.Atoi(e.schema.Options["bucket"])
		if err != nil || n < 1 || e.schema.Options["bucket-key"] == "" {
			continue
		}
		keyNames := strings.Split(e.schema.Options["bucket-key"], ",")
		keyFields := e.schema.fields(keyNames)
		mins, err1 := binrow.Deserialize(typesOf(e.valueFields), e.minV)
		maxs, err2 := binrow.Deserialize(typesOf(e.valueFields), e.maxV)
		if err := errors.Join(err1, err2); err != nil {
			t.Fatal(err)
		}
		key := make([]any, len(keyNames))
		single := true
		for i, name := range keyNames {
			j := types.FieldByName(e.valueFields, name)
			if j < 0 || mins[j] == nil || fmt.Sprint(mins[j]) != fmt.Sprint(maxs[j]) || asInt(e.nullCounts[j]) != 0 {
				single = false
				break
			}
			key[i] = mins[j]
		}
		if !single {
			continue
		}
		row, err := binrow.Encode(typesOf(keyFields), key)
		if err != nil {
			t.Fatal(err)
		}
		if got := binrow.Bucket(row, n); int64(got) != e.bucket {
			t.Errorf("%s %s: bucket key %v -> bucket %d (hash %d), Java wrote bucket %d",
				e.table.name, e.fileName, key, got, binrow.Hash(row), e.bucket)
		}
		checked[e.table.name]++
	}
	if checked["cpp-java11-append-fixed-bucket-complex-types"] < 3 {
		t.Errorf("too few fixed-bucket files checked: %v", checked)
	}
	t.Logf("files checked per table: %v", checked)
}
