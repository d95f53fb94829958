package partition_test

import (
	"errors"
	"strconv"
	"strings"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/partition"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// specConvert types the spec strings of a (dt STRING, hr INT) table.
func specConvert(key types.DataField, v any) ([]any, error) {
	if key.Name != "hr" {
		return []any{v}, nil
	}
	n, err := strconv.Atoi(v.(string))
	if err != nil {
		return nil, err
	}
	return []any{int32(n)}, nil
}

func TestParseSpecs(t *testing.T) {
	keys := types.MustParse("ROW<dt STRING, hr INT>").Fields
	f, err := partition.ParseSpecs("--partition", []string{"dt=2024-01-01", "hr=7,dt=2024-01-02"}, keys)
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.Bind(keys, specConvert)
	if err != nil {
		t.Fatal(err)
	}
	if got := p.String(); got != "dt IN (2024-01-01) OR dt IN (2024-01-02) AND hr IN (7)" {
		t.Errorf("String() = %s", got)
	}
	for _, tc := range []struct {
		values []any
		want   bool
	}{
		{[]any{"2024-01-01", int32(3)}, true},
		{[]any{"2024-01-02", int32(7)}, true},
		{[]any{"2024-01-02", int32(8)}, false},
		{[]any{"2024-01-03", int32(7)}, false},
	} {
		if got := p.Match(tc.values); got != tc.want {
			t.Errorf("Match(%v) = %v", tc.values, got)
		}
	}
	for bad, want := range map[string]string{
		"dt":        `--partition "dt": want key=value[,key2=value2]`,
		"=x":        `--partition "=x": want key=value`,
		"x=1":       `--partition "x=1": "x" is not a partition key (partition keys: dt, hr)`,
		"dt=1,dt=2": `--partition "dt=1,dt=2": key "dt" given twice`,
	} {
		if _, err := partition.ParseSpecs("--partition", []string{bad}, keys); err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("ParseSpecs(%q) = %v, want %q", bad, err, want)
		}
	}
	if _, err := partition.ParseSpecs("--partition", []string{"dt=1"}, nil); err == nil || !strings.Contains(err.Error(), "not partitioned") {
		t.Errorf("unpartitioned table: %v", err)
	}
}

func TestBindErrors(t *testing.T) {
	keys := types.MustParse("ROW<dt STRING, hr INT>").Fields
	for _, tc := range []struct {
		f    partition.Filter
		keys []types.DataField
		want string
	}{
		{partition.Filter{Source: "partition_filter", Alternatives: []partition.Conjunction{{{Key: "day", Values: []any{"x"}}}}}, keys,
			`partition_filter: "day" is not a partition key of the table (partition keys: dt, hr)`},
		{partition.Filter{Alternatives: []partition.Conjunction{{{Key: "hr", Values: []any{"7"}}}}}, keys,
			`partition filter: key "hr": value 7 (string) is not a value of type INT`},
		{partition.Filter{Alternatives: []partition.Conjunction{{{Key: "hr", Values: []any{int64(1) << 40}}}}}, keys,
			`key "hr": value 1099511627776 (int64) is not a value of type INT`},
		{partition.Filter{Alternatives: []partition.Conjunction{{{Key: "dt", Values: []any{"a"}}}}}, nil,
			`partition filter: the table is not partitioned, so "dt" cannot be filtered on`},
	} {
		_, err := tc.f.Bind(tc.keys, nil)
		if !errors.Is(err, partition.ErrInvalidFilter) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("Bind: %v, want %q wrapping ErrInvalidFilter", err, tc.want)
		}
	}
	conv := errors.New("no such day")
	_, err := partition.Filter{Source: "x", Alternatives: []partition.Conjunction{{{Key: "dt", Values: []any{"a"}}}}}.Bind(keys,
		func(types.DataField, any) ([]any, error) { return nil, conv })
	if !errors.Is(err, conv) || !errors.Is(err, partition.ErrInvalidFilter) || err.Error() != `x: key "dt": no such day` {
		t.Errorf("converter error: %v", err)
	}
}

// TestMatchRowAndPrune: an OR of conjunctions matches serialized rows and
// prunes a manifest only when no alternative can hold in its stats.
func TestMatchRowAndPrune(t *testing.T) {
	keys := types.MustParse("ROW<dt STRING, hr INT>").Fields
	ts := []types.DataType{keys[0].Type, keys[1].Type}
	f, err := partition.ParseConfig("partition_filter", []any{
		map[string]any{"dt": "a", "hr": []any{1, 2}},
		map[string]any{"dt": "c"},
	})
	if err != nil {
		t.Fatal(err)
	}
	p, err := f.Bind(keys, nil)
	if err != nil {
		t.Fatal(err)
	}
	row := func(dt string, hr int32) []byte {
		b, err := binrow.Serialize(ts, []any{dt, hr})
		if err != nil {
			t.Fatal(err)
		}
		return b
	}
	for _, tc := range []struct {
		dt   string
		hr   int32
		want bool
	}{{"a", 1, true}, {"a", 3, false}, {"b", 1, false}, {"c", 9, true}} {
		if got, err := p.MatchRow(row(tc.dt, tc.hr)); err != nil || got != tc.want {
			t.Errorf("MatchRow(%s, %d) = %v, %v", tc.dt, tc.hr, got, err)
		}
	}
	if _, err := p.MatchRow([]byte{1, 2}); err == nil {
		t.Error("MatchRow accepted a broken row")
	}
	stats := func(lo, hi []any) manifest.SimpleStats {
		mins, err := binrow.Serialize(ts, lo)
		if err != nil {
			t.Fatal(err)
		}
		maxs, err := binrow.Serialize(ts, hi)
		if err != nil {
			t.Fatal(err)
		}
		zero := int64(0)
		return manifest.SimpleStats{MinValues: mins, MaxValues: maxs, NullCounts: []*int64{&zero, &zero}}
	}
	for _, tc := range []struct {
		lo, hi []any
		want   bool
	}{
		{[]any{"a", int32(1)}, []any{"a", int32(1)}, true},
		{[]any{"a", int32(3)}, []any{"b", int32(9)}, false}, // dt=a only with hr 3..9
		{[]any{"b", int32(3)}, []any{"d", int32(9)}, true},  // may hold dt=c
		{[]any{"d", int32(0)}, []any{"e", int32(9)}, false},
	} {
		if got := p.MayContain(stats(tc.lo, tc.hi)); got != tc.want {
			t.Errorf("MayContain(%v..%v) = %v", tc.lo, tc.hi, got)
		}
	}
	if !p.MayContain(manifest.SimpleStats{MinValues: []byte{1}}) {
		t.Error("undecodable stats pruned a manifest")
	}
	var all *partition.Predicate
	if !all.MatchesAll() || !all.MayContain(manifest.SimpleStats{}) || all.String() != "TRUE" {
		t.Error("a nil predicate must match everything")
	}
}
