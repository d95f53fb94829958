package aggregate

import (
	"bytes"
	"fmt"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// collectFunc is FieldCollectAgg over ARRAY<T>. Without distinct it
// concatenates the accumulator and the input (a NULL one is skipped). With
// fields.<f>.distinct the elements go through a java.util.HashSet for an
// atomic T, so the result is in HashSet order (see hashMap), even when one
// side is NULL; for a nested T they are de-duplicated in order with Java's
// RecordEqualiser. Retract removes, for each retracted element, one equal
// element of the accumulator.
type collectFunc struct {
	elem     types.DataType
	distinct bool
}

func newCollect(f types.DataField, o fieldOptions) (Func, error) {
	if f.Type.Kind != types.KindArray {
		return nil, typeError(nameCollect, f, "ARRAY")
	}
	distinct, err := o.boolOption(o.key(optDistinct))
	if err != nil {
		return nil, err
	}
	elem := *f.Type.Element
	if distinct && (elem.Kind == types.KindBinary || elem.Kind == types.KindVarBinary) {
		return nil, fmt.Errorf("%w: collect with distinct on field %q of %s: Java puts byte[] elements in a HashSet by identity, so equal values are not merged and the order is arbitrary",
			ErrUnsupportedFunction, f.Name, f.Type)
	}
	return collectFunc{elem: elem, distinct: distinct}, nil
}

func (f collectFunc) constructed() bool { return f.elem.IsNested() }

func (f collectFunc) Agg(acc, in any) (any, error) {
	if acc == nil && in == nil {
		return nil, nil
	}
	if (acc == nil || in == nil) && !f.distinct {
		return firstNonNil(acc, in), nil
	}
	a, err := arrayOf(acc)
	if err != nil {
		return nil, err
	}
	b, err := arrayOf(in)
	if err != nil {
		return nil, err
	}
	if !f.distinct {
		out := make([]any, 0, len(a)+len(b))
		return append(append(out, a...), b...), nil
	}
	if f.constructed() {
		// The accumulator is already distinct: Java copies it as is and
		// adds each input element not yet present.
		out := append(make([]any, 0, len(a)+len(b)), a...)
		for _, e := range b {
			if !containsEqual(out, e, f.elem) {
				out = append(out, e)
			}
		}
		return out, nil
	}
	set := newHashMap(javaEquals)
	for _, part := range [][]any{a, b} {
		for _, e := range part {
			h, err := javaHash(e)
			if err != nil {
				return nil, err
			}
			if _, ok := set.get(h, e); ok {
				continue
			}
			if err := set.put(h, e, nil); err != nil {
				return nil, fmt.Errorf("collect: %w", err)
			}
		}
	}
	es := set.entries()
	out := make([]any, len(es))
	for i, e := range es {
		out[i] = e.key
	}
	return out, nil
}

// AggReversed is Agg with the arguments in place: FieldCollectAgg skips the
// reversal because the accumulator is already distinct.
func (f collectFunc) AggReversed(acc, in any) (any, error) { return f.Agg(acc, in) }

func (f collectFunc) Retract(acc, in any) (any, error) {
	if acc == nil {
		return nil, nil
	}
	if in == nil {
		return acc, nil
	}
	r, err := arrayOf(in)
	if err != nil {
		return nil, err
	}
	if len(r) == 0 {
		return acc, nil
	}
	a, err := arrayOf(acc)
	if err != nil {
		return nil, err
	}
	pending := append([]any(nil), r...)
	out := make([]any, 0, len(a))
	for _, c := range a {
		removed := false
		for i, p := range pending {
			eq, err := f.retractEqual(p, c)
			if err != nil {
				return nil, err
			}
			if eq {
				pending = append(pending[:i:i], pending[i+1:]...)
				removed = true
				break
			}
		}
		if !removed {
			out = append(out, c)
		}
	}
	return out, nil
}

// retractEqual is FieldCollectAgg.equals: the RecordEqualiser for a nested
// element type with distinct, Object.equals otherwise. Java's byte[] equals
// is identity, and a retracted row's arrays are never the accumulator's
// objects, so BYTES elements are never retracted; Object.equals of the
// reader's nested objects is not reproduced, so that case fails.
func (f collectFunc) retractEqual(a, b any) (bool, error) {
	if a == nil || b == nil {
		return a == nil && b == nil, nil
	}
	switch {
	case f.distinct && f.constructed():
		return equaliserEqual(a, b, f.elem), nil
	case f.elem.Kind == types.KindBinary || f.elem.Kind == types.KindVarBinary:
		return false, nil
	case f.constructed():
		return false, fmt.Errorf("%w: collect retraction of %s elements without distinct: Java compares them with the reader's Object.equals, which is not reproduced",
			ErrUnsupportedFunction, f.elem)
	}
	return javaEquals(a, b), nil
}

func (f collectFunc) Reset() {}

func arrayOf(v any) ([]any, error) {
	switch x := v.(type) {
	case nil:
		return nil, nil
	case []any:
		return x, nil
	}
	return nil, fmt.Errorf("%w: want an ARRAY ([]any), got a %T", ErrInvalidValue, v)
}

func containsEqual(list []any, e any, t types.DataType) bool {
	for _, o := range list {
		if o == nil || e == nil {
			if o == nil && e == nil {
				return true
			}
			continue
		}
		if equaliserEqual(o, e, t) {
			return true
		}
	}
	return false
}

// equaliserEqual compares two non-NULL values of t as Paimon's generated
// RecordEqualiser does (EqualiserCodeGenerator.scala): primitives
// (BOOLEAN, integers, FLOAT, DOUBLE, DATE, TIME) with ==, so NaN differs
// from NaN and -0.0 equals 0.0; ROW field by field; strings, bytes,
// DECIMAL and TIMESTAMP by value; ARRAY and MAP element by element.
func equaliserEqual(a, b any, t types.DataType) bool {
	if a == nil || b == nil {
		return a == nil && b == nil
	}
	switch t.Kind {
	case types.KindRow:
		x, ok1 := a.([]any)
		y, ok2 := b.([]any)
		if !ok1 || !ok2 || len(x) != len(y) || len(x) != len(t.Fields) {
			return false
		}
		for i := range x {
			if !equaliserEqual(x[i], y[i], t.Fields[i].Type) {
				return false
			}
		}
		return true
	case types.KindArray:
		x, ok1 := a.([]any)
		y, ok2 := b.([]any)
		if !ok1 || !ok2 || len(x) != len(y) {
			return false
		}
		for i := range x {
			if !equaliserEqual(x[i], y[i], *t.Element) {
				return false
			}
		}
		return true
	case types.KindMap, types.KindMultiset:
		x, ok1 := a.(types.Map)
		y, ok2 := b.(types.Map)
		if !ok1 || !ok2 || x.Len() != y.Len() {
			return false
		}
		kt, vt := t.Key, t.Value
		if t.Kind == types.KindMultiset {
			it := types.IntType()
			kt, vt = t.Element, &it
		}
		for i := range x.Keys {
			if !equaliserEqual(x.Keys[i], y.Keys[i], *kt) || !equaliserEqual(x.Values[i], y.Values[i], *vt) {
				return false
			}
		}
		return true
	case types.KindBinary, types.KindVarBinary:
		x, ok1 := a.([]byte)
		y, ok2 := b.([]byte)
		return ok1 && ok2 && bytes.Equal(x, y)
	case types.KindDecimal:
		x, ok1 := a.(types.Decimal)
		y, ok2 := b.(types.Decimal)
		return ok1 && ok2 && x.Cmp(y) == 0
	}
	// Primitives compare with == (float NaN != NaN), the rest by value.
	return a == b
}
