package datafile

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math/big"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/storage"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// readerFixture is one Java-written table of the fixtures.
type readerFixture struct {
	fio  *storage.Local
	path string // table path inside the warehouse
}

func openReaderFixture(t testing.TB, fixture, table string) readerFixture {
	t.Helper()
	fio, err := storage.NewLocal(filepath.Join(fixturetest.Dir(t), fixture, "warehouse"))
	if err != nil {
		t.Fatal(err)
	}
	return readerFixture{fio: fio, path: "default.db/" + table}
}

// fields reads schema/schema-<id> with encoding/json; only the fields matter here.
func (ft readerFixture) fields(t testing.TB, id int) []types.DataField {
	t.Helper()
	data, err := ft.fio.ReadFile(context.Background(), fmt.Sprintf("%s/schema/schema-%d", ft.path, id))
	if err != nil {
		t.Fatal(err)
	}
	var s struct {
		ID     int64             `json:"id"`
		Fields []types.DataField `json:"fields"`
	}
	if err := json.Unmarshal(data, &s); err != nil {
		t.Fatalf("schema-%d: %v", id, err)
	}
	return s.Fields
}

// read returns every row of one data file.
func (ft readerFixture) read(t testing.TB, file string, fileFields, tableFields []types.DataField, o ReaderOptions) [][]any {
	t.Helper()
	f, err := ft.fio.Open(context.Background(), ft.path+"/"+file)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	r, err := NewReader(f, fileFields, tableFields, o)
	if err != nil {
		t.Fatalf("NewReader %s: %v", file, err)
	}
	defer r.Close()
	var rows [][]any
	for {
		batch, err := r.Next(context.Background())
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			t.Fatalf("Next %s: %v", file, err)
		}
		if len(batch) == 0 || (o.BatchSize > 0 && len(batch) > o.BatchSize) {
			t.Fatalf("Next %s: batch of %d rows with BatchSize %d", file, len(batch), o.BatchSize)
		}
		rows = append(rows, batch...)
	}
	if int64(len(rows)) != r.NumRows() {
		t.Fatalf("%s: read %d rows, NumRows says %d", file, len(rows), r.NumRows())
	}
	return rows
}

func rdRenderRows(rows [][]any) []string {
	out := make([]string, len(rows))
	for i, r := range rows {
		out[i] = fixturetest.Render(r)
	}
	return out
}

func rdAssertRows(t *testing.T, what string, got, want [][]any) {
	t.Helper()
	g, w := rdRenderRows(got), rdRenderRows(want)
	if !slices.Equal(g, w) {
		t.Errorf("%s:\n got %s\nwant %s", what, strings.Join(g, "\n     "), strings.Join(w, "\n     "))
	}
}

// rdAssertMultiset compares rows ignoring their order.
func rdAssertMultiset(t *testing.T, what string, got, want [][]any) {
	t.Helper()
	g, w := rdRenderRows(got), rdRenderRows(want)
	slices.Sort(g)
	slices.Sort(w)
	if !slices.Equal(g, w) {
		t.Errorf("%s:\n got %s\nwant %s", what, strings.Join(g, "\n     "), strings.Join(w, "\n     "))
	}
}

// ts parses a wall-clock timestamp with up to nine fraction digits.
func rdTS(s string) types.Timestamp {
	for _, layout := range []string{"2006-01-02T15:04:05.999999999", "2006-01-02 15:04:05.999999999"} {
		if t, err := time.Parse(layout, s); err == nil {
			return types.TimestampOf(t)
		}
	}
	panic("bad timestamp " + s)
}

// dec parses a decimal literal keeping its written scale.
func rdDec(s string) types.Decimal {
	scale := 0
	if i := strings.IndexByte(s, '.'); i >= 0 {
		scale = len(s) - i - 1
	}
	u, ok := new(big.Int).SetString(strings.Replace(s, ".", "", 1), 10)
	if !ok {
		panic("bad decimal " + s)
	}
	return types.Decimal{Unscaled: u, Scale: scale}
}

func TestReadFixtureComplexTypes(t *testing.T) {
	ft := openReaderFixture(t, "cpp-java11-append-fixed-bucket-complex-types", "append_complex_data")
	fields := ft.fields(t, 0)
	row := func(f1, f2 int32, f3 any, f4 any, f5 any, f6 any) []any {
		if f3 != nil {
			f3 = types.Date(f3.(int))
		}
		if f4 != nil {
			f4 = rdTS(f4.(string))
		}
		if f5 != nil {
			f5 = rdDec(f5.(string))
		}
		if f6 != nil {
			f6 = []byte(f6.(string))
		}
		return []any{f1, f2, f3, f4, f5, f6}
	}
	bucket10 := [][]any{
		row(10, 1, 1234, "2033-05-18T03:33:20", "123456789987654321.45678", "add"),
		row(10, 1, 19909, "2033-05-18T03:33:20.000001001", "12.30000", "cat"),
		row(10, 1, 0, "2008-12-28T00:00:00.000123456", nil, "dad"),
		row(10, 1, 100, "2008-12-28T00:00:00.00012345", "-123.45000", "eat"),
		row(10, 1, nil, "1899-01-01T00:59:20.001001001", "0.00000", "fat"),
		row(10, 1, 20006, "2024-10-10T10:10:10.1001001", "1728551410100.10010", nil),
	}
	want := append(slices.Clone(bucket10),
		row(20, 1, -1234, "1899-01-01T00:59:20.001001001", "-123456789987654321.45678", "bad"),
		row(20, 0, -100, nil, "0.00000", "get"),
	)
	live := []string{
		"f1=10/bucket-0/data-f8754699-0c43-4e53-be00-7e8af1754913-0.parquet",
		"f1=20/bucket-0/data-ac0894ca-fc13-49c8-bb22-4556c8ee416c-0.parquet",
		"f1=20/bucket-1/data-e0a6a424-e3b0-47ba-b259-d033fc01e87c-0.parquet",
	}
	var got [][]any
	for _, f := range live {
		got = append(got, ft.read(t, f, fields, fields, ReaderOptions{})...)
	}
	rdAssertMultiset(t, "live files at snapshot 4", got, want)
	// The compacted file keeps the sequence order of its inputs.
	rdAssertRows(t, "compacted file", ft.read(t, live[0], fields, fields, ReaderOptions{BatchSize: 4}), bucket10)

	// The three files the COMPACT deleted hold the same rows.
	got = nil
	for i := range 3 {
		got = append(got, ft.read(t, fmt.Sprintf("f1=10/bucket-0/data-35f2719c-ffae-4697-960e-af95a0b4bd51-%d.parquet", i), fields, fields, ReaderOptions{BatchSize: 1})...)
	}
	rdAssertRows(t, "pre-compaction files", got, bucket10)
}

func TestReadFixtureSchemaEvolution(t *testing.T) {
	ft := openReaderFixture(t, "cpp-java12-append-unaware-schema-evolution", "append_table_with_alter_table")
	schema0, schema1 := ft.fields(t, 0), ft.fields(t, 1)
	// key0, key1, k, c, d, a, e
	row := func(v ...any) []any {
		out := make([]any, len(v))
		for i, x := range v {
			if x != nil {
				out[i] = int32(x.(int))
			}
		}
		return out
	}
	files := []struct {
		file     string
		schemaID int // _SCHEMA_ID of the file's manifest entry
		want     [][]any
	}{
		{"key0=0/key1=1/bucket-0/data-512651de-64b5-4a10-8068-65403aaccdb8-0.parquet", 0, [][]any{
			row(0, 1, 16, 13, nil, 15, nil), row(0, 1, 26, 23, nil, 25, nil), row(0, 1, 36, 33, nil, 35, nil)}},
		{"key0=0/key1=1/bucket-0/data-1aaec161-5365-426f-b33d-3cd99a3908f2-0.parquet", 1, [][]any{
			row(0, 1, 66, 63, 517, 65, 618), row(0, 1, 76, 73, 527, 75, 628), row(0, 1, 86, 83, 537, 85, 638)}},
		{"key0=1/key1=1/bucket-0/data-9dfb749f-0509-4db2-ae7b-1e4448b32165-0.parquet", 0, [][]any{
			row(1, 1, 46, 43, nil, 45, nil), row(1, 1, 56, 53, nil, 55, nil)}},
		{"key0=1/key1=1/bucket-0/data-11b12094-192f-4ad8-92a8-ae8cba5e25ef-0.parquet", 1, [][]any{
			row(1, 1, 96, 93, 547, 95, 648), row(1, 1, 106, 103, 557, 105, 658)}},
	}
	for _, f := range files {
		fileFields := map[int][]types.DataField{0: schema0, 1: schema1}[f.schemaID]
		rdAssertRows(t, f.file, ft.read(t, f.file, fileFields, schema1, ReaderOptions{}), f.want)
	}

	// Projection: e, a, k of the old file (a is the old "d", id 5).
	got := ft.read(t, files[0].file, schema0, schema1, ReaderOptions{Projection: []int{6, 5, 2, 5}})
	rdAssertRows(t, "projection", got, [][]any{row(nil, 15, 16, 15), row(nil, 25, 26, 25), row(nil, 35, 36, 35)})
}

func TestReadFixtureTypeCastEvolution(t *testing.T) {
	ft := openReaderFixture(t, "cpp-java12-append-unaware-type-cast-evolution", "append_table_alter_table_with_cast")
	schema0, schema1 := ft.fields(t, 0), ft.fields(t, 1)
	// f4 TIMESTAMP(9), key0, key1, f3 INT, f1 STRING, f2 DECIMAL(6,3), f0 BOOLEAN, f6 INT
	row := func(f4 string, key0, key1, f3 int32, f1, f2 string, f0 bool, f6 any) []any {
		if f6 != nil {
			f6 = int32(f6.(int))
		}
		return []any{rdTS(f4), key0, key1, f3, f1, rdDec(f2), f0, f6}
	}
	files := []struct {
		file     string
		schemaID int
		want     [][]any
	}{
		{"key0=0/key1=1/bucket-0/data-124e046e-ab87-4454-a5e6-0f97eb3a9713-0.parquet", 0, [][]any{
			row("1970-01-05 00:00:00", 0, 1, 100, "2024-11-26 06:38:56.001000001", "0.020", true, nil),
			row("1969-11-18 00:00:00", 0, 1, 110, "2024-11-26 06:38:56.011000011", "11.120", true, nil),
			row("1971-03-21 00:00:00", 0, 1, 120, "2024-11-26 06:38:56.021000021", "22.220", false, nil),
		}},
		{"key0=0/key1=1/bucket-0/data-c6ed61af-aa32-4be5-bbb9-d26fcad0fda6-0.parquet", 1, [][]any{
			row("2024-11-26 06:38:56.054000054", 0, 1, 150, "2024-11-26 15:28:31", "55.002", true, 56),
			row("2024-11-26 06:38:56.064000064", 0, 1, 160, "2024-11-26 15:28:41", "666.012", false, 66),
			row("2024-11-26 06:38:56.074000074", 0, 1, 170, "2024-11-26 15:28:51", "-77.022", true, 76),
		}},
		{"key0=1/key1=1/bucket-0/data-0a160cd8-29db-4f17-8550-633e4379db55-0.parquet", 0, [][]any{
			row("1957-11-01 00:00:00", 1, 1, 130, "2024-11-26 06:38:56.031000031", "333.320", false, nil),
			row("2091-09-07 00:00:00", 1, 1, 140, "2024-11-26 06:38:56.041000041", "444.420", true, nil),
		}},
		{"key0=1/key1=1/bucket-0/data-aa07c6cd-2405-4e22-8d0e-8ac2854c1552-0.parquet", 1, [][]any{
			row("2024-11-26 06:38:56.084000084", 1, 1, 180, "2024-11-26 15:29:01", "8.032", true, -86),
			row("2024-11-26 06:38:56.094000094", 1, 1, 190, "I'm strange", "-999.420", false, 96),
		}},
	}
	for _, f := range files {
		fileFields := map[int][]types.DataField{0: schema0, 1: schema1}[f.schemaID]
		rdAssertRows(t, f.file, ft.read(t, f.file, fileFields, schema1, ReaderOptions{BatchSize: 2}), f.want)
	}
}

func TestReadFixtureTimestamps(t *testing.T) {
	ft := openReaderFixture(t, "cpp-java13snap-append-unaware-timestamps", "append_with_multiple_ts_precision_and_timezone")
	fields := ft.fields(t, 0)
	row := func(v ...string) []any {
		out := make([]any, len(v))
		for i, s := range v {
			if s != "" {
				out[i] = rdTS("1970-01-01T00:00:" + s)
			}
		}
		return out
	}
	want := [][]any{
		row("01", "00.001", "00.000001", "00.000000001", "02", "00.002", "00.000002", "00.000000002"),
		row("03", "00.003", "", "00.000000003", "04", "00.004", "00.000004", "00.000000004"),
		row("05", "00.005", "", "", "06", "", "00.000006", ""),
	}
	got := ft.read(t, "bucket-0/data-9b8abdde-df4d-4655-bb4c-ffda164ef9d4-0.parquet", fields, fields, ReaderOptions{})
	rdAssertRows(t, "timestamps", got, want)
}

func TestReadFixtureFileIndex(t *testing.T) {
	ft := openReaderFixture(t, "cpp-java12-append-unaware-file-index", "append_with_bitmap_no_embedding")
	fields := ft.fields(t, 0)
	row := func(f0 string, f1 int32, f2 any, f3 float64) []any {
		if f2 != nil {
			f2 = int32(f2.(int))
		}
		return []any{f0, f1, f2, f3}
	}
	want := [][]any{
		row("Alice", 10, 1, 11.1), row("Bob", 10, 1, 12.1), row("Emily", 10, 0, 13.1), row("Tony", 10, 0, 14.1),
		row("Lucy", 20, 1, 15.1), row("Bob", 10, 1, 16.1), row("Tony", 20, 0, 17.1), row("Alice", 20, nil, 18.1),
	}
	got := ft.read(t, "bucket-0/data-783929b2-49d4-4006-a898-194a62e3278d-0.parquet", fields, fields, ReaderOptions{BatchSize: 3})
	rdAssertRows(t, "file-index table", got, want)
}

func TestReadFixtureNestedTypes(t *testing.T) {
	ft := openReaderFixture(t, "cpp-java11-append-bucket1-nested-types-orc-manifest", "parquet_append_table")
	fields := ft.fields(t, 0)
	floats := func(v ...float32) []any {
		out := make([]any, len(v))
		for i, f := range v {
			out[i] = f
		}
		return out
	}
	entry := func(key []any, b bool, n int64) (any, any) { return key, []any{b, n} }
	m := func(kv ...any) any {
		var out types.Map
		for i := 0; i < len(kv); i += 2 {
			out.Keys = append(out.Keys, kv[i])
			out.Values = append(out.Values, kv[i+1])
		}
		return out
	}
	row := func(f1 bool, f2 int8, f3 any, n int, f10 any) []any {
		if f3 != nil {
			f3 = int16(f3.(int))
		}
		return []any{f1, f2, f3, int32(300000 + n), int64(3000000000 + n), float32(3 + float32(n)/10),
			300 + float64(n)/1e9, fmt.Sprintf("s3%d", n), []byte(fmt.Sprintf("a3%d", n)), f10,
			types.Timestamp{NanoOfMilli: int32(70000 + 1000*n)}, types.Date(80 + n), rdDec(fmt.Sprintf("0.9%d", n))}
	}
	k1, v1 := entry(floats(5.11, 5.21), true, 61)
	k2, v2 := entry(floats(5.12, 5.22), false, 62)
	k41, v41 := entry(floats(5.141, 5.241), false, 641)
	k42, v42 := entry(floats(5.14, 5.24), false, 64)
	k5, v5 := entry(floats(5.15, 5.25), true, 65)
	k7, v7 := entry(floats(5.17, 5.27, 5.37), true, 67)
	k8, v8 := entry(floats(5.18, 5.28), false, 68)
	k9, v9 := entry(floats(5.19, 5.29), true, 69)
	want1 := [][]any{
		row(true, 31, nil, 1, m(k1, v1)),
		row(false, 32, 302, 2, m(k2, v2)),
		row(true, 33, 303, 3, nil),
		row(false, 34, 304, 4, m(k41, v41, k42, v42)),
		row(true, 35, 305, 5, m(k5, v5)),
		row(false, 36, 306, 6, m(floats(5.16, 5.26), nil)),
	}
	want2 := [][]any{
		row(true, 37, 307, 7, m(k7, v7)),
		row(false, 38, 308, 8, m(k8, v8)),
		row(true, 39, 309, 9, m(k9, v9)),
	}
	for _, bs := range []int{0, 1, 4} {
		got := ft.read(t, "bucket-0/data-9ea62f34-1dca-49c1-bf7a-d37303d8fb76-0.parquet", fields, fields, ReaderOptions{BatchSize: bs})
		rdAssertRows(t, fmt.Sprintf("snapshot 1 file, batch %d", bs), got, want1)
	}
	got := ft.read(t, "bucket-0/data-9ea62f34-1dca-49c1-bf7a-d37303d8fb76-1.parquet", fields, fields, ReaderOptions{})
	rdAssertRows(t, "snapshot 2 file", got, want2)

	// Projecting only the MAP column and the DECIMAL, reversed.
	got = ft.read(t, "bucket-0/data-9ea62f34-1dca-49c1-bf7a-d37303d8fb76-1.parquet", fields, fields, ReaderOptions{Projection: []int{12, 9}})
	rdAssertRows(t, "projection", got, [][]any{{rdDec("0.97"), m(k7, v7)}, {rdDec("0.98"), m(k8, v8)}, {rdDec("0.99"), m(k9, v9)}})
}
