// Package partition holds the partition predicate of lakecore: which
// partitions a read, a compaction or an overwrite touches. A Filter is the
// predicate as a user writes it, an OR of conjunctions of "key IN (values)",
// parsed from a config value (ParseConfig, the paimon input's
// partition_filter) or from Paimon action specs (ParseSpecs, the paimon
// commands' --partition k=v). Bind types it against a table's partition keys
// into a Predicate, which matches partition rows and prunes manifests by
// their partition stats (Java's PartitionPredicate, apache/paimon:
// paimon-common/.../partition/PartitionPredicate.java).
package partition

import (
	"errors"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// Filter is a partition filter before typing: a disjunction (OR) of
// conjunctions (AND) of conditions "key IN (values)". An empty Filter
// matches every partition.
type Filter struct {
	// Source names where the filter was written ("partition_filter",
	// "--partition"), to begin error messages; "" gives "partition filter".
	Source string
	// Alternatives are OR-ed.
	Alternatives []Conjunction
}

// Conjunction is a set of conditions that must all hold, sorted by key.
type Conjunction []Condition

// Condition is "Key IN (Values)". A nil value stands for the NULL partition
// value (the default partition, __DEFAULT_PARTITION__).
type Condition struct {
	Key    string
	Values []any
}

// ParseConfig reads a filter from a config value as decoded from YAML or
// JSON: a map is one conjunction, each key a partition key and each value a
// scalar (equality) or a list of scalars (IN); a list of such maps is their
// disjunction. nil gives an empty filter. An unquoted YAML date such as
// 2024-05-30 arrives as a timestamp and is turned back into its text
// (midnight UTC becomes "YYYY-MM-DD"). field names the config field in
// errors and becomes the Filter's Source.
func ParseConfig(field string, v any) (Filter, error) {
	f := Filter{Source: field}
	switch x := v.(type) {
	case nil:
		return f, nil
	case map[string]any:
		c, err := parseConjunction(x)
		if err != nil {
			return f, fmt.Errorf("%s: %w", field, err)
		}
		f.Alternatives = []Conjunction{c}
	case []any:
		if len(x) == 0 {
			return f, fmt.Errorf("%s: an empty list matches no partition; leave the field out to read all", field)
		}
		for i, e := range x {
			m, ok := e.(map[string]any)
			if !ok {
				return f, fmt.Errorf("%s[%d]: expected a map of partition key to value(s), got %s", field, i, yamlType(e))
			}
			c, err := parseConjunction(m)
			if err != nil {
				return f, fmt.Errorf("%s[%d]: %w", field, i, err)
			}
			f.Alternatives = append(f.Alternatives, c)
		}
	default:
		return f, fmt.Errorf("%s: expected a map of partition key to value(s), or a list of such maps, got %s", field, yamlType(v))
	}
	return f, nil
}

func parseConjunction(m map[string]any) (Conjunction, error) {
	if len(m) == 0 {
		return nil, errors.New("an empty map; give at least one partition key")
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	c := make(Conjunction, 0, len(keys))
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
		c = append(c, Condition{Key: k, Values: values})
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

// ParseSpecs reads Paimon action partition specs, one "k=v[,k2=v2]" per
// spec, each a conjunction and together their disjunction; the values stay
// strings (Paimon's partition strings: the directory values unescaped,
// __DEFAULT_PARTITION__ for NULL), for a Convert that knows their form.
// Every key must be one of keys, at most once per spec. flag names the
// flag ("--partition") in errors, with the spec.
func ParseSpecs(flag string, specs []string, keys []types.DataField) (Filter, error) {
	f := Filter{Source: flag}
	for _, v := range specs {
		var c Conjunction
		for _, kv := range strings.Split(v, ",") {
			k, val, ok := strings.Cut(kv, "=")
			k = strings.TrimSpace(k)
			if !ok || k == "" {
				return f, fmt.Errorf("%s %q: want key=value[,key2=value2]", flag, v)
			}
			if len(keys) == 0 {
				return f, fmt.Errorf("%s %q: the table is not partitioned", flag, v)
			}
			if types.FieldByName(keys, k) < 0 {
				return f, fmt.Errorf("%s %q: %q is not a partition key (partition keys: %s)", flag, v, k, strings.Join(fieldNames(keys), ", "))
			}
			for _, have := range c {
				if have.Key == k {
					return f, fmt.Errorf("%s %q: key %q given twice", flag, v, k)
				}
			}
			c = append(c, Condition{Key: k, Values: []any{val}})
		}
		sort.Slice(c, func(i, j int) bool { return c[i].Key < c[j].Key })
		f.Alternatives = append(f.Alternatives, c)
	}
	return f, nil
}

// IsEmpty reports whether the filter matches every partition.
func (f Filter) IsEmpty() bool { return len(f.Alternatives) == 0 }

// Keys returns the partition keys the filter names, sorted.
func (f Filter) Keys() []string {
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

func fieldNames(fs []types.DataField) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Name
	}
	return out
}
