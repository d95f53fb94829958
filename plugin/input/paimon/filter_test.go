package paimon

import (
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/partition"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

func partitionKeys() []types.DataField {
	return types.MustParse("ROW<dt DATE, region STRING, shard INT NOT NULL, amount DECIMAL(5, 2)>").Fields
}

func bindFilter(t *testing.T, yaml string) *partition.Predicate {
	t.Helper()
	c, err := parse(t, "warehouse: /lake\ntable: t\npartition_filter:\n"+yaml)
	if err != nil {
		t.Fatal(err)
	}
	b, err := bindPartitionFilter(c.PartitionFilter, partitionKeys())
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
	var none *partition.Predicate
	if !none.Match(eu) || !none.MatchesAll() {
		t.Error("nil filter must match everything")
	}
	if b, err := bindPartitionFilter(partition.Filter{}, partitionKeys()); b != nil || err != nil {
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
		_, err = bindPartitionFilter(c.PartitionFilter, tc.keys)
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
