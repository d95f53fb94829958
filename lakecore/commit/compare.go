package commit

import (
	"bytes"
	"cmp"
	"math"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// javaComparable reports whether Java's internal value for v is a Comparable,
// which FullSimpleColStatsCollector and CompareUtils.compareLiteral need.
func javaComparable(v any) bool {
	switch v.(type) {
	case bool, int8, int16, int32, int64, float32, float64, string, types.Decimal, types.Date, types.Time, types.Timestamp:
		return true
	}
	return false
}

// compareValues orders two non-nil values of one partition type as Java's
// compareTo does: Float.compare and Double.compare for floating point (-0 <
// +0, NaN greatest), unsigned bytes for strings (BinaryString.compareTo),
// numeric value for decimals. Values of different Go types compare as equal.
func compareValues(a, b any) int {
	switch x := a.(type) {
	case bool:
		if y, ok := b.(bool); ok {
			return cmp.Compare(boolInt(x), boolInt(y))
		}
	case int8:
		if y, ok := b.(int8); ok {
			return cmp.Compare(x, y)
		}
	case int16:
		if y, ok := b.(int16); ok {
			return cmp.Compare(x, y)
		}
	case int32:
		if y, ok := b.(int32); ok {
			return cmp.Compare(x, y)
		}
	case int64:
		if y, ok := b.(int64); ok {
			return cmp.Compare(x, y)
		}
	case types.Date:
		if y, ok := b.(types.Date); ok {
			return cmp.Compare(x, y)
		}
	case types.Time:
		if y, ok := b.(types.Time); ok {
			return cmp.Compare(x, y)
		}
	case float32:
		if y, ok := b.(float32); ok {
			return javaFloatCompare(float64(x), float64(y))
		}
	case float64:
		if y, ok := b.(float64); ok {
			return javaFloatCompare(x, y)
		}
	case string:
		if y, ok := b.(string); ok {
			return bytes.Compare([]byte(x), []byte(y))
		}
	case types.Decimal:
		if y, ok := b.(types.Decimal); ok {
			return x.Cmp(y)
		}
	case types.Timestamp:
		if y, ok := b.(types.Timestamp); ok {
			return x.Compare(y)
		}
	}
	return 0
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// javaFloatCompare is Double.compare: a total order with -0.0 < 0.0 and NaN
// above +Inf.
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
