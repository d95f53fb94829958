package partition

import (
	"bytes"
	"fmt"
	"math"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

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
