package input

import (
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

func partitionKeys() []types.DataField {
	return types.MustParse("ROW<dt DATE, region STRING, shard INT NOT NULL, amount DECIMAL(5, 2)>").Fields
}

func bindFilter(t *testing.T, yaml string) *BoundPartitionFilter {
	t.Helper()
	c, err := parse(t, "warehouse: /lake\ntable: t\npartition_filter:\n"+yaml)
	if err != nil {
		t.Fatal(err)
	}
	b, err := c.PartitionFilter.Bind(partitionKeys())
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestPartitionFilterMatch(t *testing.T) {
	d30, d31 := types.Date(19873), types.Date(19874)
	eu := []any{d30, "eu", int32(1), types.NewDecimal(150, 2)}
	us31 := []any{d31, "us", int32(2), types.NewDecimal(100, 2)}
	nullRegion := []any{d30, nil, int32(3), nil}

	cases := []struct {
		filter string
		match  [3]bool // eu, us31, nullRegion
	}{
		{"  dt: 2024-05-30\n", [3]bool{true, false, true}},     // unquoted YAML date
		{"  dt: '2024-05-30'\n", [3]bool{true, false, true}},   // quoted
		{"  dt: 19874\n", [3]bool{false, true, false}},         // epoch days
		{"  region: [ eu, us ]\n", [3]bool{true, true, false}}, // IN
		{"  region: null\n", [3]bool{false, false, true}},      // default partition
		{"  region: [ eu, null ]\n", [3]bool{true, false, true}},
		{"  dt: '2024-05-30'\n  region: eu\n", [3]bool{true, false, false}},                        // AND
		{"  - { dt: '2024-05-30', region: eu }\n  - { shard: '2' }\n", [3]bool{true, true, false}}, // OR
		{"  amount: 1.5\n", [3]bool{true, false, false}},                                           // decimals by value
		{"  amount: '1.50'\n", [3]bool{true, false, false}},
		{"  shard: 4\n", [3]bool{false, false, false}},
	}
	for _, tc := range cases {
		b := bindFilter(t, tc.filter)
		for i, p := range [][]any{eu, us31, nullRegion} {
			if got := b.Match(p); got != tc.match[i] {
				t.Errorf("filter\n%s partition %v: match %v, want %v", tc.filter, p, got, tc.match[i])
			}
		}
	}
	var none *BoundPartitionFilter
	if !none.Match(eu) || !none.MayMatchStats(nil, nil, nil) || none.Alternatives() != nil {
		t.Error("nil filter must match everything")
	}
	if b, err := (PartitionFilter{}).Bind(partitionKeys()); b != nil || err != nil {
		t.Errorf("empty filter binds to %v, %v", b, err)
	}
}

func TestPartitionFilterBindErrors(t *testing.T) {
	cases := []struct {
		filter string
		keys   []types.DataField
		err    string
	}{
		{"  day: '2024-05-30'\n", partitionKeys(), `partition_filter: "day" is not a partition key of the table (partition keys: dt, region, shard, amount)`},
		{"  dt: '2024-13-01'\n", partitionKeys(), `partition_filter: key "dt": cannot convert string "2024-13-01" to DATE: month 13 out of range`},
		{"  shard: 1.5\n", partitionKeys(), `key "shard": cannot convert number 1.5 to INT: not a whole number`},
		{"  amount: '1.005'\n", partitionKeys(), "more than 2 fraction digits"},
		{"  dt: '2024-05-30'\n", nil, `the table is not partitioned, so "dt" cannot be filtered on`},
	}
	for _, tc := range cases {
		c, err := parse(t, "warehouse: /lake\ntable: t\npartition_filter:\n"+tc.filter)
		if err != nil {
			t.Fatal(err)
		}
		_, err = c.PartitionFilter.Bind(tc.keys)
		if err == nil || !strings.Contains(err.Error(), tc.err) {
			t.Errorf("%s  error %v, want %q", tc.filter, err, tc.err)
		}
	}
}

func TestPartitionFilterKeys(t *testing.T) {
	c, err := parse(t, "warehouse: /lake\ntable: t\npartition_filter:\n  - { region: eu, dt: '2024-05-30' }\n  - { shard: 1 }\n")
	if err != nil {
		t.Fatal(err)
	}
	if got := strings.Join(c.PartitionFilter.Keys(), ","); got != "dt,region,shard" {
		t.Errorf("keys %s", got)
	}
}

func TestPartitionFilterMayMatchStats(t *testing.T) {
	b := bindFilter(t, "  - { dt: '2024-05-30', region: [ eu, null ] }\n  - { shard: 9 }\n")
	n := func(v int64) *int64 { return &v }
	d := func(v int32) any { return types.Date(v) }
	cases := []struct {
		name       string
		mins, maxs []any
		nulls      []*int64
		want       bool
	}{
		{"range holds the day and eu", []any{d(19870), "de", int32(0), nil}, []any{d(19880), "fr", int32(5), nil}, []*int64{n(0), n(0), n(0), nil}, true},
		{"day outside, shard outside", []any{d(19874), "de", int32(0), nil}, []any{d(19880), "fr", int32(5), nil}, []*int64{n(0), n(0), n(0), nil}, false},
		{"region range excludes eu, but nulls present", []any{d(19873), "fr", int32(0), nil}, []any{d(19873), "us", int32(5), nil}, []*int64{n(0), n(3), n(0), nil}, true},
		{"region range excludes eu, no nulls", []any{d(19873), "fr", int32(0), nil}, []any{d(19873), "us", int32(5), nil}, []*int64{n(0), n(0), n(0), nil}, false},
		{"unknown null count", []any{d(19873), "fr", int32(0), nil}, []any{d(19873), "us", int32(5), nil}, []*int64{n(0), nil, n(0), nil}, true},
		{"second alternative: shard 9 in range", []any{d(19874), "fr", int32(0), nil}, []any{d(19880), "us", int32(10), nil}, []*int64{n(0), n(0), n(0), nil}, true},
		{"unknown stats", nil, nil, nil, true},
	}
	for _, tc := range cases {
		if got := b.MayMatchStats(tc.mins, tc.maxs, tc.nulls); got != tc.want {
			t.Errorf("%s: %v, want %v", tc.name, got, tc.want)
		}
	}
}

func TestCompareValues(t *testing.T) {
	cases := []struct {
		a, b any
		want int
	}{
		{false, true, -1}, {true, true, 0}, {int8(1), int8(2), -1}, {int64(5), int64(-5), 1},
		{float32(1.5), float32(1.5), 0}, {"a", "b", -1}, {"é", "z", 1}, // UTF-8 bytes order
		{types.Date(1), types.Date(0), 1}, {types.Time(5), types.Time(6), -1},
		{types.Timestamp{Millis: 1, NanoOfMilli: 2}, types.Timestamp{Millis: 1, NanoOfMilli: 1}, 1},
		{types.NewDecimal(150, 2), types.NewDecimal(15, 1), 0}, {[]byte{0xff}, []byte{0x01}, 1},
		{int32(1), "x", 0}, // mismatched types stay conservative
	}
	for _, tc := range cases {
		if got := compareValues(tc.a, tc.b); got != tc.want {
			t.Errorf("compare(%v, %v) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}
