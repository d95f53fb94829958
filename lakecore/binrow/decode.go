package binrow

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"

	"github.com/benthos-paimon/benthos-paimon/internal/boxes"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// Decode reads a BinaryRow (without the arity prefix) written for
// fieldTypes and returns one Go value per field, nil for NULL, in lakecore's
// representation: DECIMAL values carry the type's scale, TIMESTAMP values
// with precision <= 3 have NanoOfMilli 0, MULTISET counts are int32.
// Strings and byte slices are copies, never aliases of row.
//
// Decode never panics: every offset and length is checked against the
// section it points into (the row, or the nested array, map or row), and
// errors wrap ErrCorrupt with the field path and what is wrong (or
// ErrUnsupportedType for a malformed nested type). Bytes after
// the last variable-length item are ignored, as Java does; the RowKind
// header byte is not checked.
func Decode(fieldTypes []types.DataType, row []byte) ([]any, error) {
	vals, err := decodeRow(fieldTypes, row)
	if err != nil {
		return nil, fmt.Errorf("decode binary row: %w", err)
	}
	return vals, nil
}

// Deserialize reads the manifest form written by Serialize: the 4-byte
// big-endian arity, which must equal len(fieldTypes) (else ErrArityMismatch),
// then the row as Decode reads it.
func Deserialize(fieldTypes []types.DataType, data []byte) ([]any, error) {
	if len(data) < 4 {
		return nil, fmt.Errorf("deserialize binary row: %w: %d bytes, shorter than the 4-byte arity prefix", ErrCorrupt, len(data))
	}
	arity := int32(binary.BigEndian.Uint32(data))
	if int64(arity) != int64(len(fieldTypes)) {
		return nil, fmt.Errorf("deserialize binary row: arity prefix %d for %d field types: %w", arity, len(fieldTypes), ErrArityMismatch)
	}
	return Decode(fieldTypes, data[4:])
}

func corrupt(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrCorrupt, fmt.Sprintf(format, args...))
}

// DecodeInto is Decode into dst, which must have len(fieldTypes) values,
// boxing the top-level INT, BIGINT, DOUBLE and string values from slab:
// for callers that decode many rows.
func DecodeInto(dst []any, fieldTypes []types.DataType, row []byte, slab *boxes.Slab) error {
	if len(dst) != len(fieldTypes) {
		return fmt.Errorf("decode binary row: %d values for %d fields: %w", len(dst), len(fieldTypes), ErrArityMismatch)
	}
	if err := decodeRowInto(dst, fieldTypes, row, slab); err != nil {
		return fmt.Errorf("decode binary row: %w", err)
	}
	return nil
}

func decodeRow(fieldTypes []types.DataType, sec []byte) ([]any, error) {
	out := make([]any, len(fieldTypes))
	if err := decodeRowInto(out, fieldTypes, sec, nil); err != nil {
		return nil, err
	}
	return out, nil
}

// decodeRowInto decodes a row into out, boxing from slab unless it is nil.
func decodeRowInto(out []any, fieldTypes []types.DataType, sec []byte, slab *boxes.Slab) error {
	nb := nullBitsSize(len(fieldTypes))
	fixed := nb + 8*len(fieldTypes)
	if len(sec) < fixed {
		return corrupt("row of %d bytes, its %d fields need a fixed part of %d", len(sec), len(fieldTypes), fixed)
	}
	for i, t := range fieldTypes {
		bit := i + 8
		if sec[bit>>3]&(1<<(bit&7)) != 0 {
			out[i] = nil
			continue
		}
		slot := nb + 8*i
		if slab != nil {
			switch t.Kind {
			case types.KindInt:
				out[i] = slab.Int32(int32(binary.LittleEndian.Uint32(sec[slot:])))
				continue
			case types.KindBigInt:
				out[i] = slab.Int64(int64(getLong(sec, slot)))
				continue
			case types.KindDouble:
				out[i] = slab.Float64(math.Float64frombits(getLong(sec, slot)))
				continue
			case types.KindChar, types.KindVarChar:
				b, err := readBytes(sec, slot)
				if err != nil {
					return fmt.Errorf("field %d (%s): %w", i, t, err)
				}
				out[i] = slab.String(b)
				continue
			}
		}
		v, err := readValue(sec, slot, t)
		if err != nil {
			return fmt.Errorf("field %d (%s): %w", i, t, err)
		}
		out[i] = v
	}
	return nil
}

func decodeArray(elem types.DataType, sec []byte) ([]any, error) {
	if len(sec) < 4 {
		return nil, corrupt("array of %d bytes, shorter than its 4-byte element count", len(sec))
	}
	n := int32(binary.LittleEndian.Uint32(sec))
	if n < 0 {
		return nil, corrupt("array with negative element count %d", n)
	}
	es := elementSize(elem)
	hdr := 4 + (int64(n)+31)/32*4
	if need := hdr + int64(es)*int64(n); need > int64(len(sec)) {
		return nil, corrupt("array of %d %s elements needs %d bytes, has %d", n, elem, need, len(sec))
	}
	out := make([]any, n)
	for i := range out {
		if sec[4+i>>3]&(1<<(i&7)) != 0 {
			continue
		}
		v, err := readValue(sec, int(hdr)+es*i, elem)
		if err != nil {
			return nil, fmt.Errorf("element %d (%s): %w", i, elem, err)
		}
		out[i] = v
	}
	return out, nil
}

func decodeMap(key, value types.DataType, sec []byte) (types.Map, error) {
	if len(sec) < 4 {
		return types.Map{}, corrupt("map of %d bytes, shorter than its 4-byte key array size", len(sec))
	}
	kb := int64(int32(binary.LittleEndian.Uint32(sec)))
	if kb < 0 || 4+kb > int64(len(sec)) {
		return types.Map{}, corrupt("map key array of %d bytes in a map of %d bytes", kb, len(sec))
	}
	keys, err := decodeArray(key, sec[4:4+kb])
	if err != nil {
		return types.Map{}, fmt.Errorf("map keys: %w", err)
	}
	vals, err := decodeArray(value, sec[4+kb:])
	if err != nil {
		return types.Map{}, fmt.Errorf("map values: %w", err)
	}
	if len(keys) != len(vals) {
		return types.Map{}, corrupt("map with %d keys and %d values", len(keys), len(vals))
	}
	return types.Map{Keys: keys, Values: vals}, nil
}

// readValue reads the non-null value of type t whose slot starts at slot in
// sec. The caller guarantees the slot's natural width lies inside sec.
func readValue(sec []byte, slot int, t types.DataType) (any, error) {
	switch t.Kind {
	case types.KindBoolean:
		return sec[slot] != 0, nil
	case types.KindTinyInt:
		return int8(sec[slot]), nil
	case types.KindSmallInt:
		return int16(binary.LittleEndian.Uint16(sec[slot:])), nil
	case types.KindInt:
		return int32(binary.LittleEndian.Uint32(sec[slot:])), nil
	case types.KindBigInt:
		return int64(getLong(sec, slot)), nil
	case types.KindFloat:
		return math.Float32frombits(binary.LittleEndian.Uint32(sec[slot:])), nil
	case types.KindDouble:
		return math.Float64frombits(getLong(sec, slot)), nil
	case types.KindDate:
		return types.Date(int32(binary.LittleEndian.Uint32(sec[slot:]))), nil
	case types.KindTime:
		return types.Time(int32(binary.LittleEndian.Uint32(sec[slot:]))), nil
	case types.KindChar, types.KindVarChar:
		b, err := readBytes(sec, slot)
		return string(b), err
	case types.KindBinary, types.KindVarBinary:
		b, err := readBytes(sec, slot)
		if err != nil {
			return nil, err
		}
		return append([]byte{}, b...), nil
	case types.KindDecimal:
		return readDecimal(sec, slot, t)
	case types.KindTimestamp, types.KindLocalZonedTimestamp:
		return readTimestamp(sec, slot, t)
	case types.KindArray:
		if t.Element == nil {
			return nil, fmt.Errorf("%w: ARRAY without element type", ErrUnsupportedType)
		}
		b, err := readSection(sec, slot)
		if err != nil {
			return nil, err
		}
		return decodeArray(*t.Element, b)
	case types.KindMap, types.KindMultiset:
		key, value, err := mapTypes(t)
		if err != nil {
			return nil, err
		}
		b, err := readSection(sec, slot)
		if err != nil {
			return nil, err
		}
		return decodeMap(key, value, b)
	case types.KindRow:
		b, err := readSection(sec, slot)
		if err != nil {
			return nil, err
		}
		return decodeRow(fieldTypesOf(t.Fields), b)
	default:
		return nil, fmt.Errorf("%w: %s", ErrUnsupportedType, t.Kind)
	}
}

func getLong(sec []byte, off int) uint64 { return binary.LittleEndian.Uint64(sec[off:]) }

// readBytes reads a string or binary slot: inline when bit 63 is set
// (length in bits 56..62, data in the slot's low bytes), else a pointer into
// the variable part (MemorySegmentUtils.readBinary / readBinaryString).
func readBytes(sec []byte, slot int) ([]byte, error) {
	v := getLong(sec, slot)
	if v&inlineMark != 0 {
		n := int(v>>56) & 0x7f
		if n > maxFixPartDataSize {
			return nil, corrupt("inline length %d above %d", n, maxFixPartDataSize)
		}
		return sec[slot : slot+n], nil
	}
	return readSection(sec, slot)
}

// readSection resolves a (offset << 32) | length slot against sec.
func readSection(sec []byte, slot int) ([]byte, error) {
	v := getLong(sec, slot)
	off, n := v>>32, v&0xffffffff
	if off+n > uint64(len(sec)) {
		return nil, corrupt("offset %d + length %d beyond the %d bytes of its section", off, n, len(sec))
	}
	return sec[off : off+n], nil
}

func readDecimal(sec []byte, slot int, t types.DataType) (any, error) {
	var u *big.Int
	if t.Precision <= compactDecimalPrecision {
		u = big.NewInt(int64(getLong(sec, slot)))
	} else {
		b, err := readSection(sec, slot)
		if err != nil {
			return nil, err
		}
		if len(b) == 0 || len(b) > decimalReserved {
			return nil, corrupt("decimal of %d bytes, want 1..%d", len(b), decimalReserved)
		}
		u = javaBigIntegerFromBytes(b)
	}
	if !fitsPrecision(u, t.Precision) {
		return nil, corrupt("unscaled decimal %s does not fit precision %d", u, t.Precision)
	}
	return types.Decimal{Unscaled: u, Scale: t.Scale}, nil
}

// javaBigIntegerFromBytes is new BigInteger(byte[]): big-endian two's complement.
func javaBigIntegerFromBytes(b []byte) *big.Int {
	x := new(big.Int).SetBytes(b)
	if b[0]&0x80 != 0 {
		x.Sub(x, new(big.Int).Lsh(big.NewInt(1), uint(8*len(b))))
	}
	return x
}

func readTimestamp(sec []byte, slot int, t types.DataType) (any, error) {
	v := getLong(sec, slot)
	if t.Precision <= compactTimestampPrecision {
		return types.Timestamp{Millis: int64(v)}, nil
	}
	off, nano := v>>32, int32(uint32(v))
	if off+timestampReserved > uint64(len(sec)) {
		return nil, corrupt("timestamp millis at offset %d beyond the %d bytes of its section", off, len(sec))
	}
	if nano < 0 || nano > 999_999 {
		return nil, corrupt("timestamp nano of millisecond %d outside 0..999999", nano)
	}
	return types.Timestamp{Millis: int64(getLong(sec, int(off))), NanoOfMilli: nano}, nil
}
