package rowconv

import (
	"bytes"
	"encoding/json"
	"errors"
	"math"
	"math/big"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// jsonValue decodes s as Benthos does (json.Number for numbers).
func jsonValue(t testing.TB, s string) any {
	t.Helper()
	dec := json.NewDecoder(strings.NewReader(s))
	dec.UseNumber()
	var v any
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("bad test JSON %q: %v", s, err)
	}
	return v
}

func dec(unscaled string, scale int) types.Decimal {
	u, ok := new(big.Int).SetString(unscaled, 10)
	if !ok {
		panic(unscaled)
	}
	return types.Decimal{Unscaled: u, Scale: scale}
}

func ts(ms int64, nom int32) types.Timestamp { return types.Timestamp{Millis: ms, NanoOfMilli: nom} }

// equalValues compares converted values, decimals by value and scale.
func equalValues(a, b any) bool {
	switch x := a.(type) {
	case types.Decimal:
		y, ok := b.(types.Decimal)
		return ok && x.Scale == y.Scale && x.Unscaled.Cmp(y.Unscaled) == 0
	case float32:
		y, ok := b.(float32)
		return ok && (x == y || (x != x && y != y))
	case float64:
		y, ok := b.(float64)
		return ok && (x == y || (x != x && y != y))
	case []any:
		y, ok := b.([]any)
		if !ok || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equalValues(x[i], y[i]) {
				return false
			}
		}
		return true
	case types.Map:
		y, ok := b.(types.Map)
		return ok && equalValues(x.Keys, y.Keys) && equalValues(x.Values, y.Values)
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	}
	return reflect.DeepEqual(a, b)
}

type valueCase struct {
	typ  string
	in   string // JSON
	want any    // expected Go value, when err == ""
	err  string // substring of the expected error
}

func runValueCases(t *testing.T, o ConvertOptions, cases []valueCase) {
	t.Helper()
	for _, tc := range cases {
		typ := types.MustParse(tc.typ)
		got, err := ConvertValue(typ, jsonValue(t, tc.in), o)
		if tc.err != "" {
			if err == nil {
				t.Errorf("%s <- %s: got %#v, want error containing %q", tc.typ, tc.in, got, tc.err)
			} else if !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s <- %s: error %q, want it to contain %q", tc.typ, tc.in, err, tc.err)
			} else if !errors.Is(err, ErrInvalidValue) && !errors.Is(err, ErrNotNull) && !errors.Is(err, ErrUnknownField) {
				t.Errorf("%s <- %s: error %v wraps no sentinel", tc.typ, tc.in, err)
			}
			continue
		}
		if err != nil {
			t.Errorf("%s <- %s: unexpected error %v", tc.typ, tc.in, err)
			continue
		}
		if !equalValues(got, tc.want) {
			t.Errorf("%s <- %s: got %#v (%T), want %#v (%T)", tc.typ, tc.in, got, got, tc.want, tc.want)
		}
	}
}

func TestConvertBoolean(t *testing.T) {
	runValueCases(t, ConvertOptions{}, []valueCase{
		{"BOOLEAN", `true`, true, ""},
		{"BOOLEAN", `false`, false, ""},
		{"BOOLEAN", `"TRUE"`, true, ""},
		{"BOOLEAN", `" false "`, false, ""},
		{"BOOLEAN", `"yes"`, nil, `cannot convert string "yes" to BOOLEAN: expected true or false`},
		{"BOOLEAN", `1`, nil, "cannot convert number 1 to BOOLEAN"},
		{"BOOLEAN", `null`, nil, ""},
		{"BOOLEAN NOT NULL", `null`, nil, "cannot convert null to BOOLEAN NOT NULL"},
	})
}

func TestConvertIntegers(t *testing.T) {
	runValueCases(t, ConvertOptions{}, []valueCase{
		{"TINYINT", `127`, int8(127), ""},
		{"TINYINT", `-128`, int8(-128), ""},
		{"TINYINT", `128`, nil, "cannot convert number 128 to TINYINT: out of range [-128, 127]"},
		{"TINYINT", `-129`, nil, "out of range [-128, 127]"},
		{"SMALLINT", `32767`, int16(32767), ""},
		{"SMALLINT", `32768`, nil, "out of range [-32768, 32767]"},
		{"SMALLINT", `-32769`, nil, "out of range"},
		{"INT", `2147483647`, int32(2147483647), ""},
		{"INT", `-2147483648`, int32(-2147483648), ""},
		{"INT", `2147483648`, nil, "out of range [-2147483648, 2147483647]"},
		{"INT", `-2147483649`, nil, "out of range"},
		{"BIGINT", `9223372036854775807`, int64(math.MaxInt64), ""},
		{"BIGINT", `-9223372036854775808`, int64(math.MinInt64), ""},
		{"BIGINT", `9223372036854775808`, nil, "cannot convert number 9223372036854775808 to BIGINT: out of range of BIGINT"},
		{"BIGINT", `-9223372036854775809`, nil, "out of range of BIGINT"},
		{"BIGINT", `1e19`, nil, "out of range of BIGINT"},
		{"BIGINT", `1e18`, int64(1e18), ""},
		{"BIGINT", `2.0`, int64(2), ""},
		{"BIGINT", `2.50e1`, int64(25), ""},
		{"BIGINT", `1.5`, nil, "cannot convert number 1.5 to BIGINT: not a whole number"},
		{"BIGINT", `1e-1`, nil, "not a whole number"},
		{"BIGINT", `0.0`, int64(0), ""},
		{"BIGINT", `-0`, int64(0), ""},
		{"BIGINT", `"42"`, int64(42), ""},
		{"BIGINT", `" 42 "`, int64(42), ""},
		{"BIGINT", `"+42"`, int64(42), ""},
		{"BIGINT", `"4_2"`, nil, `cannot convert string "4_2" to BIGINT: not a number`},
		{"BIGINT", `"0x10"`, nil, "not a number"},
		{"BIGINT", `"abc"`, nil, `cannot convert string "abc" to BIGINT: not a number`},
		{"BIGINT", `""`, nil, "not a number"},
		{"BIGINT", `true`, nil, "cannot convert boolean true to BIGINT"},
		{"BIGINT", `[1]`, nil, "cannot convert array to BIGINT"},
		{"BIGINT", `{"a":1}`, nil, "cannot convert object to BIGINT"},
		{"BIGINT", `1e100001`, nil, "exponent out of range"},
		{"INT NOT NULL", `null`, nil, "cannot convert null to INT NOT NULL"},
	})
}

func TestConvertIntegersFromGoValues(t *testing.T) {
	cases := []struct {
		typ  string
		in   any
		want any
		err  string
	}{
		{"BIGINT", float64(1 << 53), int64(1 << 53), ""},
		{"BIGINT", float64(-(1 << 53)), int64(-(1 << 53)), ""},
		{"BIGINT", float64(1<<53 + 2), nil, "beyond ±2^53"},
		{"BIGINT", float64(2.5), nil, "not a whole number"},
		{"BIGINT", math.NaN(), nil, "not a finite number"},
		{"BIGINT", math.Inf(1), nil, "not a finite number"},
		{"INT", int64(7), int32(7), ""},
		{"INT", int(7), int32(7), ""},
		{"TINYINT", int64(300), nil, "out of range"},
		{"BIGINT", uint64(math.MaxUint64), nil, "out of range of BIGINT"},
		{"BIGINT", uint64(5), int64(5), ""},
		{"SMALLINT", int8(-3), int16(-3), ""},
	}
	for _, tc := range cases {
		got, err := ConvertValue(types.MustParse(tc.typ), tc.in, ConvertOptions{})
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s <- %#v: error %v, want %q", tc.typ, tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || !equalValues(got, tc.want) {
			t.Errorf("%s <- %#v: got %#v, %v; want %#v", tc.typ, tc.in, got, err, tc.want)
		}
	}
}

func TestConvertFloats(t *testing.T) {
	runValueCases(t, ConvertOptions{}, []valueCase{
		{"FLOAT", `0.1`, float32(0.1), ""},
		{"FLOAT", `"0.1"`, float32(0.1), ""},
		{"FLOAT", `3.4028235e38`, float32(math.MaxFloat32), ""},
		{"FLOAT", `3.5e38`, nil, "cannot convert number 3.5e38 to FLOAT: out of range"},
		{"FLOAT", `1e-50`, float32(0), ""},
		{"FLOAT", `"NaN"`, float32(math.NaN()), ""},
		{"FLOAT", `"-Infinity"`, float32(math.Inf(-1)), ""},
		{"FLOAT", `7`, float32(7), ""},
		{"DOUBLE", `1.5`, 1.5, ""},
		{"DOUBLE", `"1.5"`, 1.5, ""},
		{"DOUBLE", `-0.0`, math.Copysign(0, -1), ""},
		{"DOUBLE", `1e308`, 1e308, ""},
		{"DOUBLE", `1e400`, nil, "cannot convert number 1e400 to DOUBLE: out of range"},
		{"DOUBLE", `"NaN"`, math.NaN(), ""},
		{"DOUBLE", `"Infinity"`, math.Inf(1), ""},
		{"DOUBLE", `"+Infinity"`, math.Inf(1), ""},
		{"DOUBLE", `"nan"`, nil, `cannot convert string "nan" to DOUBLE: not a number (or "NaN", "Infinity", "-Infinity")`},
		{"DOUBLE", `"inf"`, nil, "not a number"},
		{"DOUBLE", `"0x1p-2"`, nil, "not a number"},
		{"DOUBLE", `"1,5"`, nil, "not a number"},
		{"DOUBLE", `true`, nil, "cannot convert boolean true to DOUBLE"},
		{"DOUBLE", `12345678901234567890`, 12345678901234567890.0, ""},
	})
	// Go floats straight through (Bloblang arithmetic).
	got, err := ConvertValue(types.DoubleType(), math.Inf(-1), ConvertOptions{})
	if err != nil || got != math.Inf(-1) {
		t.Errorf("DOUBLE <- -Inf: %v, %v", got, err)
	}
	if _, err := ConvertValue(types.FloatType(), 1e300, ConvertOptions{}); err == nil || !strings.Contains(err.Error(), "out of range") {
		t.Errorf("FLOAT <- 1e300: error %v, want out of range", err)
	}
}

func TestConvertDecimal(t *testing.T) {
	runValueCases(t, ConvertOptions{}, []valueCase{
		{"DECIMAL(10, 2)", `"12.34"`, dec("1234", 2), ""},
		{"DECIMAL(10, 2)", `12.34`, dec("1234", 2), ""},
		{"DECIMAL(10, 2)", `0.1`, dec("10", 2), ""},
		{"DECIMAL(10, 2)", `12.300`, dec("1230", 2), ""},
		{"DECIMAL(10, 2)", `"-0.5"`, dec("-50", 2), ""},
		{"DECIMAL(10, 2)", `1e2`, dec("10000", 2), ""},
		{"DECIMAL(10, 2)", `"1.5E-1"`, dec("15", 2), ""},
		{"DECIMAL(10, 2)", `0`, dec("0", 2), ""},
		{"DECIMAL(10, 2)", `99999999.99`, dec("9999999999", 2), ""},
		{"DECIMAL(10, 2)", `-99999999.99`, dec("-9999999999", 2), ""},
		{"DECIMAL(10, 2)", `100000000`, nil, "cannot convert number 100000000 to DECIMAL(10, 2): more than 10 digits"},
		{"DECIMAL(10, 2)", `123456789.12`, nil, "more than 10 digits"},
		{"DECIMAL(10, 2)", `"1.005"`, nil, `cannot convert string "1.005" to DECIMAL(10, 2): more than 2 fraction digits (values are never rounded)`},
		{"DECIMAL(10, 2)", `0.001`, nil, "more than 2 fraction digits"},
		{"DECIMAL(10, 2)", `"abc"`, nil, `cannot convert string "abc" to DECIMAL(10, 2): not a decimal number`},
		{"DECIMAL(10, 2)", `"1/3"`, nil, "not a decimal number"},
		{"DECIMAL(10, 2)", `"NaN"`, nil, "not a decimal number"},
		{"DECIMAL(10, 2)", `"1e999999999"`, nil, "not a decimal number"},
		{"DECIMAL(10, 2)", `true`, nil, "cannot convert boolean true to DECIMAL(10, 2)"},
		{"DECIMAL(38, 0)", `99999999999999999999999999999999999999`, dec("99999999999999999999999999999999999999", 0), ""},
		{"DECIMAL(38, 0)", `100000000000000000000000000000000000000`, nil, "more than 38 digits"},
		{"DECIMAL(38, 10)", `"-1234567890123456789012345678.0123456789"`, dec("-12345678901234567890123456780123456789", 10), ""},
		{"DECIMAL(5, 5)", `0.12345`, dec("12345", 5), ""},
		{"DECIMAL(5, 5)", `1`, nil, "more than 5 digits"},
		{"DECIMAL(3, 0)", `"00012"`, dec("12", 0), ""},
	})
	// The error for "abc" is path-less through ConvertValue.
	_, err := ConvertValue(types.DecimalType(10, 2), "abc", ConvertOptions{})
	if err == nil || strings.HasPrefix(err.Error(), "field") {
		t.Errorf("path-less error expected, got %v", err)
	}
	// A float64 0.1 becomes exactly 0.1 (its shortest decimal text).
	got, err := ConvertValue(types.DecimalType(10, 2), 0.1, ConvertOptions{})
	if err != nil || !equalValues(got, dec("10", 2)) {
		t.Errorf("DECIMAL <- float64 0.1: %v, %v", got, err)
	}
	a, b := 0.1, 0.2
	got, err = ConvertValue(types.DecimalType(20, 1), a+b, ConvertOptions{})
	if err == nil {
		t.Errorf("DECIMAL(20, 1) <- 0.30000000000000004: got %v, want a fraction-digits error", got)
	}
	got, err = ConvertValue(types.DecimalType(20, 0), int64(math.MinInt64), ConvertOptions{})
	if err != nil || !equalValues(got, dec("-9223372036854775808", 0)) {
		t.Errorf("DECIMAL <- MinInt64: %v, %v", got, err)
	}
	got, err = ConvertValue(types.DecimalType(20, 0), uint64(math.MaxUint64), ConvertOptions{})
	if err != nil || !equalValues(got, dec("18446744073709551615", 0)) {
		t.Errorf("DECIMAL <- MaxUint64: %v, %v", got, err)
	}
}

func TestConvertStrings(t *testing.T) {
	runValueCases(t, ConvertOptions{}, []valueCase{
		{"STRING", `"héllo"`, "héllo", ""},
		{"STRING", `""`, "", ""},
		{"STRING", `12`, "12", ""},
		{"STRING", `1.50`, "1.50", ""},
		{"STRING", `true`, "true", ""},
		{"STRING", `{"b":1,"a":[1,"<x>"]}`, `{"a":[1,"<x>"],"b":1}`, ""},
		{"STRING", `[1,2]`, `[1,2]`, ""},
		{"VARCHAR(3)", `"abc"`, "abc", ""},
		{"VARCHAR(3)", `"héé"`, "héé", ""},
		{"VARCHAR(3)", `"abcd"`, nil, `cannot convert string "abcd" to VARCHAR(3): 4 characters, more than 3`},
		{"VARCHAR(3)", `"日本語の"`, nil, "4 characters, more than 3"},
		{"CHAR(2)", `"ab"`, "ab", ""},
		{"CHAR(2)", `"a"`, "a", ""},
		{"CHAR(2)", `"abc"`, nil, "3 characters, more than 2"},
		{"STRING NOT NULL", `null`, nil, "cannot convert null to STRING NOT NULL"},
	})
	for _, in := range []any{"a\xffb", []byte{'a', 0xff}} {
		if _, err := ConvertValue(types.StringType(), in, ConvertOptions{}); err == nil || !strings.Contains(err.Error(), "not valid UTF-8") {
			t.Errorf("STRING <- %q: error %v, want not valid UTF-8", in, err)
		}
	}
	got, err := ConvertValue(types.StringType(), []byte("raw"), ConvertOptions{})
	if err != nil || got != "raw" {
		t.Errorf("STRING <- []byte: %v, %v", got, err)
	}
	long := strings.Repeat("x", 1000)
	_, err = ConvertValue(types.VarCharType(10), long, ConvertOptions{})
	if err == nil || !strings.Contains(err.Error(), "... (1000 bytes)") || len(err.Error()) > 200 {
		t.Errorf("long value not shortened in error: %v", err)
	}
}

func TestConvertBytes(t *testing.T) {
	runValueCases(t, ConvertOptions{}, []valueCase{
		{"BYTES", `"aGVsbG8="`, []byte("hello"), ""},
		{"BYTES", `"aGVsbG8"`, []byte("hello"), ""},
		{"BYTES", `"_-8="`, []byte{0xff, 0xef}, ""},
		{"BYTES", `""`, []byte{}, ""},
		{"BYTES", `"!!!"`, nil, `cannot convert string "!!!" to BYTES: not base64`},
		{"BYTES", `12`, nil, "cannot convert number 12 to BYTES"},
		{"BINARY(2)", `"AAE="`, []byte{0, 1}, ""},
		{"BINARY(2)", `"AAEC"`, nil, "3 bytes, more than 2"},
		{"VARBINARY(4)", `"AAECAwQ="`, nil, "5 bytes, more than 4"},
	})
	got, err := ConvertValue(types.BytesType(), []byte{1, 2}, ConvertOptions{})
	if err != nil || !bytes.Equal(got.([]byte), []byte{1, 2}) {
		t.Errorf("BYTES <- raw bytes: %v, %v", got, err)
	}
}

func TestConvertDate(t *testing.T) {
	runValueCases(t, ConvertOptions{}, []valueCase{
		{"DATE", `"2024-05-30"`, types.Date(19873), ""},
		{"DATE", `"1970-01-01"`, types.Date(0), ""},
		{"DATE", `"1969-12-31"`, types.Date(-1), ""},
		{"DATE", `"2024-02-29"`, types.Date(19782), ""},
		{"DATE", `"2023-02-29"`, nil, "day 29 out of range for 2023-02"},
		{"DATE", `"2024-13-01"`, nil, "month 13 out of range"},
		{"DATE", `"2024-5-30"`, nil, "expected YYYY-MM-DD or a number of days"},
		{"DATE", `"0000-01-01"`, types.Date(-719528), ""},
		{"DATE", `"9999-12-31"`, types.Date(2932896), ""},
		{"DATE", `19873`, types.Date(19873), ""},
		{"DATE", `"19873"`, types.Date(19873), ""},
		{"DATE", `-719528`, types.Date(-719528), ""},
		{"DATE", `-719529`, nil, "outside the years 0000-9999"},
		{"DATE", `2932897`, nil, "outside the years 0000-9999"},
		{"DATE", `1.5`, nil, "not a whole number"},
		{"DATE", `true`, nil, "cannot convert boolean true to DATE"},
		{"DATE", `"2024-05-30T00:00:00Z"`, nil, "expected YYYY-MM-DD"},
	})
}

func TestConvertTime(t *testing.T) {
	runValueCases(t, ConvertOptions{}, []valueCase{
		{"TIME(3)", `"12:34:56.789"`, types.Time(45296789), ""},
		{"TIME(3)", `"12:34:56.7891"`, types.Time(45296789), ""},
		{"TIME(3)", `"12:34:56.7"`, types.Time(45296700), ""},
		{"TIME(3)", `"12:34"`, types.Time(45240000), ""},
		{"TIME(3)", `"00:00:00"`, types.Time(0), ""},
		{"TIME(3)", `"23:59:59.999"`, types.Time(86399999), ""},
		{"TIME(3)", `"24:00:00"`, nil, "time 24:00:00 out of range"},
		{"TIME(3)", `"12:60:00"`, nil, "out of range"},
		{"TIME(3)", `"12:34:56Z"`, nil, "expected HH:MM[:SS[.fraction]]"},
		{"TIME(3)", `"12:34:56."`, nil, "expected digits after '.'"},
		{"TIME(3)", `45296789`, types.Time(45296789), ""},
		{"TIME(3)", `86400000`, nil, "out of range [0, 86399999]"},
		{"TIME(3)", `-1`, nil, "out of range"},
		{"TIME(3)", `"noon"`, nil, "expected HH:MM:SS[.fraction] or milliseconds of the day"},
		{"TIME", `"12:34:56.789"`, types.Time(45296000), ""},
		{"TIME(1)", `45296789`, types.Time(45296700), ""},
		{"TIME(9)", `"12:34:56.123456789"`, types.Time(45296123), ""},
	})
}

func TestConvertTimestamp(t *testing.T) {
	const noon = int64(1717070400000) // 2024-05-30T12:00:00Z
	runValueCases(t, ConvertOptions{}, []valueCase{
		{"TIMESTAMP(3)", `"2024-05-30T12:00:00Z"`, ts(noon, 0), ""},
		{"TIMESTAMP(3)", `"2024-05-30t12:00:00z"`, ts(noon, 0), ""},
		{"TIMESTAMP(3)", `"2024-05-30 12:00:00"`, ts(noon, 0), ""},
		{"TIMESTAMP(3)", `"2024-05-30T12:00"`, ts(noon, 0), ""},
		{"TIMESTAMP(3)", `"2024-05-30"`, ts(noon-12*3600000, 0), ""},
		{"TIMESTAMP(3)", `"2024-05-30T14:00:00+02:00"`, ts(noon, 0), ""},
		{"TIMESTAMP(3)", `"2024-05-30T14:00:00+0200"`, ts(noon, 0), ""},
		{"TIMESTAMP(3)", `"2024-05-30T09:30:00-02:30"`, ts(noon, 0), ""},
		{"TIMESTAMP(3)", `"2024-05-30T14:00:00+02"`, ts(noon, 0), ""},
		{"TIMESTAMP(3)", `"2024-05-30T12:00:00.123456789+00:00"`, ts(noon+123, 0), ""},
		{"TIMESTAMP(6)", `"2024-05-30T12:00:00.1234567Z"`, ts(noon+123, 456000), ""},
		{"TIMESTAMP(9)", `"2024-05-30T12:00:00.123456789Z"`, ts(noon+123, 456789), ""},
		{"TIMESTAMP(9)", `"2024-05-30T12:00:00.1Z"`, ts(noon+100, 0), ""},
		{"TIMESTAMP(0)", `"2024-05-30T12:00:00.999Z"`, ts(noon, 0), ""},
		{"TIMESTAMP(1)", `"2024-05-30T12:00:00.987Z"`, ts(noon+900, 0), ""},
		{"TIMESTAMP(9)", `"1969-12-31T23:59:59.999999999Z"`, ts(-1, 999999), ""},
		{"TIMESTAMP(0)", `"1969-12-31T23:59:59.5Z"`, ts(-1000, 0), ""},
		{"TIMESTAMP(3)", `"0000-01-01T00:00:00Z"`, ts(-62167219200000, 0), ""},
		{"TIMESTAMP(3)", `"9999-12-31T23:59:59.999Z"`, ts(253402300799999, 0), ""},
		{"TIMESTAMP(3)", `"9999-12-31T23:59:59-01:00"`, nil, "outside the years 0000-9999"},
		{"TIMESTAMP(3)", `"0000-01-01T00:30:00+01:00"`, nil, "outside the years 0000-9999"},
		{"TIMESTAMP(3)", `"2024-05-30T25:00:00Z"`, nil, "time 25:00:00 out of range"},
		{"TIMESTAMP(3)", `"2024-05-30T12:00:00+2"`, nil, `invalid UTC offset "+2"`},
		{"TIMESTAMP(3)", `"2024-05-30T12:00:00+24:00"`, nil, "invalid UTC offset"},
		{"TIMESTAMP(3)", `"2024-05-30T12:00:00.1234567891Z"`, nil, "more than 9 fraction digits"},
		{"TIMESTAMP(3)", `"2024-05-30X12:00:00Z"`, nil, "expected 'T' or a space"},
		{"TIMESTAMP(3)", `"2024-05-30T12:00:00 UTC"`, nil, "after the time"},
		{"TIMESTAMP(3)", `"yesterday"`, nil, `cannot convert string "yesterday" to TIMESTAMP(3): expected RFC 3339 text or an epoch number in ms`},
		{"TIMESTAMP(3)", `true`, nil, "cannot convert boolean true to TIMESTAMP(3)"},
		// Epoch numbers in the default unit, milliseconds.
		{"TIMESTAMP(3)", `1717070400000`, ts(noon, 0), ""},
		{"TIMESTAMP(3)", `"1717070400000"`, ts(noon, 0), ""},
		{"TIMESTAMP(9)", `1717070400000.123456`, ts(noon, 123456), ""},
		{"TIMESTAMP(9)", `-0.5`, ts(-1, 500000), ""},
		{"TIMESTAMP(3)", `-1`, ts(-1, 0), ""},
		{"TIMESTAMP(3)", `253402300800000`, nil, "outside the years 0000-9999"},
		{"TIMESTAMP(3)", `1e30`, nil, "outside the years 0000-9999"},
		{"TIMESTAMP(3) WITH LOCAL TIME ZONE", `"2024-05-30T14:00:00+02:00"`, ts(noon, 0), ""},
		{"TIMESTAMP(3) WITH LOCAL TIME ZONE", `"2024-05-30T12:00:00"`, ts(noon, 0), ""},
		{"TIMESTAMP_LTZ(6)", `1717070400000`, ts(noon, 0), ""},
		{"TIMESTAMP(3) NOT NULL", `null`, nil, "cannot convert null to TIMESTAMP(3) NOT NULL"},
	})
}

func TestConvertTimestampUnits(t *testing.T) {
	const noon = int64(1717070400000)
	cases := []struct {
		unit TimeUnit
		typ  string
		in   string
		want types.Timestamp
		err  string
	}{
		{UnitSeconds, "TIMESTAMP(3)", `1717070400`, ts(noon, 0), ""},
		{UnitSeconds, "TIMESTAMP(3)", `1717070400.123`, ts(noon+123, 0), ""},
		{UnitSeconds, "TIMESTAMP(9)", `1717070400.123456789`, ts(noon+123, 456789), ""},
		{UnitSeconds, "TIMESTAMP(9)", `1717070400.1234567891`, ts(noon+123, 456789), ""},
		{UnitSeconds, "TIMESTAMP(3)", `-1`, ts(-1000, 0), ""},
		{UnitSeconds, "TIMESTAMP(3)", `253402300800`, types.Timestamp{}, "outside the years 0000-9999"},
		{UnitSeconds, "TIMESTAMP(3)", `9223372036854775807`, types.Timestamp{}, "outside the years 0000-9999"},
		{UnitMillis, "TIMESTAMP(3)", `1717070400000`, ts(noon, 0), ""},
		{UnitMicros, "TIMESTAMP(6)", `1717070400123456`, ts(noon+123, 456000), ""},
		{UnitMicros, "TIMESTAMP(6)", `-1`, ts(-1, 999000), ""},
		{UnitMicros, "TIMESTAMP(3)", `1717070400123456`, ts(noon+123, 0), ""},
		{UnitNanos, "TIMESTAMP(9)", `1717070400123456789`, ts(noon+123, 456789), ""},
		{UnitNanos, "TIMESTAMP(9)", `-1`, ts(-1, 999999), ""},
		{UnitNanos, "TIMESTAMP_LTZ(9)", `"1717070400123456789"`, ts(noon+123, 456789), ""},
		{UnitNanos, "TIMESTAMP(9)", `1.5`, ts(0, 1), ""},
	}
	for _, tc := range cases {
		got, err := ConvertValue(types.MustParse(tc.typ), jsonValue(t, tc.in), ConvertOptions{TimestampUnit: tc.unit})
		if tc.err != "" {
			if err == nil || !strings.Contains(err.Error(), tc.err) {
				t.Errorf("%s %s <- %s: error %v, want %q", tc.unit, tc.typ, tc.in, err, tc.err)
			}
			continue
		}
		if err != nil || got != tc.want {
			t.Errorf("%s %s <- %s: got %#v, %v; want %#v", tc.unit, tc.typ, tc.in, got, err, tc.want)
		}
	}
	// Go values: int64 fast path, float64 via its shortest text, time.Time.
	got, err := ConvertValue(types.TimestampType(3), int64(1717070400), ConvertOptions{TimestampUnit: UnitSeconds})
	if err != nil || got != ts(noon, 0) {
		t.Errorf("int64 seconds: %v, %v", got, err)
	}
	got, err = ConvertValue(types.TimestampType(3), 1717070400.5, ConvertOptions{TimestampUnit: UnitSeconds})
	if err != nil || got != ts(noon+500, 0) {
		t.Errorf("float64 seconds: %v, %v", got, err)
	}
	berlin := time.FixedZone("CEST", 2*3600)
	tm := time.Date(2024, 5, 30, 14, 0, 0, 123456789, berlin)
	for _, typ := range []types.DataType{types.TimestampType(9), types.LocalZonedTimestampType(9)} {
		got, err = ConvertValue(typ, tm, ConvertOptions{})
		if err != nil || got != ts(noon+123, 456789) {
			t.Errorf("%s <- time.Time: %v, %v", typ, got, err)
		}
	}
	got, err = ConvertValue(types.DateType(), time.Date(2024, 5, 31, 1, 0, 0, 0, berlin), ConvertOptions{})
	if err != nil || got != types.Date(19873) {
		t.Errorf("DATE <- time.Time: %v, %v (want the UTC day 2024-05-30)", got, err)
	}
	got, err = ConvertValue(types.TimeType(3), tm, ConvertOptions{})
	if err != nil || got != types.Time(12*3600000+123) {
		t.Errorf("TIME <- time.Time: %v, %v", got, err)
	}
}

func TestConvertArray(t *testing.T) {
	runValueCases(t, ConvertOptions{}, []valueCase{
		{"ARRAY<INT>", `[1, 2, null]`, []any{int32(1), int32(2), nil}, ""},
		{"ARRAY<INT>", `[]`, []any{}, ""},
		{"ARRAY<INT>", `[1, "x"]`, nil, `cannot convert string "x" to INT`},
		{"ARRAY<INT NOT NULL>", `[1, null]`, nil, "cannot convert null to INT NOT NULL"},
		{"ARRAY<INT>", `{"a": 1}`, nil, "cannot convert object to ARRAY<INT>"},
		{"ARRAY<ARRAY<STRING>>", `[["a"], [], null]`, []any{[]any{"a"}, []any{}, nil}, ""},
	})
	// Go slices other than []any (set by Go code) are accepted.
	got, err := ConvertValue(types.MustParse("ARRAY<STRING>"), []string{"a", "b"}, ConvertOptions{})
	if err != nil || !equalValues(got, []any{"a", "b"}) {
		t.Errorf("ARRAY <- []string: %v, %v", got, err)
	}
}

func TestConvertMap(t *testing.T) {
	runValueCases(t, ConvertOptions{}, []valueCase{
		{"MAP<STRING, INT>", `{"b": 2, "a": 1}`, types.Map{Keys: []any{"a", "b"}, Values: []any{int32(1), int32(2)}}, ""},
		{"MAP<STRING, INT>", `{}`, types.Map{Keys: []any{}, Values: []any{}}, ""},
		{"MAP<STRING, INT>", `[["b", 2], ["a", null]]`, types.Map{Keys: []any{"b", "a"}, Values: []any{int32(2), nil}}, ""},
		{"MAP<STRING, INT>", `[{"key": "a", "value": 1}, {"key": "b"}]`, types.Map{Keys: []any{"a", "b"}, Values: []any{int32(1), nil}}, ""},
		{"MAP<STRING, INT>", `[["a", 1], ["a", 2]]`, nil, `duplicate map key string "a"`},
		{"MAP<STRING, INT>", `[{"key": "a", "value": 1, "x": 2}]`, nil, `an entry object needs "key" and "value" and nothing else`},
		{"MAP<STRING, INT>", `[["a", 1, 2]]`, nil, `an entry must be a [key, value] pair`},
		{"MAP<STRING, INT>", `{"a": "x"}`, nil, `cannot convert string "x" to INT`},
		{"MAP<STRING, INT>", `"a=1"`, nil, "expected an object, an array of [key, value] pairs"},
		{"MAP<INT, STRING>", `{"2": "b", "1": "a"}`, types.Map{Keys: []any{int32(1), int32(2)}, Values: []any{"a", "b"}}, ""},
		{"MAP<INT, STRING>", `{"1": "x", "01": "y"}`, nil, "duplicate map key"},
		{"MAP<INT, STRING>", `[[2, "b"], [1, "a"]]`, types.Map{Keys: []any{int32(2), int32(1)}, Values: []any{"b", "a"}}, ""},
		{"MAP<INT, STRING>", `{"x": "a"}`, nil, `cannot convert string "x" to INT`},
		{"MAP<INT NOT NULL, STRING>", `[[null, "a"]]`, nil, "cannot convert null to INT NOT NULL"},
		{"MAP<DATE, DECIMAL(5, 1)>", `{"2024-05-30": "1.5"}`, types.Map{Keys: []any{types.Date(19873)}, Values: []any{dec("15", 1)}}, ""},
		{"MAP<ARRAY<INT>, INT>", `[[[1, 2], 1], [[1, 2], 2]]`, nil, "duplicate map key"},
	})
}

func TestConvertMultiset(t *testing.T) {
	runValueCases(t, ConvertOptions{}, []valueCase{
		{"MULTISET<STRING>", `["a", "b", "a"]`, types.Map{Keys: []any{"a", "b"}, Values: []any{int32(2), int32(1)}}, ""},
		{"MULTISET<STRING>", `{"a": 2, "b": 1}`, types.Map{Keys: []any{"a", "b"}, Values: []any{int32(2), int32(1)}}, ""},
		{"MULTISET<STRING>", `{"a": 0}`, nil, "multiset count 0 is not positive"},
		{"MULTISET<STRING>", `{"a": null}`, nil, "cannot convert null to INT NOT NULL"},
		{"MULTISET<INT>", `[{"key": 5, "value": 3}]`, types.Map{Keys: []any{int32(5)}, Values: []any{int32(3)}}, ""},
		{"MULTISET<INT>", `[1, 1, null, null]`, types.Map{Keys: []any{int32(1), nil}, Values: []any{int32(2), int32(2)}}, ""},
		{"MULTISET<INT>", `[]`, types.Map{}, ""},
		{"MULTISET<DECIMAL(4, 2)>", `["1.5", 1.50, "2"]`, types.Map{Keys: []any{dec("150", 2), dec("200", 2)}, Values: []any{int32(2), int32(1)}}, ""},
	})
}

func TestConvertRow(t *testing.T) {
	typ := "ROW<a INT, b STRING NOT NULL>"
	runValueCases(t, ConvertOptions{}, []valueCase{
		{typ, `{"a": 1, "b": "x"}`, []any{int32(1), "x"}, ""},
		{typ, `{"b": "x"}`, []any{nil, "x"}, ""},
		{typ, `[1, "x"]`, []any{int32(1), "x"}, ""},
		{typ, `[1]`, nil, "an array for a ROW needs 2 elements"},
		{typ, `{"a": 1}`, nil, "missing, and the column is STRING NOT NULL"},
		{typ, `{"a": 1, "b": "x", "c": 2}`, nil, "not a field of ROW<`a` INT, `b` STRING NOT NULL> (unknown_fields: error)"},
		{typ, `"x"`, nil, "cannot convert string \"x\" to ROW<"},
	})
	runValueCases(t, ConvertOptions{UnknownFields: UnknownFieldsIgnore}, []valueCase{
		{typ, `{"a": 1, "b": "x", "c": 2}`, []any{int32(1), "x"}, ""},
	})
}

func mustConverter(t testing.TB, schema string, o ConvertOptions) *Converter {
	t.Helper()
	rt := types.MustParse(schema)
	c, err := NewConverter(rt.Fields, o)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

func TestConvertErrorMessages(t *testing.T) {
	c := mustConverter(t, "ROW<id BIGINT NOT NULL, amount DECIMAL(10, 2), a ROW<b ARRAY<INT>, m MAP<STRING, ROW<x DATE>>>, tags MAP<INT, INT>>", ConvertOptions{})
	cases := []struct {
		in   string
		msg  string
		kind error
	}{
		{`{"id": 1, "amount": "abc"}`, `field "amount": cannot convert string "abc" to DECIMAL(10, 2): not a decimal number`, ErrInvalidValue},
		{`{"amount": 1}`, `field "id": missing, and the column is BIGINT NOT NULL`, ErrNotNull},
		{`{"id": null}`, `field "id": cannot convert null to BIGINT NOT NULL`, ErrNotNull},
		{`{"id": 1.5}`, `field "id": cannot convert number 1.5 to BIGINT NOT NULL: not a whole number`, ErrInvalidValue},
		{`{"id": 1, "a": {"b": [1, "x"]}}`, `field "a.b[1]": cannot convert string "x" to INT`, ErrInvalidValue},
		{`{"id": 1, "a": {"m": {"k1": {"x": "2024-99-01"}}}}`, `field "a.m[k1].x": cannot convert string "2024-99-01" to DATE: month 99 out of range`, ErrInvalidValue},
		{`{"id": 1, "a": {"z": 1}}`, `field "a.z": not a field of`, ErrUnknownField},
		{`{"id": 1, "tags": [[1, 1], ["x", 2]]}`, `field "tags[1].key": cannot convert string "x" to INT`, ErrInvalidValue},
		{`{"id": 1, "tags": [[1, 1], {"key": 2, "value": "y"}]}`, `field "tags[1].value": cannot convert string "y" to INT`, ErrInvalidValue},
		{`{"id": 1, "extra": true}`, `field "extra": not a column of the table (unknown_fields: error)`, ErrUnknownField},
		{`[1, 2]`, `message is not a JSON object but array`, ErrNotObject},
		{`"hello"`, `message is not a JSON object but string "hello"`, ErrNotObject},
	}
	for _, tc := range cases {
		_, _, err := c.Convert(jsonValue(t, tc.in))
		if err == nil {
			t.Errorf("%s: no error, want %q", tc.in, tc.msg)
			continue
		}
		if !strings.HasPrefix(err.Error(), tc.msg) {
			t.Errorf("%s:\n got %q\nwant %q", tc.in, err, tc.msg)
		}
		if !errors.Is(err, tc.kind) {
			t.Errorf("%s: error %v does not wrap %v", tc.in, err, tc.kind)
		}
		var ce *ConvertError
		if !errors.As(err, &ce) {
			t.Errorf("%s: error is %T, want *ConvertError", tc.in, err)
		}
	}
	// Object keys that collide once converted to the key type.
	_, _, err := c.Convert(jsonValue(t, `{"id": 1, "tags": {"1": 1, "001": 2}}`))
	if err == nil || !strings.HasPrefix(err.Error(), `field "tags[1]": duplicate map key string "1" after conversion to INT`) {
		t.Errorf("duplicate converted key: %v", err)
	}
}

func TestConvertRowsAndUnknownFields(t *testing.T) {
	schema := "ROW<id BIGINT NOT NULL, name STRING, ts TIMESTAMP(3)>"
	in := `{"id": 7, "name": "x", "ts": "2024-05-30T12:00:00Z", "zeta": 1.5, "alpha": "a", "nothing": null, "obj": {"k": [1]}, "n": 12}`

	c := mustConverter(t, schema, ConvertOptions{UnknownFields: UnknownFieldsIgnore})
	row, added, err := c.Convert(jsonValue(t, in))
	if err != nil || added != nil {
		t.Fatalf("ignore: %v, %v", added, err)
	}
	want := []any{int64(7), "x", ts(1717070400000, 0)}
	if !equalValues(row, want) {
		t.Errorf("ignore: row %#v, want %#v", row, want)
	}

	c = mustConverter(t, schema, ConvertOptions{UnknownFields: UnknownFieldsError})
	if _, _, err := c.Convert(jsonValue(t, in)); err == nil || err.Error() != `field "alpha": not a column of the table (unknown_fields: error)` {
		t.Errorf("error mode: %v (want the first unknown field by name)", err)
	}

	c = mustConverter(t, schema, ConvertOptions{SchemaEvolution: true})
	row, added, err = c.Convert(jsonValue(t, in))
	if err != nil {
		t.Fatal(err)
	}
	if !equalValues(row, want) {
		t.Errorf("evolution: row %#v", row)
	}
	wantAdded := []NewColumn{
		{"alpha", types.StringType()},
		{"n", types.BigIntType()},
		{"obj", types.StringType()},
		{"zeta", types.DoubleType()},
	}
	if !reflect.DeepEqual(added, wantAdded) {
		t.Errorf("evolution: added %v, want %v", added, wantAdded)
	}

	// After evolving, the new columns take the values (objects as JSON text).
	evolved := mustConverter(t, "ROW<id BIGINT NOT NULL, name STRING, ts TIMESTAMP(3), alpha STRING, n BIGINT, obj STRING, zeta DOUBLE>", ConvertOptions{SchemaEvolution: true})
	row, added, err = evolved.Convert(jsonValue(t, in))
	if err != nil || len(added) != 0 {
		t.Fatalf("evolved: %v, %v", added, err)
	}
	want = append(want, "a", int64(12), `{"k":[1]}`, 1.5)
	if !equalValues(row, want) {
		t.Errorf("evolved: row %#v, want %#v", row, want)
	}

	// An empty field name cannot become a column.
	if _, _, err := c.Convert(map[string]any{"id": 1, "": "x"}); !errors.Is(err, ErrUnknownField) {
		t.Errorf("empty name: %v", err)
	}
}

func TestInferType(t *testing.T) {
	cases := []struct {
		in   any
		want string
	}{
		{"x", "STRING"},
		{true, "BOOLEAN"},
		{json.Number("12"), "BIGINT"},
		{json.Number("-9223372036854775808"), "BIGINT"},
		{json.Number("9223372036854775808"), "DOUBLE"},
		{json.Number("1.0"), "DOUBLE"},
		{json.Number("1e3"), "DOUBLE"},
		{1.0, "DOUBLE"},
		{int64(3), "BIGINT"},
		{uint64(math.MaxUint64), "DOUBLE"},
		{[]byte("x"), "BYTES"},
		{time.Now(), "TIMESTAMP(6) WITH LOCAL TIME ZONE"},
		{map[string]any{"a": 1}, "STRING"},
		{[]any{1}, "STRING"},
	}
	for _, tc := range cases {
		got, ok := InferType(tc.in)
		if !ok || got.String() != tc.want {
			t.Errorf("InferType(%#v) = %s, %v; want %s", tc.in, got, ok, tc.want)
		}
	}
	if _, ok := InferType(nil); ok {
		t.Error("InferType(nil) should have no type")
	}
}

func TestConvertMessage(t *testing.T) {
	c := mustConverter(t, "ROW<id BIGINT, big BIGINT, d DECIMAL(20, 0)>", ConvertOptions{})
	row, _, err := c.ConvertMessage(service.NewMessage([]byte(`{"id": 1, "big": 9007199254740993, "d": 12345678901234567890}`)))
	if err != nil {
		t.Fatal(err)
	}
	// Benthos parses numbers as json.Number, so no digit is lost beyond 2^53.
	if row[1] != int64(9007199254740993) || !equalValues(row[2], dec("12345678901234567890", 0)) {
		t.Errorf("row %#v", row)
	}
	for _, raw := range []string{`not json`, `{"id": 1} {"id": 2}`, `[{"id": 1}]`} {
		if _, _, err := c.ConvertMessage(service.NewMessage([]byte(raw))); !errors.Is(err, ErrNotObject) {
			t.Errorf("%q: error %v, want ErrNotObject", raw, err)
		}
	}
	// Structured content set by a processor (Go types from Bloblang).
	msg := service.NewMessage(nil)
	msg.SetStructured(map[string]any{"id": int64(5), "big": 6.0, "d": "7"})
	row, _, err = c.ConvertMessage(msg)
	if err != nil || row[0] != int64(5) || row[1] != int64(6) || !equalValues(row[2], dec("7", 0)) {
		t.Errorf("structured: %#v, %v", row, err)
	}
}

func TestNewConverterRejectsBadOptions(t *testing.T) {
	if _, err := NewConverter(nil, ConvertOptions{UnknownFields: "drop"}); err == nil {
		t.Error("unknown_fields drop accepted")
	}
	if _, err := NewConverter(nil, ConvertOptions{TimestampUnit: "minutes"}); err == nil {
		t.Error("timestamp_unit minutes accepted")
	}
	fields := types.MustParse("ROW<a INT, a STRING>").Fields
	if _, err := NewConverter(fields, ConvertOptions{}); err == nil {
		t.Error("duplicate column accepted")
	}
}

// allTypesSchema has a column of every Paimon type, nested ones included.
const allTypesSchema = "ROW<b BOOLEAN, ti TINYINT, si SMALLINT, i INT, bi BIGINT NOT NULL, f FLOAT, d DOUBLE, " +
	"d1 DECIMAL(9, 2), d2 DECIMAL(18, 4), d3 DECIMAL(38, 10), c CHAR(3), vc VARCHAR(5), s STRING, " +
	"bin BINARY(4), vb VARBINARY(8), by BYTES, dt DATE, tm TIME(3), t0 TIMESTAMP(0), t3 TIMESTAMP(3), " +
	"t6 TIMESTAMP(6), t9 TIMESTAMP(9), l3 TIMESTAMP(3) WITH LOCAL TIME ZONE, l9 TIMESTAMP_LTZ(9), " +
	"arr ARRAY<INT>, m1 MAP<STRING, DOUBLE>, m2 MAP<INT, ARRAY<STRING>>, ms MULTISET<STRING>, " +
	"r ROW<x INT NOT NULL, y ROW<z DATE>>>"

func FuzzConvert(f *testing.F) {
	seeds := []string{
		`{"bi": 1}`,
		`{"bi": 9223372036854775807, "ti": -128, "d1": "1234567.89", "d3": "1e-10", "t9": "2024-05-30T12:00:00.123456789+02:00"}`,
		`{"bi": "1e3", "f": "NaN", "d": 1e308, "c": "abc", "vc": "héllo", "bin": "AAECAw==", "dt": "2024-02-29", "tm": "23:59:59.999"}`,
		`{"bi": 0, "arr": [1, null], "m1": {"a": 1.5}, "m2": [[1, ["x"]], {"key": 2, "value": null}], "ms": ["a", "a"], "r": {"x": 1, "y": {"z": 19873}}}`,
		`{"bi": 0, "r": [1, null], "t0": -0.5, "l3": "0000-01-01", "l9": 253402300799999}`,
		`[1]`, `"x"`, `{"bi": 1e400}`, `{"bi": "1e99999999999"}`,
	}
	for _, s := range seeds {
		f.Add([]byte(s))
	}
	rt := types.MustParse(allTypesSchema)
	convs := []*Converter{}
	for _, o := range []ConvertOptions{{}, {UnknownFields: UnknownFieldsIgnore, TimestampUnit: UnitNanos}, {SchemaEvolution: true, TimestampUnit: UnitSeconds}} {
		c, err := NewConverter(rt.Fields, o)
		if err != nil {
			f.Fatal(err)
		}
		convs = append(convs, c)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber()
		var v any
		if err := dec.Decode(&v); err != nil {
			v = string(data) // also throw the raw text at every column
		}
		for _, c := range convs {
			row, _, err := c.Convert(v)
			if err == nil && len(row) != len(rt.Fields) {
				t.Fatalf("row of %d values", len(row))
			}
			if err != nil {
				var ce *ConvertError
				if !errors.As(err, &ce) {
					t.Fatalf("error %T %v is not a *ConvertError", err, err)
				}
			}
			for _, fld := range rt.Fields {
				_, _, _ = c.Convert(map[string]any{"bi": json.Number("1"), fld.Name: v})
			}
		}
	})
}
