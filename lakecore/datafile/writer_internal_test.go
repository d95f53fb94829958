package datafile

import (
	"bytes"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"math"
	"math/big"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/encoding/thrift"

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// readFooter decodes the raw footer of a Parquet file into the writer's
// footer mirror, which keeps field ids of 0 distinguishable from absent.
func wReadFooter(t testing.TB, data []byte) footerMetadata {
	t.Helper()
	n := len(data)
	if n < 12 || string(data[:4]) != "PAR1" || string(data[n-4:]) != "PAR1" {
		t.Fatalf("not a parquet file (%d bytes)", n)
	}
	l := int(binary.LittleEndian.Uint32(data[n-8:]))
	var md footerMetadata
	if err := thrift.Unmarshal(new(thrift.CompactProtocol), data[n-8-l:n-8], &md); err != nil {
		t.Fatalf("decode footer: %v", err)
	}
	return md
}

// writeFile writes rows with a new Writer into memory.
func wWriteFile(t testing.TB, fields []types.DataField, o WriterOptions, rows [][]any) ([]byte, *FileStats) {
	t.Helper()
	var buf bytes.Buffer
	w, err := NewWriter(&buf, fields, o)
	if err != nil {
		t.Fatalf("NewWriter: %v", err)
	}
	for i, r := range rows {
		if err := w.Write(r); err != nil {
			t.Fatalf("Write row %d: %v", i, err)
		}
	}
	st, err := w.Close()
	if err != nil {
		t.Fatalf("Close: %v", err)
	}
	return buf.Bytes(), st
}

// readColumns reads every leaf column of a file with parquet-go, in file
// order, across row groups.
func wReadColumns(t testing.TB, data []byte) (*parquet.File, [][]parquet.Value) {
	t.Helper()
	f, err := parquet.OpenFile(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("open parquet: %v", err)
	}
	cols := make([][]parquet.Value, len(f.Schema().Columns()))
	for _, rg := range f.RowGroups() {
		for i, cc := range rg.ColumnChunks() {
			pages := cc.Pages()
			for {
				p, err := pages.ReadPage()
				if err != nil {
					break
				}
				vals := make([]parquet.Value, p.NumValues())
				n, _ := p.Values().ReadValues(vals)
				for _, v := range vals[:n] {
					cols[i] = append(cols[i], v.Clone())
				}
				parquet.Release(p)
			}
			pages.Close()
		}
	}
	return f, cols
}

// assembleRows rebuilds Go rows from leaf columns (Dremel record assembly),
// as a minimal independent check of the writer's shredding.
func wAssembleRows(t testing.TB, s *writeSchema, cols [][]parquet.Value, numRows int) [][]any {
	t.Helper()
	pos := make([]int, len(cols))
	peek := func(leaf int) parquet.Value {
		if pos[leaf] >= len(cols[leaf]) {
			t.Fatalf("column %d exhausted at %d", leaf, pos[leaf])
		}
		return cols[leaf][pos[leaf]]
	}
	skip := func(n *schemaNode) {
		for l := n.firstLeaf; l < n.endLeaf; l++ {
			pos[l]++
		}
	}
	var read func(n *schemaNode) any
	read = func(n *schemaNode) any {
		if n.role == roleLeaf {
			v := peek(n.leaf)
			pos[n.leaf]++
			if v.DefinitionLevel() < n.defLevel {
				return nil
			}
			return wDecodeLeaf(t, n, v)
		}
		d := peek(n.firstLeaf).DefinitionLevel()
		if d < n.defLevel {
			skip(n)
			return nil
		}
		switch n.role {
		case roleRow:
			out := make([]any, len(n.children))
			for i, c := range n.children {
				out[i] = read(c)
			}
			return out
		case roleList, roleMap:
			rep := n.children[0]
			if d == n.defLevel {
				skip(n)
				if n.role == roleList {
					return []any{}
				}
				return types.Map{Keys: []any{}, Values: []any{}}
			}
			var elems, keys, vals []any
			for {
				if n.role == roleList {
					elems = append(elems, read(rep.children[0]))
				} else {
					keys = append(keys, read(rep.children[0]))
					vals = append(vals, read(rep.children[1]))
				}
				if pos[n.firstLeaf] >= len(cols[n.firstLeaf]) || peek(n.firstLeaf).RepetitionLevel() != rep.repLevel {
					break
				}
			}
			if n.role == roleList {
				return elems
			}
			return types.Map{Keys: keys, Values: vals}
		}
		t.Fatalf("unexpected node role %d", n.role)
		return nil
	}
	rows := make([][]any, numRows)
	for i := range rows {
		row := make([]any, len(s.fields))
		for j, n := range s.fields {
			row[j] = read(n)
		}
		rows[i] = row
	}
	for l := range cols {
		if pos[l] != len(cols[l]) {
			t.Fatalf("column %d: %d of %d values consumed", l, pos[l], len(cols[l]))
		}
	}
	return rows
}

func wDecodeLeaf(t testing.TB, n *schemaNode, v parquet.Value) any {
	switch n.kind {
	case leafBoolean:
		return v.Boolean()
	case leafTinyInt:
		return int8(v.Int32())
	case leafSmallInt:
		return int16(v.Int32())
	case leafInt:
		return v.Int32()
	case leafBigInt:
		return v.Int64()
	case leafFloat:
		return v.Float()
	case leafDouble:
		return v.Double()
	case leafString:
		return string(v.ByteArray())
	case leafBytes:
		return append([]byte{}, v.ByteArray()...)
	case leafDecimal32:
		return types.NewDecimal(int64(v.Int32()), n.dataType.Scale)
	case leafDecimal64:
		return types.NewDecimal(v.Int64(), n.dataType.Scale)
	case leafDecimalFixed:
		return types.Decimal{Unscaled: statsDecimalFromBytes(v.ByteArray()), Scale: n.dataType.Scale}
	case leafDate:
		return types.Date(v.Int32())
	case leafTime:
		return types.Time(v.Int32())
	case leafTimestampMillis:
		return types.Timestamp{Millis: v.Int64()}
	case leafTimestampMicros:
		return statsTimestampFromMicros(v.Int64())
	case leafTimestampInt96:
		i96 := v.Int96()
		nanosOfDay := int64(uint64(i96[0]) | uint64(i96[1])<<32)
		julian := int64(int32(i96[2]))
		ms := (julian-int96JulianEpochOffsetDays)*int96MillisPerDay + nanosOfDay/1_000_000
		rem := nanosOfDay % 1_000_000
		if rem < 0 {
			ms--
			rem += 1_000_000
		}
		return types.Timestamp{Millis: ms, NanoOfMilli: int32(rem)}
	}
	t.Fatalf("unexpected leaf kind %d", n.kind)
	return nil
}

// normalize makes values comparable with reflect.DeepEqual (decimals by
// value and scale).
func wNormalize(v any) any {
	switch x := v.(type) {
	case types.Decimal:
		return fmt.Sprintf("decimal(%s,%d)", x.Unscaled, x.Scale)
	case []any:
		out := make([]any, len(x))
		for i := range x {
			out[i] = wNormalize(x[i])
		}
		return out
	case types.Map:
		return types.Map{Keys: wNormalize(x.Keys).([]any), Values: wNormalize(x.Values).([]any)}
	case float32:
		if x != x {
			return "NaN32"
		}
		return fmt.Sprintf("f32:%x", math.Float32bits(x))
	case float64:
		if x != x {
			return "NaN64"
		}
		return fmt.Sprintf("f64:%x", math.Float64bits(x))
	}
	return v
}

func wDec(s string, p, sc int) types.Decimal {
	d, err := types.ParseDecimal(s, p, sc)
	if err != nil {
		panic(err)
	}
	return d
}

func wField(id int, name string, t types.DataType) types.DataField {
	return types.DataField{ID: id, Name: name, Type: t}
}

// loadTableFields returns the fields of every schema-N file of a fixture table.
func wLoadTableFields(t testing.TB, tableDir string) [][]types.DataField {
	t.Helper()
	files, err := filepath.Glob(filepath.Join(tableDir, "schema", "schema-*"))
	if err != nil || len(files) == 0 {
		t.Fatalf("no schema files under %s", tableDir)
	}
	var out [][]types.DataField
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		var s struct {
			Fields []types.DataField `json:"fields"`
		}
		if err := json.Unmarshal(data, &s); err != nil {
			t.Fatalf("%s: %v", f, err)
		}
		out = append(out, s.Fields)
	}
	return out
}

func wBigInt(s string) *big.Int {
	v, ok := new(big.Int).SetString(s, 10)
	if !ok {
		panic(s)
	}
	return v
}

// allTypesFields covers every Paimon type the writer supports, nullable and
// NOT NULL, flat and nested.
func wAllTypesFields() []types.DataField {
	row := types.RowType(wField(100, "rb", types.BooleanType()), wField(101, "ri", types.ArrayType(types.BigIntType())))
	return []types.DataField{
		wField(0, "bool", types.BooleanType()),
		wField(1, "tiny", types.TinyIntType()),
		wField(2, "small", types.SmallIntType()),
		wField(3, "int", types.IntType().NotNull()),
		wField(4, "big", types.BigIntType()),
		wField(5, "float", types.FloatType()),
		wField(6, "double", types.DoubleType()),
		wField(7, "char", types.CharType(3)),
		wField(8, "varchar", types.VarCharType(5)),
		wField(9, "string", types.StringType()),
		wField(10, "binary", types.BinaryType(4)),
		wField(11, "varbinary", types.VarBinaryType(6)),
		wField(12, "bytes", types.BytesType()),
		wField(13, "dec9", types.DecimalType(9, 2)),
		wField(14, "dec18", types.DecimalType(18, 4)),
		wField(15, "dec23", types.DecimalType(23, 5)),
		wField(16, "dec38", types.DecimalType(38, 0)),
		wField(17, "date", types.DateType()),
		wField(18, "time", types.TimeType(3)),
		wField(19, "ts0", types.TimestampType(0)),
		wField(20, "ts3", types.TimestampType(3)),
		wField(21, "ts6", types.TimestampType(6)),
		wField(22, "ts9", types.TimestampType(9)),
		wField(23, "ltz3", types.LocalZonedTimestampType(3)),
		wField(24, "ltz6", types.LocalZonedTimestampType(6)),
		wField(25, "ltz9", types.LocalZonedTimestampType(9)),
		wField(26, "arr", types.ArrayType(types.IntType())),
		wField(27, "arr2", types.ArrayType(types.ArrayType(types.StringType().NotNull()))),
		wField(28, "map", types.MapType(types.StringType(), row)),
		wField(29, "mset", types.MultisetType(types.StringType())),
		wField(30, "row", types.RowType(wField(31, "a", types.IntType().NotNull()), wField(32, "b", types.MapType(types.IntType(), types.DecimalType(20, 2))))),
		wField(33, "snn", types.StringType().NotNull()),
	}
}

func wAllTypesRows() [][]any {
	ts := func(ms int64, nano int32) types.Timestamp { return types.Timestamp{Millis: ms, NanoOfMilli: nano} }
	pre1970 := types.Timestamp{Millis: -2240521239999, NanoOfMilli: 1001} // 1899-01-01T00:59:20.001001001
	full := []any{
		true, int8(-128), int16(32767), int32(-2147483648), int64(math.MaxInt64), float32(1.5), -2.25,
		"abc", "héllo", "日本語🎉", []byte{0, 1, 2, 3}, []byte{0xff}, []byte{},
		wDec("-1234567.89", 9, 2), wDec("12345678901234.5678", 18, 4), wDec("-123456789987654321.45678", 23, 5),
		types.Decimal{Unscaled: wBigInt("-99999999999999999999999999999999999999"), Scale: 0},
		types.Date(-719162), types.Time(86_399_999),
		ts(1000, 0), ts(-1, 0), ts(1_700_000_000_123, 456_000), pre1970,
		ts(5, 0), ts(-5, 999_000), ts(1_728_551_410_100, 100_100),
		[]any{int32(1), nil, int32(3)},
		[]any{[]any{"x", "y"}, []any{}, nil, []any{"z"}},
		types.Map{Keys: []any{"k1", "k2", "k3"}, Values: []any{[]any{true, []any{int64(1), nil}}, nil, []any{nil, nil}}},
		types.Map{Keys: []any{"a", "b"}, Values: []any{int32(2), int32(1)}},
		[]any{int32(7), types.Map{Keys: []any{int32(1)}, Values: []any{wDec("-0.01", 20, 2)}}},
		"",
	}
	nulls := make([]any, len(full))
	nulls[3] = int32(0)
	nulls[31] = "not null"
	empty := []any{
		false, int8(0), int16(-1), int32(1), int64(math.MinInt64), float32(math.Inf(-1)), math.Copysign(0, -1),
		"", "", "", []byte{}, []byte{}, []byte(nil),
		wDec("0", 9, 2), wDec("-0.0001", 18, 4), wDec("0.00001", 23, 5), types.Decimal{Unscaled: wBigInt("99999999999999999999999999999999999999")},
		types.Date(2932896), types.Time(0),
		ts(0, 0), ts(253402300799999, 0), ts(-62135596800000, 1000), ts(253402300799999, 999_999),
		ts(0, 0), ts(0, 0), ts(-86_400_001, 999_999),
		[]any{}, []any{}, types.Map{}, types.Map{}, []any{int32(0), types.Map{}},
		"x",
	}
	return [][]any{full, nulls, empty, full}
}

// TestWriteRoundTrip writes every type with nulls, reads the columns back
// with parquet-go and reassembles the rows: values must come back exactly
// (timestamps to the nanosecond at their precision, decimals exact, INT96
// before 1970).
func TestWriteRoundTrip(t *testing.T) {
	fields := wAllTypesFields()
	rows := wAllTypesRows()
	for _, codec := range []string{"zstd", "snappy", "gzip", "lz4", "none"} {
		t.Run(codec, func(t *testing.T) {
			data, st := wWriteFile(t, fields, WriterOptions{Compression: codec}, rows)
			if st.RowCount != int64(len(rows)) {
				t.Fatalf("RowCount %d, want %d", st.RowCount, len(rows))
			}
			f, cols := wReadColumns(t, data)
			if f.NumRows() != int64(len(rows)) {
				t.Fatalf("file has %d rows, want %d", f.NumRows(), len(rows))
			}
			s, err := buildWriteSchema(fields, schemaOptions{})
			if err != nil {
				t.Fatal(err)
			}
			got := wAssembleRows(t, s, cols, len(rows))
			for i := range rows {
				want := wExpectedStored(fields, rows[i])
				for j := range want {
					if g, w := wNormalize(got[i][j]), wNormalize(want[j]); !reflect.DeepEqual(g, w) {
						t.Errorf("row %d field %s: got %#v, want %#v", i, fields[j].Name, g, w)
					}
				}
			}
			md := wReadFooter(t, data)
			for _, rg := range md.RowGroups {
				for _, c := range rg.Columns {
					if c.MetaData.Codec.String() != map[string]string{"zstd": "ZSTD", "snappy": "SNAPPY", "gzip": "GZIP", "lz4": "LZ4_RAW", "none": "UNCOMPRESSED"}[codec] {
						t.Errorf("column %v codec %s", c.MetaData.PathInSchema, c.MetaData.Codec)
					}
				}
			}
		})
	}
}

// expectedStored is what a row reads back as: timestamps at their column's
// precision, nil []byte as empty, nil map slices as empty.
func wExpectedStored(fields []types.DataField, row []any) []any {
	out := make([]any, len(row))
	for i, f := range fields {
		out[i] = wExpectedValue(f.Type, row[i])
	}
	return out
}

func wExpectedValue(t types.DataType, v any) any {
	if v == nil {
		return nil
	}
	switch t.Kind {
	case types.KindTimestamp, types.KindLocalZonedTimestamp:
		ts := v.(types.Timestamp)
		switch {
		case t.Precision <= 3:
			ts.NanoOfMilli = 0
		case t.Precision <= 6:
			ts.NanoOfMilli -= ts.NanoOfMilli % 1000
		}
		return ts
	case types.KindBinary, types.KindVarBinary:
		return append([]byte{}, v.([]byte)...)
	case types.KindArray:
		in := v.([]any)
		out := make([]any, len(in))
		for i := range in {
			out[i] = wExpectedValue(*t.Element, in[i])
		}
		return out
	case types.KindRow:
		in := v.([]any)
		out := make([]any, len(in))
		for i := range in {
			out[i] = wExpectedValue(t.Fields[i].Type, in[i])
		}
		return out
	case types.KindMap, types.KindMultiset:
		m := v.(types.Map)
		kt, vt := t.Key, t.Value
		if t.Kind == types.KindMultiset {
			kt, vt = t.Element, &types.DataType{Kind: types.KindInt}
		}
		out := types.Map{Keys: []any{}, Values: []any{}}
		for i := range m.Keys {
			out.Keys = append(out.Keys, wExpectedValue(*kt, m.Keys[i]))
			out.Values = append(out.Values, wExpectedValue(*vt, m.Values[i]))
		}
		return out
	}
	return v
}

// TestWriteMatchesJavaFixtureData reads every Java-written fixture file,
// reassembles its rows with the writer's schema, writes them again and
// checks that every leaf value comes back with the same repetition level,
// definition level and physical bytes as Java wrote it: INT96 timestamps
// (including negative nanos-of-day before 1970), FIXED_LEN_BYTE_ARRAY
// decimals, TINYINT/SMALLINT, MAP<ARRAY<FLOAT>, ROW<...>> shredding.
func TestWriteMatchesJavaFixtureData(t *testing.T) {
	wForEachJavaFile(t, func(t *testing.T, data []byte, fields []types.DataField) {
		s, err := buildWriteSchema(fields, schemaOptions{})
		if err != nil {
			t.Fatal(err)
		}
		jf, javaCols := wReadColumns(t, data)
		rows := wAssembleRows(t, s, javaCols, int(jf.NumRows()))
		ours, _ := wWriteFile(t, fields, WriterOptions{}, rows)
		_, goCols := wReadColumns(t, ours)
		for c := range javaCols {
			if len(goCols[c]) != len(javaCols[c]) {
				t.Fatalf("column %v: %d values, Java wrote %d", s.paths[c], len(goCols[c]), len(javaCols[c]))
			}
			for i, jv := range javaCols[c] {
				gv := goCols[c][i]
				if gv.RepetitionLevel() != jv.RepetitionLevel() || gv.DefinitionLevel() != jv.DefinitionLevel() ||
					gv.IsNull() != jv.IsNull() || !bytes.Equal(gv.Bytes(), jv.Bytes()) {
					t.Errorf("column %v value %d: got r=%d d=%d %x, Java r=%d d=%d %x", s.paths[c], i,
						gv.RepetitionLevel(), gv.DefinitionLevel(), gv.Bytes(), jv.RepetitionLevel(), jv.DefinitionLevel(), jv.Bytes())
				}
			}
		}
	})
}

// TestInt96Pre1970 pins the INT96 bytes of 1899-01-01T00:59:20.001001001
// that Java wrote in cpp-java11-append-fixed-bucket-complex-types: Java's
// truncating division gives a negative nanos-of-day.
func TestInt96Pre1970(t *testing.T) {
	ts := types.TimestampOf(time.Date(1899, 1, 1, 0, 59, 20, 1_001_001, time.UTC))
	for _, ft := range []types.DataType{types.TimestampType(9), types.LocalZonedTimestampType(7)} {
		data, _ := wWriteFile(t, []types.DataField{wField(0, "ts", ft)}, WriterOptions{}, [][]any{{ts}})
		_, cols := wReadColumns(t, data)
		if got := fmt.Sprintf("%x", cols[0][0].Bytes()); got != "2956494fa8b4ffff41d82400" {
			t.Errorf("%s: INT96 bytes %s, want 2956494fa8b4ffff41d82400", ft, got)
		}
	}
}

// wForEachJavaFile runs fn as a subtest on every Parquet file Java wrote in
// the cpp-java1* fixtures, with the file's bytes and the Paimon fields of
// the table schema whose columns the file has; it fails unless at least 10
// files were checked.
func wForEachJavaFile(t *testing.T, fn func(t *testing.T, data []byte, fields []types.DataField)) {
	fx := fixturetest.Dir(t)
	tables, err := filepath.Glob(filepath.Join(fx, "cpp-java1*", "warehouse", "default.db", "*"))
	if err != nil || len(tables) == 0 {
		t.Fatalf("no fixture tables: %v", err)
	}
	checked := 0
	for _, table := range tables {
		schemas := wLoadTableFields(t, table)
		var files []string
		_ = filepath.Walk(table, func(p string, info os.FileInfo, err error) error {
			if err == nil && strings.HasSuffix(p, ".parquet") {
				files = append(files, p)
			}
			return nil
		})
		for _, file := range files {
			rel, _ := filepath.Rel(fx, file)
			t.Run(rel, func(t *testing.T) {
				data, err := os.ReadFile(file)
				if err != nil {
					t.Fatal(err)
				}
				fields := wMatchSchema(schemas, wReadFooter(t, data).Schema)
				if fields == nil {
					t.Fatalf("no schema-N of the table has the file's columns")
				}
				fn(t, data, fields)
			})
			checked++
		}
	}
	if checked < 10 {
		t.Fatalf("only %d fixture files checked", checked)
	}
}
