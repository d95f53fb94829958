package aggregate

import (
	"fmt"
	"math"

	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// nestedKey projects the nested-key fields of an ARRAY<ROW> element into
// the BinaryRow Java keys its HashMap with (Projection + BinaryRow.hashCode
// and byte equality).
type nestedKey struct {
	index []int
	types []types.DataType
}

func newNestedKey(name string, f types.DataField, names []string) (*nestedKey, error) {
	row := f.Type.Element
	k := &nestedKey{}
	for _, n := range names {
		i := types.FieldByName(row.Fields, n)
		if i < 0 {
			return nil, fmt.Errorf("%w: %s on field %q: nested-key %q is not a field of %s", ErrInvalidOption, name, f.Name, n, *row)
		}
		k.index = append(k.index, i)
		k.types = append(k.types, row.Fields[i].Type)
	}
	return k, nil
}

// of returns the key row's bytes (as a string, for equality) and its hash.
func (k *nestedKey) of(row []any) (string, int32, error) {
	vals := make([]any, len(k.index))
	for i, j := range k.index {
		vals[i] = row[j]
	}
	b, err := binrow.Encode(k.types, vals)
	if err != nil {
		return "", 0, fmt.Errorf("%w: nested key: %v", ErrInvalidValue, err)
	}
	return string(b), binrow.Hash(b), nil
}

func stringEqual(a, b any) bool { return a.(string) == b.(string) }

func checkArrayOfRow(name string, f types.DataField) error {
	if f.Type.Kind != types.KindArray || f.Type.Element.Kind != types.KindRow {
		return fmt.Errorf("%w: data type for nested table column %q must be 'Array<Row>' but was %s", ErrInvalidType, f.Name, f.Type)
	}
	return nil
}

// nonNullRows appends the non-NULL elements of array (at most limit) to
// rows, checking that each is a ROW of width fields.
func nonNullRows(rows [][]any, array any, width, limit int) ([][]any, error) {
	a, err := arrayOf(array)
	if err != nil {
		return nil, err
	}
	n := 0
	for _, e := range a {
		if n >= limit {
			break
		}
		if e == nil {
			continue
		}
		r, ok := e.([]any)
		if !ok || len(r) != width {
			return nil, fmt.Errorf("%w: nested table element is a %T, not a ROW of %d fields", ErrInvalidValue, e, width)
		}
		rows = append(rows, r)
		n++
	}
	return rows, nil
}

func rowsToArray(rows [][]any) []any {
	out := make([]any, len(rows))
	for i, r := range rows {
		out[i] = r
	}
	return out
}

// nestedUpdateFunc is FieldNestedUpdateAgg over ARRAY<ROW>: the non-NULL
// rows of the accumulator then of the input, keeping at most
// fields.<f>.count-limit rows (an accumulator of that many elements, NULLs
// counted, is returned as is). With fields.<f>.nested-key the rows are put
// into a java.util.HashMap by key (a later row replaces an earlier one) and
// come out in its order. Retract removes the retracted rows: by key, or
// without a key every row equal to one (RecordEqualiser).
type nestedUpdateFunc struct {
	row        types.DataType
	key        *nestedKey
	countLimit int
}

func newNestedUpdate(f types.DataField, o fieldOptions) (Func, error) {
	if err := checkArrayOfRow(nameNestedUpdate, f); err != nil {
		return nil, err
	}
	limit, err := o.countLimit()
	if err != nil {
		return nil, err
	}
	fn := &nestedUpdateFunc{row: *f.Type.Element, countLimit: limit}
	if names := o.nestedKey(); len(names) > 0 {
		if fn.key, err = newNestedKey(nameNestedUpdate, f, names); err != nil {
			return nil, err
		}
	}
	return fn, nil
}

func (f *nestedUpdateFunc) Agg(acc, in any) (any, error) {
	if acc == nil || in == nil {
		return firstNonNil(acc, in), nil
	}
	a, err := arrayOf(acc)
	if err != nil {
		return nil, err
	}
	if len(a) >= f.countLimit {
		return acc, nil
	}
	width := len(f.row.Fields)
	rows, err := nonNullRows(nil, a, width, math.MaxInt)
	if err != nil {
		return nil, err
	}
	if rows, err = nonNullRows(rows, in, width, f.countLimit-len(a)); err != nil {
		return nil, err
	}
	if f.key == nil {
		return rowsToArray(rows), nil
	}
	hm := newHashMap(stringEqual)
	for _, r := range rows {
		k, h, err := f.key.of(r)
		if err != nil {
			return nil, err
		}
		if err := hm.put(h, k, r); err != nil {
			return nil, fmt.Errorf("nested_update: %w", err)
		}
	}
	return hashValues(hm), nil
}

func hashValues(hm *hashMap) []any {
	es := hm.entries()
	out := make([]any, len(es))
	for i, e := range es {
		out[i] = e.value
	}
	return out
}

func (f *nestedUpdateFunc) AggReversed(acc, in any) (any, error) { return f.Agg(in, acc) }

func (f *nestedUpdateFunc) Retract(acc, in any) (any, error) {
	if acc == nil || in == nil {
		return acc, nil
	}
	width := len(f.row.Fields)
	rows, err := nonNullRows(nil, acc, width, math.MaxInt)
	if err != nil {
		return nil, err
	}
	retract, err := nonNullRows(nil, in, width, math.MaxInt)
	if err != nil {
		return nil, err
	}
	if f.key == nil {
		for _, r := range retract {
			kept := rows[:0:0]
			for _, x := range rows {
				if !equaliserEqual(x, r, f.row) {
					kept = append(kept, x)
				}
			}
			rows = kept
		}
		return rowsToArray(rows), nil
	}
	hm := newHashMap(stringEqual)
	for _, r := range rows {
		k, h, err := f.key.of(r)
		if err != nil {
			return nil, err
		}
		if err := hm.put(h, k, r); err != nil {
			return nil, fmt.Errorf("nested_update: %w", err)
		}
	}
	for _, r := range retract {
		k, h, err := f.key.of(r)
		if err != nil {
			return nil, err
		}
		hm.remove(h, k)
	}
	return hashValues(hm), nil
}

func (f *nestedUpdateFunc) Reset() {}

// nestedPartialUpdateFunc is FieldNestedPartialUpdateAgg over ARRAY<ROW>
// with a required fields.<f>.nested-key: the non-NULL rows of the
// accumulator then of the input are merged by key in a java.util.HashMap
// (with computeIfAbsent, whose order differs from put's), each non-NULL
// field overwriting the key's row (a partial update), and come out in the
// HashMap's order. Java cannot retract it.
type nestedPartialUpdateFunc struct {
	noRetract
	row types.DataType
	key *nestedKey
}

func newNestedPartialUpdate(f types.DataField, o fieldOptions) (Func, error) {
	names := o.nestedKey()
	if len(names) == 0 {
		return nil, fmt.Errorf("%w: nested_partial_update on field %q needs fields.%s.nested-key", ErrInvalidOption, f.Name, f.Name)
	}
	if err := checkArrayOfRow(namePartialUpdate, f); err != nil {
		return nil, err
	}
	k, err := newNestedKey(namePartialUpdate, f, names)
	if err != nil {
		return nil, err
	}
	return &nestedPartialUpdateFunc{noRetract: noRetract{namePartialUpdate}, row: *f.Type.Element, key: k}, nil
}

func (f *nestedPartialUpdateFunc) Agg(acc, in any) (any, error) {
	if acc == nil || in == nil {
		return firstNonNil(acc, in), nil
	}
	width := len(f.row.Fields)
	rows, err := nonNullRows(nil, acc, width, math.MaxInt)
	if err != nil {
		return nil, err
	}
	if rows, err = nonNullRows(rows, in, width, math.MaxInt); err != nil {
		return nil, err
	}
	hm := newHashMap(stringEqual)
	for _, r := range rows {
		k, h, err := f.key.of(r)
		if err != nil {
			return nil, err
		}
		cur, err := hm.computeIfAbsent(h, k, func() any { return make([]any, width) })
		if err != nil {
			return nil, fmt.Errorf("nested_partial_update: %w", err)
		}
		upd := cur.([]any)
		for i, v := range r {
			if v != nil {
				upd[i] = v
			}
		}
	}
	return hashValues(hm), nil
}

func (f *nestedPartialUpdateFunc) AggReversed(acc, in any) (any, error) { return f.Agg(in, acc) }
func (f *nestedPartialUpdateFunc) Reset()                               {}
