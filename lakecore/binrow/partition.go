package binrow

import (
	"fmt"
	"strconv"
	"strings"
	"time"
	"unicode"

	"github.com/benthos-paimon/benthos-paimon/lakecore/internal/javatext"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// DefaultPartitionName is the default of option partition.default-name.
const DefaultPartitionName = "__DEFAULT_PARTITION__"

// PartitionOptions are the table options that shape partition directory
// names. Paimon's defaults are DefaultPartitionOptions(); note that the zero
// value has LegacyName false.
type PartitionOptions struct {
	// DefaultName replaces a NULL, empty or whitespace-only partition value
	// (option partition.default-name); "" means DefaultPartitionName.
	DefaultName string
	// LegacyName is option partition.legacy-name (default true): values are
	// named by Java's toString of the internal value (a DATE is its epoch
	// day); when false by CAST(value AS STRING) (a DATE is YYYY-MM-DD).
	LegacyName bool
	// LocalTimeZone is the JVM default time zone that CAST uses for
	// TIMESTAMP_LTZ values when LegacyName is false; nil means UTC.
	LocalTimeZone *time.Location
}

// DefaultPartitionOptions returns Paimon's defaults: DefaultPartitionName and
// legacy names.
func DefaultPartitionOptions() PartitionOptions {
	return PartitionOptions{DefaultName: DefaultPartitionName, LegacyName: true}
}

// PartitionValues returns the unescaped directory value of each partition
// key, as InternalRowPartitionComputer.generatePartValues computes it
// (apache/paimon paimon-common/.../utils/InternalRowPartitionComputer.java):
// the value's string in legacy or CAST form, or o.DefaultName when the value
// is nil or the string is empty or whitespace-only (Java's
// Character.isWhitespace). values[i] is the Go value of keys[i].Type.
// Errors wrap ErrArityMismatch, ErrInvalidValue or ErrUnsupportedType.
func PartitionValues(keys []types.DataField, values []any, o PartitionOptions) ([]string, error) {
	if len(values) != len(keys) {
		return nil, fmt.Errorf("partition values: %d values for %d keys: %w", len(values), len(keys), ErrArityMismatch)
	}
	def := o.DefaultName
	if def == "" {
		def = DefaultPartitionName
	}
	out := make([]string, len(keys))
	for i, k := range keys {
		if values[i] == nil {
			out[i] = def
			continue
		}
		s, err := partitionString(k.Type, values[i], o)
		if err != nil {
			return nil, fmt.Errorf("partition value of %q: %w", k.Name, err)
		}
		if isJavaBlank(s) {
			s = def
		}
		out[i] = s
	}
	return out, nil
}

// PartitionPath returns the partition directory of a row, relative to the
// table: "k1=v1/k2=v2" with keys and values escaped by EscapePathName, or ""
// when there are no keys (PartitionPathUtils.generatePartitionPath without
// its trailing slash). An empty key name fails with ErrInvalidPartition.
func PartitionPath(keys []types.DataField, values []any, o PartitionOptions) (string, error) {
	if len(keys) == 0 {
		return "", nil
	}
	vals, err := PartitionValues(keys, values, o)
	if err != nil {
		return "", err
	}
	var b strings.Builder
	for i, k := range keys {
		if k.Name == "" {
			return "", fmt.Errorf("partition path: key %d has an empty name: %w", i, ErrInvalidPartition)
		}
		if i > 0 {
			b.WriteByte('/')
		}
		b.WriteString(EscapePathName(k.Name))
		b.WriteByte('=')
		b.WriteString(EscapePathName(vals[i]))
	}
	return b.String(), nil
}

// EscapePathName escapes a partition key or value for a path component as
// PartitionPathUtils.escapePathName does: the bytes 0x00-0x1F and 0x7F and the
// characters " # % ' * / : = ? \ { } [ ] ^ become %XX (upper-case hex); space
// and non-ASCII are kept. Java rejects an empty name; PartitionPath does the
// same, EscapePathName returns "".
func EscapePathName(s string) string {
	n := 0
	for i := 0; i < len(s); i++ {
		if needsEscaping(s[i]) {
			n++
		}
	}
	if n == 0 {
		return s
	}
	const hex = "0123456789ABCDEF"
	b := make([]byte, 0, len(s)+2*n)
	for i := 0; i < len(s); i++ {
		c := s[i]
		if needsEscaping(c) {
			b = append(b, '%', hex[c>>4], hex[c&0xf])
		} else {
			b = append(b, c)
		}
	}
	return string(b)
}

func needsEscaping(c byte) bool {
	if c < 0x20 || c == 0x7f {
		return true
	}
	return strings.IndexByte(`"#%'*/:=?\{}[]^`, c) >= 0
}

// isJavaBlank is StringUtils.isNullOrWhitespaceOnly for a non-null string.
func isJavaBlank(s string) bool {
	for _, r := range s {
		if !isJavaWhitespace(r) {
			return false
		}
	}
	return true
}

// isJavaWhitespace is Character.isWhitespace: Unicode space, line and
// paragraph separators except the no-break spaces, plus \t \n \v \f \r and
// the ASCII file/group/record/unit separators.
func isJavaWhitespace(r rune) bool {
	switch r {
	case '\t', '\n', '\v', '\f', '\r', 0x1c, 0x1d, 0x1e, 0x1f:
		return true
	case 0xa0, 0x2007, 0x202f:
		return false
	}
	return unicode.In(r, unicode.Zs, unicode.Zl, unicode.Zp)
}

// partitionString is field.toString() of Paimon's internal value (legacy) or
// CastExecutors' cast to STRING (apache/paimon paimon-common/.../casting:
// NumericToStringCastRule, BooleanToStringCastRule, DateToStringCastRule,
// TimeToStringCastRule, TimestampToStringCastRule, BinaryToStringCastRule).
// Numbers, booleans, decimals and strings read the same in both forms.
func partitionString(t types.DataType, v any, o PartitionOptions) (string, error) {
	switch t.Kind {
	case types.KindChar, types.KindVarChar:
		s, ok := v.(string)
		if !ok {
			return "", wrongType(t, v)
		}
		return s, nil
	case types.KindBoolean:
		b, ok := v.(bool)
		if !ok {
			return "", wrongType(t, v)
		}
		return strconv.FormatBool(b), nil
	case types.KindTinyInt:
		n, err := intValue(t, v, -1<<7, 1<<7-1)
		return strconv.FormatInt(n, 10), err
	case types.KindSmallInt:
		n, err := intValue(t, v, -1<<15, 1<<15-1)
		return strconv.FormatInt(n, 10), err
	case types.KindInt:
		n, err := intValue(t, v, -1<<31, 1<<31-1)
		return strconv.FormatInt(n, 10), err
	case types.KindBigInt:
		n, err := intValue(t, v, -1<<63, 1<<63-1)
		return strconv.FormatInt(n, 10), err
	case types.KindFloat:
		f, ok := v.(float32)
		if !ok {
			return "", wrongType(t, v)
		}
		return javatext.FormatFloat(f), nil
	case types.KindDouble:
		f, ok := v.(float64)
		if !ok {
			return "", wrongType(t, v)
		}
		return javatext.FormatDouble(f), nil
	case types.KindDecimal:
		d, ok := v.(types.Decimal)
		if !ok {
			return "", wrongType(t, v)
		}
		u, err := unscaledAt(d, t.Precision, t.Scale)
		if err != nil {
			return "", err
		}
		return types.Decimal{Unscaled: u, Scale: t.Scale}.String(), nil // BigDecimal.toPlainString
	case types.KindDate:
		d, ok := v.(types.Date)
		if !ok {
			return "", wrongType(t, v)
		}
		if o.LegacyName {
			return strconv.Itoa(int(d)), nil
		}
		return javatext.FormatDate(int32(d)), nil
	case types.KindTime:
		d, ok := v.(types.Time)
		if !ok {
			return "", wrongType(t, v)
		}
		if o.LegacyName {
			return strconv.Itoa(int(d)), nil
		}
		return javatext.FormatTime(int32(d), t.Precision), nil
	case types.KindTimestamp, types.KindLocalZonedTimestamp:
		ts, ok := v.(types.Timestamp)
		if !ok {
			return "", wrongType(t, v)
		}
		if ts.NanoOfMilli < 0 || ts.NanoOfMilli > 999_999 {
			return "", fmt.Errorf("%w: nano of millisecond %d outside 0..999999", ErrInvalidValue, ts.NanoOfMilli)
		}
		if o.LegacyName {
			return javatext.FormatLocalDateTime(ts), nil
		}
		if t.Kind == types.KindLocalZonedTimestamp {
			ts = wallClockIn(ts, o.LocalTimeZone)
		}
		return javatext.FormatTimestamp(ts, t.Precision), nil
	case types.KindBinary, types.KindVarBinary:
		b, ok := v.([]byte)
		if !ok {
			return "", wrongType(t, v)
		}
		if o.LegacyName {
			// Java names the directory after byte[].toString(), "[B@<identity hash>".
			return "", fmt.Errorf("%w: %s has no stable legacy partition name", ErrUnsupportedType, t)
		}
		return string(b), nil
	default:
		return "", fmt.Errorf("%w: %s cannot be a partition key", ErrUnsupportedType, t)
	}
}

// wallClockIn is DateTimeUtils.timestampWithLocalZoneToTimestamp: the
// instant's wall clock in loc (UTC if nil), read as UTC.
func wallClockIn(ts types.Timestamp, loc *time.Location) types.Timestamp {
	if loc == nil {
		return ts
	}
	return types.WallClockOf(ts.Time().In(loc))
}
