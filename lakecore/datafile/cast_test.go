package datafile

import (
	"errors"
	"math"
	"testing"
	"time"
	_ "time/tzdata" // Asia/Shanghai on machines without a zoneinfo database

	"github.com/benthos-paimon/benthos-paimon/internal/fixturetest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

func TestCastValues(t *testing.T) {
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	T := types.MustParse
	tests := []struct {
		name     string
		from, to string
		loc      *time.Location
		in       any
		want     any // nil: SQL NULL
	}{
		// NumericPrimitiveCastRule: Java's narrowing and float-to-int conversions.
		{"int widen", "INT", "BIGINT", nil, int32(-7), int64(-7)},
		{"bigint wraps to int", "BIGINT", "INT", nil, int64(1) << 33, int32(0)},
		{"int wraps to tinyint", "INT", "TINYINT", nil, int32(383), int8(127)},
		{"smallint wraps to tinyint", "SMALLINT", "TINYINT", nil, int16(200), int8(-56)},
		{"double saturates to int", "DOUBLE", "INT", nil, 1e20, int32(math.MaxInt32)},
		{"double NaN to bigint", "DOUBLE", "BIGINT", nil, math.NaN(), int64(0)},
		{"double truncates to int", "DOUBLE", "INT", nil, -2.9, int32(-2)},
		{"double to tinyint via int", "DOUBLE", "TINYINT", nil, 300.5, int8(44)},
		{"float to double", "FLOAT", "DOUBLE", nil, float32(3.1), float64(float32(3.1))},
		{"bigint to float", "BIGINT", "FLOAT", nil, int64(16777217), float32(16777216)},
		// DecimalToNumericPrimitiveCastRule
		{"decimal to int truncates", "DECIMAL(5, 2)", "INT", nil, rdDec("-1.99"), int32(-1)},
		{"decimal to double", "DECIMAL(5, 2)", "DOUBLE", nil, rdDec("1.25"), 1.25},
		{"wide decimal to bigint keeps low bits", "DECIMAL(38, 0)", "BIGINT", nil, rdDec("18446744073709551617"), int64(1)},
		// Decimal targets: HALF_UP rounding, overflow is NULL.
		{"decimal widen", "DECIMAL(5, 2)", "DECIMAL(6, 3)", nil, rdDec("0.02"), rdDec("0.020")},
		{"decimal rounds half up", "DECIMAL(5, 2)", "DECIMAL(5, 1)", nil, rdDec("1.25"), rdDec("1.3")},
		{"negative decimal rounds half up", "DECIMAL(5, 2)", "DECIMAL(5, 1)", nil, rdDec("-1.25"), rdDec("-1.3")},
		{"decimal overflow is null", "DECIMAL(5, 2)", "DECIMAL(3, 2)", nil, rdDec("123.45"), nil},
		{"int to decimal", "INT", "DECIMAL(10, 2)", nil, int32(42), rdDec("42.00")},
		{"int to decimal overflow", "INT", "DECIMAL(3, 2)", nil, int32(42), nil},
		{"double to decimal via Double.toString", "DOUBLE", "DECIMAL(5, 3)", nil, 0.1, rdDec("0.100")},
		{"float to decimal via its double", "FLOAT", "DECIMAL(10, 8)", nil, float32(3.1), rdDec("3.09999990")},
		{"string to decimal", "STRING", "DECIMAL(4, 2)", nil, "1.255", rdDec("1.26")},
		{"string exponent to decimal", "STRING", "DECIMAL(6, 1)", nil, "-1.5E3", rdDec("-1500.0")},
		{"boolean to decimal", "BOOLEAN", "DECIMAL(3, 1)", nil, true, rdDec("1.0")},
		// Boolean rules.
		{"string yes", "STRING", "BOOLEAN", nil, "Yes", true},
		{"string nO", "STRING", "BOOLEAN", nil, "nO", false},
		{"string 1", "STRING", "BOOLEAN", nil, "1", true},
		{"int to boolean", "INT", "BOOLEAN", nil, int32(-3), true},
		{"boolean to int", "BOOLEAN", "INT", nil, true, int32(1)},
		{"boolean to string", "BOOLEAN", "STRING", nil, false, "false"},
		// String to numbers (BinaryStringUtils.toInt / toLong).
		{"string to int", "STRING", "INT", nil, "100", int32(100)},
		{"string with fraction to int", "STRING", "INT", nil, "-12.7", int32(-12)},
		{"string plus sign", "STRING", "BIGINT", nil, "+5", int64(5)},
		{"string int min", "STRING", "INT", nil, "-2147483648", int32(math.MinInt32)},
		{"string to smallint", "STRING", "SMALLINT", nil, "-32768", int16(-32768)},
		{"string to double", "STRING", "DOUBLE", nil, " 1.5e3 ", 1500.0},
		{"string to float suffix", "STRING", "FLOAT", nil, "2.5f", float32(2.5)},
		// To string.
		{"int to string", "INT", "STRING", nil, int32(-42), "-42"},
		{"double to string plain", "DOUBLE", "STRING", nil, 100.0, "100.0"},
		{"double to string small", "DOUBLE", "STRING", nil, 0.001, "0.001"},
		{"double to string sci", "DOUBLE", "STRING", nil, 1e7, "1.0E7"},
		{"double to string tiny", "DOUBLE", "STRING", nil, 1.5e-5, "1.5E-5"},
		{"double to string, 2 digits where the shortest has 1", "DOUBLE", "STRING", nil, math.SmallestNonzeroFloat64, "4.9E-324"},
		{"float to string", "FLOAT", "STRING", nil, float32(3.1), "3.1"},
		{"decimal to string", "DECIMAL(10, 4)", "STRING", nil, rdDec("-0.0500"), "-0.0500"},
		{"int to varchar truncates", "INT", "VARCHAR(2)", nil, int32(12345), "12"},
		{"string to char pads", "STRING", "CHAR(5)", nil, "ab", "ab   "},
		{"string to varchar counts characters", "STRING", "VARCHAR(2)", nil, "héllo", "hé"},
		{"bytes to string", "BYTES", "STRING", nil, []byte("raw"), "raw"},
		{"string to binary pads", "STRING", "BINARY(4)", nil, "ab", []byte{'a', 'b', 0, 0}},
		{"bytes to varbinary truncates", "BYTES", "VARBINARY(2)", nil, []byte("abc"), []byte("ab")},
		{"timestamp(9) to string", "TIMESTAMP(9)", "STRING", nil, rdTS("2024-11-26T06:38:56.001000001"), "2024-11-26 06:38:56.001000001"},
		{"timestamp(3) keeps 3 digits", "TIMESTAMP(3)", "STRING", nil, rdTS("2024-11-26T06:38:56"), "2024-11-26 06:38:56.000"},
		{"timestamp(0) to string", "TIMESTAMP(0)", "STRING", nil, rdTS("2024-11-26T06:38:56"), "2024-11-26 06:38:56"},
		{"timestamp(9) trims zeros only past precision", "TIMESTAMP(9)", "STRING", nil, rdTS("2024-11-26T06:38:56.5"), "2024-11-26 06:38:56.500000000"},
		{"ltz to string in zone", "TIMESTAMP(3) WITH LOCAL TIME ZONE", "STRING", shanghai, rdTS("1970-01-01T00:00:00"), "1970-01-01 08:00:00.000"},
		{"date to string", "DATE", "STRING", nil, types.Date(4), "1970-01-05"},
		{"time to string", "TIME(3)", "STRING", nil, types.Time(45296789), "12:34:56.789"},
		{"time zero millis to string", "TIME(3)", "STRING", nil, types.Time(45296000), "12:34:56.0"},
		{"time(0) to string", "TIME(0)", "STRING", nil, types.Time(45296789), "12:34:56"},
		{"array to string", "ARRAY<INT>", "STRING", nil, []any{int32(1), nil, int32(3)}, "[1, null, 3]"},
		{"map to string", "MAP<STRING, DOUBLE>", "STRING", nil, types.Map{Keys: []any{"a"}, Values: []any{1.0}}, "{a -> 1.0}"},
		{"row to string", "ROW<a INT, b STRING>", "STRING", nil, []any{int32(1), "x"}, "{1, x}"},
		// Dates, times and timestamps.
		{"date to timestamp", "DATE", "TIMESTAMP(9)", nil, types.Date(-44), rdTS("1969-11-18T00:00:00")},
		{"date to ltz", "DATE", "TIMESTAMP(3) WITH LOCAL TIME ZONE", shanghai, types.Date(0), rdTS("1969-12-31T16:00:00")},
		{"time to timestamp", "TIME(3)", "TIMESTAMP(3)", nil, types.Time(1500), rdTS("1970-01-01T00:00:01.5")},
		{"int seconds to timestamp", "INT", "TIMESTAMP(3)", nil, int32(86401), rdTS("1970-01-02T00:00:01")},
		{"timestamp to date floors", "TIMESTAMP(3)", "DATE", nil, rdTS("1969-12-31T23:00:00"), types.Date(-1)},
		{"timestamp to time", "TIMESTAMP(3)", "TIME(3)", nil, rdTS("1969-12-31T23:00:00.5"), types.Time(82800500)},
		{"timestamp to bigint seconds toward zero", "TIMESTAMP(3)", "BIGINT", nil, rdTS("1969-12-31T23:59:58.5"), int64(-1)},
		{"timestamp narrows precision", "TIMESTAMP(9)", "TIMESTAMP(6)", nil, rdTS("2024-01-01T00:00:00.123456789"), rdTS("2024-01-01T00:00:00.123456")},
		{"timestamp(3) to (0) truncates toward zero", "TIMESTAMP(3)", "TIMESTAMP(0)", nil, types.Timestamp{Millis: -1500}, types.Timestamp{Millis: -1000}},
		{"timestamp to ltz", "TIMESTAMP(3)", "TIMESTAMP(3) WITH LOCAL TIME ZONE", shanghai, rdTS("1970-01-01T08:00:00"), rdTS("1970-01-01T00:00:00")},
		{"ltz to timestamp", "TIMESTAMP(6) WITH LOCAL TIME ZONE", "TIMESTAMP(6)", shanghai, rdTS("1970-01-01T00:00:00"), rdTS("1970-01-01T08:00:00")},
		{"string to date", "STRING", "DATE", nil, "2024-2-3", types.Date(19756)},
		{"number string to date", "STRING", "DATE", nil, "19000", types.Date(19000)},
		{"string to time", "STRING", "TIME(3)", nil, "12:34:56.789", types.Time(45296789)},
		{"string to timestamp", "STRING", "TIMESTAMP(9)", nil, "2024-11-26 06:38:56.001000001", rdTS("2024-11-26T06:38:56.001000001")},
		{"string to timestamp truncates", "STRING", "TIMESTAMP(3)", nil, "2024-11-26 06:38:56.123456", rdTS("2024-11-26T06:38:56.123")},
		{"string T form to timestamp", "STRING", "TIMESTAMP(3)", nil, "2024-11-26T06:38", rdTS("2024-11-26T06:38:00")},
		{"string T form with fraction", "STRING", "TIMESTAMP(6)", nil, "2024-11-26T6:38:5.25", rdTS("2024-11-26T06:38:05.25")},
		{"string date only to timestamp", "STRING", "TIMESTAMP(0)", nil, "2024-1-5", rdTS("2024-01-05T00:00:00")},
		{"day past month end is clamped", "STRING", "TIMESTAMP(0)", nil, "2023-02-30 01:02:03", rdTS("2023-02-28T01:02:03")},
		{"epoch millis string to timestamp", "STRING", "TIMESTAMP(3)", nil, "1700000000000", rdTS("2023-11-14T22:13:20")},
		{"string to ltz in zone", "STRING", "TIMESTAMP(3) WITH LOCAL TIME ZONE", shanghai, "1970-01-01 08:00:00", rdTS("1970-01-01T00:00:00")},
		// Nested: ROW by field id, ARRAY elements, MAP values.
		{"array elements", "ARRAY<INT>", "ARRAY<BIGINT>", nil, []any{int32(1), nil}, []any{int64(1), nil}},
		{"map values", "MAP<STRING, INT>", "MAP<STRING, STRING>", nil,
			types.Map{Keys: []any{"k"}, Values: []any{int32(7)}}, types.Map{Keys: []any{"k"}, Values: []any{"7"}}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			loc := tc.loc
			if loc == nil {
				loc = time.UTC
			}
			c, err := newCast(T(tc.from), T(tc.to), loc)
			if err != nil {
				t.Fatalf("newCast: %v", err)
			}
			if c == nil {
				t.Fatalf("newCast(%s, %s) is the identity", tc.from, tc.to)
			}
			got, err := c(tc.in)
			if err != nil {
				t.Fatalf("cast %v: %v", tc.in, err)
			}
			if g, w := fixturetest.Render(got), fixturetest.Render(tc.want); g != w {
				t.Errorf("cast %s %s to %s = %s, want %s", tc.from, fixturetest.Render(tc.in), tc.to, g, w)
			}
		})
	}
}

func TestCastRowByFieldID(t *testing.T) {
	f := func(id int, name string, typ types.DataType) types.DataField {
		return types.DataField{ID: id, Name: name, Type: typ}
	}
	from := types.RowType(f(10, "x", types.IntType()), f(11, "y", types.StringType()), f(13, "gone", types.IntType()))
	to := types.RowType(f(11, "y2", types.StringType()), f(10, "x", types.BigIntType()), f(12, "z", types.IntType()))
	c, err := newCast(from, to, time.UTC)
	if err != nil || c == nil {
		t.Fatalf("newCast: %v, %v", c, err)
	}
	got, err := c([]any{int32(5), "five", int32(9)})
	if err != nil {
		t.Fatal(err)
	}
	if g, w := fixturetest.Render(got), fixturetest.Render([]any{"five", int64(5), nil}); g != w {
		t.Errorf("row cast = %s, want %s", g, w)
	}
}

func TestCastIdentity(t *testing.T) {
	for _, pair := range [][2]string{
		{"INT", "INT NOT NULL"},
		{"ARRAY<ROW<a INT>>", "ARRAY<ROW<a INT>> NOT NULL"},
		{"MAP<STRING NOT NULL, INT>", "MAP<STRING NOT NULL, INT>"},
	} {
		c, err := newCast(types.MustParse(pair[0]), types.MustParse(pair[1]), time.UTC)
		if err != nil || c != nil {
			t.Errorf("newCast(%s, %s) = %v, %v; want the identity", pair[0], pair[1], c != nil, err)
		}
	}
}

func TestCastUnsupported(t *testing.T) {
	for _, pair := range [][2]string{
		{"DATE", "BOOLEAN"},
		{"DATE", "INT"},
		{"TIMESTAMP(3)", "DECIMAL(10, 0)"},
		{"TIMESTAMP(3)", "VARCHAR(10)"},
		{"DOUBLE", "TIMESTAMP(3)"},
		{"DECIMAL(10, 2)", "BOOLEAN"},
		{"STRING", "ARRAY<INT>"},
		{"MAP<STRING, INT>", "MAP<INT, INT>"},
		{"MULTISET<INT>", "STRING"},
		{"BOOLEAN", "DATE"},
		{"ARRAY<INT>", "ARRAY<DATE>"},
	} {
		_, err := newCast(types.MustParse(pair[0]), types.MustParse(pair[1]), time.UTC)
		if !errors.Is(err, ErrUnsupportedCast) {
			t.Errorf("newCast(%s, %s) error = %v, want ErrUnsupportedCast", pair[0], pair[1], err)
		}
	}
}

func TestCastFailures(t *testing.T) {
	for _, tc := range []struct {
		from, to string
		in       any
	}{
		{"STRING", "INT", "I'm strange"},
		{"STRING", "INT", " 12"},
		{"STRING", "INT", "2147483648"},
		{"STRING", "TINYINT", "128"},
		{"STRING", "BOOLEAN", "maybe"},
		{"STRING", "DECIMAL(5, 2)", "1,5"},
		{"STRING", "DOUBLE", "inf"},
		{"STRING", "DATE", "2024-02-30"},
		{"STRING", "TIMESTAMP(3)", "2024-11-26 25:00:00"},
		{"STRING", "TIMESTAMP(3)", "yesterday"},
		{"STRING", "TIMESTAMP(3)", "2024-11-26 06:38"},
		{"STRING", "TIMESTAMP(2)", "12345"},
		{"STRING", "TIME(0)", "noon"},
		{"DOUBLE", "DECIMAL(5, 2)", math.Inf(1)},
	} {
		c, err := newCast(types.MustParse(tc.from), types.MustParse(tc.to), time.UTC)
		if err != nil {
			t.Fatalf("newCast(%s, %s): %v", tc.from, tc.to, err)
		}
		if v, err := c(tc.in); !errors.Is(err, ErrCastFailed) {
			t.Errorf("cast %q %s to %s = %v, %v; want ErrCastFailed", tc.in, tc.from, tc.to, v, err)
		}
	}
}
