package datafile

import (
	"errors"
	"fmt"
	"math"
	"math/big"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// The text conversions of Paimon's cast rules: how numbers, dates and
// timestamps become strings and how strings are parsed back. They follow
// apache/paimon paimon-common/src/main/java/org/apache/paimon/utils/
// BinaryStringUtils.java and DateTimeUtils.java.

const millisPerDay = 86400000

// toCharacterString fits s to a CHAR or VARCHAR type as
// BinaryStringUtils.toCharacterString: truncated to the length in characters,
// and a CHAR padded with spaces.
func toCharacterString(s string, t types.DataType) string {
	n := utf8.RuneCountInString(s)
	if n > t.Length {
		i, count := 0, 0
		for i < len(s) && count < t.Length {
			_, size := utf8.DecodeRuneInString(s[i:])
			i += size
			count++
		}
		return s[:i]
	}
	if n < t.Length && t.Kind == types.KindChar {
		return s + strings.Repeat(" ", t.Length-n)
	}
	return s
}

// toBinaryString fits b to a BINARY or VARBINARY type as
// BinaryStringUtils.toBinaryString: BINARY(n) is zero-padded or truncated to
// n bytes, VARBINARY(n) truncated. The result never aliases b.
func toBinaryString(b []byte, t types.DataType) []byte {
	if len(b) == t.Length || (t.Kind == types.KindVarBinary && len(b) < t.Length) {
		return append([]byte(nil), b...)
	}
	out := make([]byte, t.Length)
	copy(out, b)
	return out
}

var (
	trueStrings  = []string{"t", "true", "y", "yes", "1"}
	falseStrings = []string{"f", "false", "n", "no", "0"}
)

// parseBoolean is BinaryStringUtils.toBoolean: case-insensitive t, true, y,
// yes, 1 and f, false, n, no, 0; no trimming.
func parseBoolean(s string) (bool, error) {
	l := strings.ToLower(s)
	for _, t := range trueStrings {
		if l == t {
			return true, nil
		}
	}
	for _, f := range falseStrings {
		if l == f {
			return false, nil
		}
	}
	return false, fmt.Errorf("cannot parse %q as BOOLEAN", s)
}

// parseIntegral is BinaryStringUtils.toLong/toInt (Hive's LazyLong): an
// optional sign, digits and an optional fraction that is checked and dropped;
// no whitespace. bits is 64 or 32; the value must fit.
func parseIntegral(s string, bits int) (int64, error) {
	if s == "" {
		return 0, fmt.Errorf("cannot parse %q as a number: input is empty", s)
	}
	i := 0
	neg := s[0] == '-'
	if neg || s[0] == '+' {
		i++
		if len(s) == 1 {
			return 0, fmt.Errorf("cannot parse %q as a number: only a sign", s)
		}
	}
	limit := uint64(1) << (bits - 1) // magnitude of the minimum value
	var mag uint64
	for ; i < len(s); i++ {
		c := s[i]
		if c == '.' {
			i++
			break
		}
		if c < '0' || c > '9' {
			return 0, fmt.Errorf("cannot parse %q as a number: invalid character", s)
		}
		mag = mag*10 + uint64(c-'0')
		if mag > limit {
			return 0, fmt.Errorf("cannot parse %q as a number: overflow", s)
		}
	}
	for ; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return 0, fmt.Errorf("cannot parse %q as a number: invalid character", s)
		}
	}
	if !neg && mag == limit {
		return 0, fmt.Errorf("cannot parse %q as a number: overflow", s)
	}
	if neg {
		return -int64(mag), nil // mag == limit wraps to the minimum, as intended
	}
	return int64(mag), nil
}

// parseJavaFloat approximates Java's Float.parseFloat / Double.parseDouble:
// surrounding whitespace is ignored, "NaN" and "Infinity" are accepted with an
// optional sign, and a trailing type suffix (f, F, d, D) is dropped.
func parseJavaFloat(s string, bitSize int) (float64, error) {
	t := strings.TrimFunc(s, func(r rune) bool { return r <= ' ' })
	body := strings.TrimLeft(t, "+-")
	switch body {
	case "NaN":
		return math.NaN(), nil
	case "Infinity":
		if strings.HasPrefix(t, "-") {
			return math.Inf(-1), nil
		}
		return math.Inf(1), nil
	}
	if n := len(t); n > 1 && strings.ContainsRune("fFdD", rune(t[n-1])) && !strings.HasPrefix(body, "0x") && !strings.HasPrefix(body, "0X") {
		t = t[:n-1]
	}
	if strings.ContainsAny(t, "_iInN") {
		return 0, fmt.Errorf("cannot parse %q as a floating-point number", s)
	}
	f, err := strconv.ParseFloat(t, bitSize)
	if err != nil && !errors.Is(err, strconv.ErrRange) {
		return 0, fmt.Errorf("cannot parse %q as a floating-point number", s)
	}
	return f, nil // out of range: ParseFloat's ±Inf or 0, as Java
}

// parseJavaDecimal parses s as Java's new BigDecimal(String): an optional
// sign, digits with an optional point, and an optional exponent. It returns
// the unscaled value and the scale.
func parseJavaDecimal(s string) (*big.Int, int, error) {
	bad := func() (*big.Int, int, error) {
		return nil, 0, fmt.Errorf("cannot parse %q as a decimal number", s)
	}
	i := 0
	if i < len(s) && (s[i] == '+' || s[i] == '-') {
		i++
	}
	var digits []byte
	scale, sawPoint := 0, false
	for ; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= '0' && c <= '9':
			digits = append(digits, c)
			if sawPoint {
				scale++
			}
			continue
		case c == '.' && !sawPoint:
			sawPoint = true
			continue
		}
		break
	}
	if len(digits) == 0 {
		return bad()
	}
	if i < len(s) {
		if s[i] != 'e' && s[i] != 'E' {
			return bad()
		}
		exp, err := strconv.ParseInt(s[i+1:], 10, 32)
		if err != nil {
			return bad()
		}
		scale -= int(exp)
	}
	u, ok := new(big.Int).SetString(string(digits), 10)
	if !ok {
		return bad()
	}
	if s[0] == '-' {
		u.Neg(u)
	}
	return u, scale, nil
}

// isJavaNumeric is StringUtils.isNumeric: an optional leading '-' and then
// one or more digits.
func isJavaNumeric(s string) bool {
	return isASCIIDigits(strings.TrimPrefix(s, "-"))
}

// isASCIIDigits reports whether s is one or more digits 0-9.
func isASCIIDigits(s string) bool {
	if s == "" {
		return false
	}
	for i := 0; i < len(s); i++ {
		if s[i] < '0' || s[i] > '9' {
			return false
		}
	}
	return true
}

// parseDate is BinaryStringUtils.toDate: a number is taken as days since the
// epoch; otherwise DateTimeUtils.parseDate reads "y[-m[-d]]" (text after the
// first space ignored) with 0 <= y <= 9999 and a valid month and day.
func parseDate(s string) (int32, error) {
	if isJavaNumeric(s) {
		v, err := parseIntegral(s, 32)
		return int32(v), err
	}
	bad := fmt.Errorf("cannot parse %q as DATE", s)
	if ws := strings.IndexByte(s, ' '); ws > 0 {
		s = s[:ws]
	}
	parts := strings.SplitN(s, "-", 3)
	vals := []int{0, 1, 1}
	for i, p := range parts {
		p = strings.TrimSpace(p)
		if !isASCIIDigits(p) || len(p) > 9 {
			return 0, bad
		}
		vals[i], _ = strconv.Atoi(p)
	}
	y, m, d := vals[0], vals[1], vals[2]
	if y < 0 || y > 9999 || m < 1 || m > 12 || d < 1 || d > types.DaysInMonth(y, m) {
		return 0, bad
	}
	return int32(types.EpochDay(y, m, d)), nil
}

// parseTime is BinaryStringUtils.toTime: a number is taken as milliseconds
// of the day; otherwise DateTimeUtils.parseTime reads
// "h[:m[:s[.fff]]]" with an optional "+hh[:mm]" or "-hh[:mm]" offset that is
// added (Java's arithmetic, kept as it is).
func parseTime(s string) (int32, error) {
	if isJavaNumeric(s) {
		v, err := parseIntegral(s, 32)
		return int32(v), err
	}
	bad := fmt.Errorf("cannot parse %q as TIME", s)
	num := func(p string) (int, bool) {
		p = strings.TrimSpace(p)
		if !isASCIIDigits(p) || len(p) > 9 {
			return 0, false
		}
		v, _ := strconv.Atoi(p)
		return v, true
	}
	end, operator := len(s), -1
	tzh, tzm := 0, 0
	tz := strings.IndexByte(s, '-')
	if tz < 0 {
		tz = strings.IndexByte(s, '+')
		operator = 1
	}
	// lead reads the number before the first sep in p (all of p without
	// one) and returns what follows sep.
	lead := func(p string, sep string) (n int, rest string, found, ok bool) {
		p, rest, found = strings.Cut(p, sep)
		n, ok = num(p)
		return n, rest, found, ok
	}
	var (
		rest             string
		more, ok         bool
		h, m, sec, milli int
	)
	if tz >= 0 {
		end = tz
		if tzh, rest, more, ok = lead(s[tz+1:], ":"); !ok {
			return 0, bad
		}
		if more {
			if tzm, ok = num(rest); !ok {
				return 0, bad
			}
		}
	}
	if h, rest, more, ok = lead(s[:end], ":"); !ok {
		return 0, bad
	}
	if more {
		if m, rest, more, ok = lead(rest, ":"); !ok {
			return 0, bad
		}
		if more {
			if sec, rest, more, ok = lead(rest, "."); !ok {
				return 0, bad
			}
			if more {
				milli = parseFraction(strings.TrimSpace(rest))
			}
		}
	}
	h += operator * tzh
	m += operator * tzm
	return int32(h*3600000 + m*60000 + sec*1000 + milli), nil
}

// parseFraction is DateTimeUtils.parseFraction with multiplier 100: the
// first three digits as milliseconds, rounded half up on the fourth.
func parseFraction(v string) int {
	multiplier, r := 100, 0
	for i := 0; i < len(v); i++ {
		x := 0
		if c := v[i]; c >= '0' && c <= '9' {
			x = int(c - '0')
		}
		r += multiplier * x
		if multiplier < 10 {
			if i+1 < len(v) && v[i+1] >= '5' {
				r++
			}
			break
		}
		multiplier /= 10
	}
	return r
}

// wallClock is a zone-less date-time: the fields Java's LocalDateTime holds.
type wallClock struct {
	year, month, day, hour, minute, second, nano int
}

func (w wallClock) timestamp() types.Timestamp {
	return types.TimestampOf(time.Date(w.year, time.Month(w.month), w.day, w.hour, w.minute, w.second, w.nano, time.UTC))
}

// parseTimestampText reads the text of DateTimeUtils.DEFAULT_TIMESTAMP_FORMATTER:
// "yyyy-M[M]-d[d]" optionally followed by " H:m:s[.fraction]" or
// "TH:m[:s[.fraction]]" (one- or two-digit fields), and truncates the
// nanoseconds to precision digits as fromTemporalAccessor does. A day past
// the end of its month is clamped, as Java's SMART resolver does.
func parseTimestampText(s string, precision int) (wallClock, error) {
	bad := fmt.Errorf("cannot parse %q as TIMESTAMP", s)
	p := 0
	digits := func(minN, maxN int) (int, bool) {
		start := p
		for p < len(s) && p-start < maxN && s[p] >= '0' && s[p] <= '9' {
			p++
		}
		if p-start < minN {
			return 0, false
		}
		v, _ := strconv.Atoi(s[start:p])
		return v, true
	}
	lit := func(c byte) bool {
		if p < len(s) && s[p] == c {
			p++
			return true
		}
		return false
	}
	var w wallClock
	var ok bool
	if w.year, ok = digits(4, 9); !ok || !lit('-') {
		return w, bad
	}
	if w.month, ok = digits(1, 2); !ok || !lit('-') {
		return w, bad
	}
	if w.day, ok = digits(1, 2); !ok {
		return w, bad
	}
	fraction := func() bool {
		if !lit('.') {
			return true
		}
		start := p
		for p < len(s) && p-start < 9 && s[p] >= '0' && s[p] <= '9' {
			p++
		}
		frac := s[start:p] + strings.Repeat("0", 9-(p-start))
		w.nano, _ = strconv.Atoi(frac)
		return true
	}
	// " H:m:s[.f]" or "TH:m[:s[.f]]": the seconds are optional only after T.
	if space := lit(' '); space || lit('T') {
		if w.hour, ok = digits(1, 2); !ok || !lit(':') {
			return w, bad
		}
		if w.minute, ok = digits(1, 2); !ok {
			return w, bad
		}
		if seconds := lit(':'); seconds {
			if w.second, ok = digits(1, 2); !ok || !fraction() {
				return w, bad
			}
		} else if space {
			return w, bad
		}
	}
	if p != len(s) || w.month < 1 || w.month > 12 || w.day < 1 || w.day > 31 ||
		w.hour > 23 || w.minute > 59 || w.second > 59 {
		return w, bad
	}
	w.day = min(w.day, types.DaysInMonth(w.year, w.month))
	switch {
	case precision <= 0:
		w.nano = 0
	case precision < 9:
		unit := int(math.Pow10(9 - precision))
		w.nano -= w.nano % unit
	}
	return w, nil
}

// epochToTimestamp is BinaryStringUtils.fromMillisToTimestamp: a number read
// as seconds, milliseconds, microseconds or nanoseconds for precision 0, 3,
// 6 or 9; other precisions are an error, as in Java.
func epochToTimestamp(epoch int64, precision int) (types.Timestamp, error) {
	var millis, nanos int64
	switch precision {
	case 0:
		millis = epoch * 1000
	case 3:
		millis = epoch
	case 6:
		millis, nanos = epoch/1000, epoch%1000*1000
	case 9:
		millis, nanos = epoch/1000000, epoch%1000000
	default:
		return types.Timestamp{}, fmt.Errorf("cannot cast a number to TIMESTAMP(%d): only precision 0, 3, 6 and 9 are supported", precision)
	}
	if nanos < 0 {
		nanos += 1000000
		millis--
	}
	return types.Timestamp{Millis: millis, NanoOfMilli: int32(nanos)}, nil
}
