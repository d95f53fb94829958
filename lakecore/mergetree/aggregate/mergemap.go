package aggregate

import (
	"fmt"
	"unicode/utf16"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// mergeMapFunc is FieldMergeMapAgg over MAP<K, V>: the accumulator's
// entries then the input's are put into a java.util.HashMap (a later value
// replaces an earlier one for the same key) and the result is in the
// HashMap's order. Retract drops the keys of the retracted map.
type mergeMapFunc struct{}

func newMergeMap(f types.DataField) (Func, error) {
	if f.Type.Kind != types.KindMap {
		return nil, typeError(nameMergeMap, f, "MAP")
	}
	if err := checkHashableKey(nameMergeMap, f); err != nil {
		return nil, err
	}
	return mergeMapFunc{}, nil
}

func checkHashableKey(name string, f types.DataField) error {
	if !hashableKind(*f.Type.Key) {
		return fmt.Errorf("%w: %s on field %q with %s keys: Java keys its HashMap by the reader's objects (byte[] by identity), which lakecore does not reproduce",
			ErrUnsupportedFunction, name, f.Name, *f.Type.Key)
	}
	return nil
}

func mapOf(v any) (types.Map, error) {
	m, ok := v.(types.Map)
	if !ok {
		return types.Map{}, fmt.Errorf("%w: want a MAP (types.Map), got a %T", ErrInvalidValue, v)
	}
	if len(m.Keys) != len(m.Values) {
		return types.Map{}, fmt.Errorf("%w: MAP with %d keys and %d values", ErrInvalidValue, len(m.Keys), len(m.Values))
	}
	return m, nil
}

// putAll puts the entries of m into hm in order.
func putAll(hm *hashMap, m types.Map) error {
	for i, k := range m.Keys {
		h, err := javaHash(k)
		if err != nil {
			return err
		}
		if err := hm.put(h, k, m.Values[i]); err != nil {
			return err
		}
	}
	return nil
}

func mapFromHash(hm *hashMap) types.Map {
	es := hm.entries()
	out := types.Map{Keys: make([]any, len(es)), Values: make([]any, len(es))}
	for i, e := range es {
		out.Keys[i], out.Values[i] = e.key, e.value
	}
	return out
}

func (mergeMapFunc) Agg(acc, in any) (any, error) {
	if acc == nil || in == nil {
		return firstNonNil(acc, in), nil
	}
	a, err := mapOf(acc)
	if err != nil {
		return nil, err
	}
	b, err := mapOf(in)
	if err != nil {
		return nil, err
	}
	hm := newHashMap(javaEquals)
	if err := putAll(hm, a); err != nil {
		return nil, fmt.Errorf("merge_map: %w", err)
	}
	if err := putAll(hm, b); err != nil {
		return nil, fmt.Errorf("merge_map: %w", err)
	}
	return mapFromHash(hm), nil
}

func (f mergeMapFunc) AggReversed(acc, in any) (any, error) { return f.Agg(in, acc) }

func (mergeMapFunc) Retract(acc, in any) (any, error) {
	if acc == nil {
		return nil, nil
	}
	if in == nil {
		return acc, nil
	}
	r, err := mapOf(in)
	if err != nil {
		return nil, err
	}
	if r.Len() == 0 {
		return acc, nil
	}
	a, err := mapOf(acc)
	if err != nil {
		return nil, err
	}
	hm := newHashMap(javaEquals)
	for i, k := range a.Keys {
		if containsKey(r.Keys, k) {
			continue
		}
		h, err := javaHash(k)
		if err != nil {
			return nil, err
		}
		if err := hm.put(h, k, a.Values[i]); err != nil {
			return nil, fmt.Errorf("merge_map: %w", err)
		}
	}
	return mapFromHash(hm), nil
}

func (mergeMapFunc) Reset() {}

func containsKey(keys []any, k any) bool {
	for _, o := range keys {
		if javaEquals(o, k) {
			return true
		}
	}
	return false
}

// mergeMapKeyTimeFunc is FieldMergeMapWithKeyTimeAgg over MAP<K, ROW<...>>:
// the accumulator's entries go into a java.util.HashMap, then each input
// entry: a NULL row removes the key, a row whose timestamp field is NULL
// is skipped, otherwise the row replaces the current one when that is
// absent, NULL, has a NULL timestamp, or an older one (Java compares the
// timestamp field as Strings, String.compareTo). The timestamp field is
// fields.<f>.ts-field, by default the ROW's last field.
type mergeMapKeyTimeFunc struct {
	noRetract
	tsIndex int
	tsType  types.DataType
}

func newMergeMapKeyTime(f types.DataField, o fieldOptions) (Func, error) {
	if f.Type.Kind != types.KindMap {
		return nil, typeError(nameMergeMapKeyTime, f, "MAP")
	}
	vt := *f.Type.Value
	if vt.Kind != types.KindRow {
		return nil, fmt.Errorf("%w: value type of MAP for field %q must be ROW but was %s", ErrInvalidType, f.Name, vt)
	}
	if len(vt.Fields) < 2 {
		return nil, fmt.Errorf("%w: ROW type for field %q must have at least 2 fields, but found %d", ErrInvalidType, f.Name, len(vt.Fields))
	}
	if err := checkHashableKey(nameMergeMapKeyTime, f); err != nil {
		return nil, err
	}
	ts := len(vt.Fields) - 1
	if name, ok := o.get(o.key(optMapTSField)); ok {
		ts = types.FieldByName(vt.Fields, name)
		if ts < 0 {
			return nil, fmt.Errorf("%w: timestamp field %q not found in ROW type for field %q", ErrInvalidOption, name, f.Name)
		}
	}
	return mergeMapKeyTimeFunc{noRetract: noRetract{nameMergeMapKeyTime}, tsIndex: ts, tsType: vt.Fields[ts].Type}, nil
}

func (f mergeMapKeyTimeFunc) Agg(acc, in any) (any, error) {
	if acc == nil {
		return in, nil
	}
	if in == nil {
		return acc, nil
	}
	a, err := mapOf(acc)
	if err != nil {
		return nil, err
	}
	b, err := mapOf(in)
	if err != nil {
		return nil, err
	}
	hm := newHashMap(javaEquals)
	if err := putAll(hm, a); err != nil {
		return nil, fmt.Errorf("merge_map_with_keytime: %w", err)
	}
	for i, k := range b.Keys {
		h, err := javaHash(k)
		if err != nil {
			return nil, err
		}
		if b.Values[i] == nil {
			hm.remove(h, k)
			continue
		}
		newTS, err := f.ts(b.Values[i])
		if err != nil {
			return nil, err
		}
		if newTS == nil {
			continue
		}
		replace := true
		if cur, _ := hm.get(h, k); cur != nil {
			curTS, err := f.ts(cur)
			if err != nil {
				return nil, err
			}
			if curTS != nil {
				x, ok1 := newTS.(string)
				y, ok2 := curTS.(string)
				if !ok1 || !ok2 {
					return nil, fmt.Errorf("%w: merge_map_with_keytime compares its timestamp field as a STRING, not %s", ErrInvalidType, f.tsType)
				}
				replace = javaStringCompare(x, y) > 0
			}
		}
		if replace {
			if err := hm.put(h, k, b.Values[i]); err != nil {
				return nil, fmt.Errorf("merge_map_with_keytime: %w", err)
			}
		}
	}
	return mapFromHash(hm), nil
}

func (f mergeMapKeyTimeFunc) ts(row any) (any, error) {
	r, ok := row.([]any)
	if !ok || f.tsIndex >= len(r) {
		return nil, fmt.Errorf("%w: merge_map_with_keytime value is a %T, not a ROW of at least %d fields", ErrInvalidValue, row, f.tsIndex+1)
	}
	return r[f.tsIndex], nil
}

func (f mergeMapKeyTimeFunc) AggReversed(acc, in any) (any, error) { return f.Agg(in, acc) }
func (mergeMapKeyTimeFunc) Reset()                                 {}

// javaStringCompare is String.compareTo: UTF-16 code units in order.
func javaStringCompare(a, b string) int {
	x, y := utf16.Encode([]rune(a)), utf16.Encode([]rune(b))
	for i := 0; i < len(x) && i < len(y); i++ {
		if x[i] != y[i] {
			return int(x[i]) - int(y[i])
		}
	}
	return len(x) - len(y)
}
