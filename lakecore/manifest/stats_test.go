package manifest_test

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"regexp"
	"strconv"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// tableSchema is the part of schema-N the stats tests need.
type tableSchema struct {
	Fields        []types.DataField `json:"fields"`
	PartitionKeys []string          `json:"partitionKeys"`
}

func readSchema(t *testing.T, table string, id int64) tableSchema {
	t.Helper()
	var s tableSchema
	if err := json.Unmarshal(readFile(t, filepath.Join(table, "schema", "schema-"+strconv.FormatInt(id, 10))), &s); err != nil {
		t.Fatal(err)
	}
	return s
}

func fieldTypes(fields []types.DataField, names []string) []types.DataType {
	var out []types.DataType
	for _, n := range names {
		for _, f := range fields {
			if f.Name == n {
				out = append(out, f.Type)
			}
		}
	}
	return out
}

func allTypes(fields []types.DataField) []types.DataType {
	out := make([]types.DataType, len(fields))
	for i, f := range fields {
		out[i] = f.Type
	}
	return out
}

// TestStatsAgainstFixtures decodes the value stats and partitions of every
// fixture entry with the file's schema and re-encodes them with NewStats: the
// bytes must equal Java's. It then recomputes every manifest-list record
// from its manifest as WriteManifest does and compares it with Java's:
// counts, partition stats (byte for byte), schema id, bucket/level ranges.
func TestStatsAgainstFixtures(t *testing.T) {
	for _, tb := range tables(t) {
		t.Run(tb.name, func(t *testing.T) {
			latest := readSchema(t, tb.dir, 0)
			for id := int64(1); ; id++ {
				if _, err := os.Stat(filepath.Join(tb.dir, "schema", "schema-"+strconv.FormatInt(id, 10))); err != nil {
					break
				}
				latest = readSchema(t, tb.dir, id)
			}
			partTypes := fieldTypes(latest.Fields, latest.PartitionKeys)
			lists, _ := filepath.Glob(filepath.Join(tb.dir, "manifest", "manifest-list-*"))
			checked := 0
			for _, l := range lists {
				metas, err := manifest.DecodeFileMetas(readFile(t, l))
				if err != nil {
					t.Fatal(err)
				}
				for _, m := range metas {
					entries, err := manifest.DecodeEntries(readFile(t, filepath.Join(tb.dir, "manifest", m.FileName)))
					if err != nil {
						t.Fatal(err)
					}
					got, err := manifest.Summarize(entries, partTypes, -1)
					if err != nil {
						t.Fatal(err)
					}
					want := m
					want.FileName, want.FileSize = "", 0
					// Java before 1.1 / 1.4 wrote no bucket/level or row-id ranges.
					if m.MinBucket == nil {
						got.MinBucket, got.MaxBucket, got.MinLevel, got.MaxLevel = nil, nil, nil, nil
					}
					if m.MinRowID == nil {
						got.MinRowID, got.MaxRowID = nil, nil
					}
					if !reflect.DeepEqual(got, want) {
						t.Errorf("%s: recomputed\n%+v\nJava wrote\n%+v", m.FileName, got, want)
					}
					checked++
					for _, e := range entries {
						checkEntryStats(t, tb.dir, partTypes, e)
					}
				}
			}
			if checked == 0 {
				t.Error("no manifest-list records checked")
			}
		})
	}
}

func checkEntryStats(t *testing.T, table string, partTypes []types.DataType, e manifest.Entry) {
	t.Helper()
	s := readSchema(t, table, e.File.SchemaID)
	vt := allTypes(s.Fields)
	if e.File.ValueStatsCols != nil {
		vt = fieldTypes(s.Fields, *e.File.ValueStatsCols)
	}
	mins, maxs, nulls, err := e.File.ValueStats.Decode(vt)
	if err != nil {
		t.Fatalf("%s: value stats: %v", e.File.FileName, err)
	}
	again, err := manifest.NewStats(vt, mins, maxs, nulls)
	if err != nil {
		t.Fatalf("%s: %v", e.File.FileName, err)
	}
	if !reflect.DeepEqual(again, e.File.ValueStats) {
		t.Errorf("%s: re-encoded value stats differ:\n got %x\nwant %x", e.File.FileName, again.MaxValues, e.File.ValueStats.MaxValues)
	}
	part, _, _, err := manifest.SimpleStats{MinValues: e.Partition, MaxValues: e.Partition}.Decode(partTypes)
	if err != nil {
		t.Fatalf("%s: partition: %v", e.File.FileName, err)
	}
	p, err := manifest.NewStats(partTypes, part, part, nil)
	if err != nil || !bytes.Equal(p.MinValues, e.Partition) {
		t.Errorf("%s: partition re-encoded as %x, Java wrote %x (%v)", e.File.FileName, p.MinValues, e.Partition, err)
	}
}

// TestComplexTypesValueStats decodes the stats of paimon-format.md §7.4(c).
func TestComplexTypesValueStats(t *testing.T) {
	dir := filepath.Join(fixturetest.Dir(t), "cpp-java11-append-fixed-bucket-complex-types", "warehouse", "default.db", "append_complex_data")
	entries, err := manifest.DecodeEntries(readFile(t, filepath.Join(dir, "manifest", "manifest-f0b7a2bd-cad4-48c9-9464-516aabdd3e66-0")))
	if err != nil {
		t.Fatal(err)
	}
	vt := allTypes(readSchema(t, dir, 0).Fields)
	mins, maxs, nulls, err := entries[0].File.ValueStats.Decode(vt)
	if err != nil {
		t.Fatal(err)
	}
	big1, _ := new(big.Int).SetString("12345678998765432145678", 10)
	wantMax := []any{int32(10), int32(1), types.Date(19909), nil, types.Decimal{Unscaled: big1, Scale: 5}, nil}
	wantMin := []any{int32(10), int32(1), types.Date(1234), nil, types.Decimal{Unscaled: big.NewInt(1230000), Scale: 5}, nil}
	if !reflect.DeepEqual(maxs, wantMax) || !reflect.DeepEqual(mins, wantMin) {
		t.Errorf("mins %v maxs %v", mins, maxs)
	}
	for i, c := range nulls {
		if c == nil || *c != 0 {
			t.Errorf("null count %d: %v", i, c)
		}
	}
	if _, _, _, err := entries[0].File.ValueStats.Decode(vt[:5]); err == nil {
		t.Error("decoded 6-field stats with 5 types")
	}
}

func TestNewStats(t *testing.T) {
	if s, err := manifest.NewStats(nil, nil, nil, nil); err != nil || !reflect.DeepEqual(s, manifest.EmptyStats()) {
		t.Errorf("no fields: %+v %v", s, err)
	}
	// NOT NULL types still get nullable stats rows (type.copy(true)).
	tt := []types.DataType{types.IntType().NotNull(), types.StringType()}
	s, err := manifest.NewStats(tt, []any{nil, "a"}, []any{int32(5), "zzzzzzzzz"}, nil)
	if err != nil {
		t.Fatal(err)
	}
	want := unhex(t, "00000002 0001000000000000 0000000000000000 6100000000000081")
	if !bytes.Equal(s.MinValues, want) || len(s.NullCounts) != 2 || s.NullCounts[0] != nil {
		t.Errorf("min %x, null counts %v", s.MinValues, s.NullCounts)
	}
	if _, err := manifest.NewStats(tt, []any{nil}, []any{nil, nil}, nil); err == nil {
		t.Error("accepted mismatched lengths")
	}
	if _, err := manifest.NewStats(tt, []any{"x", nil}, []any{nil, nil}, nil); err == nil {
		t.Error("accepted a string for INT")
	}
}

// TestWriteManifestPartitionStats covers the collector on values Java
// compares specially: strings bytewise, NaN greatest, BYTES without min/max,
// nulls counted.
func TestWriteManifestPartitionStats(t *testing.T) {
	pt := []types.DataType{types.StringType(), types.DoubleType(), types.BytesType(), types.DecimalType(20, 2)}
	var entries []manifest.Entry
	negZero := math.Copysign(0, -1)
	d := func(u int64) types.Decimal { return types.Decimal{Unscaled: big.NewInt(u), Scale: 2} }
	for i, row := range [][]any{
		{"b", 1.5, []byte{9}, d(-5)},
		{"é", math.NaN(), nil, d(100)},
		{nil, 0.0, []byte{1}, nil},
		{"a", negZero, []byte{2}, d(7)}, // after +0: Double.compare puts -0 first
	} {
		part, err := manifest.NewStats(pt, row, row, nil)
		if err != nil {
			t.Fatal(err)
		}
		e := minimalEntry()
		e.Partition = part.MinValues
		e.Bucket = int32(i)
		e.File.Level = int32(3 - i)
		e.File.SchemaID = int64(i % 2)
		entries = append(entries, e)
	}
	entries[2].Kind = manifest.FileKindDelete
	ctx := context.Background()
	fio, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	m, err := manifest.WriteManifest(ctx, fio, "db.db/t", entries, pt, 7, manifest.Codec{})
	if err != nil {
		t.Fatal(err)
	}
	one, zero := int64(1), int64(0)
	wantStats, err := manifest.NewStats(pt,
		[]any{"a", negZero, nil, d(-5)},
		[]any{"é", math.NaN(), nil, d(100)},
		[]*int64{&one, &zero, &one, &one})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(m.PartitionStats, wantStats) {
		t.Errorf("partition stats\n got %x %x\nwant %x %x", m.PartitionStats.MinValues, m.PartitionStats.MaxValues, wantStats.MinValues, wantStats.MaxValues)
	}
	if m.NumAddedFiles != 3 || m.NumDeletedFiles != 1 || m.SchemaID != 1 || *m.MinBucket != 0 || *m.MaxBucket != 3 ||
		*m.MinLevel != 0 || *m.MaxLevel != 3 || m.MinRowID != nil {
		t.Errorf("record %+v", m)
	}
	if !regexp.MustCompile(`^manifest-[0-9a-f-]{36}-0$`).MatchString(m.FileName) {
		t.Errorf("name %s", m.FileName)
	}
	st, err := fio.Stat(ctx, "db.db/t/manifest/"+m.FileName)
	if err != nil || st.Size != m.FileSize {
		t.Errorf("size: record %d, file %v %v", m.FileSize, st.Size, err)
	}
	back, err := manifest.ReadEntries(ctx, fio, "db.db/t", m.FileName)
	if err != nil || !reflect.DeepEqual(back, entries) {
		t.Errorf("read back: %v", err)
	}

	// An entry whose partition does not match the partition types fails and
	// writes nothing.
	if _, err := manifest.WriteManifest(ctx, fio, "db.db/t", entries, pt[:1], 7, manifest.Codec{}); err == nil {
		t.Error("wrote entries with a 4-field partition as 1-field")
	}
	list, err := fio.List(ctx, "db.db/t/manifest", false)
	if err != nil || len(list) != 1 {
		t.Errorf("manifest dir after failed write: %v %v", list, err)
	}
}

func TestWriteManifestEmptyAndRowIDs(t *testing.T) {
	ctx := context.Background()
	fio, err := storage.NewLocal(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	pt := []types.DataType{types.IntType()}
	m, err := manifest.WriteManifest(ctx, fio, "db.db/t", nil, pt, 4, manifest.Codec{})
	if err != nil {
		t.Fatal(err)
	}
	zero := int64(0)
	empty, _ := manifest.NewStats(pt, []any{nil}, []any{nil}, []*int64{&zero})
	if m.SchemaID != 4 || m.MinBucket != nil || m.NumAddedFiles != 0 || !reflect.DeepEqual(m.PartitionStats, empty) {
		t.Errorf("empty manifest record %+v", m)
	}

	part, _ := manifest.NewStats(pt, []any{int32(1)}, []any{int32(1)}, nil)
	var entries []manifest.Entry
	for i, first := range []int64{100, 10, 50} {
		e := minimalEntry()
		e.Partition = part.MinValues
		e.File.FirstRowID = &first
		e.File.RowCount = int64(5 * (i + 1))
		entries = append(entries, e)
	}
	m, err = manifest.WriteManifest(ctx, fio, "db.db/t", entries, pt, 0, manifest.Codec{})
	if err != nil {
		t.Fatal(err)
	}
	if m.MinRowID == nil || *m.MinRowID != 10 || *m.MaxRowID != 104 {
		t.Errorf("row ids %v %v", m.MinRowID, m.MaxRowID)
	}

	name, size, err := manifest.WriteManifestList(ctx, fio, "db.db/t", []manifest.FileMeta{m}, manifest.Codec{})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.HasPrefix(name, "manifest-list-") {
		t.Errorf("name %s", name)
	}
	st, err := fio.Stat(ctx, "db.db/t/manifest/"+name)
	if err != nil || st.Size != size {
		t.Errorf("list size %d, file %v %v", size, st.Size, err)
	}
	metas, err := manifest.ReadFileMetas(ctx, fio, "db.db/t", name)
	if err != nil || !reflect.DeepEqual(metas, []manifest.FileMeta{m}) {
		t.Errorf("read list back: %v %+v", err, metas)
	}
	if _, err := manifest.ReadFileMetas(ctx, fio, "db.db/t", "manifest-list-missing"); !errors.Is(err, storage.ErrNotExist) {
		t.Errorf("missing list: %v", err)
	}
}
