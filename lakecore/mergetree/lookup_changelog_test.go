package mergetree_test

import (
	"fmt"
	"testing"

	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/mergetree"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// TestLookupChangelog: the changelog LookupChangelogMergeFunctionWrapper
// gives for one key of a deduplicate table, from the key's records in the
// compaction (level and kind) and what the lookup above the output level
// finds.
func TestLookupChangelog(t *testing.T) {
	rec := func(v string, seq int64, kind kv.RowKind, level int32) *mergetree.KeyValue {
		return &mergetree.KeyValue{Value: []any{int64(1), v}, Seq: seq, Kind: kind, Level: level}
	}
	equal := mergetree.RowEqualiser([]types.DataField{{Name: "k"}, {Name: "v"}}, nil)
	for _, c := range []struct {
		name    string
		records []*mergetree.KeyValue
		above   *mergetree.KeyValue
		dedup   bool
		result  string
		want    string
	}{
		{"new key", []*mergetree.KeyValue{rec("a", 5, kv.Insert, 0)}, nil, false, "+I[1 a]", "[+I[1 a]/5]"},
		{"update of a looked-up key", []*mergetree.KeyValue{rec("b", 5, kv.UpdateAfter, 0)}, rec("a", 2, kv.Insert, 4), false, "+U[1 b]", "[-U[1 a]/2 +U[1 b]/5]"},
		{"update of a key in the compaction", []*mergetree.KeyValue{rec("old", 1, kv.Insert, 5), rec("a", 2, kv.Insert, 3), rec("b", 5, kv.Insert, 0)}, nil, false, "+I[1 b]", "[-U[1 a]/2 +U[1 b]/5]"},
		{"delete", []*mergetree.KeyValue{rec("a", 5, kv.Delete, 0)}, rec("a", 2, kv.Insert, 4), false, "-D[1 a]", "[-D[1 a]/2]"},
		{"delete of an absent key", []*mergetree.KeyValue{rec("a", 5, kv.Delete, 0)}, nil, false, "-D[1 a]", "[]"},
		{"insert after a kept delete", []*mergetree.KeyValue{rec("a", 5, kv.Insert, 0)}, rec("z", 2, kv.Delete, 4), false, "+I[1 a]", "[+I[1 a]/5]"},
		{"same value, row-deduplicate off", []*mergetree.KeyValue{rec("a", 5, kv.Insert, 0)}, rec("a", 2, kv.Insert, 4), false, "+I[1 a]", "[-U[1 a]/2 +U[1 a]/5]"},
		{"same value, row-deduplicate on", []*mergetree.KeyValue{rec("a", 5, kv.Insert, 0)}, rec("a", 2, kv.Insert, 4), true, "+I[1 a]", "[]"},
		{"no level-0 record", []*mergetree.KeyValue{rec("a", 2, kv.Insert, 3), rec("b", 5, kv.Insert, 2)}, nil, false, "+I[1 b]", "[]"},
	} {
		t.Run(c.name, func(t *testing.T) {
			looked := false
			w := &mergetree.LookupChangelog{
				Fn: &mergetree.Lookup{Inner: &mergetree.Deduplicate{}},
				LookupAbove: func([]any) (*mergetree.KeyValue, error) {
					looked = true
					return c.above, nil
				},
			}
			if c.dedup {
				w.Equal = equal
			}
			w.Reset()
			for _, r := range c.records {
				if err := w.Add(r); err != nil {
					t.Fatal(err)
				}
			}
			res, err := w.Result()
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprintf("%s%v", res.Kind, res.Value); got != c.result {
				t.Errorf("result %s, want %s", got, c.result)
			}
			var log []string
			for _, r := range w.Drain() {
				log = append(log, fmt.Sprintf("%s%v/%d", r.Kind, r.Value, r.Seq))
			}
			if got := fmt.Sprint(log); got != c.want {
				t.Errorf("changelog %s, want %s", got, c.want)
			}
			hasHigh := false
			for _, r := range c.records {
				hasHigh = hasHigh || r.Level > 0
			}
			if looked == hasHigh {
				t.Errorf("looked up above the output level: %v, want %v (a compacted record above level 0 is the key's state)", looked, !hasHigh)
			}
		})
	}
}

// TestRowEqualiser: changelog-producer.row-deduplicate compares every
// column but the ignored ones (row-deduplicate-ignore-fields), NULLs
// equal, nested values deeply.
func TestRowEqualiser(t *testing.T) {
	fields := []types.DataField{{Name: "k"}, {Name: "v"}, {Name: "updated_at"}, {Name: "tags"}}
	for _, c := range []struct {
		name   string
		ignore []string
		a, b   []any
		want   bool
	}{
		{"same", nil, []any{int64(1), "x", int64(5), []any{"a"}}, []any{int64(1), "x", int64(5), []any{"a"}}, true},
		{"value differs", nil, []any{int64(1), "x", int64(5), nil}, []any{int64(1), "y", int64(5), nil}, false},
		{"null and value", nil, []any{int64(1), nil, int64(5), nil}, []any{int64(1), "x", int64(5), nil}, false},
		{"ignored column differs", []string{"updated_at"}, []any{int64(1), "x", int64(5), nil}, []any{int64(1), "x", int64(6), nil}, true},
		{"not ignored column differs", []string{"updated_at"}, []any{int64(1), "x", int64(5), nil}, []any{int64(1), "z", int64(6), nil}, false},
		{"nested differs", nil, []any{int64(1), "x", int64(5), []any{"a"}}, []any{int64(1), "x", int64(5), []any{"b"}}, false},
	} {
		if got := mergetree.RowEqualiser(fields, c.ignore)(c.a, c.b); got != c.want {
			t.Errorf("%s: equal %v, want %v", c.name, got, c.want)
		}
	}
}
