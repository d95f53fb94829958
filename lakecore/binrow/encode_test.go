package binrow_test

import (
	"bytes"
	"encoding/hex"
	"errors"
	"math"
	"math/big"
	"slices"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/internal/boxes"
	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

func unhex(tb testing.TB, s string) []byte {
	tb.Helper()
	b, err := hex.DecodeString(strings.Join(strings.Fields(s), ""))
	if err != nil {
		tb.Fatal(err)
	}
	return b
}

func bigDecimal(tb testing.TB, unscaled string, scale int) types.Decimal {
	tb.Helper()
	u, ok := new(big.Int).SetString(unscaled, 10)
	if !ok {
		tb.Fatalf("bad integer %q", unscaled)
	}
	return types.Decimal{Unscaled: u, Scale: scale}
}

func ts(millis int64, nano int32) types.Timestamp {
	return types.Timestamp{Millis: millis, NanoOfMilli: nano}
}

var (
	intT    = types.IntType()
	strT    = types.StringType()
	dblT    = types.DoubleType()
	dateT   = types.DateType()
	bytesT  = types.BytesType()
	ts9T    = types.TimestampType(9)
	dec23T  = types.DecimalType(23, 5)
	dec20T  = types.DecimalType(20, 2)
	ts6T    = types.TimestampType(6)
	mapSIT  = types.MapType(strT, intT)
	rowABT  = types.RowType(types.DataField{ID: 0, Name: "a", Type: intT}, types.DataField{ID: 1, Name: "b", Type: strT})
	rowDecT = types.RowType(types.DataField{ID: 0, Name: "d", Type: types.DecimalType(20, 0)})
)

type goldenCase struct {
	name   string
	types  []types.DataType
	values []any
	hex    string // serialized form, arity prefix included
}

// goldenCases are spec §7.4 (a)-(g), whose (a)-(d) come from the fixtures,
// plus nested layouts derived by hand from BinaryArrayWriter, BinaryMap and
// RowHelper (each byte group is explained in its comment).
func goldenCases(tb testing.TB) []goldenCase {
	return []goldenCase{
		{"a partition INT 10", []types.DataType{intT}, []any{int32(10)},
			"00000001 0000000000000000 0a00000000000000"},
		{"b stats STRING INT INT DOUBLE", []types.DataType{strT, intT, intT, dblT},
			[]any{"Alice", int32(2), int32(12), 2.1},
			"00000004 0000000000000000 416c696365000085 0200000000000000 0c00000000000000 cdcccccccccc0040"},
		{"c max stats with non-compact decimal and null timestamp",
			[]types.DataType{intT, intT, dateT, ts9T, dec23T, bytesT},
			[]any{int32(10), int32(1), types.Date(19909), nil, bigDecimal(tb, "12345678998765432145678", 5), nil},
			`00000006 0028000000000000 0a00000000000000 0100000000000000 c54d000000000000
			 0000000038000000 0a00000040000000 0000000000000000 0000000000000000
			 029d42b6a72a9dc7070e000000000000`},
		{"d partition INT 0, INT 1", []types.DataType{intT, intT}, []any{int32(0), int32(1)},
			"00000002 0000000000000000 0000000000000000 0100000000000000"},
		{"e partition STRING 2024-05-30", []types.DataType{strT}, []any{"2024-05-30"},
			"00000001 0000000000000000 0a00000010000000 323032342d30352d3330000000000000"},
		{"f partition STRING NULL", []types.DataType{strT}, []any{nil},
			"00000001 0001000000000000 0000000000000000"},
		{"g TIMESTAMP(6) 1us as first variable item of 8 fields",
			[]types.DataType{intT, intT, intT, intT, intT, intT, intT, ts6T},
			[]any{nil, nil, nil, nil, nil, nil, nil, ts(0, 1000)},
			`00000008 007f000000000000 0000000000000000 0000000000000000 0000000000000000 0000000000000000
			 0000000000000000 0000000000000000 0000000000000000 e803000048000000 0000000000000000`},
		{"empty row", nil, nil, "00000000 0000000000000000"},
		{"inline strings of 0 and 7 bytes, 8 bytes in the variable part",
			[]types.DataType{strT, strT, strT}, []any{"", "abcdefg", "abcdefgh"},
			`00000003 0000000000000000 0000000000000080 6162636465666787 0800000020000000
			 6162636465666768`},
		{"negative non-compact decimal and null decimal reserve 16 bytes each",
			[]types.DataType{dec20T, dec20T}, []any{bigDecimal(tb, "-129", 2), nil},
			// -1.29 -> BigInteger(-129).toByteArray() = ff7f
			`00000002 0002000000000000 0200000018000000 0000000028000000
			 ff7f000000000000 0000000000000000 0000000000000000 0000000000000000`},
		{"ARRAY<INT> [1, NULL, 3]", []types.DataType{types.ArrayType(intT)}, []any{[]any{int32(1), nil, int32(3)}},
			// slot (16<<32)|24; array: count 3, null bits (bit 1), 3 x 4-byte elements, pad to 24
			`00000001 0000000000000000 1800000010000000
			 03000000 02000000 01000000 00000000 03000000 00000000`},
		{"ARRAY<STRING> inline and variable elements", []types.DataType{types.ArrayType(strT)}, []any{[]any{"a", "abcdefghij"}},
			// array: count 2, null bits, "a" inline, (24<<32)|10, then the 10 bytes padded to 16
			`00000001 0000000000000000 2800000010000000
			 02000000 00000000 6100000000000081 0a00000018000000 6162636465666768696a000000000000`},
		{"ARRAY<DECIMAL(20,2)> [1.23, NULL]: no space reserved for a NULL element",
			[]types.DataType{types.ArrayType(dec20T)}, []any{[]any{bigDecimal(tb, "123", 2), nil}},
			`00000001 0000000000000000 2800000010000000
			 02000000 02000000 0100000018000000 0000000000000000 7b00000000000000 0000000000000000`},
		{"ARRAY<TIMESTAMP(9)> [NULL, 1970-01-01T00:00:00.000000005]",
			[]types.DataType{types.ArrayType(ts9T)}, []any{[]any{nil, ts(0, 5)}},
			`00000001 0000000000000000 2000000010000000
			 02000000 01000000 0000000000000000 0500000018000000 0000000000000000`},
		{"ARRAY<BOOLEAN> uses 1-byte elements", []types.DataType{types.ArrayType(types.BooleanType())},
			[]any{[]any{true, false, nil}},
			`00000001 0000000000000000 1000000010000000
			 03000000 04000000 01000000 00000000`},
		{"empty ARRAY<BIGINT>", []types.DataType{types.ArrayType(types.BigIntType())}, []any{[]any{}},
			`00000001 0000000000000000 0800000010000000 00000000 00000000`},
		{"MAP<STRING, INT> {k: 7}", []types.DataType{mapSIT}, []any{types.Map{Keys: []any{"k"}, Values: []any{int32(7)}}},
			// key array size 16, key array ["k"], value array [7]; 36 bytes padded to 40
			`00000001 0000000000000000 2400000010000000
			 10000000 01000000 00000000 6b00000000000081 01000000 00000000 07000000 00000000 00000000`},
		{"MULTISET<STRING> {x: 2}", []types.DataType{types.MultisetType(strT)}, []any{types.Map{Keys: []any{"x"}, Values: []any{int32(2)}}},
			`00000001 0000000000000000 2400000010000000
			 10000000 01000000 00000000 7800000000000081 01000000 00000000 02000000 00000000 00000000`},
		{"ROW<a INT, b STRING> (5, hello world!)", []types.DataType{rowABT}, []any{[]any{int32(5), "hello world!"}},
			// nested row: header, a, (24<<32)|12, the 12 bytes padded to 16
			`00000001 0000000000000000 2800000010000000
			 0000000000000000 0500000000000000 0c00000018000000 68656c6c6f20776f726c642100000000`},
		{"ROW<d DECIMAL(20,0)> (NULL): RowHelper reserves in nested rows too", []types.DataType{rowDecT}, []any{[]any{nil}},
			`00000001 0000000000000000 2000000010000000
			 0001000000000000 0000000010000000 0000000000000000 0000000000000000`},
		{"MAP<ARRAY<FLOAT>, ROW<f0 BOOLEAN, f1 BIGINT>> as in the nested-types fixture",
			[]types.DataType{types.MapType(types.ArrayType(types.FloatType()), types.RowType(
				types.DataField{ID: 10, Name: "f0", Type: types.BooleanType()},
				types.DataField{ID: 11, Name: "f1", Type: types.BigIntType()}))},
			[]any{types.Map{Keys: []any{[]any{float32(5.11), float32(5.21)}}, Values: []any{[]any{true, int64(61)}}}},
			// key array: 1 element -> (16<<32)|16 to the float array [5.11, 5.21];
			// value array: 1 element -> (16<<32)|24 to the nested row (true, 61)
			`00000001 0000000000000000 4c00000010000000
			 20000000
			 01000000 00000000 1000000010000000 02000000 00000000 1f85a340 52b8a640
			 01000000 00000000 1800000010000000 0000000000000000 0100000000000000 3d00000000000000
			 00000000`},
	}
}

func TestEncodeGolden(t *testing.T) {
	for _, c := range goldenCases(t) {
		t.Run(c.name, func(t *testing.T) {
			want := unhex(t, c.hex)
			got, err := binrow.Serialize(c.types, c.values)
			if err != nil {
				t.Fatal(err)
			}
			if !bytes.Equal(got, want) {
				t.Fatalf("Serialize\n got  %x\n want %x", got, want)
			}
			row, err := binrow.Encode(c.types, c.values)
			if err != nil || !bytes.Equal(row, want[4:]) {
				t.Fatalf("Encode = %x, %v; want %x", row, err, want[4:])
			}
			back, err := binrow.Deserialize(c.types, want)
			if err != nil {
				t.Fatal(err)
			}
			if !equalValues(back, c.values) {
				t.Fatalf("Deserialize = %v, want %v", back, c.values)
			}
		})
	}
}

// allTypes covers every Paimon type with the Go values of lakecore/types.
func allTypes(tb testing.TB) ([]types.DataType, []any) {
	fields := []struct {
		t types.DataType
		v any
	}{
		{types.BooleanType(), true},
		{types.TinyIntType(), int8(-128)},
		{types.SmallIntType(), int16(-32768)},
		{types.IntType(), int32(math.MinInt32)},
		{types.BigIntType(), int64(math.MaxInt64)},
		{types.FloatType(), float32(-1.5)},
		{types.DoubleType(), math.Inf(-1)},
		{types.CharType(3), "abc"},
		{types.VarCharType(20), "ünïcødé ✓ text"},
		{types.BinaryType(2), []byte{0, 0xff}},
		{types.BytesType(), []byte("0123456789abcdef0")},
		{types.DecimalType(18, 4), types.NewDecimal(-999999999999999999, 4)},
		{types.DecimalType(38, 10), bigDecimal(tb, "-"+strings.Repeat("9", 38), 10)},
		{types.DecimalType(19, 0), bigDecimal(tb, "1"+strings.Repeat("0", 18), 0)},
		{types.DateType(), types.Date(-719162)},
		{types.TimeType(3), types.Time(86399999)},
		{types.TimestampType(0), ts(-1, 0)},
		{types.TimestampType(3), ts(1717070400123, 0)},
		{types.TimestampType(6), ts(-2208988800000, 999000)},
		{types.TimestampType(9), ts(math.MinInt64, 999999)},
		{types.LocalZonedTimestampType(3), ts(0, 0)},
		{types.LocalZonedTimestampType(9), ts(1, 1)},
		{types.ArrayType(types.ArrayType(strT)), []any{[]any{"x", nil, "a longer string"}, nil, []any{}}},
		{types.ArrayType(types.SmallIntType()), []any{int16(1), int16(-2), nil, int16(4), int16(5)}},
		{types.ArrayType(types.DateType()), []any{types.Date(1), nil}},
		{types.ArrayType(types.DecimalType(30, 3)), []any{nil, bigDecimal(tb, "-12345678901234567890123", 3)}},
		{types.MapType(intT, types.ArrayType(dblT)), types.Map{Keys: []any{int32(1), int32(2)}, Values: []any{[]any{1.0, nil}, nil}}},
		{types.MultisetType(types.DecimalType(5, 1)), types.Map{Keys: []any{types.NewDecimal(-5, 1), nil}, Values: []any{int32(3), int32(1)}}},
		{types.RowType(
			types.DataField{ID: 1, Name: "ts", Type: ts9T},
			types.DataField{ID: 2, Name: "arr", Type: types.ArrayType(rowABT)},
			types.DataField{ID: 3, Name: "n", Type: types.DecimalType(25, 0)}),
			[]any{ts(5, 6), []any{[]any{int32(1), "one"}, nil, []any{nil, nil}}, nil}},
		{types.StringType(), nil},
		{types.TimestampType(9), nil},
		{types.DecimalType(38, 0), nil},
		{types.ArrayType(intT), nil},
	}
	ts := make([]types.DataType, len(fields))
	vs := make([]any, len(fields))
	for i, f := range fields {
		ts[i], vs[i] = f.t, f.v
	}
	return ts, vs
}

func TestEncodeDecodeAllTypes(t *testing.T) {
	fieldTypes, values := allTypes(t)
	row, err := binrow.Encode(fieldTypes, values)
	if err != nil {
		t.Fatal(err)
	}
	if len(row)%8 != 0 {
		t.Errorf("row length %d is not a multiple of 8", len(row))
	}
	back, err := binrow.Decode(fieldTypes, row)
	if err != nil {
		t.Fatal(err)
	}
	for i := range values {
		if !equalValue(back[i], values[i]) {
			t.Errorf("field %d (%s): got %#v, want %#v", i, fieldTypes[i], back[i], values[i])
		}
	}
	again, err := binrow.Encode(fieldTypes, back)
	if err != nil || !bytes.Equal(again, row) {
		t.Errorf("re-encode differs: %v\n got  %x\n want %x", err, again, row)
	}
}

// TestEncodeNormalizes covers the values Encode accepts in more than one form.
func TestEncodeNormalizes(t *testing.T) {
	cases := []struct {
		name string
		t    types.DataType
		v    any
		want any // the value Decode returns
	}{
		{"int for INT", intT, 7, int32(7)},
		{"int for TINYINT", types.TinyIntType(), -3, int8(-3)},
		{"int for BIGINT", types.BigIntType(), 1 << 40, int64(1 << 40)},
		{"decimal rescaled up", types.DecimalType(10, 2), types.NewDecimal(15, 1), types.NewDecimal(150, 2)},
		{"decimal rescaled down exactly", types.DecimalType(10, 0), types.NewDecimal(1200, 2), types.NewDecimal(12, 0)},
		{"decimal with nil unscaled", types.DecimalType(10, 2), types.Decimal{Scale: 2}, types.NewDecimal(0, 2)},
		{"compact timestamp drops nanos", types.TimestampType(3), ts(5, 999), ts(5, 0)},
		{"Go NaN written as Java NaN", dblT, math.NaN(), math.Float64frombits(0x7ff8000000000000)},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			row, err := binrow.Encode([]types.DataType{c.t}, []any{c.v})
			if err != nil {
				t.Fatal(err)
			}
			back, err := binrow.Decode([]types.DataType{c.t}, row)
			if err != nil {
				t.Fatal(err)
			}
			if f, ok := c.want.(float64); ok {
				if math.Float64bits(back[0].(float64)) != math.Float64bits(f) {
					t.Fatalf("got bits %x", math.Float64bits(back[0].(float64)))
				}
				return
			}
			if !equalValue(back[0], c.want) {
				t.Fatalf("got %#v, want %#v", back[0], c.want)
			}
		})
	}
}

func TestEncodeErrors(t *testing.T) {
	noElem := types.DataType{Kind: types.KindArray, Nullable: true}
	cases := []struct {
		name   string
		types  []types.DataType
		values []any
		want   error
		msg    string
	}{
		{"arity", []types.DataType{intT}, nil, binrow.ErrArityMismatch, "0 values for 1 fields"},
		{"int64 for INT", []types.DataType{intT}, []any{int64(1)}, binrow.ErrInvalidValue, "int64 for INT"},
		{"int out of range", []types.DataType{types.TinyIntType()}, []any{200}, binrow.ErrInvalidValue, "out of range"},
		{"string for BYTES", []types.DataType{bytesT}, []any{"x"}, binrow.ErrInvalidValue, "string for BYTES"},
		{"float64 for FLOAT", []types.DataType{types.FloatType()}, []any{1.0}, binrow.ErrInvalidValue, "float64 for FLOAT"},
		{"int32 for DATE", []types.DataType{dateT}, []any{int32(1)}, binrow.ErrInvalidValue, "int32 for DATE"},
		{"decimal too wide", []types.DataType{types.DecimalType(3, 0)}, []any{types.NewDecimal(1000, 0)}, binrow.ErrInvalidValue, "does not fit DECIMAL(3, 0)"},
		{"compact decimal of 19 digits", []types.DataType{types.DecimalType(18, 0)}, []any{types.NewDecimal(1_000_000_000_000_000_000, 0)}, binrow.ErrInvalidValue, "does not fit DECIMAL(18, 0)"},
		{"compact decimal MinInt64", []types.DataType{types.DecimalType(18, 0)}, []any{types.NewDecimal(math.MinInt64, 0)}, binrow.ErrInvalidValue, "does not fit"},
		{"decimal needs rounding", []types.DataType{types.DecimalType(10, 1)}, []any{types.NewDecimal(125, 2)}, binrow.ErrInvalidValue, "needs rounding"},
		{"nanos out of range", []types.DataType{ts9T}, []any{ts(0, 1_000_000)}, binrow.ErrInvalidValue, "outside 0..999999"},
		{"map lengths", []types.DataType{mapSIT}, []any{types.Map{Keys: []any{"a"}}}, binrow.ErrInvalidValue, "1 keys and 0 values"},
		{"row arity", []types.DataType{rowABT}, []any{[]any{int32(1)}}, binrow.ErrInvalidValue, "ROW of 2 fields given 1 values"},
		{"nested element", []types.DataType{types.ArrayType(intT)}, []any{[]any{int32(1), "2"}}, binrow.ErrInvalidValue, "field 0 (ARRAY<INT>): element 1 (INT)"},
		{"array without element type", []types.DataType{noElem}, []any{[]any{}}, binrow.ErrUnsupportedType, "ARRAY without element type"},
		{"multiset without element type", []types.DataType{{Kind: types.KindMultiset}}, []any{types.Map{}}, binrow.ErrUnsupportedType, "MULTISET without element type"},
		{"map without value type", []types.DataType{{Kind: types.KindMap, Key: &intT}}, []any{types.Map{}}, binrow.ErrUnsupportedType, "MAP without key or value type"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := binrow.Encode(c.types, c.values)
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
			if !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("error %q does not mention %q", err, c.msg)
			}
		})
	}
}

func TestEmptyRow(t *testing.T) {
	got, err := binrow.Serialize(nil, nil)
	if err != nil || !bytes.Equal(got, binrow.EmptyRow) || len(binrow.EmptyRow) != 12 {
		t.Fatalf("Serialize(nil) = %x, %v; EmptyRow = %x", got, err, binrow.EmptyRow)
	}
	vals, err := binrow.Deserialize(nil, binrow.EmptyRow)
	if err != nil || len(vals) != 0 {
		t.Fatalf("Deserialize(EmptyRow) = %v, %v", vals, err)
	}
}

// equalValues compares decoded values with expected ones: decimals by value
// and scale, floats by bits, nested values recursively.
func equalValues(a, b []any) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !equalValue(a[i], b[i]) {
			return false
		}
	}
	return true
}

func equalValue(a, b any) bool {
	switch x := a.(type) {
	case types.Decimal:
		y, ok := b.(types.Decimal)
		return ok && x.Scale == y.Scale && x.Cmp(y) == 0
	case float64:
		y, ok := b.(float64)
		return ok && math.Float64bits(x) == math.Float64bits(y)
	case float32:
		y, ok := b.(float32)
		return ok && math.Float32bits(x) == math.Float32bits(y)
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	case []any:
		y, ok := b.([]any)
		return ok && equalValues(x, y)
	case types.Map:
		y, ok := b.(types.Map)
		return ok && equalValues(x.Keys, y.Keys) && equalValues(x.Values, y.Values)
	default:
		return a == b
	}
}

// TestEncodeToReusesBuffers checks that EncodeTo and SerializeTo give
// Encode's and Serialize's bytes whatever the buffers they are given hold,
// rows with and without NULLs one after another, and that DecodeInto reads
// them back as Decode does into a row that held other values.
func TestEncodeToReusesBuffers(t *testing.T) {
	fieldTypes, values := allTypes(t)
	nulls := make([]any, len(values))
	dirty := bytes.Repeat([]byte{0xa5}, 4096)
	buf, out, scratch := dirty[:0:len(dirty)], slices.Clone(dirty)[:0], slices.Clone(dirty)[:0]
	slab := &boxes.Slab{}
	for i, vals := range [][]any{values, nulls, values, nulls} {
		want, err := binrow.Encode(fieldTypes, vals)
		if err != nil {
			t.Fatal(err)
		}
		if buf, err = binrow.EncodeTo(buf, fieldTypes, vals); err != nil || !bytes.Equal(buf, want) {
			t.Fatalf("row %d: EncodeTo: %v\n got  %x\n want %x", i, err, buf, want)
		}
		if want, err = binrow.Serialize(fieldTypes, vals); err != nil {
			t.Fatal(err)
		}
		if out, scratch, err = binrow.SerializeTo(out, scratch, fieldTypes, vals); err != nil || !bytes.Equal(out, want) {
			t.Fatalf("row %d: SerializeTo: %v\n got  %x\n want %x", i, err, out, want)
		}
		// DecodeInto fills a row that held other values.
		into := slices.Clone(values)
		if err := binrow.DecodeInto(into, fieldTypes, buf, slab); err != nil {
			t.Fatalf("row %d: DecodeInto: %v", i, err)
		}
		back, err := binrow.Decode(fieldTypes, buf)
		if err != nil {
			t.Fatal(err)
		}
		for j := range back {
			if !equalValue(into[j], back[j]) {
				t.Fatalf("row %d field %d: DecodeInto %#v, Decode %#v", i, j, into[j], back[j])
			}
		}
	}
}
