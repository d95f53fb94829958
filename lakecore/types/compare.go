package types

import (
	"bytes"
	"cmp"
	"math"
)

// Comparable reports whether v is the Go value of a type whose Java
// internal value is a Comparable: every atomic type but BINARY/VARBINARY
// (byte[]). Java keeps min/max statistics only for those
// (FullSimpleColStatsCollector) and compares only those
// (CompareUtils.compareLiteral).
func Comparable(v any) bool {
	switch v.(type) {
	case bool, int8, int16, int32, int64, float32, float64, string, Decimal, Date, Time, Timestamp:
		return true
	}
	return false
}

// Compare orders two non-nil values of one Comparable Go type as Java's
// compareTo orders their internal values: false before true,
// Float.compare and Double.compare for floating point (-0.0 before 0.0,
// NaN after +Inf and equal to itself), unsigned bytes for strings
// (BinaryString.compareTo), numeric value for decimals whatever their
// scales. ok is false, and c 0, when a and b are not of one such type.
func Compare(a, b any) (c int, ok bool) {
	switch x := a.(type) {
	case bool:
		if y, ok := b.(bool); ok {
			return cmp.Compare(boolInt(x), boolInt(y)), true
		}
	case int8:
		if y, ok := b.(int8); ok {
			return cmp.Compare(x, y), true
		}
	case int16:
		if y, ok := b.(int16); ok {
			return cmp.Compare(x, y), true
		}
	case int32:
		if y, ok := b.(int32); ok {
			return cmp.Compare(x, y), true
		}
	case int64:
		if y, ok := b.(int64); ok {
			return cmp.Compare(x, y), true
		}
	case Date:
		if y, ok := b.(Date); ok {
			return cmp.Compare(x, y), true
		}
	case Time:
		if y, ok := b.(Time); ok {
			return cmp.Compare(x, y), true
		}
	case float32:
		if y, ok := b.(float32); ok {
			return javaFloatCompare(float64(x), float64(y)), true
		}
	case float64:
		if y, ok := b.(float64); ok {
			return javaFloatCompare(x, y), true
		}
	case string:
		if y, ok := b.(string); ok {
			return bytes.Compare([]byte(x), []byte(y)), true
		}
	case Decimal:
		if y, ok := b.(Decimal); ok {
			return x.Cmp(y), true
		}
	case Timestamp:
		if y, ok := b.(Timestamp); ok {
			return x.Compare(y), true
		}
	}
	return 0, false
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// javaFloatCompare is Double.compare: a total order with -0.0 < 0.0 and
// every NaN equal to itself and above +Inf.
func javaFloatCompare(a, b float64) int {
	switch {
	case a < b:
		return -1
	case a > b:
		return 1
	}
	ab, bb := int64(math.Float64bits(a)), int64(math.Float64bits(b))
	if math.IsNaN(a) {
		ab = 0x7ff8000000000000
	}
	if math.IsNaN(b) {
		bb = 0x7ff8000000000000
	}
	return cmp.Compare(ab, bb)
}
