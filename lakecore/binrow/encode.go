// Package binrow reads and writes Apache Paimon's BinaryRow, the byte layout
// of partitions, min/max keys and column statistics in manifests, and of the
// bucket key that decides a row's bucket. It also turns partition values into
// the directory names Java derives from them.
//
// Layout (apache/paimon paimon-common/src/main/java/org/apache/paimon/data:
// BinaryRow.java, BinaryRowWriter.java, AbstractBinaryWriter.java,
// BinaryArray.java, BinaryArrayWriter.java, BinaryMap.java, RowHelper.java):
//
//	fixed part:    null bits ((arity+63+8)/64)*8 bytes, byte 0 = RowKind (0),
//	               bit 8+i set when field i is NULL; then 8 bytes per field
//	variable part: strings, bytes, non-compact DECIMAL/TIMESTAMP and nested
//	               ARRAY/MAP/ROW, each padded with zeros to a multiple of 8
//
// Everything inside a row is little-endian, as on every JVM Paimon runs on;
// only the arity prefix of the serialized (manifest) form is big-endian
// (SerializationUtils.serializeBinaryRow). Java compares partition rows and
// hashes bucket keys by their bytes, so Encode produces Java's canonical
// bytes exactly, zero padding included.
//
// Values use lakecore's Go representation (lakecore/types): nil is NULL.
// The functions are safe for concurrent use.
package binrow

import (
	"encoding/binary"
	"fmt"
	"math"
	"math/big"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// EmptyRow is the serialized empty row (arity 0): a zero arity prefix and 8
// zero header bytes. It is the _PARTITION of an unpartitioned table and the
// _MIN_KEY, _MAX_KEY and key stats of an append table. Treat it as read-only.
var EmptyRow = []byte{0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0}

const (
	// maxFixPartDataSize is BinarySection.MAX_FIX_PART_DATA_SIZE: strings and
	// bytes up to this length are stored inline in their slot.
	maxFixPartDataSize = 7
	// compactDecimalPrecision is Decimal.MAX_COMPACT_PRECISION.
	compactDecimalPrecision = 18
	// compactTimestampPrecision is the highest precision Timestamp.isCompact
	// accepts.
	compactTimestampPrecision = 3
	// decimalReserved is the variable-part space AbstractBinaryWriter.writeDecimal
	// reserves for a non-compact decimal, null or not.
	decimalReserved = 16
	// timestampReserved is the variable-part space of a non-compact timestamp.
	timestampReserved = 8

	inlineMark = uint64(0x80) << 56 // BinarySection.HIGHEST_FIRST_BIT
)

// Encode returns the BinaryRow bytes of values (without the arity prefix),
// byte for byte as Java's BinaryRowWriter via RowHelper writes them: RowKind
// INSERT, NULL fields with their null bit set and a zero slot, and for a NULL
// non-compact DECIMAL (precision > 18) or TIMESTAMP/TIMESTAMP_LTZ (precision
// > 3) the variable-part space still reserved (RowHelper.writeNulls).
// values[i] must be nil or the Go type of fieldTypes[i] (lakecore/types); an
// int is also accepted for TINYINT..BIGINT if it fits. Nullability of the
// types is not enforced, as in Java. A DECIMAL is rescaled exactly to the
// type's scale; a compact TIMESTAMP keeps milliseconds only.
// Errors wrap ErrArityMismatch, ErrInvalidValue or ErrUnsupportedType and
// name the offending field.
func Encode(fieldTypes []types.DataType, values []any) ([]byte, error) {
	if len(values) != len(fieldTypes) {
		return nil, fmt.Errorf("encode binary row: %d values for %d fields: %w",
			len(values), len(fieldTypes), ErrArityMismatch)
	}
	row, err := encodeRow(nil, fieldTypes, values)
	if err != nil {
		return nil, fmt.Errorf("encode binary row: %w", err)
	}
	return row, nil
}

// EncodeTo is Encode into buf's space: it returns buf[:0] with the row's
// bytes appended, reallocated only when they do not fit. The caller must
// not keep a previous result it passes as buf.
func EncodeTo(buf []byte, fieldTypes []types.DataType, values []any) ([]byte, error) {
	if len(values) != len(fieldTypes) {
		return buf[:0], fmt.Errorf("encode binary row: %d values for %d fields: %w",
			len(values), len(fieldTypes), ErrArityMismatch)
	}
	row, err := encodeRow(buf[:0], fieldTypes, values)
	if err != nil {
		return buf[:0], fmt.Errorf("encode binary row: %w", err)
	}
	return row, nil
}

// SerializeTo is Serialize into dst's space, with scratch for the row (see
// EncodeTo): it returns dst and scratch, both reused by the next call.
func SerializeTo(dst, scratch []byte, fieldTypes []types.DataType, values []any) (out, row []byte, err error) {
	row, err = EncodeTo(scratch, fieldTypes, values)
	if err != nil {
		return dst[:0], row, err
	}
	out = binary.BigEndian.AppendUint32(dst[:0], uint32(len(fieldTypes)))
	return append(out, row...), row, nil
}

// Serialize returns Encode's bytes behind the 4-byte big-endian arity prefix:
// the form of _PARTITION, _MIN_KEY and the stats rows in manifests
// (SerializationUtils.serializeBinaryRow).
func Serialize(fieldTypes []types.DataType, values []any) ([]byte, error) {
	row, err := Encode(fieldTypes, values)
	if err != nil {
		return nil, err
	}
	out := make([]byte, 4+len(row))
	binary.BigEndian.PutUint32(out, uint32(len(fieldTypes)))
	copy(out[4:], row)
	return out, nil
}

// nullBitsSize is BinaryRow.calculateBitSetWidthInBytes.
func nullBitsSize(arity int) int { return ((arity + 63 + 8) / 64) * 8 }

// arrayHeaderSize is BinaryArray.calculateHeaderInBytes: the element count
// and the null bits, in 4-byte words.
func arrayHeaderSize(n int) int { return 4 + ((n+31)/32)*4 }

// elementSize is BinaryArray.calculateFixLengthPartSize: the slot width of an
// element in a BinaryArray (a row slot is always 8).
func elementSize(t types.DataType) int {
	switch t.Kind {
	case types.KindBoolean, types.KindTinyInt:
		return 1
	case types.KindSmallInt:
		return 2
	case types.KindInt, types.KindFloat, types.KindDate, types.KindTime:
		return 4
	default:
		return 8
	}
}

func round8(n int) int { return (n + 7) &^ 7 }

// nullReserve is the variable-part space a NULL field of type t keeps in a
// row (RowHelper.writeNulls); 0 for every type but non-compact DECIMAL and
// TIMESTAMP. Arrays never reserve space for NULL elements.
func nullReserve(t types.DataType) int {
	switch t.Kind {
	case types.KindDecimal:
		if t.Precision > compactDecimalPrecision {
			return decimalReserved
		}
	case types.KindTimestamp, types.KindLocalZonedTimestamp:
		if t.Precision > compactTimestampPrecision {
			return timestampReserved
		}
	}
	return 0
}

// encodeRow encodes a row into buf's space (nil: a new slice).
func encodeRow(buf []byte, fieldTypes []types.DataType, values []any) ([]byte, error) {
	nb := nullBitsSize(len(fieldTypes))
	fixed := nb + 8*len(fieldTypes)
	if buf == nil {
		buf = make([]byte, fixed, fixed+varEstimate(fieldTypes))
	} else {
		buf = append(buf[:0], make([]byte, fixed)...)
	}
	for i, t := range fieldTypes {
		slot := nb + 8*i
		v := values[i]
		if v == nil {
			bit := i + 8 // the first 8 bits are the RowKind header
			buf[bit>>3] |= 1 << (bit & 7)
			if n := nullReserve(t); n > 0 {
				putLong(buf, slot, uint64(len(buf))<<32)
				buf = appendZeros(buf, n)
			}
			continue
		}
		var err error
		if buf, err = writeValue(buf, slot, t, v); err != nil {
			return nil, fmt.Errorf("field %d (%s): %w", i, t, err)
		}
	}
	if len(buf) > math.MaxInt32 {
		return nil, fmt.Errorf("%w: row of %d bytes exceeds 2 GiB", ErrInvalidValue, len(buf))
	}
	return buf, nil
}

// varEstimate guesses the variable part so that typical rows allocate once.
func varEstimate(fieldTypes []types.DataType) int {
	n := 0
	for _, t := range fieldTypes {
		switch t.Kind {
		case types.KindChar, types.KindVarChar, types.KindBinary, types.KindVarBinary, types.KindDecimal:
			n += 16
		case types.KindTimestamp, types.KindLocalZonedTimestamp:
			n += 8
		case types.KindArray, types.KindMap, types.KindMultiset, types.KindRow:
			n += 64
		}
	}
	return n
}

func encodeArray(elem types.DataType, values []any) ([]byte, error) {
	hdr := arrayHeaderSize(len(values))
	es := elementSize(elem)
	buf := make([]byte, round8(hdr+es*len(values)))
	binary.LittleEndian.PutUint32(buf, uint32(len(values)))
	for i, v := range values {
		if v == nil {
			buf[4+i>>3] |= 1 << (i & 7) // the slot stays zero (BinaryArrayWriter.setNullAt)
			continue
		}
		var err error
		if buf, err = writeValue(buf, hdr+es*i, elem, v); err != nil {
			return nil, fmt.Errorf("element %d (%s): %w", i, elem, err)
		}
	}
	return buf, nil
}

// encodeMap writes a BinaryMap: the byte size of the key array (4 bytes LE),
// the key BinaryArray, then the value BinaryArray (BinaryMap.valueOf).
func encodeMap(key, value types.DataType, m types.Map) ([]byte, error) {
	if len(m.Keys) != len(m.Values) {
		return nil, fmt.Errorf("%w: map with %d keys and %d values", ErrInvalidValue, len(m.Keys), len(m.Values))
	}
	keys, err := encodeArray(key, m.Keys)
	if err != nil {
		return nil, fmt.Errorf("map keys: %w", err)
	}
	vals, err := encodeArray(value, m.Values)
	if err != nil {
		return nil, fmt.Errorf("map values: %w", err)
	}
	out := make([]byte, 4, 4+len(keys)+len(vals))
	binary.LittleEndian.PutUint32(out, uint32(len(keys)))
	return append(append(out, keys...), vals...), nil
}

// mapTypes returns the key and value types of a MAP, or of a MULTISET's
// BinaryMap, whose values are the INT NOT NULL counts
// (InternalSerializers.create).
func mapTypes(t types.DataType) (key, value types.DataType, err error) {
	if t.Kind == types.KindMultiset {
		if t.Element == nil {
			return key, value, fmt.Errorf("%w: MULTISET without element type", ErrUnsupportedType)
		}
		return *t.Element, types.IntType().NotNull(), nil
	}
	if t.Key == nil || t.Value == nil {
		return key, value, fmt.Errorf("%w: MAP without key or value type", ErrUnsupportedType)
	}
	return *t.Key, *t.Value, nil
}

// writeValue writes the non-nil v of type t into the slot at offset slot of
// buf, appending any variable-length data to buf (offsets are relative to the
// start of buf, which is the start of the row or array). It writes exactly
// the natural width of fixed-size types, so it serves both 8-byte row slots
// and narrower array elements.
func writeValue(buf []byte, slot int, t types.DataType, v any) ([]byte, error) {
	switch t.Kind {
	case types.KindBoolean:
		b, ok := v.(bool)
		if !ok {
			return nil, wrongType(t, v)
		}
		if b {
			buf[slot] = 1
		}
	case types.KindTinyInt:
		n, err := intValue(t, v, math.MinInt8, math.MaxInt8)
		if err != nil {
			return nil, err
		}
		buf[slot] = byte(n)
	case types.KindSmallInt:
		n, err := intValue(t, v, math.MinInt16, math.MaxInt16)
		if err != nil {
			return nil, err
		}
		binary.LittleEndian.PutUint16(buf[slot:], uint16(n))
	case types.KindInt:
		n, err := intValue(t, v, math.MinInt32, math.MaxInt32)
		if err != nil {
			return nil, err
		}
		binary.LittleEndian.PutUint32(buf[slot:], uint32(n))
	case types.KindBigInt:
		n, err := intValue(t, v, math.MinInt64, math.MaxInt64)
		if err != nil {
			return nil, err
		}
		putLong(buf, slot, uint64(n))
	case types.KindFloat:
		f, ok := v.(float32)
		if !ok {
			return nil, wrongType(t, v)
		}
		binary.LittleEndian.PutUint32(buf[slot:], floatBits(f))
	case types.KindDouble:
		f, ok := v.(float64)
		if !ok {
			return nil, wrongType(t, v)
		}
		putLong(buf, slot, doubleBits(f))
	case types.KindDate:
		d, ok := v.(types.Date)
		if !ok {
			return nil, wrongType(t, v)
		}
		binary.LittleEndian.PutUint32(buf[slot:], uint32(d))
	case types.KindTime:
		d, ok := v.(types.Time)
		if !ok {
			return nil, wrongType(t, v)
		}
		binary.LittleEndian.PutUint32(buf[slot:], uint32(d))
	case types.KindChar, types.KindVarChar:
		s, ok := v.(string)
		if !ok {
			return nil, wrongType(t, v)
		}
		return writeBytes(buf, slot, s)
	case types.KindBinary, types.KindVarBinary:
		b, ok := v.([]byte)
		if !ok {
			return nil, wrongType(t, v)
		}
		return writeBytes(buf, slot, b)
	case types.KindDecimal:
		return writeDecimal(buf, slot, t, v)
	case types.KindTimestamp, types.KindLocalZonedTimestamp:
		return writeTimestamp(buf, slot, t, v)
	case types.KindArray:
		if t.Element == nil {
			return nil, fmt.Errorf("%w: ARRAY without element type", ErrUnsupportedType)
		}
		a, ok := v.([]any)
		if !ok {
			return nil, wrongType(t, v)
		}
		nested, err := encodeArray(*t.Element, a)
		if err != nil {
			return nil, err
		}
		return appendVar(buf, slot, nested), nil
	case types.KindMap, types.KindMultiset:
		key, value, err := mapTypes(t)
		if err != nil {
			return nil, err
		}
		m, ok := v.(types.Map)
		if !ok {
			return nil, wrongType(t, v)
		}
		nested, err := encodeMap(key, value, m)
		if err != nil {
			return nil, err
		}
		return appendVar(buf, slot, nested), nil
	case types.KindRow:
		r, ok := v.([]any)
		if !ok {
			return nil, wrongType(t, v)
		}
		if len(r) != len(t.Fields) {
			return nil, fmt.Errorf("%w: ROW of %d fields given %d values", ErrInvalidValue, len(t.Fields), len(r))
		}
		nested, err := encodeRow(nil, fieldTypesOf(t.Fields), r)
		if err != nil {
			return nil, err
		}
		return appendVar(buf, slot, nested), nil
	default:
		return nil, fmt.Errorf("%w: %s", ErrUnsupportedType, t.Kind)
	}
	return buf, nil
}

func fieldTypesOf(fields []types.DataField) []types.DataType {
	out := make([]types.DataType, len(fields))
	for i, f := range fields {
		out[i] = f.Type
	}
	return out
}

// writeBytes stores up to 7 bytes inline, the length in the top byte with
// its high bit set (AbstractBinaryWriter.writeBytesToFixLenPart); longer data
// goes to the variable part.
func writeBytes[T string | []byte](buf []byte, slot int, data T) ([]byte, error) {
	if len(data) <= maxFixPartDataSize {
		copy(buf[slot:slot+7], data)
		buf[slot+7] = 0x80 | byte(len(data))
		return buf, nil
	}
	if len(data) > math.MaxInt32 {
		return nil, fmt.Errorf("%w: %d bytes exceed 2 GiB", ErrInvalidValue, len(data))
	}
	return appendVar(buf, slot, data), nil
}

// appendVar appends data zero-padded to a multiple of 8 and points the slot
// at it: (offset << 32) | length (AbstractBinaryWriter.writeBytesToVarLenPart).
func appendVar[T string | []byte](buf []byte, slot int, data T) []byte {
	putLong(buf, slot, uint64(len(buf))<<32|uint64(len(data)))
	buf = append(buf, data...)
	return appendZeros(buf, round8(len(data))-len(data))
}

func appendZeros(buf []byte, n int) []byte { return append(buf, make([]byte, n)...) }

func putLong(buf []byte, off int, v uint64) { binary.LittleEndian.PutUint64(buf[off:], v) }

// floatBits and doubleBits write NaN as Java's canonical NaN, which is what a
// JVM value almost always holds (and what BinaryArrayWriter forces), rather
// than Go's math.NaN() payload.
func floatBits(f float32) uint32 {
	if f != f {
		return 0x7fc00000
	}
	return math.Float32bits(f)
}

func doubleBits(f float64) uint64 {
	if f != f {
		return 0x7ff8000000000000
	}
	return math.Float64bits(f)
}

func writeDecimal(buf []byte, slot int, t types.DataType, v any) ([]byte, error) {
	d, ok := v.(types.Decimal)
	if !ok {
		return nil, wrongType(t, v)
	}
	u, err := unscaledAt(d, t.Precision, t.Scale)
	if err != nil {
		return nil, err
	}
	if t.Precision <= compactDecimalPrecision {
		putLong(buf, slot, uint64(u.Int64()))
		return buf, nil
	}
	// Java reserves 16 bytes whatever the length of BigInteger.toByteArray
	// (at most 16 for 38 digits) and points the slot at them.
	b := javaBigIntegerBytes(u)
	off := len(buf)
	buf = appendZeros(buf, decimalReserved)
	copy(buf[off:], b)
	putLong(buf, slot, uint64(off)<<32|uint64(len(b)))
	return buf, nil
}

// unscaledAt returns d's unscaled value at the given scale, failing if that
// needs rounding or exceeds precision digits.
func unscaledAt(d types.Decimal, precision, scale int) (*big.Int, error) {
	u := d.Unscaled
	if u == nil {
		u = new(big.Int)
	}
	switch {
	case d.Scale < scale:
		u = new(big.Int).Mul(u, types.Pow10Big(scale-d.Scale))
	case d.Scale > scale:
		q, r := new(big.Int).QuoRem(u, types.Pow10Big(d.Scale-scale), new(big.Int))
		if r.Sign() != 0 {
			return nil, fmt.Errorf("%w: %s needs rounding to scale %d", ErrInvalidValue, d, scale)
		}
		u = q
	}
	if !fitsPrecision(u, precision) {
		return nil, fmt.Errorf("%w: %s does not fit DECIMAL(%d, %d)", ErrInvalidValue, d, precision, scale)
	}
	return u, nil
}

// fitsPrecision reports whether |u| < 10^precision, without big arithmetic
// for compact values.
func fitsPrecision(u *big.Int, precision int) bool {
	if precision <= compactDecimalPrecision && u.IsInt64() {
		limit := types.Pow10(precision)
		v := u.Int64()
		return v > -limit && v < limit
	}
	return new(big.Int).Abs(u).Cmp(types.Pow10Big(precision)) < 0
}

// javaBigIntegerBytes is BigInteger.toByteArray: the minimal big-endian two's
// complement form, at least one byte.
func javaBigIntegerBytes(x *big.Int) []byte {
	if x.Sign() >= 0 {
		b := x.Bytes()
		if len(b) == 0 || b[0]&0x80 != 0 {
			b = append([]byte{0}, b...)
		}
		return b
	}
	// -x-1 has the bit pattern of x inverted; its minimal form plus a sign bit.
	b := new(big.Int).Sub(new(big.Int).Neg(x), big.NewInt(1)).Bytes()
	for i := range b {
		b[i] = ^b[i]
	}
	if len(b) == 0 || b[0]&0x80 == 0 {
		b = append([]byte{0xff}, b...)
	}
	return b
}

func writeTimestamp(buf []byte, slot int, t types.DataType, v any) ([]byte, error) {
	ts, ok := v.(types.Timestamp)
	if !ok {
		return nil, wrongType(t, v)
	}
	if t.Precision <= compactTimestampPrecision {
		putLong(buf, slot, uint64(ts.Millis))
		return buf, nil
	}
	if ts.NanoOfMilli < 0 || ts.NanoOfMilli > 999_999 {
		return nil, fmt.Errorf("%w: nano of millisecond %d outside 0..999999", ErrInvalidValue, ts.NanoOfMilli)
	}
	off := len(buf)
	buf = appendZeros(buf, timestampReserved)
	putLong(buf, off, uint64(ts.Millis))
	putLong(buf, slot, uint64(off)<<32|uint64(ts.NanoOfMilli))
	return buf, nil
}

// intValue accepts the exact Go type of an integer kind, or an int in range.
func intValue(t types.DataType, v any, lo, hi int64) (int64, error) {
	var n int64
	switch x := v.(type) {
	case int8:
		if t.Kind != types.KindTinyInt {
			return 0, wrongType(t, v)
		}
		n = int64(x)
	case int16:
		if t.Kind != types.KindSmallInt {
			return 0, wrongType(t, v)
		}
		n = int64(x)
	case int32:
		if t.Kind != types.KindInt {
			return 0, wrongType(t, v)
		}
		n = int64(x)
	case int64:
		if t.Kind != types.KindBigInt {
			return 0, wrongType(t, v)
		}
		n = x
	case int:
		n = int64(x)
	default:
		return 0, wrongType(t, v)
	}
	if n < lo || n > hi {
		return 0, fmt.Errorf("%w: %d out of range for %s", ErrInvalidValue, n, t)
	}
	return n, nil
}

func wrongType(t types.DataType, v any) error {
	return fmt.Errorf("%w: %T for %s", ErrInvalidValue, v, t)
}
