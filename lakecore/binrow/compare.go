package binrow

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"fmt"
	"math"

	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// CompareKey orders the BinaryRow row (written by Encode for fieldTypes)
// against key, one value per field, as kv.CompareKeys orders the decoded
// row against key, without decoding the row: a local lookup file's keys
// are compared this way, the fields read in place as Java's
// RowCompactedSerializer slice comparator does. Values of a Go type other
// than fieldTypes' (and nested types) are decoded and compared with
// kv.CompareValues. A malformed row gives an error wrapping ErrCorrupt.
func CompareKey(fieldTypes []types.DataType, row []byte, key []any) (int, error) {
	nb := nullBitsSize(len(fieldTypes))
	if len(row) < nb+8*len(fieldTypes) || len(key) != len(fieldTypes) {
		return 0, fmt.Errorf("compare binary row: %w: row of %d bytes for %d fields and %d key values", ErrCorrupt, len(row), len(fieldTypes), len(key))
	}
	for i, t := range fieldTypes {
		bit := i + 8
		var c int
		if row[bit>>3]&(1<<(bit&7)) != 0 {
			c = kv.CompareValues(nil, key[i])
		} else {
			var err error
			if c, err = compareField(row, nb+8*i, t, key[i]); err != nil {
				return 0, fmt.Errorf("compare binary row: field %d (%s): %w", i, t, err)
			}
		}
		if c != 0 {
			return c, nil
		}
	}
	return 0, nil
}

// compareField orders the non-null value in slot of row against v.
func compareField(row []byte, slot int, t types.DataType, v any) (int, error) {
	switch t.Kind {
	case types.KindBigInt:
		if x, ok := v.(int64); ok {
			return cmp.Compare(int64(getLong(row, slot)), x), nil
		}
	case types.KindInt:
		if x, ok := v.(int32); ok {
			return cmp.Compare(int32(binary.LittleEndian.Uint32(row[slot:])), x), nil
		}
	case types.KindChar, types.KindVarChar:
		if x, ok := v.(string); ok {
			b, err := readBytes(row, slot)
			if err != nil {
				return 0, err
			}
			return compareBytesString(b, x), nil
		}
	case types.KindBinary, types.KindVarBinary:
		if x, ok := v.([]byte); ok {
			b, err := readBytes(row, slot)
			if err != nil {
				return 0, err
			}
			return bytes.Compare(b, x), nil
		}
	case types.KindDate:
		if x, ok := v.(types.Date); ok {
			return cmp.Compare(types.Date(int32(binary.LittleEndian.Uint32(row[slot:]))), x), nil
		}
	case types.KindDouble:
		if x, ok := v.(float64); ok {
			return kv.CompareFloats(math.Float64frombits(getLong(row, slot)), x), nil
		}
	case types.KindDecimal:
		if x, ok := v.(types.Decimal); ok && t.Precision <= compactDecimalPrecision && x.Scale == t.Scale && x.Unscaled != nil && x.Unscaled.IsInt64() {
			return cmp.Compare(int64(getLong(row, slot)), x.Unscaled.Int64()), nil
		}
	case types.KindTimestamp, types.KindLocalZonedTimestamp:
		if x, ok := v.(types.Timestamp); ok && t.Precision <= compactTimestampPrecision {
			if c := cmp.Compare(int64(getLong(row, slot)), x.Millis); c != 0 {
				return c, nil
			}
			return cmp.Compare(0, x.NanoOfMilli), nil
		}
	}
	a, err := readValue(row, slot, t)
	if err != nil {
		return 0, err
	}
	return kv.CompareValues(a, v), nil
}

// compareBytesString orders b against s by unsigned bytes, a shorter
// prefix first.
func compareBytesString(b []byte, s string) int {
	n := min(len(b), len(s))
	for i := range n {
		if b[i] != s[i] {
			if b[i] < s[i] {
				return -1
			}
			return 1
		}
	}
	return cmp.Compare(len(b), len(s))
}
