package datafile

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/parquet-go/parquet-go"
	"github.com/parquet-go/parquet-go/deprecated"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// leafValue checks v against the leaf's Paimon type and returns it in its
// Parquet representation (levels not yet set).
func (w *Writer) leafValue(n *schemaNode, v any) (parquet.Value, *valueError) {
	switch n.kind {
	case leafBoolean:
		if x, ok := v.(bool); ok {
			return parquet.BooleanValue(x), nil
		}
	case leafTinyInt:
		if x, ok := v.(int8); ok {
			return parquet.Int32Value(int32(x)), nil
		}
	case leafSmallInt:
		if x, ok := v.(int16); ok {
			return parquet.Int32Value(int32(x)), nil
		}
	case leafInt:
		if x, ok := v.(int32); ok {
			return parquet.Int32Value(x), nil
		}
	case leafBigInt:
		if x, ok := v.(int64); ok {
			return parquet.Int64Value(x), nil
		}
	case leafFloat:
		if x, ok := v.(float32); ok { // NaN: observeBatch, markNaN
			return parquet.FloatValue(x), nil
		}
	case leafDouble:
		if x, ok := v.(float64); ok { // NaN: observeBatch, markNaN
			return parquet.DoubleValue(x), nil
		}
	case leafString:
		if s, ok := v.(string); ok {
			return w.stringValue(n, s)
		}
	case leafBytes:
		if b, ok := v.([]byte); ok {
			if n.dataType.Length < types.MaxLength && len(b) > n.dataType.Length {
				return parquet.Value{}, &valueError{msg: fmt.Sprintf("%d bytes exceed %s", len(b), n.dataType)}
			}
			start := len(w.arena)
			w.arena = append(w.arena, b...)
			w.batchBytes += int64(len(b))
			return parquet.ByteArrayValue(w.arena[start:len(w.arena):len(w.arena)]), nil
		}
	case leafDecimal32, leafDecimal64, leafDecimalFixed:
		if d, ok := v.(types.Decimal); ok {
			return w.decimalValue(n, d)
		}
	case leafDate:
		if x, ok := v.(types.Date); ok {
			return parquet.Int32Value(int32(x)), nil
		}
	case leafTime:
		if x, ok := v.(types.Time); ok {
			if x < 0 || x >= 86_400_000 {
				return parquet.Value{}, &valueError{msg: fmt.Sprintf("time %d ms is outside the day", int32(x))}
			}
			return parquet.Int32Value(int32(x)), nil
		}
	case leafTimestampMillis, leafTimestampMicros, leafTimestampInt96:
		if ts, ok := v.(types.Timestamp); ok {
			return timestampValue(n, ts)
		}
	}
	return parquet.Value{}, valueTypeError(v, n)
}

func (w *Writer) stringValue(n *schemaNode, s string) (parquet.Value, *valueError) {
	if !utf8.ValidString(s) {
		return parquet.Value{}, &valueError{msg: fmt.Sprintf("invalid UTF-8 in %s value %q", n.dataType, s)}
	}
	if max := n.dataType.Length; max < types.MaxLength && len(s) > max {
		if c := utf8.RuneCountInString(s); c > max {
			return parquet.Value{}, &valueError{msg: fmt.Sprintf("string of %d characters exceeds %s", c, n.dataType)}
		}
	}
	w.batchBytes += int64(len(s))
	// Go strings are immutable and parquet-go copies the bytes into its page
	// buffer, so the value may alias the string until the batch is flushed.
	return parquet.ByteArrayValue(unsafe.Slice(unsafe.StringData(s), len(s))), nil
}

// decimalValue rescales d to the column's scale (exactly, or fails) and
// checks the precision, as Decimal.fromBigDecimal would reject it.
func (w *Writer) decimalValue(n *schemaNode, d types.Decimal) (parquet.Value, *valueError) {
	t := n.dataType
	if d.Unscaled == nil {
		return parquet.Value{}, &valueError{msg: "decimal without an unscaled value"}
	}
	if n.kind != leafDecimalFixed && d.Unscaled.IsInt64() {
		if u, ok := encRescaleInt64(d.Unscaled.Int64(), d.Scale, t.Scale); ok {
			if u >= n.decimalBound || u <= -n.decimalBound {
				return parquet.Value{}, decimalRangeError(d, t)
			}
			if n.kind == leafDecimal32 {
				return parquet.Int32Value(int32(u)), nil
			}
			return parquet.Int64Value(u), nil
		}
	}
	u := &w.scratch
	u.Set(d.Unscaled)
	switch {
	case d.Scale < t.Scale:
		u.Mul(u, types.Pow10Big(t.Scale-d.Scale))
	case d.Scale > t.Scale:
		var rem big.Int
		u.QuoRem(u, types.Pow10Big(d.Scale-t.Scale), &rem)
		if rem.Sign() != 0 {
			return parquet.Value{}, &valueError{msg: fmt.Sprintf("%s needs rounding to fit %s", d, t)}
		}
	}
	if u.CmpAbs(types.Pow10Big(t.Precision)) >= 0 {
		return parquet.Value{}, decimalRangeError(d, t)
	}
	switch n.kind {
	case leafDecimal32:
		return parquet.Int32Value(int32(u.Int64())), nil
	case leafDecimal64:
		return parquet.Int64Value(u.Int64()), nil
	}
	// FIXED_LEN_BYTE_ARRAY: big-endian two's complement, sign-extended to
	// fixedLen bytes (ParquetRowDataWriter UnscaledBytesWriter).
	if u.Sign() < 0 {
		var mod big.Int
		mod.Lsh(big.NewInt(1), uint(8*n.fixedLen))
		u.Add(u, &mod)
	}
	start := len(w.arena)
	w.arena = append(w.arena, make([]byte, n.fixedLen)...)
	buf := w.arena[start:len(w.arena):len(w.arena)]
	u.FillBytes(buf)
	w.batchBytes += int64(n.fixedLen)
	return parquet.FixedLenByteArrayValue(buf), nil
}

// encRescaleInt64 returns u × 10^(to-from) when it is exact and fits an int64.
func encRescaleInt64(u int64, from, to int) (int64, bool) {
	switch {
	case from == to:
		return u, true
	case from < to:
		if to-from > 18 {
			return 0, false
		}
		p := types.Pow10(to - from)
		hi, lo := bits.Mul64(uint64(encAbsInt64(u)), uint64(p))
		if hi != 0 || lo > math.MaxInt64 || u == math.MinInt64 {
			return 0, false
		}
		if u < 0 {
			return -int64(lo), true
		}
		return int64(lo), true
	default:
		if from-to > 18 {
			return 0, false
		}
		p := types.Pow10(from - to)
		if u%p != 0 {
			return 0, false // the big.Int path reports the rounding
		}
		return u / p, true
	}
}

func encAbsInt64(x int64) int64 {
	if x < 0 {
		return -x
	}
	return x
}

func decimalRangeError(d types.Decimal, t types.DataType) *valueError {
	return &valueError{msg: fmt.Sprintf("%s does not fit %s", d, t)}
}

// Java: paimon-format/src/main/java/org/apache/paimon/format/parquet/writer/ParquetRowDataWriter.java
// (JULIAN_EPOCH_OFFSET_DAYS, MILLIS_IN_DAY, NANOS_PER_MILLISECOND).
const (
	int96JulianEpochOffsetDays = 2_440_588
	int96MillisPerDay          = 86_400_000
)

// timestampValue stores a timestamp at its column's precision:
// TimestampMillsWriter (getMillisecond), TimestampMicrosWriter (toMicros)
// and TimestampInt96Writer (timestampToInt96, with Java's truncating / and %
// so that instants before 1970 get a negative nanos-of-day).
func timestampValue(n *schemaNode, ts types.Timestamp) (parquet.Value, *valueError) {
	if ts.NanoOfMilli < 0 || ts.NanoOfMilli > 999_999 {
		return parquet.Value{}, timestampNanoError(ts)
	}
	switch n.kind {
	case leafTimestampMillis:
		return parquet.Int64Value(ts.Millis), nil
	case leafTimestampMicros:
		if ts.Millis > math.MaxInt64/1000-1 || ts.Millis < math.MinInt64/1000+1 {
			return parquet.Value{}, &valueError{msg: fmt.Sprintf("timestamp %d ms overflows %s", ts.Millis, n.dataType)}
		}
		return parquet.Int64Value(ts.Millis*1000 + int64(ts.NanoOfMilli)/1000), nil
	}
	julian := ts.Millis/int96MillisPerDay + int96JulianEpochOffsetDays
	if julian > math.MaxInt32 || julian < math.MinInt32 {
		return parquet.Value{}, &valueError{msg: fmt.Sprintf("timestamp %d ms overflows %s", ts.Millis, n.dataType)}
	}
	nanosOfDay := (ts.Millis%int96MillisPerDay)*1_000_000 + int64(ts.NanoOfMilli)
	return parquet.Int96Value(deprecated.Int96{
		uint32(uint64(nanosOfDay)), uint32(uint64(nanosOfDay) >> 32), uint32(int32(julian)),
	}), nil
}

func timestampNanoError(ts types.Timestamp) *valueError {
	return &valueError{msg: fmt.Sprintf("timestamp nano-of-millisecond %d is outside 0..999999", ts.NanoOfMilli)}
}

// valueError describes a value that does not fit its column; path holds the
// path segments innermost first.
type valueError struct {
	path []string
	msg  string
}

func (e *valueError) within(name string) *valueError {
	e.path = append(e.path, "."+name)
	return e
}

func (e *valueError) at(i int) *valueError {
	e.path = append(e.path, "["+strconv.Itoa(i)+"]")
	return e
}

func (e *valueError) Error() string {
	var b strings.Builder
	for i := len(e.path) - 1; i >= 0; i-- {
		seg := e.path[i]
		if i == len(e.path)-1 {
			seg = strings.TrimPrefix(seg, ".")
		}
		b.WriteString(seg)
	}
	return fmt.Sprintf("%s: field %q: %s", ErrInvalidValue, b.String(), e.msg)
}

func (e *valueError) Unwrap() error { return ErrInvalidValue }

func valueTypeError(v any, n *schemaNode) *valueError {
	return &valueError{msg: fmt.Sprintf("got %T, want %s", v, n.dataType)}
}

func valueNullError(n *schemaNode) *valueError {
	return &valueError{msg: fmt.Sprintf("got NULL, want %s", n.dataType)}
}
