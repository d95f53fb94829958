package scan

import (
	"bytes"
	"fmt"
	"math"

	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/manifest"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// PartitionFilter restricts a plan to some partitions: equality or IN on
// partition keys. Allowed maps a partition key name to the values it may
// take; a nil element allows the NULL partition value (the
// __DEFAULT_PARTITION__ directory). Keys absent from Allowed are
// unconstrained, and a key with an empty list matches nothing. A nil
// *PartitionFilter, or one with an empty Allowed, matches every partition.
//
// Keys, when set, are the table's partition key fields; the planner then
// checks that they agree with the schema of the planned snapshot. Values are
// the Go values of lakecore/types for each key's type; Go integer types are
// accepted for integer and DATE/TIME keys when the value fits, float64 for
// FLOAT and float32 for DOUBLE when exact, and []byte for CHAR/VARCHAR.
type PartitionFilter struct {
	Keys    []types.DataField
	Allowed map[string][]any
}

// partitionMatcher is a PartitionFilter compiled against the partition
// fields of one schema. It caches its verdict per partition BinaryRow, so
// deciding an entry costs one map lookup. Not safe for concurrent use.
type partitionMatcher struct {
	fields  []types.DataField
	types   []types.DataType
	allowed [][]any // per partition field; nil = unconstrained
	any     bool    // some field is constrained
	verdict map[string]bool
}

// compileFilter checks f against the partition fields of the schema being
// planned and normalizes its values. A nil or empty filter compiles to a
// matcher that accepts everything.
func compileFilter(f *PartitionFilter, fields []types.DataField) (*partitionMatcher, error) {
	m := &partitionMatcher{fields: fields, verdict: map[string]bool{}}
	m.types = make([]types.DataType, len(fields))
	for i, pf := range fields {
		m.types[i] = pf.Type
	}
	if f == nil || len(f.Allowed) == 0 {
		return m, nil
	}
	if f.Keys != nil {
		if len(f.Keys) != len(fields) {
			return nil, fmt.Errorf("%w: filter names partition keys %v, the table has %v", ErrInvalidFilter, fieldNames(f.Keys), fieldNames(fields))
		}
		for i, k := range f.Keys {
			if k.Name != fields[i].Name || !k.Type.WithNullable(true).Equal(fields[i].Type.WithNullable(true)) {
				return nil, fmt.Errorf("%w: filter key %s %s, the table's partition key %d is %s %s",
					ErrInvalidFilter, k.Name, k.Type, i, fields[i].Name, fields[i].Type)
			}
		}
	}
	m.allowed = make([][]any, len(fields))
	for name, vals := range f.Allowed {
		i := types.FieldByName(fields, name)
		if i < 0 {
			return nil, fmt.Errorf("%w: %q is not a partition key (partition keys %v)", ErrInvalidFilter, name, fieldNames(fields))
		}
		norm := make([]any, 0, len(vals))
		for _, v := range vals {
			nv, err := normalizeValue(fields[i].Type, v)
			if err != nil {
				return nil, fmt.Errorf("%w: value %v (%T) for partition key %q of type %s: %v", ErrInvalidFilter, v, v, name, fields[i].Type, err)
			}
			norm = append(norm, nv)
		}
		m.allowed[i] = norm
		m.any = true
	}
	return m, nil
}

func fieldNames(fs []types.DataField) []string {
	out := make([]string, len(fs))
	for i, f := range fs {
		out[i] = f.Name
	}
	return out
}

// matchPartition reports whether the serialized partition row passes the
// filter. Undecodable partition bytes are an error: silently dropping or
// keeping such a file would change the result.
func (m *partitionMatcher) matchPartition(part []byte) (bool, error) {
	if !m.any {
		return true, nil
	}
	if ok, seen := m.verdict[string(part)]; seen {
		return ok, nil
	}
	vals, err := binrow.Deserialize(m.types, part)
	if err != nil {
		return false, fmt.Errorf("partition of a manifest entry: %w", err)
	}
	ok := true
	for i, allowed := range m.allowed {
		if allowed == nil {
			continue
		}
		if !containsValue(m.types[i], allowed, vals[i]) {
			ok = false
			break
		}
	}
	m.verdict[string(part)] = ok
	return ok, nil
}

// mayContain reports whether a manifest with these partition stats can hold
// an allowed partition (Java's PartitionPredicate.test on min/max/null
// counts, apache/paimon: paimon-common/.../partition/PartitionPredicate.java).
// Stats that cannot be decoded, or have another arity (written under a
// different partitioning), never prune: the manifest is read.
func (m *partitionMatcher) mayContain(st manifest.SimpleStats) bool {
	if !m.any {
		return true
	}
	mins, maxs, nullCounts, err := st.Decode(m.types)
	if err != nil {
		return true
	}
	for i, allowed := range m.allowed {
		if allowed == nil {
			continue
		}
		var nulls *int64
		if nullCounts != nil {
			nulls = nullCounts[i]
		}
		possible := false
		for _, v := range allowed {
			if v == nil {
				possible = nulls == nil || *nulls > 0
			} else if mins[i] == nil || maxs[i] == nil {
				// Either every value is NULL or no stats were kept; without
				// the manifest's row count the two look alike, so keep it.
				possible = true
			} else {
				lo, ok1 := compareValues(m.types[i], mins[i], v)
				hi, ok2 := compareValues(m.types[i], v, maxs[i])
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

func containsValue(t types.DataType, allowed []any, v any) bool {
	for _, a := range allowed {
		if a == nil || v == nil {
			if a == nil && v == nil {
				return true
			}
			continue
		}
		if c, ok := compareValues(t, a, v); ok && c == 0 {
			return true
		}
	}
	return false
}

// compareValues orders two non-NULL values of type t as Paimon's
// InternalRow comparators do (strings and bytes by unsigned bytes, numbers
// numerically, false < true). ok is false for values of unexpected Go types
// or types without an order.
func compareValues(t types.DataType, a, b any) (c int, ok bool) {
	switch t.Kind {
	case types.KindBoolean:
		x, ok1 := a.(bool)
		y, ok2 := b.(bool)
		if !ok1 || !ok2 {
			return 0, false
		}
		switch {
		case x == y:
			return 0, true
		case !x:
			return -1, true
		default:
			return 1, true
		}
	case types.KindTinyInt:
		return cmpOrdered[int8](a, b)
	case types.KindSmallInt:
		return cmpOrdered[int16](a, b)
	case types.KindInt:
		return cmpOrdered[int32](a, b)
	case types.KindBigInt:
		return cmpOrdered[int64](a, b)
	case types.KindFloat:
		return cmpOrdered[float32](a, b)
	case types.KindDouble:
		return cmpOrdered[float64](a, b)
	case types.KindDate:
		return cmpOrdered[types.Date](a, b)
	case types.KindTime:
		return cmpOrdered[types.Time](a, b)
	case types.KindChar, types.KindVarChar:
		return cmpOrdered[string](a, b)
	case types.KindBinary, types.KindVarBinary:
		x, ok1 := a.([]byte)
		y, ok2 := b.([]byte)
		if !ok1 || !ok2 {
			return 0, false
		}
		return bytes.Compare(x, y), true
	case types.KindDecimal:
		x, ok1 := a.(types.Decimal)
		y, ok2 := b.(types.Decimal)
		if !ok1 || !ok2 {
			return 0, false
		}
		return x.Cmp(y), true
	case types.KindTimestamp, types.KindLocalZonedTimestamp:
		x, ok1 := a.(types.Timestamp)
		y, ok2 := b.(types.Timestamp)
		if !ok1 || !ok2 {
			return 0, false
		}
		return x.Compare(y), true
	}
	return 0, false
}

func cmpOrdered[T int8 | int16 | int32 | int64 | float32 | float64 | types.Date | types.Time | string](a, b any) (int, bool) {
	x, ok1 := a.(T)
	y, ok2 := b.(T)
	if !ok1 || !ok2 {
		return 0, false
	}
	switch {
	case x < y:
		return -1, true
	case x > y:
		return 1, true
	case x == y:
		return 0, true
	}
	return 0, false // NaN: unordered
}

// normalizeValue converts a filter value to the Go type lakecore uses for t.
func normalizeValue(t types.DataType, v any) (any, error) {
	if v == nil {
		return nil, nil
	}
	switch t.Kind {
	case types.KindBoolean:
		if b, ok := v.(bool); ok {
			return b, nil
		}
	case types.KindTinyInt:
		if n, ok := types.AnyInt(v); ok && n >= math.MinInt8 && n <= math.MaxInt8 {
			return int8(n), nil
		}
	case types.KindSmallInt:
		if n, ok := types.AnyInt(v); ok && n >= math.MinInt16 && n <= math.MaxInt16 {
			return int16(n), nil
		}
	case types.KindInt:
		if n, ok := types.AnyInt(v); ok && n >= math.MinInt32 && n <= math.MaxInt32 {
			return int32(n), nil
		}
	case types.KindBigInt:
		if n, ok := types.AnyInt(v); ok {
			return n, nil
		}
	case types.KindDate:
		if d, ok := v.(types.Date); ok {
			return d, nil
		}
		if n, ok := types.AnyInt(v); ok && n >= math.MinInt32 && n <= math.MaxInt32 {
			return types.Date(n), nil
		}
	case types.KindTime:
		if d, ok := v.(types.Time); ok {
			return d, nil
		}
		if n, ok := types.AnyInt(v); ok && n >= 0 && n < 86400000 {
			return types.Time(n), nil
		}
	case types.KindFloat:
		switch x := v.(type) {
		case float32:
			return x, nil
		case float64:
			if float64(float32(x)) == x {
				return float32(x), nil
			}
		}
	case types.KindDouble:
		switch x := v.(type) {
		case float64:
			return x, nil
		case float32:
			return float64(x), nil
		}
	case types.KindChar, types.KindVarChar:
		switch x := v.(type) {
		case string:
			return x, nil
		case []byte:
			return string(x), nil
		}
	case types.KindBinary, types.KindVarBinary:
		switch x := v.(type) {
		case []byte:
			return x, nil
		case string:
			return []byte(x), nil
		}
	case types.KindDecimal:
		if d, ok := v.(types.Decimal); ok && d.Unscaled != nil {
			return d, nil
		}
	case types.KindTimestamp, types.KindLocalZonedTimestamp:
		if ts, ok := v.(types.Timestamp); ok {
			return ts, nil
		}
	}
	return nil, fmt.Errorf("not a value of type %s", t)
}
