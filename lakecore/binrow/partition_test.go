package binrow_test

import (
	"errors"
	"math"
	"strings"
	"testing"
	"time"
	_ "time/tzdata" // Asia/Shanghai on machines without a zoneinfo database

	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

func TestEscapePathName(t *testing.T) {
	cases := []struct{ in, want string }{
		{"plain", "plain"},
		{"2024-05-30", "2024-05-30"},
		{"a b", "a b"},
		{"é中文", "é中文"},
		{"a/b", "a%2Fb"},
		{"k=v:w", "k%3Dv%3Aw"},
		{`"#%'*/:=?\`, "%22%23%25%27%2A%2F%3A%3D%3F%5C"},
		{"{}[]^", "%7B%7D%5B%5D%5E"},
		{"\x00\x01\t\n\x1f\x7f", "%00%01%09%0A%1F%7F"},
		{"2024-05-30T12:00", "2024-05-30T12%3A00"},
		{"~!@$&()+,;<>|`", "~!@$&()+,;<>|`"},
		{"", ""},
	}
	for _, c := range cases {
		if got := binrow.EscapePathName(c.in); got != c.want {
			t.Errorf("EscapePathName(%q) = %q, want %q", c.in, got, c.want)
		}
	}
}

func key(name string, t types.DataType) types.DataField { return types.DataField{Name: name, Type: t} }

// partitionName returns the single partition value string of v.
func partitionName(t *testing.T, typ types.DataType, v any, o binrow.PartitionOptions) string {
	t.Helper()
	vals, err := binrow.PartitionValues([]types.DataField{key("k", typ)}, []any{v}, o)
	if err != nil {
		t.Fatalf("PartitionValues(%s, %#v): %v", typ, v, err)
	}
	return vals[0]
}

// 1899-01-01T00:59:20.001001001, a value of the fixed-bucket fixture.
var ts1899 = ts(-2240521239999, 1001)

func TestPartitionValuesLegacy(t *testing.T) {
	legacy := binrow.DefaultPartitionOptions()
	cases := []struct {
		name string
		t    types.DataType
		v    any
		want string
	}{
		{"STRING", strT, "2024-05-30", "2024-05-30"},
		{"CHAR", types.CharType(2), "ab", "ab"},
		{"BOOLEAN", types.BooleanType(), true, "true"},
		{"TINYINT", types.TinyIntType(), int8(-5), "-5"},
		{"SMALLINT", types.SmallIntType(), int16(300), "300"},
		{"INT", intT, int32(10), "10"},
		{"BIGINT", types.BigIntType(), int64(-9223372036854775808), "-9223372036854775808"},
		{"FLOAT", types.FloatType(), float32(1.5), "1.5"},
		{"DOUBLE", dblT, 1e10, "1.0E10"},
		{"DECIMAL keeps the type scale", types.DecimalType(10, 2), types.NewDecimal(123, 1), "12.30"},
		{"DECIMAL negative fraction", types.DecimalType(5, 3), types.NewDecimal(-5, 3), "-0.005"},
		{"DECIMAL non-compact", dec23T, bigDecimal(t, "12345678998765432145678", 5), "123456789987654321.45678"},
		{"DATE is the epoch day", dateT, types.Date(19873), "19873"},
		{"DATE negative", dateT, types.Date(-1), "-1"},
		{"TIME is ms of day", types.TimeType(0), types.Time(3_723_000), "3723000"},
		{"TIMESTAMP minutes only", ts6T, ts(1717070400000, 0), "2024-05-30T12:00"},
		{"TIMESTAMP seconds", ts6T, ts(1717070401000, 0), "2024-05-30T12:00:01"},
		{"TIMESTAMP millis", ts6T, ts(1717070400500, 0), "2024-05-30T12:00:00.500"},
		{"TIMESTAMP micros", ts6T, ts(1717070400000, 123000), "2024-05-30T12:00:00.000123"},
		{"TIMESTAMP nanos", ts9T, ts(1717070400000, 1), "2024-05-30T12:00:00.000000001"},
		{"TIMESTAMP before the epoch", ts9T, ts(-1, 0), "1969-12-31T23:59:59.999"},
		{"TIMESTAMP 1899 from the fixture", ts9T, ts1899, "1899-01-01T00:59:20.001001001"},
		{"TIMESTAMP epoch", types.TimestampType(3), ts(0, 0), "1970-01-01T00:00"},
		{"TIMESTAMP year 1", types.TimestampType(0), ts(-62135596800000, 0), "0001-01-01T00:00"},
		{"TIMESTAMP year 0", types.TimestampType(0), ts(-62167219200000, 0), "0000-01-01T00:00"},
		{"TIMESTAMP year -1", types.TimestampType(0), ts(-62198755200000, 0), "-0001-01-01T00:00"},
		{"TIMESTAMP year 10000", types.TimestampType(0), ts(253402300800000, 0), "+10000-01-01T00:00"},
		{"TIMESTAMP_LTZ reads the instant as UTC", types.LocalZonedTimestampType(3), ts(1717070400000, 0), "2024-05-30T12:00"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := partitionName(t, c.t, c.v, legacy); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestPartitionValuesCast(t *testing.T) {
	shanghai, err := time.LoadLocation("Asia/Shanghai")
	if err != nil {
		t.Fatal(err)
	}
	cast := binrow.PartitionOptions{}
	cases := []struct {
		name string
		t    types.DataType
		v    any
		o    binrow.PartitionOptions
		want string
	}{
		{"DATE", dateT, types.Date(19873), cast, "2024-05-30"},
		{"DATE epoch", dateT, types.Date(0), cast, "1970-01-01"},
		{"DATE negative", dateT, types.Date(-1), cast, "1969-12-31"},
		{"DATE 1899", dateT, types.Date(-25567), cast, "1900-01-01"},
		{"DATE leap day", dateT, types.Date(11016), cast, "2000-02-29"},
		{"TIME(0)", types.TimeType(0), types.Time(3_723_000), cast, "01:02:03"},
		{"TIME(3) half second", types.TimeType(3), types.Time(3_723_500), cast, "01:02:03.5"},
		{"TIME(3) whole second keeps one digit", types.TimeType(3), types.Time(3_723_000), cast, "01:02:03.0"},
		{"TIME(3) millis", types.TimeType(3), types.Time(3_723_007), cast, "01:02:03.007"},
		{"TIMESTAMP(0)", types.TimestampType(0), ts(1717070400000, 0), cast, "2024-05-30 12:00:00"},
		{"TIMESTAMP(3) pads to precision", types.TimestampType(3), ts(1717070400000, 0), cast, "2024-05-30 12:00:00.000"},
		{"TIMESTAMP(6)", ts6T, ts(1717070400123, 456000), cast, "2024-05-30 12:00:00.123456"},
		{"TIMESTAMP(9) nanos", ts9T, ts(1717070400000, 1), cast, "2024-05-30 12:00:00.000000001"},
		{"TIMESTAMP(3) before the epoch", types.TimestampType(3), ts(-1, 0), cast, "1969-12-31 23:59:59.999"},
		{"TIMESTAMP(9) 1899", ts9T, ts1899, cast, "1899-01-01 00:59:20.001001001"},
		{"TIMESTAMP_LTZ in UTC", types.LocalZonedTimestampType(0), ts(1717070400000, 0), cast, "2024-05-30 12:00:00"},
		{"TIMESTAMP_LTZ in the JVM zone", types.LocalZonedTimestampType(0), ts(1717070400000, 0),
			binrow.PartitionOptions{LocalTimeZone: shanghai}, "2024-05-30 20:00:00"},
		{"BYTES as UTF-8", bytesT, []byte("abc"), cast, "abc"},
		{"BOOLEAN", types.BooleanType(), false, cast, "false"},
		{"DOUBLE", dblT, 0.1, cast, "0.1"},
		{"DECIMAL", types.DecimalType(4, 2), types.NewDecimal(5, 2), cast, "0.05"},
		{"STRING", strT, "x", cast, "x"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := partitionName(t, c.t, c.v, c.o); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

// TestJavaDoubleToString checks Double.toString / Float.toString through
// the partition names of DOUBLE and FLOAT keys.
func TestJavaDoubleToString(t *testing.T) {
	doubles := []struct {
		v    float64
		want string
	}{
		{1.0, "1.0"}, {0.1, "0.1"}, {1e7, "1.0E7"}, {1e-4, "1.0E-4"},
		{math.NaN(), "NaN"}, {math.Inf(1), "Infinity"}, {math.Inf(-1), "-Infinity"},
		{math.Copysign(0, -1), "-0.0"}, {0, "0.0"},
		{0.001, "0.001"}, {100, "100.0"}, {-1.5, "-1.5"}, {2.1, "2.1"},
		{1234567, "1234567.0"}, {9999999, "9999999.0"}, {12345678, "1.2345678E7"},
		{1.0 / 3, "0.3333333333333333"}, {0.3, "0.3"}, {123.456, "123.456"},
		{2e23, "2.0E23"}, {1.0e-5, "1.0E-5"}, {-1.25e-10, "-1.25E-10"},
		{math.MaxFloat64, "1.7976931348623157E308"},
		{math.SmallestNonzeroFloat64, "4.9E-324"},
		{2.2250738585072014e-308, "2.2250738585072014E-308"},
		{1e21, "1.0E21"}, {1e300, "1.0E300"}, {1e23, "1.0E23"}, {4.35, "4.35"}, {0.000123, "1.23E-4"},
	}
	for _, c := range doubles {
		if got := partitionName(t, dblT, c.v, binrow.DefaultPartitionOptions()); got != c.want {
			t.Errorf("Double.toString(%v) = %q, want %q", c.v, got, c.want)
		}
	}
	floats := []struct {
		v    float32
		want string
	}{
		{1.1, "1.1"}, {0.1, "0.1"}, {3.4028235e38, "3.4028235E38"},
		{math.SmallestNonzeroFloat32, "1.4E-45"}, {1e10, "1.0E10"},
		{16777216, "1.6777216E7"}, {5.11, "5.11"}, {-0.001, "-0.001"},
		{float32(math.NaN()), "NaN"}, {float32(math.Copysign(0, -1)), "-0.0"},
	}
	for _, c := range floats {
		if got := partitionName(t, types.FloatType(), c.v, binrow.DefaultPartitionOptions()); got != c.want {
			t.Errorf("Float.toString(%v) = %q, want %q", c.v, got, c.want)
		}
	}
}

func TestPartitionDefaultName(t *testing.T) {
	cases := []struct {
		name string
		v    any
		o    binrow.PartitionOptions
		want string
	}{
		{"null", nil, binrow.DefaultPartitionOptions(), "__DEFAULT_PARTITION__"},
		{"empty string", "", binrow.DefaultPartitionOptions(), "__DEFAULT_PARTITION__"},
		{"spaces and tabs", " \t\n", binrow.DefaultPartitionOptions(), "__DEFAULT_PARTITION__"},
		{"ideographic space is Java whitespace", "\u3000", binrow.DefaultPartitionOptions(), "__DEFAULT_PARTITION__"},
		{"no-break space is not", "\u00a0", binrow.DefaultPartitionOptions(), "\u00a0"},
		{"custom default", nil, binrow.PartitionOptions{DefaultName: "none", LegacyName: true}, "none"},
		{"zero value options", nil, binrow.PartitionOptions{}, "__DEFAULT_PARTITION__"},
		{"padded value kept", " a ", binrow.DefaultPartitionOptions(), " a "},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if got := partitionName(t, strT, c.v, c.o); got != c.want {
				t.Errorf("got %q, want %q", got, c.want)
			}
		})
	}
}

func TestPartitionPath(t *testing.T) {
	keys := []types.DataField{key("dt", strT), key("hr", intT), key("a/b", dateT)}
	got, err := binrow.PartitionPath(keys, []any{"2024-05-30", nil, types.Date(7)}, binrow.DefaultPartitionOptions())
	if err != nil {
		t.Fatal(err)
	}
	if want := "dt=2024-05-30/hr=__DEFAULT_PARTITION__/a%2Fb=7"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
	got, err = binrow.PartitionPath(keys[:1], []any{"12:00 x/y"}, binrow.DefaultPartitionOptions())
	if err != nil || got != "dt=12%3A00 x%2Fy" {
		t.Errorf("got %q, %v", got, err)
	}
	if got, err := binrow.PartitionPath(nil, nil, binrow.DefaultPartitionOptions()); got != "" || err != nil {
		t.Errorf("no keys: %q, %v", got, err)
	}
}

func TestPartitionErrors(t *testing.T) {
	o := binrow.DefaultPartitionOptions()
	cases := []struct {
		name   string
		keys   []types.DataField
		values []any
		o      binrow.PartitionOptions
		want   error
		msg    string
	}{
		{"empty key name", []types.DataField{key("", intT)}, []any{int32(1)}, o, binrow.ErrInvalidPartition, "key 0 has an empty name"},
		{"arity", []types.DataField{key("a", intT)}, nil, o, binrow.ErrArityMismatch, "0 values for 1 keys"},
		{"wrong Go type", []types.DataField{key("a", intT)}, []any{"1"}, o, binrow.ErrInvalidValue, `partition value of "a": invalid value for data type: string for INT`},
		{"legacy BYTES", []types.DataField{key("b", bytesT)}, []any{[]byte("x")}, o, binrow.ErrUnsupportedType, "no stable legacy partition name"},
		{"nested key", []types.DataField{key("r", types.ArrayType(intT))}, []any{[]any{}}, o, binrow.ErrUnsupportedType, "cannot be a partition key"},
		{"decimal beyond precision", []types.DataField{key("d", types.DecimalType(2, 0))}, []any{types.NewDecimal(100, 0)}, o, binrow.ErrInvalidValue, "does not fit"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := binrow.PartitionPath(c.keys, c.values, c.o)
			if !errors.Is(err, c.want) {
				t.Fatalf("got %v, want %v", err, c.want)
			}
			if !strings.Contains(err.Error(), c.msg) {
				t.Fatalf("error %q does not mention %q", err, c.msg)
			}
		})
	}
}
