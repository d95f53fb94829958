package types

import (
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
)

// Date is a DATE value: days since 1970-01-01.
type Date int32

// DateOf returns the DATE of t's calendar day (t's own location).
func DateOf(t time.Time) Date {
	y, m, d := t.Date()
	return Date(time.Date(y, m, d, 0, 0, 0, 0, time.UTC).Unix() / 86400)
}

// EpochDay returns the days since 1970-01-01 of the proleptic Gregorian
// date year-month-day, month 1..12 (H. Hinnant's days_from_civil).
func EpochDay(year, month, day int) int64 {
	if month <= 2 {
		year--
	}
	era := year / 400
	if year < 0 && year%400 != 0 {
		era--
	}
	yoe := year - era*400
	mp := (month + 9) % 12
	doy := (153*mp+2)/5 + day - 1
	doe := yoe*365 + yoe/4 - yoe/100 + doy
	return int64(era)*146097 + int64(doe) - 719468
}

// DaysInMonth returns the number of days of month (1..12) in year of the
// proleptic Gregorian calendar.
func DaysInMonth(year, month int) int {
	switch month {
	case 2:
		if year%4 == 0 && (year%100 != 0 || year%400 == 0) {
			return 29
		}
		return 28
	case 4, 6, 9, 11:
		return 30
	}
	return 31
}

// String returns the date as YYYY-MM-DD.
func (d Date) String() string {
	return time.Unix(int64(d)*86400, 0).UTC().Format("2006-01-02")
}

// Time is a TIME value: milliseconds of the day.
type Time int32

// String returns the time as HH:MM:SS.mmm.
func (t Time) String() string {
	ms := int(t)
	return fmt.Sprintf("%02d:%02d:%02d.%03d", ms/3600000, ms/60000%60, ms/1000%60, ms%1000)
}

// Timestamp is a TIMESTAMP or TIMESTAMP_LTZ value as Paimon holds it: epoch
// milliseconds plus the nanoseconds within that millisecond (0..999999).
// For TIMESTAMP the epoch is that of the wall-clock value read as UTC; for
// TIMESTAMP_LTZ it is the real instant.
type Timestamp struct {
	Millis      int64
	NanoOfMilli int32
}

// TimestampOf returns the Timestamp of t's instant.
func TimestampOf(t time.Time) Timestamp {
	ns := t.UnixNano()
	if t.Year() < 1678 || t.Year() > 2261 { // beyond UnixNano's range
		sec := t.Unix()
		nanos := int64(t.Nanosecond())
		return Timestamp{Millis: sec*1000 + nanos/1e6, NanoOfMilli: int32(nanos % 1e6)}
	}
	ms := FloorDiv(ns, 1e6)
	return Timestamp{Millis: ms, NanoOfMilli: int32(ns - ms*1e6)}
}

// WallClockOf returns the TIMESTAMP (without time zone) of t's wall clock in
// its own location.
func WallClockOf(t time.Time) Timestamp {
	y, mo, d := t.Date()
	h, mi, s := t.Clock()
	return TimestampOf(time.Date(y, mo, d, h, mi, s, t.Nanosecond(), time.UTC))
}

// Time returns the timestamp as a UTC time.Time.
func (ts Timestamp) Time() time.Time {
	sec := FloorDiv(ts.Millis, 1000)
	nanos := (ts.Millis-sec*1000)*1e6 + int64(ts.NanoOfMilli)
	return time.Unix(sec, nanos).UTC()
}

// Compare orders timestamps by instant: -1, 0 or +1.
func (ts Timestamp) Compare(o Timestamp) int {
	switch {
	case ts.Millis < o.Millis:
		return -1
	case ts.Millis > o.Millis:
		return 1
	case ts.NanoOfMilli < o.NanoOfMilli:
		return -1
	case ts.NanoOfMilli > o.NanoOfMilli:
		return 1
	}
	return 0
}

// String returns the timestamp as ISO-8601 text in UTC with nanoseconds,
// trailing zero fractions trimmed: 2024-05-30T12:00:00.000123456.
func (ts Timestamp) String() string {
	return ts.Time().Format("2006-01-02T15:04:05.999999999")
}

// FloorDiv returns a/b rounded toward negative infinity, as Java's
// Math.floorDiv; Go's / rounds toward zero.
func FloorDiv(a, b int64) int64 {
	q := a / b
	if (a%b != 0) && ((a < 0) != (b < 0)) {
		q--
	}
	return q
}

// pow10s holds 10^0 .. 10^18, the powers of ten an int64 holds.
var pow10s = func() [19]int64 {
	var p [19]int64
	p[0] = 1
	for i := 1; i < len(p); i++ {
		p[i] = p[i-1] * 10
	}
	return p
}()

// Pow10 returns 10^n for n up to 18, the largest power of ten an int64
// holds, and 1 for n < 0 (as big.Int.Exp); it panics for n > 18.
func Pow10(n int) int64 {
	if n < 0 {
		return 1
	}
	return pow10s[n]
}

// Pow10Big returns 10^n as a new big.Int, and 1 for n < 0 (as big.Int.Exp).
func Pow10Big(n int) *big.Int {
	if n < len(pow10s) {
		return big.NewInt(Pow10(n))
	}
	return new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(n)), nil)
}

// SignedInt returns v as an int64 when v is a Go signed integer (int, int8,
// int16, int32, int64); ok is false for any other type.
func SignedInt(v any) (n int64, ok bool) {
	switch x := v.(type) {
	case int:
		return int64(x), true
	case int8:
		return int64(x), true
	case int16:
		return int64(x), true
	case int32:
		return int64(x), true
	case int64:
		return x, true
	}
	return 0, false
}

// UnsignedInt returns v as a uint64 when v is a Go unsigned integer (uint,
// uint8, uint16, uint32, uint64); ok is false for any other type.
func UnsignedInt(v any) (n uint64, ok bool) {
	switch x := v.(type) {
	case uint:
		return uint64(x), true
	case uint8:
		return uint64(x), true
	case uint16:
		return uint64(x), true
	case uint32:
		return uint64(x), true
	case uint64:
		return x, true
	}
	return 0, false
}

// AnyInt returns v as an int64 when v is a Go integer of any width and
// signedness whose value fits an int64.
func AnyInt(v any) (n int64, ok bool) {
	if n, ok := SignedInt(v); ok {
		return n, true
	}
	if u, ok := UnsignedInt(v); ok && u <= math.MaxInt64 {
		return int64(u), true
	}
	return 0, false
}

// Decimal is a DECIMAL value: Unscaled × 10^-Scale. Unscaled is never nil in a
// value built by lakecore.
type Decimal struct {
	Unscaled *big.Int
	Scale    int
}

// NewDecimal returns the decimal unscaled × 10^-scale.
func NewDecimal(unscaled int64, scale int) Decimal {
	return Decimal{Unscaled: big.NewInt(unscaled), Scale: scale}
}

// ParseDecimal parses s ("-123.45", "1e3", "0.5") exactly, without going
// through floating point, and rescales it to scale. It fails if the value
// does not fit precision digits or needs rounding to fit scale.
func ParseDecimal(s string, precision, scale int) (Decimal, error) {
	r, ok := new(big.Rat).SetString(strings.TrimSpace(s))
	if !ok {
		return Decimal{}, fmt.Errorf("%q is not a decimal number", s)
	}
	return DecimalFromRat(r, precision, scale)
}

// DecimalFromRat converts r to DECIMAL(precision, scale) exactly; it fails if
// r needs rounding to fit scale or has more than precision digits.
func DecimalFromRat(r *big.Rat, precision, scale int) (Decimal, error) {
	pow := Pow10Big(scale)
	scaled := new(big.Rat).Mul(r, new(big.Rat).SetInt(pow))
	if !scaled.IsInt() {
		return Decimal{}, fmt.Errorf("%s has more than %d fraction digits", r.RatString(), scale)
	}
	d := Decimal{Unscaled: new(big.Int).Set(scaled.Num()), Scale: scale}
	if !d.FitsPrecision(precision) {
		return Decimal{}, fmt.Errorf("%s does not fit DECIMAL(%d, %d)", d, precision, scale)
	}
	return d, nil
}

// FitsPrecision reports whether the unscaled value has at most precision digits.
func (d Decimal) FitsPrecision(precision int) bool {
	if d.Unscaled == nil {
		return true
	}
	limit := Pow10Big(precision)
	return new(big.Int).Abs(d.Unscaled).Cmp(limit) < 0
}

// Rat returns the exact value as a big.Rat.
func (d Decimal) Rat() *big.Rat {
	if d.Unscaled == nil {
		return new(big.Rat)
	}
	pow := Pow10Big(d.Scale)
	return new(big.Rat).SetFrac(d.Unscaled, pow)
}

// Cmp compares the values of two decimals, whatever their scales.
func (d Decimal) Cmp(o Decimal) int { return d.Rat().Cmp(o.Rat()) }

// String returns the plain decimal text with exactly Scale fraction digits,
// as Java's BigDecimal.toPlainString: "-123.45000".
func (d Decimal) String() string {
	u := d.Unscaled
	if u == nil {
		u = new(big.Int)
	}
	if u.IsInt64() && d.Scale >= 0 && d.Scale <= 18 {
		return smallDecimalString(u.Int64(), d.Scale)
	}
	neg := u.Sign() < 0
	digits := new(big.Int).Abs(u).String()
	if d.Scale > 0 {
		if len(digits) <= d.Scale {
			digits = strings.Repeat("0", d.Scale-len(digits)+1) + digits
		}
		digits = digits[:len(digits)-d.Scale] + "." + digits[len(digits)-d.Scale:]
	} else if d.Scale < 0 {
		digits += strings.Repeat("0", -d.Scale)
	}
	if neg {
		return "-" + digits
	}
	return digits
}

// smallDecimalString is Decimal.String for an int64 unscaled value and a
// scale of 0 to 18, formatted in one buffer: at most a sign, 19 digits, a
// point and 18 leading zeros.
func smallDecimalString(v int64, scale int) string {
	var buf [40]byte
	u := uint64(v)
	if v < 0 {
		u = -u
	}
	var digits [20]byte
	n := len(strconv.AppendUint(digits[:0], u, 10))
	b := buf[:0]
	if v < 0 {
		b = append(b, '-')
	}
	if n <= scale { // 0.00ddd
		b = append(b, '0', '.')
		for range scale - n {
			b = append(b, '0')
		}
		b = append(b, digits[:n]...)
	} else {
		b = append(b, digits[:n-scale]...)
		if scale > 0 {
			b = append(b, '.')
			b = append(b, digits[n-scale:n]...)
		}
	}
	return string(b)
}

// Map is a MAP or MULTISET value: entries in order, Keys[i] maps to Values[i].
// For a MULTISET, Values holds each element's int32 count.
type Map struct {
	Keys   []any
	Values []any
}

// Len returns the number of entries.
func (m Map) Len() int { return len(m.Keys) }

// ZeroValue returns the zero value of a non-null t in lakecore's Go
// representation: false, 0, "", empty bytes, 0 with t's scale, the epoch
// day, midnight, the epoch instant, an empty ARRAY, MAP or MULTISET, and
// for a ROW its fields' zero values (NULL for nullable fields). It fills
// NOT NULL columns whose value does not matter, such as the non-key
// columns of a key-only delete.
func ZeroValue(t DataType) any {
	switch t.Kind {
	case KindBoolean:
		return false
	case KindTinyInt:
		return int8(0)
	case KindSmallInt:
		return int16(0)
	case KindInt:
		return int32(0)
	case KindBigInt:
		return int64(0)
	case KindFloat:
		return float32(0)
	case KindDouble:
		return float64(0)
	case KindChar, KindVarChar:
		if t.Kind == KindChar && t.Length > 0 {
			return strings.Repeat(" ", t.Length)
		}
		return ""
	case KindBinary:
		return make([]byte, max(t.Length, 0))
	case KindVarBinary:
		return []byte{}
	case KindDecimal:
		return Decimal{Unscaled: new(big.Int), Scale: t.Scale}
	case KindDate:
		return Date(0)
	case KindTime:
		return Time(0)
	case KindTimestamp, KindLocalZonedTimestamp:
		return Timestamp{}
	case KindArray:
		return []any{}
	case KindMap, KindMultiset:
		return Map{}
	case KindRow:
		row := make([]any, len(t.Fields))
		for i, f := range t.Fields {
			if !f.Type.Nullable {
				row[i] = ZeroValue(f.Type)
			}
		}
		return row
	}
	return nil
}
