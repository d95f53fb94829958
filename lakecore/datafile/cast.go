package datafile

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore/internal/javatext"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// castFunc converts one non-null value of a data file's column type into the
// table's current type of that column. A nil result is SQL NULL: Java turns a
// DECIMAL that overflows its new precision into NULL. An error means the value
// cannot be converted (Java throws and the read fails).
type castFunc func(v any) (any, error)

// newCast returns the conversion of values of type from (the type a data file
// was written with) into type to (the table's current type), as Java's schema
// evolution does on read: apache/paimon
// paimon-core/src/main/java/org/apache/paimon/schema/SchemaEvolutionUtil.java
// (createCastExecutor) with the rules of
// paimon-common/src/main/java/org/apache/paimon/casting/CastExecutors.java.
//
// It returns nil, nil when no conversion is needed (the types agree but for
// their top-level nullability). ROW to ROW maps nested fields by field id
// (renamed, reordered, dropped and added fields); ARRAY and MAP convert their
// elements and values (MAP keys must not change). A pair of types without a
// Java cast rule is an error wrapping ErrUnsupportedCast.
//
// Casts between TIMESTAMP WITH LOCAL TIME ZONE and the zone-less types use loc
// where Java uses the JVM's default time zone; loc must not be nil.
func newCast(from, to types.DataType, loc *time.Location) (castFunc, error) {
	if equalIgnoreNullable(from, to) {
		return nil, nil
	}
	switch {
	case from.Kind == types.KindRow && to.Kind == types.KindRow:
		return rowCast(from, to, loc)
	case from.Kind == types.KindArray && to.Kind == types.KindArray:
		return arrayCast(from, to, loc)
	case from.Kind == types.KindMap && to.Kind == types.KindMap:
		return mapCast(from, to, loc)
	}
	c, err := resolveCast(from, to, loc)
	if err != nil {
		return nil, err
	}
	if c == nil {
		return nil, fmt.Errorf("%w: %s to %s", ErrUnsupportedCast, from, to)
	}
	return func(v any) (any, error) {
		out, err := c(v)
		if err != nil {
			return nil, fmt.Errorf("%w: %s value to %s: %v", ErrCastFailed, from, to, err)
		}
		return out, nil
	}, nil
}

func equalIgnoreNullable(a, b types.DataType) bool {
	return a.WithNullable(true).Equal(b.WithNullable(true))
}

// rowCast maps the fields of a ROW by field id (SchemaEvolutionUtil.createRowCastExecutor).
func rowCast(from, to types.DataType, loc *time.Location) (castFunc, error) {
	index := make([]int, len(to.Fields))
	casts := make([]castFunc, len(to.Fields))
	for i, tf := range to.Fields {
		index[i] = types.FieldByID(from.Fields, tf.ID)
		if index[i] < 0 {
			continue
		}
		c, err := newCast(from.Fields[index[i]].Type, tf.Type, loc)
		if err != nil {
			return nil, fmt.Errorf("field %q: %w", tf.Name, err)
		}
		casts[i] = c
	}
	return func(v any) (any, error) {
		in, ok := v.([]any)
		if !ok || len(in) != len(from.Fields) {
			return nil, fmt.Errorf("%w: ROW value %T does not have %d fields", ErrCastFailed, v, len(from.Fields))
		}
		out := make([]any, len(index))
		for i, j := range index {
			if j < 0 || in[j] == nil {
				continue
			}
			if casts[i] == nil {
				out[i] = in[j]
				continue
			}
			c, err := casts[i](in[j])
			if err != nil {
				return nil, err
			}
			out[i] = c
		}
		return out, nil
	}, nil
}

func arrayCast(from, to types.DataType, loc *time.Location) (castFunc, error) {
	elem, err := newCast(*from.Element, *to.Element, loc)
	if err != nil || elem == nil {
		return nil, err
	}
	return func(v any) (any, error) {
		in, ok := v.([]any)
		if !ok {
			return nil, fmt.Errorf("%w: ARRAY value is %T", ErrCastFailed, v)
		}
		return castEach(in, elem)
	}, nil
}

func mapCast(from, to types.DataType, loc *time.Location) (castFunc, error) {
	if !equalIgnoreNullable(*from.Key, *to.Key) {
		return nil, fmt.Errorf("%w: %s to %s changes the key type", ErrUnsupportedCast, from, to)
	}
	val, err := newCast(*from.Value, *to.Value, loc)
	if err != nil || val == nil {
		return nil, err
	}
	return func(v any) (any, error) {
		in, ok := v.(types.Map)
		if !ok {
			return nil, fmt.Errorf("%w: MAP value is %T", ErrCastFailed, v)
		}
		vals, err := castEach(in.Values, val)
		if err != nil {
			return nil, err
		}
		return types.Map{Keys: in.Keys, Values: vals}, nil
	}, nil
}

func castEach(in []any, c castFunc) ([]any, error) {
	out := make([]any, len(in))
	for i, e := range in {
		if e == nil {
			continue
		}
		v, err := c(e)
		if err != nil {
			return nil, err
		}
		out[i] = v
	}
	return out, nil
}

func isIntegerKind(k types.Kind) bool {
	return k == types.KindTinyInt || k == types.KindSmallInt || k == types.KindInt || k == types.KindBigInt
}

func isApproxKind(k types.Kind) bool { return k == types.KindFloat || k == types.KindDouble }

func isCharKind(k types.Kind) bool { return k == types.KindChar || k == types.KindVarChar }

func isBinaryKind(k types.Kind) bool { return k == types.KindBinary || k == types.KindVarBinary }

func isTimestampKind(k types.Kind) bool {
	return k == types.KindTimestamp || k == types.KindLocalZonedTimestamp
}

func isStringType(t types.DataType) bool {
	return t.Kind == types.KindVarChar && t.Length == types.MaxLength
}

// resolveCast returns the conversion CastExecutors.resolve finds for a pair of
// types, or nil if Java has none.
func resolveCast(from, to types.DataType, loc *time.Location) (castFunc, error) {
	fk, tk := from.Kind, to.Kind
	switch {
	case tk == types.KindDecimal:
		return toDecimalCast(from, to)
	case isIntegerKind(tk) || isApproxKind(tk):
		return toNumberCast(from, to), nil
	case tk == types.KindBoolean:
		switch {
		case isIntegerKind(fk): // NumericToBooleanCastRule
			return func(v any) (any, error) { return integerOf(v) != 0, nil }, nil
		case isCharKind(fk): // StringToBooleanCastRule
			return func(v any) (any, error) { return parseBoolean(v.(string)) }, nil
		}
	case isCharKind(tk):
		return toStringCast(from, to, loc)
	case isBinaryKind(tk):
		switch {
		case isCharKind(fk): // StringToBinaryCastRule
			return func(v any) (any, error) { return toBinaryString([]byte(v.(string)), to), nil }, nil
		case isBinaryKind(fk): // BinaryToBinaryCastRule
			return func(v any) (any, error) { return toBinaryString(v.([]byte), to), nil }, nil
		}
	case tk == types.KindDate:
		switch {
		case isCharKind(fk): // StringToDateCastRule
			return func(v any) (any, error) {
				d, err := parseDate(v.(string))
				return types.Date(d), err
			}, nil
		case fk == types.KindTimestamp: // TimestampToDateCastRule
			return func(v any) (any, error) {
				return types.Date(types.FloorDiv(v.(types.Timestamp).Millis, millisPerDay)), nil
			}, nil
		case fk == types.KindLocalZonedTimestamp:
			return func(v any) (any, error) {
				return types.DateOf(time.UnixMilli(v.(types.Timestamp).Millis).In(loc)), nil
			}, nil
		}
	case tk == types.KindTime:
		switch {
		case isCharKind(fk): // StringToTimeCastRule
			return func(v any) (any, error) {
				t, err := parseTime(v.(string))
				return types.Time(t), err
			}, nil
		case fk == types.KindTimestamp: // TimestampToTimeCastRule
			return func(v any) (any, error) {
				ms := v.(types.Timestamp).Millis
				return types.Time(ms - types.FloorDiv(ms, millisPerDay)*millisPerDay), nil
			}, nil
		case fk == types.KindLocalZonedTimestamp:
			return func(v any) (any, error) {
				t := time.UnixMilli(v.(types.Timestamp).Millis).In(loc)
				return types.Time(t.Hour()*3600000 + t.Minute()*60000 + t.Second()*1000 + t.Nanosecond()/1e6), nil
			}, nil
		}
	case isTimestampKind(tk):
		return toTimestampCast(from, to, loc)
	}
	return nil, nil
}

// integerOf returns the value of a TINYINT, SMALLINT, INT or BIGINT.
func integerOf(v any) int64 {
	switch x := v.(type) {
	case int8:
		return int64(x)
	case int16:
		return int64(x)
	case int32:
		return int64(x)
	case int64:
		return x
	}
	return 0
}

// floatOf returns the value of a FLOAT or DOUBLE.
func floatOf(v any) float64 {
	switch x := v.(type) {
	case float32:
		return float64(x)
	case float64:
		return x
	}
	return 0
}

// integral narrows a 64-bit integer to the Go type of kind k, wrapping as
// Java's primitive narrowing does.
func integral(v int64, k types.Kind) any {
	switch k {
	case types.KindTinyInt:
		return int8(v)
	case types.KindSmallInt:
		return int16(v)
	case types.KindInt:
		return int32(v)
	}
	return v
}

// javaD2L and javaD2I are Java's (long) and (int) conversions of a double:
// NaN is 0 and out-of-range values saturate.
func javaD2L(f float64) int64 {
	switch {
	case math.IsNaN(f):
		return 0
	case f >= math.MaxInt64:
		return math.MaxInt64
	case f <= math.MinInt64:
		return math.MinInt64
	}
	return int64(f)
}

func javaD2I(f float64) int32 {
	return int32(min(max(javaD2L(f), math.MinInt32), math.MaxInt32))
}

// floatToNumber converts a float to kind k as Number.byteValue ... doubleValue.
func floatToNumber(f float64, k types.Kind) any {
	switch k {
	case types.KindBigInt:
		return javaD2L(f)
	case types.KindInt:
		return javaD2I(f)
	case types.KindSmallInt:
		return int16(javaD2I(f))
	case types.KindTinyInt:
		return int8(javaD2I(f))
	case types.KindFloat:
		return float32(f)
	}
	return f
}

func intToNumber(v int64, k types.Kind) any {
	switch k {
	case types.KindFloat:
		return float32(v)
	case types.KindDouble:
		return float64(v)
	}
	return integral(v, k)
}

// toNumberCast covers the integer and floating-point targets:
// NumericPrimitiveCastRule, DecimalToNumericPrimitiveCastRule,
// BooleanToNumericCastRule, StringToNumericPrimitiveCastRule and
// TimestampToNumericPrimitiveCastRule (INT and BIGINT only).
func toNumberCast(from, to types.DataType) castFunc {
	fk, tk := from.Kind, to.Kind
	switch {
	case isIntegerKind(fk):
		return func(v any) (any, error) { return intToNumber(integerOf(v), tk), nil }
	case isApproxKind(fk):
		return func(v any) (any, error) { return floatToNumber(floatOf(v), tk), nil }
	case fk == types.KindDecimal:
		compact := from.Precision <= 18
		return func(v any) (any, error) {
			d := v.(types.Decimal)
			if isApproxKind(tk) {
				f := decimalToFloat(d, compact)
				if tk == types.KindFloat {
					return float32(f), nil
				}
				return f, nil
			}
			return integral(decimalToLong(d), tk), nil
		}
	case fk == types.KindBoolean:
		return func(v any) (any, error) {
			if v.(bool) {
				return intToNumber(1, tk), nil
			}
			return intToNumber(0, tk), nil
		}
	case isCharKind(fk):
		return func(v any) (any, error) {
			s := v.(string)
			switch tk {
			case types.KindFloat:
				f, err := parseJavaFloat(s, 32)
				return float32(f), err
			case types.KindDouble:
				return parseJavaFloat(s, 64)
			case types.KindBigInt:
				return parseIntegral(s, 64)
			}
			n, err := parseIntegral(s, 32)
			if err != nil {
				return nil, err
			}
			if (tk == types.KindSmallInt && n != int64(int16(n))) || (tk == types.KindTinyInt && n != int64(int8(n))) {
				return nil, fmt.Errorf("cannot parse %q as %s: overflow", s, tk)
			}
			return integral(n, tk), nil
		}
	case isTimestampKind(fk) && (tk == types.KindInt || tk == types.KindBigInt):
		// DateTimeUtils.unixTimestamp: seconds, truncated toward zero.
		return func(v any) (any, error) { return integral(v.(types.Timestamp).Millis/1000, tk), nil }
	}
	return nil
}

// decimalToFloat is DecimalUtils.doubleValue: the unscaled long divided by a
// power of ten for a compact decimal (precision <= 18), else the correctly
// rounded value.
func decimalToFloat(d types.Decimal, compact bool) float64 {
	if compact && d.Unscaled.IsInt64() && d.Scale >= 0 && d.Scale <= 18 {
		return float64(d.Unscaled.Int64()) / float64(types.Pow10(d.Scale))
	}
	f, _ := d.Rat().Float64()
	return f
}

var mask64 = new(big.Int).SetUint64(math.MaxUint64)

// decimalToLong is DecimalUtils.castToIntegral: the value truncated toward
// zero, then its low 64 bits (BigDecimal.longValue).
func decimalToLong(d types.Decimal) int64 {
	q := new(big.Int).Set(d.Unscaled)
	if d.Scale > 0 {
		q.Quo(q, types.Pow10Big(d.Scale))
	} else if d.Scale < 0 {
		q.Mul(q, types.Pow10Big(-d.Scale))
	}
	if q.IsInt64() {
		return q.Int64()
	}
	lo := new(big.Int).And(new(big.Int).Abs(q), mask64).Uint64()
	if q.Sign() < 0 {
		lo = -lo
	}
	return int64(lo)
}

// rescaleDecimal is Decimal.fromBigDecimal: the value unscaled × 10^-scale set
// to the target scale rounding HALF_UP, or ok=false when it then has more
// than precision digits (Java returns null).
func rescaleDecimal(unscaled *big.Int, scale, precision, targetScale int) (types.Decimal, bool) {
	u := new(big.Int).Set(unscaled)
	switch {
	case u.Sign() == 0:
	case targetScale > scale:
		if targetScale-scale > precision { // cannot fit and would be huge
			return types.Decimal{}, false
		}
		u.Mul(u, types.Pow10Big(targetScale-scale))
	case targetScale < scale:
		digits := len(new(big.Int).Abs(u).String())
		if scale-targetScale > digits { // |value| < 0.1 ulp of the target: rounds to zero
			u.SetInt64(0)
			break
		}
		p := types.Pow10Big(scale - targetScale)
		neg := u.Sign() < 0
		u.Abs(u)
		var r big.Int
		u.QuoRem(u, p, &r)
		if r.Lsh(&r, 1).Cmp(p) >= 0 {
			u.Add(u, big.NewInt(1))
		}
		if neg {
			u.Neg(u)
		}
	}
	d := types.Decimal{Unscaled: u, Scale: targetScale}
	if !d.FitsPrecision(precision) {
		return types.Decimal{}, false
	}
	return d, true
}

// toDecimalCast covers DecimalToDecimalCastRule, NumericPrimitiveToDecimalCastRule,
// BooleanToNumericCastRule and StringToDecimalCastRule. Overflow is NULL.
func toDecimalCast(from, to types.DataType) (castFunc, error) {
	p, s := to.Precision, to.Scale
	fromUnscaled := func(u *big.Int, scale int) (any, error) {
		d, ok := rescaleDecimal(u, scale, p, s)
		if !ok {
			return nil, nil
		}
		return d, nil
	}
	fk := from.Kind
	switch {
	case fk == types.KindDecimal:
		return func(v any) (any, error) {
			d := v.(types.Decimal)
			return fromUnscaled(d.Unscaled, d.Scale)
		}, nil
	case isIntegerKind(fk):
		return func(v any) (any, error) { return fromUnscaled(big.NewInt(integerOf(v)), 0) }, nil
	case isApproxKind(fk):
		// BigDecimal.valueOf(double) goes through Double.toString.
		return func(v any) (any, error) {
			f := floatOf(v)
			if math.IsNaN(f) || math.IsInf(f, 0) {
				return nil, fmt.Errorf("%s is not a decimal number", javatext.FormatDouble(f))
			}
			u, scale, err := parseJavaDecimal(javatext.FormatDouble(f))
			if err != nil {
				return nil, err
			}
			return fromUnscaled(u, scale)
		}, nil
	case fk == types.KindBoolean:
		return func(v any) (any, error) {
			if v.(bool) {
				return fromUnscaled(big.NewInt(1), 0)
			}
			return fromUnscaled(big.NewInt(0), 0)
		}, nil
	case isCharKind(fk):
		return func(v any) (any, error) {
			u, scale, err := parseJavaDecimal(v.(string))
			if err != nil {
				return nil, err
			}
			return fromUnscaled(u, scale)
		}, nil
	}
	return nil, nil
}

// toStringCast covers the CHAR / VARCHAR targets. Numbers, booleans and
// strings are fitted to the target length; TIMESTAMP, TIME and DATE convert
// only to STRING; ARRAY, MAP, ROW and BYTES are not truncated (as in Java).
func toStringCast(from, to types.DataType, loc *time.Location) (castFunc, error) {
	fit := func(s string) (any, error) { return toCharacterString(s, to), nil }
	fk := from.Kind
	switch {
	case isIntegerKind(fk):
		return func(v any) (any, error) { return fit(strconv.FormatInt(integerOf(v), 10)) }, nil
	case fk == types.KindFloat:
		return func(v any) (any, error) { return fit(javatext.FormatFloat(v.(float32))) }, nil
	case fk == types.KindDouble:
		return func(v any) (any, error) { return fit(javatext.FormatDouble(v.(float64))) }, nil
	case fk == types.KindDecimal:
		return func(v any) (any, error) { return fit(v.(types.Decimal).String()) }, nil
	case fk == types.KindBoolean:
		return func(v any) (any, error) { return fit(strconv.FormatBool(v.(bool))) }, nil
	case isCharKind(fk):
		return func(v any) (any, error) { return fit(v.(string)) }, nil
	case isBinaryKind(fk):
		return func(v any) (any, error) { return string(v.([]byte)), nil }, nil
	case !isStringType(to):
		// The remaining rules target exactly STRING.
	case fk == types.KindTimestamp:
		p := from.Precision
		return func(v any) (any, error) { return javatext.FormatTimestamp(v.(types.Timestamp), p), nil }, nil
	case fk == types.KindLocalZonedTimestamp:
		p := from.Precision
		return func(v any) (any, error) {
			return javatext.FormatTimestamp(ltzToWallClock(v.(types.Timestamp), loc), p), nil
		}, nil
	case fk == types.KindTime:
		p := from.Precision
		return func(v any) (any, error) { return javatext.FormatTime(int32(v.(types.Time)), p), nil }, nil
	case fk == types.KindDate:
		return func(v any) (any, error) { return javatext.FormatDate(int32(v.(types.Date))), nil }, nil
	}
	switch fk {
	case types.KindArray, types.KindMap, types.KindRow:
		return nestedToString(from, loc)
	}
	return nil, nil
}

// stringer returns the STRING form of values of type t, the element cast of
// ArrayToStringCastRule, MapToStringCastRule and RowToStringCastRule.
func stringer(t types.DataType, loc *time.Location) (func(any) (string, error), error) {
	c, err := newCast(t, types.StringType(), loc)
	if err != nil {
		return nil, err
	}
	if c == nil {
		return func(v any) (string, error) { return v.(string), nil }, nil
	}
	return func(v any) (string, error) {
		s, err := c(v)
		if err != nil {
			return "", err
		}
		str, _ := s.(string)
		return str, nil
	}, nil
}

// nestedToString renders ARRAY as "[a, b]", MAP as "{k -> v, ...}" and ROW as
// "{f1, f2}", with "null" for NULL elements.
func nestedToString(from types.DataType, loc *time.Location) (castFunc, error) {
	write := func(b *strings.Builder, f func(any) (string, error), v any) error {
		if v == nil {
			b.WriteString("null")
			return nil
		}
		s, err := f(v)
		b.WriteString(s)
		return err
	}
	switch from.Kind {
	case types.KindArray:
		elem, err := stringer(*from.Element, loc)
		if err != nil {
			return nil, err
		}
		return func(v any) (any, error) {
			var b strings.Builder
			b.WriteByte('[')
			for i, e := range v.([]any) {
				if i > 0 {
					b.WriteString(", ")
				}
				if err := write(&b, elem, e); err != nil {
					return nil, err
				}
			}
			b.WriteByte(']')
			return b.String(), nil
		}, nil
	case types.KindMap:
		key, err := stringer(*from.Key, loc)
		if err != nil {
			return nil, err
		}
		val, err := stringer(*from.Value, loc)
		if err != nil {
			return nil, err
		}
		return func(v any) (any, error) {
			m := v.(types.Map)
			var b strings.Builder
			b.WriteByte('{')
			for i := range m.Keys {
				if i > 0 {
					b.WriteString(", ")
				}
				if err := write(&b, key, m.Keys[i]); err != nil {
					return nil, err
				}
				b.WriteString(" -> ")
				if err := write(&b, val, m.Values[i]); err != nil {
					return nil, err
				}
			}
			b.WriteByte('}')
			return b.String(), nil
		}, nil
	}
	fields := make([]func(any) (string, error), len(from.Fields))
	for i, f := range from.Fields {
		s, err := stringer(f.Type, loc)
		if err != nil {
			return nil, err
		}
		fields[i] = s
	}
	return func(v any) (any, error) {
		row := v.([]any)
		var b strings.Builder
		b.WriteByte('{')
		for i, e := range row {
			if i > 0 {
				b.WriteString(", ")
			}
			if i < len(fields) {
				if err := write(&b, fields[i], e); err != nil {
					return nil, err
				}
			}
		}
		b.WriteByte('}')
		return b.String(), nil
	}, nil
}

// ltzToWallClock is DateTimeUtils.timestampWithLocalZoneToTimestamp: the wall
// clock of an instant in loc.
func ltzToWallClock(ts types.Timestamp, loc *time.Location) types.Timestamp {
	if loc == time.UTC {
		return ts
	}
	return types.WallClockOf(ts.Time().In(loc))
}

// wallClockToLTZ is DateTimeUtils.timestampToTimestampWithLocalZone: the
// instant of a wall clock in loc.
func wallClockToLTZ(ts types.Timestamp, loc *time.Location) types.Timestamp {
	if loc == time.UTC {
		return ts
	}
	t := ts.Time()
	return types.TimestampOf(time.Date(t.Year(), t.Month(), t.Day(), t.Hour(), t.Minute(), t.Second(), t.Nanosecond(), loc))
}

// truncateTimestamp is DateTimeUtils.truncate: for precision <= 3 the
// milliseconds lose their last 3-precision digits (toward zero) and the
// nanoseconds are dropped; otherwise the nanoseconds of the millisecond lose
// their last 9-precision digits.
func truncateTimestamp(ts types.Timestamp, precision int) types.Timestamp {
	if precision <= 3 {
		u := types.Pow10(3 - precision)
		return types.Timestamp{Millis: ts.Millis / u * u}
	}
	u := int32(types.Pow10(9 - precision))
	return types.Timestamp{Millis: ts.Millis, NanoOfMilli: ts.NanoOfMilli / u * u}
}

// toTimestampCast covers the TIMESTAMP and TIMESTAMP_LTZ targets:
// TimestampToTimestampCastRule, DateToTimestampCastRule,
// TimeToTimestampCastRule, NumericPrimitiveToTimestamp (INT and BIGINT
// seconds) and StringToTimestampCastRule.
func toTimestampCast(from, to types.DataType, loc *time.Location) (castFunc, error) {
	ltz := to.Kind == types.KindLocalZonedTimestamp
	fk := from.Kind
	switch {
	case isTimestampKind(fk):
		convert := func(ts types.Timestamp) types.Timestamp { return ts }
		switch {
		case fk == types.KindTimestamp && ltz:
			convert = func(ts types.Timestamp) types.Timestamp { return wallClockToLTZ(ts, loc) }
		case fk == types.KindLocalZonedTimestamp && !ltz:
			convert = func(ts types.Timestamp) types.Timestamp { return ltzToWallClock(ts, loc) }
		}
		if from.Precision <= to.Precision {
			return func(v any) (any, error) { return convert(v.(types.Timestamp)), nil }, nil
		}
		p := to.Precision
		return func(v any) (any, error) { return truncateTimestamp(convert(v.(types.Timestamp)), p), nil }, nil
	case fk == types.KindDate:
		return func(v any) (any, error) {
			ts := types.Timestamp{Millis: int64(v.(types.Date)) * millisPerDay}
			if ltz {
				ts = wallClockToLTZ(ts, loc)
			}
			return ts, nil
		}, nil
	case fk == types.KindTime:
		return func(v any) (any, error) { return types.Timestamp{Millis: int64(v.(types.Time))}, nil }, nil
	case fk == types.KindInt || fk == types.KindBigInt:
		return func(v any) (any, error) {
			ts := types.Timestamp{Millis: integerOf(v) * 1000}
			if ltz {
				ts = ltzToWallClock(ts, loc) // Java reads the local date-time of the instant as UTC
			}
			return ts, nil
		}, nil
	case isCharKind(fk):
		p := to.Precision
		return func(v any) (any, error) {
			s := v.(string)
			if !ltz && isJavaNumeric(s) {
				n, err := parseIntegral(s, 64)
				if err != nil {
					return nil, err
				}
				return epochToTimestamp(n, p)
			}
			w, err := parseTimestampText(s, p)
			if err != nil {
				return nil, err
			}
			if ltz {
				return wallClockToLTZ(w.timestamp(), loc), nil
			}
			return w.timestamp(), nil
		}, nil
	}
	return nil, nil
}
