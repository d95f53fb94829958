package partition

import (
	"fmt"
	"sort"
	"strings"

	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// Convert turns one filter value into the values of key's type it stands
// for: usually one, none for a value no partition can have (a filter on
// strings no live partition names), several when several values share the
// value's text. The values must be the Go values of lakecore/types or
// convertible to them as Strict converts; nil is the NULL partition value.
// An error says why v is not a value of the key, without naming the key.
type Convert func(key types.DataField, v any) ([]any, error)

// Strict is the Convert of values already typed in Go: the values of
// lakecore/types for each key's type; Go integer types are accepted for
// integer and DATE/TIME keys when the value fits, float64 for FLOAT and
// float32 for DOUBLE when exact, []byte for CHAR/VARCHAR and string for
// BINARY/VARBINARY.
func Strict(key types.DataField, v any) ([]any, error) {
	nv, err := normalizeValue(key.Type, v)
	if err != nil {
		return nil, fmt.Errorf("value %v (%T) is %w", v, v, err)
	}
	return []any{nv}, nil
}

// Predicate is a Filter typed against the partition keys of a table: it
// matches partition rows and judges manifests by their partition stats. A
// nil *Predicate matches every partition. A Predicate is immutable and safe
// for concurrent use.
type Predicate struct {
	keys  []types.DataField
	types []types.DataType
	alts  [][]cond // OR of AND; never empty
}

// cond is "partition[index] IN (values)" with normalized values.
type cond struct {
	index  int
	values []any
}

// Bind types the filter against the table's partition keys (in partition
// order), converting each value with conv (Strict when nil). A key that is
// not a partition key, or a value that conv rejects, is an error naming the
// filter's Source, the key and the value, wrapping ErrInvalidFilter. An
// empty filter binds to nil, which matches everything.
func (f Filter) Bind(keys []types.DataField, conv Convert) (*Predicate, error) {
	if f.IsEmpty() {
		return nil, nil
	}
	if conv == nil {
		conv = Strict
	}
	source := f.Source
	if source == "" {
		source = "partition filter"
	}
	p := newPredicate(keys)
	for _, conj := range f.Alternatives {
		var bound []cond
		for _, c := range conj {
			i := types.FieldByName(keys, c.Key)
			if i < 0 {
				if len(keys) == 0 {
					return nil, &invalidFilter{msg: fmt.Sprintf("%s: the table is not partitioned, so %q cannot be filtered on", source, c.Key)}
				}
				return nil, &invalidFilter{msg: fmt.Sprintf("%s: %q is not a partition key of the table (partition keys: %s)",
					source, c.Key, strings.Join(fieldNames(keys), ", "))}
			}
			vals := []any{}
			for _, raw := range c.Values {
				vs, err := conv(keys[i], raw)
				if err != nil {
					return nil, &invalidFilter{msg: fmt.Sprintf("%s: key %q: %v", source, c.Key, err), cause: err}
				}
				for _, v := range vs {
					nv, err := normalizeValue(keys[i].Type, v)
					if err != nil {
						return nil, &invalidFilter{msg: fmt.Sprintf("%s: key %q: value %v (%T) is %v", source, c.Key, v, v, err)}
					}
					vals = append(vals, nv)
				}
			}
			bound = append(bound, cond{index: i, values: vals})
		}
		sort.SliceStable(bound, func(a, b int) bool { return bound[a].index < bound[b].index })
		p.alts = append(p.alts, bound)
	}
	return p, nil
}

// In returns the predicate "key IN allowed[key]" for every key of allowed,
// with values converted by Strict: a single conjunction, the shape of an
// overwrite or of a compaction of some partitions. A key with an empty list
// matches nothing; an empty allowed gives nil, which matches everything.
func In(keys []types.DataField, allowed map[string][]any) (*Predicate, error) {
	if len(allowed) == 0 {
		return nil, nil
	}
	var c Conjunction
	for k, vals := range allowed {
		c = append(c, Condition{Key: k, Values: vals})
	}
	sort.Slice(c, func(i, j int) bool { return c[i].Key < c[j].Key })
	return Filter{Alternatives: []Conjunction{c}}.Bind(keys, Strict)
}

func newPredicate(keys []types.DataField) *Predicate {
	p := &Predicate{keys: keys, types: make([]types.DataType, len(keys))}
	for i, k := range keys {
		p.types[i] = k.Type
	}
	return p
}

// Keys returns the partition keys the predicate was bound to.
func (p *Predicate) Keys() []types.DataField {
	if p == nil {
		return nil
	}
	return p.keys
}

// CheckKeys reports an error, wrapping ErrInvalidFilter, when fields (the
// partition keys of a schema being read) are not the keys p was bound to
// (names and types, nullability aside). Paimon never changes partition
// keys, so this only fails for a predicate of another table.
func (p *Predicate) CheckKeys(fields []types.DataField) error {
	if p == nil {
		return nil
	}
	if len(p.keys) != len(fields) {
		return &invalidFilter{msg: fmt.Sprintf("%v: filter names partition keys %v, the table has %v", ErrInvalidFilter, fieldNames(p.keys), fieldNames(fields))}
	}
	for i, k := range p.keys {
		if k.Name != fields[i].Name || !k.Type.WithNullable(true).Equal(fields[i].Type.WithNullable(true)) {
			return &invalidFilter{msg: fmt.Sprintf("%v: filter key %s %s, the table's partition key %d is %s %s",
				ErrInvalidFilter, k.Name, k.Type, i, fields[i].Name, fields[i].Type)}
		}
	}
	return nil
}

// MatchesAll reports whether p matches every partition (p is nil).
func (p *Predicate) MatchesAll() bool { return p == nil }

// Match reports whether a partition, its values in partition key order as
// binrow decodes a partition row, passes.
func (p *Predicate) Match(values []any) bool {
	if p == nil {
		return true
	}
	for _, conj := range p.alts {
		if p.conjMatches(conj, values) {
			return true
		}
	}
	return false
}

func (p *Predicate) conjMatches(conj []cond, values []any) bool {
	for _, c := range conj {
		if c.index >= len(values) || !containsValue(p.types[c.index], c.values, values[c.index]) {
			return false
		}
	}
	return true
}

// MatchRow reports whether a serialized partition row passes. Undecodable
// bytes are an error: silently dropping or keeping such a file would change
// the result.
func (p *Predicate) MatchRow(row []byte) (bool, error) {
	if p == nil {
		return true, nil
	}
	vals, err := binrow.Deserialize(p.types, row)
	if err != nil {
		return false, fmt.Errorf("partition of a manifest entry: %w", err)
	}
	return p.Match(vals), nil
}

// MayContain reports whether a manifest with these partition stats can
// hold a partition that passes (PartitionPredicate.test on min/max/null
// counts). Stats that cannot be decoded, or have another arity (written
// under a different partitioning), never prune: the manifest is read.
func (p *Predicate) MayContain(st manifest.SimpleStats) bool {
	if p == nil {
		return true
	}
	mins, maxs, nullCounts, err := st.Decode(p.types)
	if err != nil {
		return true
	}
	for _, conj := range p.alts {
		if p.conjMayHold(conj, mins, maxs, nullCounts) {
			return true
		}
	}
	return false
}

func (p *Predicate) conjMayHold(conj []cond, mins, maxs []any, nullCounts []*int64) bool {
	for _, c := range conj {
		i := c.index
		var nulls *int64
		if nullCounts != nil {
			nulls = nullCounts[i]
		}
		possible := false
		for _, v := range c.values {
			if v == nil {
				possible = nulls == nil || *nulls > 0
			} else if mins[i] == nil || maxs[i] == nil {
				// Either every value is NULL or no stats were kept; without
				// the manifest's row count the two look alike, so keep it.
				possible = true
			} else {
				lo, ok1 := compareValues(p.types[i], mins[i], v)
				hi, ok2 := compareValues(p.types[i], v, maxs[i])
				possible = !ok1 || !ok2 || (lo <= 0 && hi <= 0)
			}
			if possible {
				break
			}
		}
		if !possible {
			return false
		}
	}
	return true
}

// String renders the predicate as "k IN (v, ...) AND ... OR ...", "TRUE"
// for nil.
func (p *Predicate) String() string {
	if p == nil {
		return "TRUE"
	}
	alts := make([]string, len(p.alts))
	for a, conj := range p.alts {
		conds := make([]string, len(conj))
		for j, c := range conj {
			vals := make([]string, len(c.values))
			for k, v := range c.values {
				if v == nil {
					vals[k] = "NULL"
				} else {
					vals[k] = fmt.Sprint(v)
				}
			}
			conds[j] = p.keys[c.index].Name + " IN (" + strings.Join(vals, ", ") + ")"
		}
		alts[a] = strings.Join(conds, " AND ")
	}
	return strings.Join(alts, " OR ")
}
