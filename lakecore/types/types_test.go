package types_test

import (
	"encoding/json"
	"math"
	"math/big"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

func TestParseAndString(t *testing.T) {
	cases := []struct{ in, want string }{
		{"INT", "INT"},
		{"integer not null", "INT NOT NULL"},
		{"STRING", "STRING"},
		{"VARCHAR(10)", "VARCHAR(10)"},
		{"VARCHAR", "VARCHAR(1)"},
		{"BYTES", "BYTES"},
		{"DECIMAL(10, 2)", "DECIMAL(10, 2)"},
		{"NUMERIC", "DECIMAL(10, 0)"},
		{"DOUBLE PRECISION", "DOUBLE"},
		{"TIMESTAMP", "TIMESTAMP(6)"},
		{"TIMESTAMP(3) WITHOUT TIME ZONE", "TIMESTAMP(3)"},
		{"TIMESTAMP(9) WITH LOCAL TIME ZONE NOT NULL", "TIMESTAMP(9) WITH LOCAL TIME ZONE NOT NULL"},
		{"TIMESTAMP_LTZ(3)", "TIMESTAMP(3) WITH LOCAL TIME ZONE"},
		{"TIME", "TIME(0)"},
		{"ARRAY<STRING>", "ARRAY<STRING>"},
		{"INT ARRAY NOT NULL", "ARRAY<INT> NOT NULL"},
		{"MAP<STRING, INT>", "MAP<STRING, INT>"},
		{"MAP<ARRAY<FLOAT>, ROW<f0 BOOLEAN, f1 BIGINT>>", "MAP<ARRAY<FLOAT>, ROW<`f0` BOOLEAN, `f1` BIGINT>>"},
		{"ROW<a INT NOT NULL, `b c` STRING 'the b'>", "ROW<`a` INT NOT NULL, `b c` STRING 'the b'>"},
		{"MULTISET<INT>", "MULTISET<INT>"},
	}
	for _, c := range cases {
		got, err := types.Parse(c.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", c.in, err)
			continue
		}
		if got.String() != c.want {
			t.Errorf("Parse(%q).String() = %q, want %q", c.in, got.String(), c.want)
		}
		again, err := types.Parse(got.String())
		if err != nil || !again.Equal(got) {
			t.Errorf("reparse of %q: %v, equal=%v", got.String(), err, again.Equal(got))
		}
	}
}

func TestParseErrors(t *testing.T) {
	for _, in := range []string{"", "INTT", "DECIMAL(40, 2)", "DECIMAL(5, 6)", "TIMESTAMP(10)", "ARRAY<INT", "MAP<INT>", "INT NOT", "VARCHAR(0)", "ROW<a>"} {
		if _, err := types.Parse(in); err == nil {
			t.Errorf("Parse(%q) succeeded, want an error", in)
		}
	}
}

func TestJSONRoundTrip(t *testing.T) {
	// From fixture cpp-java11-append-bucket1-nested-types-orc-manifest schema-0.
	in := `{"id":9,"name":"f10","type":{"type":"MAP","key":{"type":"ARRAY","element":"FLOAT"},"value":{"type":"ROW","fields":[{"id":10,"name":"f0","type":"BOOLEAN"},{"id":11,"name":"f1","type":"BIGINT"}]}}}`
	var f types.DataField
	if err := json.Unmarshal([]byte(in), &f); err != nil {
		t.Fatal(err)
	}
	if f.ID != 9 || f.Type.Kind != types.KindMap || f.Type.Value.Fields[1].ID != 11 || f.Type.Key.Element.Kind != types.KindFloat {
		t.Fatalf("decoded %+v", f)
	}
	out, err := json.Marshal(f)
	if err != nil {
		t.Fatal(err)
	}
	if string(out) != in {
		t.Errorf("round trip:\n got %s\nwant %s", out, in)
	}
	if got := types.HighestFieldID([]types.DataField{f}); got != 11 {
		t.Errorf("HighestFieldID = %d", got)
	}
	nn := `"DECIMAL(38, 2) NOT NULL"`
	var dt types.DataType
	if err := json.Unmarshal([]byte(nn), &dt); err != nil || dt.Nullable || dt.Precision != 38 {
		t.Errorf("decimal: %v %+v", err, dt)
	}
	arr := `{"type":"ARRAY NOT NULL","element":"INT"}`
	if err := json.Unmarshal([]byte(arr), &dt); err != nil || dt.Nullable || dt.Kind != types.KindArray {
		t.Errorf("array: %v %+v", err, dt)
	}
	if out, _ := json.Marshal(dt); string(out) != arr {
		t.Errorf("array out %s", out)
	}
}

func TestDecimalAndTimestamp(t *testing.T) {
	d, err := types.ParseDecimal("-123.45", 10, 5)
	if err != nil || d.String() != "-123.45000" {
		t.Fatalf("%v %s", err, d)
	}
	if _, err := types.ParseDecimal("1.234", 10, 2); err == nil {
		t.Error("rounding accepted")
	}
	if _, err := types.ParseDecimal("123456", 5, 0); err == nil {
		t.Error("overflow accepted")
	}
	if d, _ := types.ParseDecimal("0.5", 3, 2); d.String() != "0.50" {
		t.Errorf("got %s", d)
	}
	ts := types.Timestamp{Millis: -2240521239999, NanoOfMilli: 1001}
	if ts.String() != "1899-01-01T00:59:20.001001001" {
		t.Errorf("ts %s", ts)
	}
	if back := types.TimestampOf(ts.Time()); back != ts {
		t.Errorf("back %+v", back)
	}
	if types.Date(19873).String() != "2024-05-30" {
		t.Errorf("date %s", types.Date(19873))
	}
}

// TestDecimalStringInt64 checks Decimal.String on int64 unscaled values
// (its one-buffer path) against big.Rat's exact decimal text.
func TestDecimalStringInt64(t *testing.T) {
	values := []int64{0, 1, -1, 5, -5, 9, 10, 99, 100, -100, 12345, -12345, 45678, -45678, 999999999,
		math.MaxInt64, math.MinInt64, math.MaxInt64 - 1, math.MinInt64 + 1, 1e18, -1e18}
	for i := int64(1); i < 1e18; i *= 7 {
		values = append(values, i, -i, i+3)
	}
	for _, v := range values {
		for scale := 0; scale <= 18; scale++ {
			d := types.Decimal{Unscaled: big.NewInt(v), Scale: scale}
			want := new(big.Rat).SetFrac(big.NewInt(v), new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(scale)), nil)).FloatString(scale)
			if got := d.String(); got != want {
				t.Errorf("Decimal{%d, %d}.String() = %q, want %q", v, scale, got, want)
			}
		}
	}
	// Beyond int64 and with a negative scale the big.Int path still answers.
	big20, _ := new(big.Int).SetString("-123456789012345678901", 10)
	if got := (types.Decimal{Unscaled: big20, Scale: 3}).String(); got != "-123456789012345678.901" {
		t.Errorf("20-digit decimal: %q", got)
	}
	if got := (types.Decimal{Unscaled: big.NewInt(-12), Scale: -2}).String(); got != "-1200" {
		t.Errorf("negative scale: %q", got)
	}
}
