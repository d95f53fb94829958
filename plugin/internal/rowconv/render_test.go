package rowconv

import (
	"bytes"
	"encoding/json"
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

func marshal(t testing.TB, v any) string {
	t.Helper()
	var buf bytes.Buffer
	enc := json.NewEncoder(&buf)
	enc.SetEscapeHTML(false)
	if err := enc.Encode(v); err != nil {
		t.Fatalf("marshal %#v: %v", v, err)
	}
	return strings.TrimSuffix(buf.String(), "\n")
}

func TestRenderValues(t *testing.T) {
	ts := func(ms int64, nom int32) types.Timestamp { return types.Timestamp{Millis: ms, NanoOfMilli: nom} }
	dec := func(s string, scale int) types.Decimal {
		u, _ := new(big.Int).SetString(s, 10)
		return types.Decimal{Unscaled: u, Scale: scale}
	}
	cases := []struct {
		typ  string
		in   any
		want string // JSON of the rendered value
	}{
		{"BOOLEAN", true, `true`},
		{"TINYINT", int8(-128), `-128`},
		{"SMALLINT", int16(32767), `32767`},
		{"INT", int32(-7), `-7`},
		{"BIGINT", int64(math.MaxInt64), `9223372036854775807`},
		{"FLOAT", float32(0.1), `0.1`},
		{"FLOAT", float32(math.MaxFloat32), `3.4028235e+38`},
		{"FLOAT", float32(math.Inf(-1)), `"-Infinity"`},
		{"DOUBLE", 0.1, `0.1`},
		{"DOUBLE", 1e21, `1e+21`},
		{"DOUBLE", math.NaN(), `"NaN"`},
		{"DOUBLE", math.Inf(1), `"Infinity"`},
		{"DECIMAL(10, 2)", dec("1230", 2), `"12.30"`},
		{"DECIMAL(10, 2)", dec("-5", 2), `"-0.05"`},
		{"DECIMAL(38, 0)", dec("99999999999999999999999999999999999999", 0), `"99999999999999999999999999999999999999"`},
		{"STRING", "héllo \"<x>\"", `"héllo \"<x>\""`},
		{"CHAR(3)", "ab", `"ab"`},
		{"BYTES", []byte("hello"), `"aGVsbG8="`},
		{"BINARY(2)", []byte{0xff, 0xef}, `"/+8="`},
		{"DATE", types.Date(19873), `"2024-05-30"`},
		{"DATE", types.Date(-719528), `"0000-01-01"`},
		{"DATE", types.Date(-1), `"1969-12-31"`},
		{"TIME", types.Time(45296789), `"12:34:56"`},
		{"TIME(1)", types.Time(45296789), `"12:34:56.7"`},
		{"TIME(3)", types.Time(5), `"00:00:00.005"`},
		{"TIME(9)", types.Time(86399999), `"23:59:59.999"`},
		{"TIMESTAMP(0)", ts(1717070400000, 0), `"2024-05-30T12:00:00"`},
		{"TIMESTAMP(3)", ts(1717070400120, 0), `"2024-05-30T12:00:00.120"`},
		{"TIMESTAMP(6)", ts(1717070400123, 456000), `"2024-05-30T12:00:00.123456"`},
		{"TIMESTAMP(9)", ts(1717070400123, 456789), `"2024-05-30T12:00:00.123456789"`},
		{"TIMESTAMP(9)", ts(-1, 999999), `"1969-12-31T23:59:59.999999999"`},
		{"TIMESTAMP(3) WITH LOCAL TIME ZONE", ts(1717070400000, 0), `"2024-05-30T12:00:00.000Z"`},
		{"TIMESTAMP_LTZ(0)", ts(-62167219200000, 0), `"0000-01-01T00:00:00Z"`},
		{"ARRAY<INT>", []any{int32(1), nil}, `[1,null]`},
		{"MAP<STRING, INT>", types.Map{Keys: []any{"b", "a"}, Values: []any{int32(2), nil}}, `{"a":null,"b":2}`},
		{"MAP<STRING, INT>", types.Map{Keys: []any{"a", nil}, Values: []any{int32(1), int32(2)}}, `[{"key":"a","value":1},{"key":null,"value":2}]`},
		{"MAP<INT, STRING>", types.Map{Keys: []any{int32(2), int32(1)}, Values: []any{"b", "a"}}, `[{"key":2,"value":"b"},{"key":1,"value":"a"}]`},
		{"MAP<DATE, DECIMAL(3, 1)>", types.Map{Keys: []any{types.Date(0)}, Values: []any{dec("15", 1)}}, `[{"key":"1970-01-01","value":"1.5"}]`},
		{"MULTISET<STRING>", types.Map{Keys: []any{"a", "b"}, Values: []any{int32(2), int32(1)}}, `{"a":2,"b":1}`},
		{"MULTISET<INT>", types.Map{Keys: []any{int32(7)}, Values: []any{int32(3)}}, `[{"key":7,"value":3}]`},
		{"ROW<a INT, b ROW<c BYTES>>", []any{int32(1), []any{[]byte{1}}}, `{"a":1,"b":{"c":"AQ=="}}`},
		{"ROW<a INT>", nil, `null`},
	}
	for _, tc := range cases {
		got, err := RenderValue(types.MustParse(tc.typ), tc.in)
		if err != nil {
			t.Errorf("%s %#v: %v", tc.typ, tc.in, err)
			continue
		}
		if s := marshal(t, got); s != tc.want {
			t.Errorf("%s %#v: rendered %s, want %s", tc.typ, tc.in, s, tc.want)
		}
	}
}

func TestRenderErrors(t *testing.T) {
	cases := []struct {
		typ string
		in  any
		err string
	}{
		{"BIGINT", "1", "cannot render Go value of type string as BIGINT"},
		{"DOUBLE", float32(1), "cannot render Go value of type float32 as DOUBLE"},
		{"TIME(3)", types.Time(86400000), "outside the day"},
		{"ARRAY<INT>", []any{"x"}, "element 0: cannot render Go value of type string as INT"},
		{"MAP<STRING, INT>", types.Map{Keys: []any{"a"}, Values: []any{}}, "1 keys and 0 values"},
		{"ROW<a INT, b INT>", []any{int32(1)}, "ROW value has 1 fields, the type 2"},
		{"ROW<a INT>", []any{"x"}, `field "a": cannot render`},
	}
	for _, tc := range cases {
		_, err := RenderValue(types.MustParse(tc.typ), tc.in)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s %#v: error %v, want %q", tc.typ, tc.in, err, tc.err)
		}
	}
	fields := types.MustParse("ROW<id BIGINT, name STRING>").Fields
	if _, err := RenderRow(fields, []any{int64(1)}); err == nil || !strings.Contains(err.Error(), "1 values for 2 columns") {
		t.Errorf("short row: %v", err)
	}
	if _, err := RenderRow(fields, []any{int64(1), 5}); err == nil || !strings.Contains(err.Error(), `render field "name"`) {
		t.Errorf("bad value: %v", err)
	}
}

// TestRoundTripCanonical checks render(convert(x)) == canonical(x), and that
// the canonical form is a fixed point: render(convert(canonical)) == canonical.
func TestRoundTripCanonical(t *testing.T) {
	cases := []struct {
		typ       string
		in        string
		canonical string
	}{
		{"BOOLEAN", `"TRUE"`, `true`},
		{"TINYINT", `"127"`, `127`},
		{"INT", `2.0`, `2`},
		{"BIGINT", `9223372036854775807`, `9223372036854775807`},
		{"BIGINT", `-9.223372036854775808e18`, `-9223372036854775808`},
		{"FLOAT", `"0.1"`, `0.1`},
		{"FLOAT", `3.14159274`, `3.1415927`},
		{"DOUBLE", `"Infinity"`, `"Infinity"`},
		{"DOUBLE", `1.0000000000000002`, `1.0000000000000002`},
		{"DECIMAL(10, 2)", `0.1`, `"0.10"`},
		{"DECIMAL(10, 2)", `"-12.3"`, `"-12.30"`},
		{"DECIMAL(38, 18)", `"12345678901234567890.123456789012345678"`, `"12345678901234567890.123456789012345678"`},
		{"STRING", `{"b": 1, "a": "<&>"}`, `"{\"a\":\"<&>\",\"b\":1}"`},
		{"VARCHAR(3)", `"日本語"`, `"日本語"`},
		{"BYTES", `"aGVsbG8"`, `"aGVsbG8="`},
		{"DATE", `19873`, `"2024-05-30"`},
		{"TIME(3)", `"12:34"`, `"12:34:00.000"`},
		{"TIME(3)", `45296789`, `"12:34:56.789"`},
		{"TIMESTAMP(3)", `"2024-05-30T14:00:00.123456789+02:00"`, `"2024-05-30T12:00:00.123"`},
		{"TIMESTAMP(6)", `"2024-05-30 12:00:00"`, `"2024-05-30T12:00:00.000000"`},
		{"TIMESTAMP(9)", `1717070400000.000001`, `"2024-05-30T12:00:00.000000001"`},
		{"TIMESTAMP(9)", `"1969-12-31T23:59:59.999999999Z"`, `"1969-12-31T23:59:59.999999999"`},
		{"TIMESTAMP(0)", `"2024-05-30"`, `"2024-05-30T00:00:00"`},
		{"TIMESTAMP(3) WITH LOCAL TIME ZONE", `"2024-05-30T09:30:00-02:30"`, `"2024-05-30T12:00:00.000Z"`},
		{"TIMESTAMP_LTZ(9)", `1717070400123`, `"2024-05-30T12:00:00.123000000Z"`},
		{"ARRAY<DECIMAL(4, 1)>", `[1, "2.5", null]`, `["1.0","2.5",null]`},
		{"MAP<STRING, BIGINT>", `[["b", 2], {"key": "a", "value": "1"}]`, `{"a":1,"b":2}`},
		{"MAP<INT, DATE>", `{"2": 0, "1": "2024-05-30"}`, `[{"key":1,"value":"2024-05-30"},{"key":2,"value":"1970-01-01"}]`},
		{"MULTISET<STRING>", `["x", "y", "x"]`, `{"x":2,"y":1}`},
		{"MULTISET<INT>", `[3, 3]`, `[{"key":3,"value":2}]`},
		{"ROW<a INT, b ARRAY<TIMESTAMP(3)>>", `[1, ["2024-05-30T12:00:00Z"]]`, `{"a":1,"b":["2024-05-30T12:00:00.000"]}`},
	}
	for _, tc := range cases {
		typ := types.MustParse(tc.typ)
		for _, in := range []string{tc.in, tc.canonical} {
			v, err := ConvertValue(typ, jsonValue(t, in), ConvertOptions{})
			if err != nil {
				t.Errorf("%s <- %s: %v", tc.typ, in, err)
				continue
			}
			r, err := RenderValue(typ, v)
			if err != nil {
				t.Errorf("%s render %#v: %v", tc.typ, v, err)
				continue
			}
			if got := marshal(t, r); got != tc.canonical {
				t.Errorf("%s: %s -> %s, want %s", tc.typ, in, got, tc.canonical)
			}
		}
	}
}

// sameValues compares converted values: decimals by value, NaN equal to NaN,
// maps and multisets as unordered entry sets.
func sameValues(a, b any) bool {
	switch x := a.(type) {
	case types.Decimal:
		y, ok := b.(types.Decimal)
		return ok && x.Scale == y.Scale && x.Cmp(y) == 0
	case float32:
		y, ok := b.(float32)
		return ok && (x == y || (x != x && y != y))
	case float64:
		y, ok := b.(float64)
		return ok && (x == y || (x != x && y != y))
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !sameValues(x[i], y[i]) {
				return false
			}
		}
		return true
	case types.Map:
		y, ok := b.(types.Map)
		if !ok || x.Len() != y.Len() {
			return false
		}
		used := make([]bool, y.Len())
	outer:
		for i := range x.Keys {
			for j := range y.Keys {
				if !used[j] && sameValues(x.Keys[i], y.Keys[j]) && sameValues(x.Values[i], y.Values[j]) {
					used[j] = true
					continue outer
				}
			}
			return false
		}
		return true
	}
	return reflect.DeepEqual(a, b)
}

// roundTrip renders row as a message, serialises it as Benthos would, and
// converts the bytes back with the output's converter.
func roundTrip(t testing.TB, conv *Converter, row []any) ([]any, string) {
	t.Helper()
	msg, err := NewRowMessage(conv.Fields(), row, RowMeta{})
	if err != nil {
		t.Fatalf("render %#v: %v", row, err)
	}
	raw, err := msg.AsBytes()
	if err != nil || len(raw) == 0 {
		t.Fatalf("message bytes: %q, %v", raw, err)
	}
	back, added, err := conv.ConvertMessage(service.NewMessage(raw))
	if err != nil || len(added) != 0 {
		t.Fatalf("convert %s: %v, added %v", raw, err, added)
	}
	return back, string(raw)
}

func allTypesConverter(t testing.TB, o ConvertOptions) *Converter {
	t.Helper()
	conv, err := NewConverter(types.MustParse(allTypesSchema).Fields, o)
	if err != nil {
		t.Fatal(err)
	}
	return conv
}

func TestRowRoundTrip(t *testing.T) {
	conv := allTypesConverter(t, ConvertOptions{})
	inputs := []string{
		`{"bi": 1}`,
		`{"b": true, "ti": -128, "si": 32767, "i": -2147483648, "bi": 9223372036854775807, "f": 3.4028235e38, "d": "-Infinity",
		  "d1": "-9999999.99", "d2": 0.1, "d3": "1234567890123456789012345678.0123456789", "c": "abc", "vc": "héllo", "s": "\u0000\n\"",
		  "bin": "AAECAw==", "vb": "", "by": "aGVsbG8=", "dt": "0000-01-01", "tm": "23:59:59.999", "t0": "9999-12-31T23:59:59Z",
		  "t3": "1969-12-31T23:59:59.999Z", "t6": "2024-05-30T12:00:00.000001+14:00", "t9": "2024-02-29T23:59:59.999999999-12:00",
		  "l3": 0, "l9": "1970-01-01T00:00:00.000000001Z", "arr": [1, null, -1], "m1": {"": 1.5, "z": "NaN", "a": null},
		  "m2": [[2, ["x", null]], [1, []], [3, null]], "ms": ["a", "b", "a"], "r": {"x": 1, "y": {"z": "2024-05-30"}}}`,
		`{"bi": -1, "f": "NaN", "d": 5e-324, "t0": -0.5, "m1": {}, "ms": {"q": 3}, "r": [0, null], "arr": []}`,
	}
	for _, in := range inputs {
		row, _, err := conv.Convert(jsonValue(t, in))
		if err != nil {
			t.Fatalf("%s: %v", in, err)
		}
		back, raw := roundTrip(t, conv, row)
		for i, f := range conv.Fields() {
			if !sameValues(row[i], back[i]) {
				t.Errorf("column %s: %#v became %#v (via %s)", f.Name, row[i], back[i], raw)
			}
		}
	}
}

func TestRowMeta(t *testing.T) {
	fields := types.MustParse("ROW<id BIGINT>").Fields
	msg, err := NewRowMessage(fields, []any{int64(5)}, RowMeta{
		SnapshotID: 42, CommitKind: "APPEND", CommitTimeMillis: 1717070400123,
		Partition: "dt=2024-05-30/region=eu", Bucket: 3, File: "data-abc-0.parquet", Row: 1234,
	})
	if err != nil {
		t.Fatal(err)
	}
	typed := map[string]any{
		MetaSnapshotID: int64(42), MetaCommitKind: "APPEND", MetaCommitTime: "2024-05-30T12:00:00.123Z",
		MetaPartition: "dt=2024-05-30/region=eu", MetaBucket: int64(3), MetaFile: "data-abc-0.parquet", MetaRow: int64(1234),
	}
	for k, want := range typed {
		got, ok := msg.MetaGetMut(k)
		if !ok || got != want {
			t.Errorf("meta %s = %#v, want %#v", k, got, want)
		}
	}
	if s, _ := msg.MetaGet(MetaSnapshotID); s != "42" {
		t.Errorf("meta string form %q", s)
	}
	raw, _ := msg.AsBytes()
	if string(raw) != `{"id":5}` {
		t.Errorf("body %s", raw)
	}
	if got := FormatCommitTime(0); got != "1970-01-01T00:00:00.000Z" {
		t.Errorf("commit time %s", got)
	}
}

// FuzzRoundTrip: whatever converts, renders to a message that converts back
// to the same row.
func FuzzRoundTrip(f *testing.F) {
	for _, s := range []string{
		`{"bi": 1}`,
		`{"bi": "1e3", "f": 0.1, "d": "NaN", "d1": 12.5, "d3": "-1e-10", "t9": "2024-05-30T12:00:00.123456789+02:00", "l3": 1717070400000}`,
		`{"bi": 0, "m1": {"a": 1}, "m2": [[1, ["x"]]], "ms": ["a", "a"], "r": [1, {"z": 0}], "tm": 1, "dt": "2024-02-29"}`,
		`{"bi": 0, "s": {"nested": [1, 2.5, "x"]}, "c": 12, "bin": "AQID", "t0": 1.5}`,
	} {
		f.Add([]byte(s))
	}
	conv := allTypesConverter(f, ConvertOptions{UnknownFields: UnknownFieldsIgnore})
	f.Fuzz(func(t *testing.T, data []byte) {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			return
		}
		row, _, err := conv.Convert(v)
		if err != nil {
			return
		}
		back, raw := roundTrip(t, conv, row)
		for i, fld := range conv.Fields() {
			if !sameValues(row[i], back[i]) {
				t.Fatalf("column %s: %#v became %#v (via %s)", fld.Name, row[i], back[i], raw)
			}
		}
	})
}
