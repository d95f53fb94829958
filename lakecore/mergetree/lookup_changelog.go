package mergetree

import (
	"reflect"

	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// LookupChangelog is LookupChangelogMergeFunctionWrapper: the merge
// function of a lookup compaction (changelog-producer lookup) that, for
// every key with a record from level 0, also produces the key's changelog.
// The key's state before the compaction is the record of the smallest level
// above 0 among the compacted records or, when there is none, the record
// LookupAbove finds in the levels above the compaction's output level;
// it joins the merge (Lookup.InsertHighLevel). With before and after the
// merge result, the changelog is:
//
//   - +I after, when there was no before (or it was a retract) and after
//     is an addition;
//   - -D before, when before was an addition and after is a retract (or
//     nil);
//   - -U before and +U after, when both are additions, unless Equal says
//     their values are the same (changelog-producer.row-deduplicate).
//
// Each changelog record keeps the sequence number and value of the record
// it copies. Keys without a level-0 record produce none. Changelog records
// accumulate across keys, in key order, until Drain: the merge reader skips
// keys whose result is nil, whose changelog must not be lost.
type LookupChangelog struct {
	Fn *Lookup
	// LookupAbove returns the record of the key of value in the levels
	// above the output level, nil if none; the caller sets its Level (> 0).
	LookupAbove func(value []any) (*KeyValue, error)
	// Equal compares two values for row deduplication; nil means never
	// equal (changelog-producer.row-deduplicate = false).
	Equal func(a, b []any) bool
	// Sequence is the sequence.field comparator (zero when unset).
	Sequence kv.Comparator

	last      *KeyValue
	changelog []*KeyValue
}

// Reset implements MergeFunction.
func (c *LookupChangelog) Reset() {
	c.Fn.Reset()
	c.last = nil
}

// Add implements MergeFunction.
func (c *LookupChangelog) Add(r *KeyValue) error {
	c.last = r
	return c.Fn.Add(r)
}

// Result implements MergeFunction: the merged record, nil if the key has
// none; the key's changelog is appended to what Drain returns.
func (c *LookupChangelog) Result() (*KeyValue, error) {
	high := c.Fn.HighLevel()
	level0 := c.Fn.ContainsLevel0()
	if high == nil && c.last != nil {
		found, err := c.LookupAbove(c.last.Value)
		if err != nil {
			return nil, err
		}
		if found != nil {
			high = found
			c.Fn.InsertHighLevel(found, c.Sequence)
		}
	}
	after, err := c.Fn.Result()
	if err != nil {
		return nil, err
	}
	if level0 {
		c.setChangelog(high, after)
	}
	return after, nil
}

func (c *LookupChangelog) setChangelog(before, after *KeyValue) {
	isAdd := func(r *KeyValue) bool { return r != nil && !r.Kind.IsRetract() }
	with := func(r *KeyValue, kind kv.RowKind) *KeyValue {
		return &KeyValue{Value: r.Value, Seq: r.Seq, Kind: kind, Level: r.Level}
	}
	switch {
	case !isAdd(before):
		if isAdd(after) {
			c.changelog = append(c.changelog, with(after, kv.Insert))
		}
	case !isAdd(after):
		c.changelog = append(c.changelog, with(before, kv.Delete))
	case c.Equal == nil || !c.Equal(before.Value, after.Value):
		c.changelog = append(c.changelog, with(before, kv.UpdateBefore), with(after, kv.UpdateAfter))
	}
}

// Drain returns the changelog records produced since the last Drain.
func (c *LookupChangelog) Drain() []*KeyValue {
	out := c.changelog
	c.changelog = nil
	return out
}

// RowEqualiser returns the value comparison of
// changelog-producer.row-deduplicate (ValueEqualiserSupplier.fromIgnoreFields):
// two rows are equal when every column not in ignore holds the same value.
func RowEqualiser(fields []types.DataField, ignore []string) func(a, b []any) bool {
	skip := make([]bool, len(fields))
	for i, f := range fields {
		for _, n := range ignore {
			if f.Name == n {
				skip[i] = true
			}
		}
	}
	return func(a, b []any) bool {
		for i := range a {
			if i < len(skip) && skip[i] {
				continue
			}
			if !valueEqual(a[i], b[i]) {
				return false
			}
		}
		return true
	}
}

// valueEqual compares two values of one column: scalars as the key
// comparator does, nested values deeply.
func valueEqual(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	switch a.(type) {
	case bool, int8, int16, int32, int64, float32, float64, string, []byte,
		types.Date, types.Time, types.Decimal, types.Timestamp:
		return kv.CompareValues(a, b) == 0
	}
	return reflect.DeepEqual(a, b)
}

// FirstRowChangelog is FirstRowMergeFunctionWrapper, the merge function of
// a lookup compaction of a first-row table: a key with a compacted record
// above level 0 keeps its first record and produces no changelog; a key
// only on level 0 that Contains finds above the output level is dropped
// (its first row is already there); any other key is new, kept, and its
// record (as written, +I or +U) is its changelog. Changelog records
// accumulate until Drain, as LookupChangelog's do.
type FirstRowChangelog struct {
	Fn *FirstRow
	// Contains reports whether the key of value has a record in the levels
	// above the output level.
	Contains func(value []any) (bool, error)

	high      bool
	changelog []*KeyValue
}

// Reset implements MergeFunction.
func (c *FirstRowChangelog) Reset() {
	c.Fn.Reset()
	c.high = false
}

// Add implements MergeFunction.
func (c *FirstRowChangelog) Add(r *KeyValue) error {
	if err := c.Fn.Add(r); err != nil {
		return err
	}
	// FirstRowMergeFunction.add: a skipped retract does not count.
	if r.Level > 0 && !(c.Fn.IgnoreDelete && r.Kind.IsRetract()) {
		c.high = true
	}
	return nil
}

// Result implements MergeFunction.
func (c *FirstRowChangelog) Result() (*KeyValue, error) {
	r, err := c.Fn.Result()
	if err != nil || r == nil || c.high {
		return r, err
	}
	found, err := c.Contains(r.Value)
	if err != nil || found {
		return nil, err
	}
	c.changelog = append(c.changelog, r)
	return r, nil
}

// Drain returns the changelog records produced since the last Drain.
func (c *FirstRowChangelog) Drain() []*KeyValue {
	out := c.changelog
	c.changelog = nil
	return out
}
