package input

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
	"github.com/benthos-paimon/benthos-paimon/plugin/internal/rowconv"
)

// PartitionFilter is the parsed partition_filter: a disjunction (OR) of
// conjunctions (AND) of conditions "key IN (values)". Values are the raw
// config values; Bind types them against the table's partition keys.
//
// Syntax. A map is one conjunction; each key is a partition key, each value
// a scalar (equality) or a list of scalars (IN):
//
//	partition_filter:
//	  dt: "2024-05-30"
//	  region: [ eu, us ]
//
// A list of such maps is their disjunction:
//
//	partition_filter:
//	  - { dt: "2024-05-30", region: eu }
//	  - { dt: "2024-05-31" }
//
// null matches the default partition (rows whose key is null, stored under
// __DEFAULT_PARTITION__). Values are converted to each key's type with the
// paimon output's rules ("2024-05-30" for a DATE, 7 or "7" for an INT, ...).
// An unquoted YAML date such as 2024-05-30 arrives as a timestamp and is
// turned back into its text (midnight UTC becomes "YYYY-MM-DD").
type PartitionFilter struct {
	// Alternatives are OR-ed; an empty filter matches everything.
	Alternatives []PartitionConjunction
}

// PartitionConjunction is a set of conditions that must all hold, sorted by
// key.
type PartitionConjunction []PartitionCondition

// PartitionCondition is "Key IN (Values)".
type PartitionCondition struct {
	Key    string
	Values []any
}

// ParsePartitionFilter reads the partition_filter value (a map or a list of
// maps, as decoded from YAML). nil gives an empty filter.
func ParsePartitionFilter(v any) (PartitionFilter, error) {
	var f PartitionFilter
	switch x := v.(type) {
	case nil:
		return f, nil
	case map[string]any:
		c, err := parseConjunction(x)
		if err != nil {
			return f, fmt.Errorf("partition_filter: %w", err)
		}
		f.Alternatives = []PartitionConjunction{c}
	case []any:
		if len(x) == 0 {
			return f, errors.New("partition_filter: an empty list matches no partition; leave the field out to read all")
		}
		for i, e := range x {
			m, ok := e.(map[string]any)
			if !ok {
				return f, fmt.Errorf("partition_filter[%d]: expected a map of partition key to value(s), got %s", i, yamlType(e))
			}
			c, err := parseConjunction(m)
			if err != nil {
				return f, fmt.Errorf("partition_filter[%d]: %w", i, err)
			}
			f.Alternatives = append(f.Alternatives, c)
		}
	default:
		return f, fmt.Errorf("partition_filter: expected a map of partition key to value(s), or a list of such maps, got %s", yamlType(v))
	}
	return f, nil
}

func parseConjunction(m map[string]any) (PartitionConjunction, error) {
	if len(m) == 0 {
		return nil, errors.New("an empty map; give at least one partition key")
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	c := make(PartitionConjunction, 0, len(keys))
	for _, k := range keys {
		var values []any
		switch x := m[k].(type) {
		case []any:
			if len(x) == 0 {
				return nil, fmt.Errorf("key %q: an empty list matches nothing", k)
			}
			values = x
		default:
			values = []any{x}
		}
		for i, v := range values {
			switch x := v.(type) {
			case map[string]any, []any:
				return nil, fmt.Errorf("key %q: values must be scalars, got %s", k, yamlType(v))
			case time.Time:
				values[i] = yamlTimeText(x)
			}
		}
		c = append(c, PartitionCondition{Key: k, Values: values})
	}
	return c, nil
}

// yamlTimeText undoes YAML's timestamp resolution of unquoted dates.
func yamlTimeText(t time.Time) string {
	if t.Location() == time.UTC && t.Hour() == 0 && t.Minute() == 0 && t.Second() == 0 && t.Nanosecond() == 0 {
		return t.Format("2006-01-02")
	}
	return t.Format(time.RFC3339Nano)
}

func yamlType(v any) string {
	switch v.(type) {
	case nil:
		return "null"
	case map[string]any:
		return "a map"
	case []any:
		return "a list"
	case string:
		return "a string"
	case bool:
		return "a boolean"
	}
	return fmt.Sprintf("a %T", v)
}

// IsEmpty reports whether the filter matches every partition.
func (f PartitionFilter) IsEmpty() bool { return len(f.Alternatives) == 0 }

// Keys returns the partition keys the filter names, sorted.
func (f PartitionFilter) Keys() []string {
	seen := map[string]bool{}
	var keys []string
	for _, c := range f.Alternatives {
		for _, cond := range c {
			if !seen[cond.Key] {
				seen[cond.Key] = true
				keys = append(keys, cond.Key)
			}
		}
	}
	sort.Strings(keys)
	return keys
}

// BoundPartitionFilter is a PartitionFilter typed against a table's partition
// keys: each condition refers to a key by its index in the partition row and
// holds Go values of the key's type. It is immutable and safe for concurrent
// use; a nil *BoundPartitionFilter matches everything.
type BoundPartitionFilter struct {
	alternatives [][]BoundCondition
}

// BoundCondition is "partition[Index] IN (Values)" with typed values.
type BoundCondition struct {
	Index  int
	Values []any
}

// Bind types the filter's values against the table's partition key fields
// (in partition order). A key that is not a partition key, or a value that
// does not convert to the key's type, is an error naming both. An empty
// filter binds to nil, which matches everything.
func (f PartitionFilter) Bind(partitionKeys []types.DataField) (*BoundPartitionFilter, error) {
	if f.IsEmpty() {
		return nil, nil
	}
	b := &BoundPartitionFilter{}
	for _, conj := range f.Alternatives {
		var bound []BoundCondition
		for _, cond := range conj {
			i := types.FieldByName(partitionKeys, cond.Key)
			if i < 0 {
				names := make([]string, len(partitionKeys))
				for j, k := range partitionKeys {
					names[j] = k.Name
				}
				if len(names) == 0 {
					return nil, fmt.Errorf("partition_filter: the table is not partitioned, so %q cannot be filtered on", cond.Key)
				}
				return nil, fmt.Errorf("partition_filter: %q is not a partition key of the table (partition keys: %s)", cond.Key, strings.Join(names, ", "))
			}
			// Partition values may be null even for NOT NULL-declared keys
			// in Java-written tables; the filter's null means the default
			// partition.
			t := partitionKeys[i].Type.WithNullable(true)
			vals := make([]any, len(cond.Values))
			for j, raw := range cond.Values {
				v, err := rowconv.ConvertValue(t, raw, rowconv.ConvertOptions{})
				if err != nil {
					return nil, fmt.Errorf("partition_filter: key %q: %w", cond.Key, err)
				}
				vals[j] = v
			}
			bound = append(bound, BoundCondition{Index: i, Values: vals})
		}
		b.alternatives = append(b.alternatives, bound)
	}
	return b, nil
}

// Alternatives returns the OR-ed conjunctions, for planners that prune by
// partition statistics.
func (b *BoundPartitionFilter) Alternatives() [][]BoundCondition {
	if b == nil {
		return nil
	}
	return b.alternatives
}

// Match reports whether a partition (its values in partition key order, as
// binrow decodes a partition row) passes the filter.
func (b *BoundPartitionFilter) Match(partition []any) bool {
	if b == nil {
		return true
	}
	for _, conj := range b.alternatives {
		if conjMatches(conj, partition) {
			return true
		}
	}
	return false
}

func conjMatches(conj []BoundCondition, partition []any) bool {
	for _, c := range conj {
		if c.Index >= len(partition) {
			return false
		}
		found := false
		for _, v := range c.Values {
			if partitionValueEqual(v, partition[c.Index]) {
				found = true
				break
			}
		}
		if !found {
			return false
		}
	}
	return true
}

// partitionValueEqual compares two values of one atomic type.
func partitionValueEqual(a, b any) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	switch x := a.(type) {
	case types.Decimal:
		y, ok := b.(types.Decimal)
		return ok && x.Cmp(y) == 0
	case []byte:
		y, ok := b.([]byte)
		return ok && bytes.Equal(x, y)
	}
	return a == b
}
