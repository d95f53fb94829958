package pgcdc

import (
	"encoding/json"
	"testing"
)

func TestNumericTypmod(t *testing.T) {
	for _, c := range []struct {
		typmod int32
		p, s   int
		ok     bool
	}{
		{655366, 10, 2, true}, {786440, 12, 4, true}, {1310730, 20, 6, true}, {329730, 5, -2, true}, {-1, 0, 0, false},
	} {
		p, s, ok := numericTypmod(c.typmod)
		if p != c.p || s != c.s || ok != c.ok {
			t.Errorf("numericTypmod(%d) = %d, %d, %v; want %d, %d, %v", c.typmod, p, s, ok, c.p, c.s, c.ok)
		}
	}
}

func TestParseValue(t *testing.T) {
	mustType := func(oid uint32, typmod int32) colType {
		ct, err := typeOf(oid, typmod, DecimalString)
		if err != nil {
			t.Fatal(err)
		}
		return ct
	}
	for _, c := range []struct {
		oid    uint32
		typmod int32
		in     string
		want   string // JSON; "ERR" for an error
	}{
		{oidInt4, -1, "42", "42"},
		{oidInt4, -1, "4x", "ERR"},
		{oidFloat8, -1, "1e+300", "1e+300"},
		{oidFloat8, -1, "Infinity", `"Infinity"`},
		{oidNumeric, -1, "-0.000000000000000000000000000001", `"-0.000000000000000000000000000001"`},
		{oidMoney, -1, "-$1,234.56", `"-1234.56"`},
		{oidMoney, -1, "€1", "ERR"},
		{oidBool, -1, "t", "true"},
		{oidBytea, -1, `\x`, `""`},
		{oidBytea, -1, `abc`, "ERR"},
		{oidTimestamptz, -1, "2024-03-10 01:02:03+00", `"2024-03-10T01:02:03Z"`},
		{oidTimestamptz, -1, "2024-03-10 01:02:03+05:30", `"2024-03-10 01:02:03+05:30"`},
		{oidTimestamp, -1, "0044-03-15 12:00:00 BC", `"0044-03-15T12:00:00 BC"`},
		{1007, -1, "{{1,2},{3,NULL}}", "[[1,2],[3,null]]"},
		{1007, -1, "[0:1]={1,2}", "[1,2]"},
		{1009, -1, `{"a\"b","c\\d",""}`, `["a\"b","c\\d",""]`},
		{1009, -1, `{a,`, "ERR"},
		{1009, -1, `{a}}`, "ERR"},
		{1231, -1, "{NaN,-1.5}", `["NaN","-1.5"]`},
	} {
		ct := mustType(c.oid, c.typmod)
		v, err := parseValue(&ct, c.in)
		got := "ERR"
		if err == nil {
			got = mustJSON(v)
		}
		if got != c.want {
			t.Errorf("parseValue(%d, %q) = %s (%v), want %s", c.oid, c.in, got, err, c.want)
		}
	}
}

// TestDecimalFallbackError: numeric columns no DECIMAL holds refuse to
// start under decimal_fallback: error.
func TestDecimalFallbackError(t *testing.T) {
	for _, typmod := range []int32{-1, 329730, (40<<16 | 2) + 4} {
		if _, err := typeOf(oidNumeric, typmod, DecimalError); err == nil {
			t.Errorf("typmod %d: no error", typmod)
		}
	}
	if _, err := typeOf(oidNumeric, 655366, DecimalError); err != nil {
		t.Error(err)
	}
}

// FuzzParseValue: the text-format decoder never panics, and whatever it
// accepts marshals to JSON (the message body).
func FuzzParseValue(f *testing.F) {
	for _, s := range []string{"1", "-1.5e3", "NaN", `\xdeadbeef`, "{1,2,NULL}", `{"x,y",z}`, "{{1},{2}}", "[1:2]={a,b}",
		"$1,234.56", "2024-03-10 01:02:03.1+00", "t", "{", `{"`, `{\`, "{,}", "{a,{b}}"} {
		f.Add(s)
	}
	oids := []uint32{oidInt4, oidInt8, oidFloat8, oidNumeric, oidMoney, oidBool, oidBit, oidBytea, oidTimestamp, oidTimestamptz,
		oidDate, oidText, 1007, 1009, 1231, 1001, 1185, 1000}
	f.Fuzz(func(t *testing.T, s string) {
		for _, oid := range oids {
			ct, err := typeOf(oid, -1, DecimalString)
			if err != nil {
				t.Fatal(err)
			}
			v, err := parseValue(&ct, s)
			if err != nil {
				continue
			}
			if _, err := json.Marshal(v); err != nil {
				t.Fatalf("oid %d %q: %v does not marshal: %v", oid, s, v, err)
			}
		}
	})
}
