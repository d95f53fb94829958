package datafile

import (
	"bytes"
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf8"

	"github.com/benthos-paimon/benthos-paimon/lakecore/schema"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// TestWriteRejectsBadValues: every bad value is an ErrInvalidValue naming
// the field path and what was wrong, the row is dropped whole, and the
// writer keeps working.
func TestWriteRejectsBadValues(t *testing.T) {
	fields := []types.DataField{
		wField(0, "price", types.DecimalType(10, 2)),
		wField(1, "id", types.BigIntType().NotNull()),
		wField(2, "name", types.VarCharType(5)),
		wField(3, "code", types.CharType(2)),
		wField(4, "bin", types.BinaryType(2)),
		wField(5, "big", types.DecimalType(20, 2)),
		wField(6, "arr", types.ArrayType(types.IntType())),
		wField(7, "m", types.MapType(types.StringType(), types.ArrayType(types.IntType().NotNull()))),
		wField(8, "r", types.RowType(wField(9, "x", types.IntType().NotNull()), wField(10, "y", types.StringType()))),
		wField(11, "ts", types.TimestampType(6)),
		wField(12, "t", types.TimeType(0)),
		wField(13, "ms", types.MultisetType(types.StringType())),
		wField(14, "ts3", types.TimestampType(3)),
		wField(15, "s", types.StringType()),
	}
	good := func() []any {
		return []any{wDec("1.5", 10, 2), int64(1), "abc", "ab", []byte{1}, wDec("1", 20, 2), []any{int32(1)},
			types.Map{Keys: []any{"k"}, Values: []any{[]any{int32(1)}}}, []any{int32(1), "y"},
			types.Timestamp{Millis: 1}, types.Time(1), types.Map{Keys: []any{"a"}, Values: []any{int32(1)}},
			types.Timestamp{Millis: 2}, "s"}
	}
	with := func(i int, v any) []any { r := good(); r[i] = v; return r }
	cases := []struct {
		name string
		row  []any
		want string
	}{
		{"wrong go type", with(0, "9.99"), `field "price": got string, want DECIMAL(10, 2)`},
		{"int for bigint", with(1, 5), `field "id": got int, want BIGINT NOT NULL`},
		{"null in not null", with(1, nil), `field "id": got NULL, want BIGINT NOT NULL`},
		{"decimal precision", with(0, wDec("123456789.12", 11, 2)), `field "price": 123456789.12 does not fit DECIMAL(10, 2)`},
		{"decimal rounding", with(0, types.NewDecimal(1234, 3)), `field "price": 1.234 needs rounding to fit DECIMAL(10, 2)`},
		{"decimal fixed precision", with(5, types.Decimal{Unscaled: wBigInt("1000000000000000000000"), Scale: 2}), `field "big": 10000000000000000000.00 does not fit DECIMAL(20, 2)`},
		{"decimal without unscaled", with(0, types.Decimal{Scale: 2}), `field "price": decimal without an unscaled value`},
		{"varchar too long", with(2, "abcdef"), `field "name": string of 6 characters exceeds VARCHAR(5)`},
		{"char too long", with(3, "日本語"), `field "code": string of 3 characters exceeds CHAR(2)`},
		{"invalid utf8", with(2, "a\xffb"), `field "name": invalid UTF-8 in VARCHAR(5) value "a\xffb"`},
		{"binary too long", with(4, []byte{1, 2, 3}), `field "bin": 3 bytes exceed BINARY(2)`},
		{"array element type", with(6, []any{int32(1), "x"}), `field "arr[1]": got string, want INT`},
		{"array as slice of int32", with(6, []int32{1}), `field "arr": got []int32, want ARRAY<INT>`},
		{"map value element null", with(7, types.Map{Keys: []any{"a", "b"}, Values: []any{[]any{}, []any{nil}}}), `field "m[1].value[0]": got NULL, want INT NOT NULL`},
		{"map null key", with(7, types.Map{Keys: []any{nil}, Values: []any{nil}}), `field "m[0]": null map key (Parquet map keys are required)`},
		{"map lengths", with(7, types.Map{Keys: []any{"a"}}), `field "m": map has 1 keys and 0 values`},
		{"map as go map", with(7, map[string]any{}), `field "m": got map[string]interface {}, want MAP<STRING, ARRAY<INT NOT NULL>>`},
		{"row field", with(8, []any{nil, "y"}), `field "r.x": got NULL, want INT NOT NULL`},
		{"row arity", with(8, []any{int32(1)}), `field "r": got 1 values, want 2 for ROW<` + "`x` INT NOT NULL, `y` STRING>"},
		{"timestamp nanos", with(9, types.Timestamp{NanoOfMilli: 1_000_000}), `field "ts": timestamp nano-of-millisecond 1000000 is outside 0..999999`},
		{"time of day", with(10, types.Time(86_400_000)), `field "t": time 86400000 ms is outside the day`},
		{"multiset count", with(11, types.Map{Keys: []any{"a"}, Values: []any{int64(1)}}), `field "ms[0].value": got int64, want INT NOT NULL`},
		{"timestamp(3) nanos", with(12, types.Timestamp{NanoOfMilli: -1}), `field "ts3": timestamp nano-of-millisecond -1 is outside 0..999999`},
		{"timestamp as time.Time", with(12, time.Unix(0, 0)), `field "ts3": got time.Time, want TIMESTAMP(3)`},
		{"string invalid utf8", with(13, "\xc3"), `field "s": invalid UTF-8 in STRING value "\xc3"`},
		{"string as bytes", with(13, []byte("s")), `field "s": got []uint8, want STRING`},
		{"short row", []any{nil}, `row has 1 values for 14 fields`},
	}
	var buf bytes.Buffer
	w, err := NewWriter(&buf, fields, WriterOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if err := w.Write(good()); err != nil {
		t.Fatalf("good row: %v", err)
	}
	for _, tc := range cases {
		err := w.Write(tc.row)
		if !errors.Is(err, ErrInvalidValue) {
			t.Errorf("%s: error %v does not wrap ErrInvalidValue", tc.name, err)
			continue
		}
		if want := "invalid value: " + tc.want; err.Error() != want {
			t.Errorf("%s:\n got %s\nwant %s", tc.name, err, want)
		}
	}
	second := good()
	second[1] = int64(2)
	if err := w.Write(second); err != nil {
		t.Fatalf("good row after errors: %v", err)
	}
	st, err := w.Close()
	if err != nil {
		t.Fatal(err)
	}
	if st.RowCount != 2 {
		t.Fatalf("RowCount %d, want 2", st.RowCount)
	}
	if got := wStatsString(st.Columns[1]); got != wStatsString(ColumnStats{int64(1), int64(2), wI64(0)}) {
		t.Errorf("id stats %s: rejected rows leaked into the stats", got)
	}
	_, cols := wReadColumns(t, buf.Bytes())
	for c, vals := range cols {
		if c != 6 && len(vals) != 2 { // leaf 6 is arr.list.element: one value per row here too
			t.Errorf("column %d has %d values, want 2: rejected rows leaked into the file", c, len(vals))
		}
	}
	if err := w.Write(good()); !errors.Is(err, ErrWriterClosed) {
		t.Errorf("Write after Close: %v, want ErrWriterClosed", err)
	}
	if _, err := w.Close(); !errors.Is(err, ErrWriterClosed) {
		t.Errorf("second Close: %v, want ErrWriterClosed", err)
	}
}

func TestNewWriterRejectsOptions(t *testing.T) {
	one := []types.DataField{wField(0, "a", types.IntType())}
	cases := []struct {
		name   string
		fields []types.DataField
		o      WriterOptions
		want   string
	}{
		{"no fields", nil, WriterOptions{}, "at least one field"},
		{"compression", one, WriterOptions{Compression: "lzo"}, `unsupported compression "lzo"`},
		{"zstd level", one, WriterOptions{ZstdLevel: 23}, "zstd level 23"},
		{"stats modes", one, WriterOptions{StatsModes: []schema.StatsMode{wModeFull, wModeFull}}, "2 stats modes for 1 fields"},
		{"truncate zero", one, WriterOptions{StatsModes: []schema.StatsMode{{Kind: schema.StatsTruncate}}}, "needs a length above zero"},
		{"row group size", one, WriterOptions{RowGroupSize: -1}, "row group size -1"},
		{"duplicate names", []types.DataField{wField(0, "a", types.IntType()), wField(1, "a", types.IntType())}, WriterOptions{}, `duplicate field name "a"`},
		{"duplicate nested names", []types.DataField{wField(0, "r", types.RowType(wField(1, "x", types.IntType()), wField(2, "x", types.IntType())))}, WriterOptions{}, `duplicate field name "x"`},
		{"decimal precision", []types.DataField{wField(0, "d", types.DecimalType(39, 0))}, WriterOptions{}, "unsupported type DECIMAL(39, 0)"},
		{"empty row", []types.DataField{wField(0, "r", types.RowType())}, WriterOptions{}, "a ROW needs at least one field"},
		{"array without element", []types.DataField{wField(0, "a", types.DataType{Kind: types.KindArray, Nullable: true})}, WriterOptions{}, "no element type"},
	}
	for _, tc := range cases {
		_, err := NewWriter(&bytes.Buffer{}, tc.fields, tc.o)
		if !errors.Is(err, ErrInvalidWriterOptions) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: got %v, want ErrInvalidWriterOptions containing %q", tc.name, err, tc.want)
		}
	}
}

// TestWriterFooterIsJavas checks the file-level choices of §11.1: footer
// version 1, parquet-mr-parseable created_by, v1 data pages with RLE
// definition levels, PLAIN or dictionary encodings only, field_id 0 kept.
func TestWriterFooterIsJavas(t *testing.T) {
	data, _ := wWriteFile(t, wAllTypesFields(), WriterOptions{}, wAllTypesRows())
	md := wReadFooter(t, data)
	if md.Version != 1 {
		t.Errorf("footer version %d, want 1", md.Version)
	}
	if md.CreatedBy != "benthos-paimon version 0.1.0 (build lakecore)" {
		t.Errorf("created_by %q", md.CreatedBy)
	}
	if len(md.KeyValueMetadata) != 0 {
		t.Errorf("key/value metadata %v, Java writes none", md.KeyValueMetadata)
	}
	if e := md.Schema[1]; e.Name != "bool" || !e.FieldID.Valid || e.FieldID.V != 0 {
		t.Errorf("first field element %+v: field_id 0 missing", e)
	}
	for _, rg := range md.RowGroups {
		for _, c := range rg.Columns {
			for _, es := range c.MetaData.EncodingStats {
				if es.PageType.String() == "DATA_PAGE_V2" {
					t.Errorf("column %v: v2 data page", c.MetaData.PathInSchema)
				}
				switch es.Encoding.String() {
				case "PLAIN", "RLE_DICTIONARY", "PLAIN_DICTIONARY":
				default:
					t.Errorf("column %v: encoding %s", c.MetaData.PathInSchema, es.Encoding)
				}
			}
		}
	}
}

// TestWriterEmptyFile: a writer closed without rows still produces a valid
// Parquet file with the full schema.
func TestWriterEmptyFile(t *testing.T) {
	data, st := wWriteFile(t, wAllTypesFields(), WriterOptions{}, nil)
	if st.RowCount != 0 || len(st.Columns) != len(wAllTypesFields()) {
		t.Fatalf("stats %+v", st)
	}
	md := wReadFooter(t, data)
	ws, err := buildWriteSchema(wAllTypesFields(), schemaOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if md.NumRows != 0 || len(md.RowGroups) != 0 || len(md.Schema) != len(ws.elements) {
		t.Errorf("footer rows=%d row groups=%d schema elements=%d", md.NumRows, len(md.RowGroups), len(md.Schema))
	}
	f, _ := wReadColumns(t, data)
	if f.NumRows() != 0 {
		t.Errorf("parquet-go reads %d rows", f.NumRows())
	}
}

// TestWriterEstimatedSize: the estimate follows the file as it grows (it
// may dip when a row group of uncompressed values is flushed as encoded
// pages, and when the first rows, counted at their PLAIN size while the
// encodings are chosen, are encoded) and ends close to the real file size.
func TestWriterEstimatedSize(t *testing.T) {
	fields := []types.DataField{wField(0, "id", types.BigIntType()), wField(1, "s", types.StringType())}
	var buf bytes.Buffer
	w, err := NewWriter(&buf, fields, WriterOptions{Compression: "none", RowGroupSize: 64 << 10})
	if err != nil {
		t.Fatal(err)
	}
	prev := w.EstimatedSize()
	for i := range 40000 {
		if err := w.Write([]any{int64(i), strings.Repeat("x", i%50) + string(rune('a'+i%26))}); err != nil {
			t.Fatal(err)
		}
		if i%1000 == 999 {
			est := w.EstimatedSize()
			if (est < prev*3/4 && i+1 != dictionaryProbeRows) || est < int64(i) {
				t.Fatalf("after %d rows EstimatedSize %d (was %d)", i+1, est, prev)
			}
			prev = est
		}
	}
	if _, err := w.Close(); err != nil {
		t.Fatal(err)
	}
	size := int64(buf.Len())
	if prev < size/2 || prev > size*2 {
		t.Errorf("EstimatedSize %d before Close, file is %d bytes", prev, size)
	}
	if md := wReadFooter(t, buf.Bytes()); len(md.RowGroups) < 4 {
		t.Errorf("%d row groups for a %d-byte file with 64 KiB row groups", len(md.RowGroups), size)
	}
}

// failingWriter fails after n bytes.
type failingWriter struct{ n int }

func (f *failingWriter) Write(p []byte) (int, error) {
	if len(p) > f.n {
		return 0, errors.New("disk full")
	}
	f.n -= len(p)
	return len(p), nil
}

// TestWriterSurfacesIOErrors: an I/O failure is returned by Write or Close
// and sticks.
func TestWriterSurfacesIOErrors(t *testing.T) {
	fields := []types.DataField{wField(0, "s", types.StringType())}
	w, err := NewWriter(&failingWriter{n: 100}, fields, WriterOptions{RowGroupSize: 1})
	if err != nil {
		t.Fatal(err)
	}
	var werr error
	for i := 0; i < 100000 && werr == nil; i++ {
		werr = w.Write([]any{strings.Repeat("y", 100)})
	}
	if werr == nil {
		_, werr = w.Close()
	}
	if werr == nil || !strings.Contains(werr.Error(), "disk full") {
		t.Fatalf("got %v, want the disk full error", werr)
	}
	if err := w.Write([]any{"z"}); err == nil {
		t.Errorf("Write after an I/O error succeeded")
	}
}

// FuzzWriterStrings: any string is either rejected as invalid UTF-8 (or too
// long for its VARCHAR) or written and read back byte for byte, with stats
// that bound it; any []byte round-trips.
func FuzzWriterStrings(f *testing.F) {
	for _, s := range []string{"", "abc", "héllo", "a\xffb", "日本語テキスト", "\U0010FFFF\U0010FFFFx"} {
		f.Add(s, []byte(s))
	}
	fields := []types.DataField{wField(0, "s", types.StringType()), wField(1, "v", types.VarCharType(4)), wField(2, "b", types.BytesType())}
	f.Fuzz(func(t *testing.T, s string, b []byte) {
		var buf bytes.Buffer
		w, err := NewWriter(&buf, fields, WriterOptions{StatsModes: []schema.StatsMode{wModeTruncate(2), wModeFull, wModeFull}})
		if err != nil {
			t.Fatal(err)
		}
		short := s
		if utf8.RuneCountInString(short) > 4 {
			short = ""
		}
		err = w.Write([]any{s, short, b})
		if !utf8.ValidString(s) {
			if !errors.Is(err, ErrInvalidValue) {
				t.Fatalf("invalid UTF-8 %q accepted: %v", s, err)
			}
			return
		}
		if err != nil {
			t.Fatal(err)
		}
		st, err := w.Close()
		if err != nil {
			t.Fatal(err)
		}
		_, cols := wReadColumns(t, buf.Bytes())
		if string(cols[0][0].ByteArray()) != s || string(cols[1][0].ByteArray()) != short || !bytes.Equal(cols[2][0].ByteArray(), b) {
			t.Fatalf("round trip of %q / %x failed", s, b)
		}
		if lo, ok := st.Columns[0].Min.(string); ok {
			hi := st.Columns[0].Max.(string)
			if lo > s || hi < s {
				t.Fatalf("stats [%q, %q] do not bound %q", lo, hi, s)
			}
		}
	})
}
