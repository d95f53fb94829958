package kv

import (
	"bytes"
	"cmp"
	"fmt"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// CompareValues orders two values of one key or sequence column as the
// comparator Java generates for sorting (GenerateUtils.generateCompare in
// apache/paimon paimon-codegen): NULL first; numbers, dates and times by
// `a > b ? 1 : a < b ? -1 : 0` (so NaN equals everything and -0.0 equals
// 0.0, unlike Double.compare); false before true; strings and binaries by
// unsigned bytes, a shorter prefix first; decimals by value; timestamps by
// millisecond then nanosecond. Values of other types (nested) compare as
// equal; Java does not allow them in keys.
func CompareValues(a, b any) int {
	if a == nil || b == nil {
		switch {
		case a == nil && b == nil:
			return 0
		case a == nil:
			return -1
		}
		return 1
	}
	switch x := a.(type) {
	case int32:
		return cmp.Compare(x, b.(int32))
	case int64:
		return cmp.Compare(x, b.(int64))
	case string:
		return cmp.Compare(x, b.(string)) // Go compares strings by unsigned bytes
	case int8:
		return cmp.Compare(x, b.(int8))
	case int16:
		return cmp.Compare(x, b.(int16))
	case bool:
		y := b.(bool)
		switch {
		case x == y:
			return 0
		case !x:
			return -1
		}
		return 1
	case float32:
		return CompareFloats(float64(x), float64(b.(float32)))
	case float64:
		return CompareFloats(x, b.(float64))
	case types.Date:
		return cmp.Compare(x, b.(types.Date))
	case types.Time:
		return cmp.Compare(x, b.(types.Time))
	case []byte:
		return bytes.Compare(x, b.([]byte))
	case types.Decimal:
		y := b.(types.Decimal)
		if x.Scale == y.Scale {
			return x.Unscaled.Cmp(y.Unscaled)
		}
		return x.Cmp(y)
	case types.Timestamp:
		return x.Compare(b.(types.Timestamp))
	}
	return 0
}

// CompareFloats is CompareValues for float and double keys, Java's
// generated comparison: neither NaN nor the sign of zero is ordered.
func CompareFloats(a, b float64) int {
	switch {
	case a > b:
		return 1
	case a < b:
		return -1
	}
	return 0
}

// Comparator orders rows by some of their columns, each ascending or
// descending, NULL first either way (CodeGenUtils.newRecordComparator with
// nullIsLast = false). The zero value compares nothing.
type Comparator struct {
	// Fields are the indexes of the compared columns, in order.
	Fields []int
	// Descending reverses the order of non-null values of every field.
	Descending bool
}

// Compare orders rows a and b.
func (c Comparator) Compare(a, b []any) int {
	for _, i := range c.Fields {
		x, y := a[i], b[i]
		r := CompareValues(x, y)
		if r != 0 {
			if c.Descending && x != nil && y != nil {
				return -r
			}
			return r
		}
	}
	return 0
}

// CompareKeys orders two keys (the trimmed primary-key values, in key
// order) as KeyComparatorSupplier's comparator does.
func CompareKeys(a, b []any) int {
	for i := range a {
		if r := CompareValues(a[i], b[i]); r != 0 {
			return r
		}
	}
	return 0
}

// CheckKeyType reports whether Java can compare a primary-key column of
// type t; nested types cannot be keys.
func CheckKeyType(name string, t types.DataType) error {
	if t.IsNested() {
		return fmt.Errorf("primary-key column %q has type %s, which cannot be compared", name, t)
	}
	return nil
}
