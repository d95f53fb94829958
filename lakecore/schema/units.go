package schema

import (
	"fmt"
	"math"
	"strconv"
	"strings"
	"time"
)

// javaTrim trims as java.lang.String.trim does: every char <= ' '.
func javaTrim(s string) string {
	i, j := 0, len(s)
	for i < j && s[i] <= ' ' {
		i++
	}
	for j > i && s[j-1] <= ' ' {
		j--
	}
	return s[i:j]
}

// splitNumber splits "128 mb" into the leading ASCII digits and the trimmed,
// lower-cased unit, as MemorySize.parseBytes and TimeUtils.parseDuration do.
func splitNumber(kind, text string) (int64, string, error) {
	t := javaTrim(text)
	if t == "" {
		return 0, "", fmt.Errorf("%w: %s %q is empty", ErrInvalidOption, kind, text)
	}
	pos := 0
	for pos < len(t) && t[pos] >= '0' && t[pos] <= '9' {
		pos++
	}
	if pos == 0 {
		return 0, "", fmt.Errorf("%w: %s %q does not start with a number", ErrInvalidOption, kind, text)
	}
	v, err := strconv.ParseInt(t[:pos], 10, 64)
	if err != nil {
		return 0, "", fmt.Errorf("%w: %s %q cannot be represented as a 64-bit number", ErrInvalidOption, kind, text)
	}
	return v, strings.ToLower(javaTrim(t[pos:])), nil
}

var memoryUnits = map[string]int64{
	"b": 1, "bytes": 1,
	"k": 1 << 10, "kb": 1 << 10, "kibibytes": 1 << 10,
	"m": 1 << 20, "mb": 1 << 20, "mebibytes": 1 << 20,
	"g": 1 << 30, "gb": 1 << 30, "gibibytes": 1 << 30,
	"t": 1 << 40, "tb": 1 << 40, "tebibytes": 1 << 40,
}

// ParseMemorySize parses a Paimon memory size ("128 mb", "256mb", "8 MB",
// "1kb", "500 B", "1024") into bytes, as apache/paimon
// paimon-api/src/main/java/org/apache/paimon/options/MemorySize.java
// parseBytes does: leading digits, optional whitespace, a case-insensitive
// unit among b/bytes, k/kb/kibibytes, m/mb/mebibytes, g/gb/gibibytes,
// t/tb/tebibytes (powers of 1024); no unit means bytes. Fractions, signs and
// overflow are errors wrapping ErrInvalidOption.
func ParseMemorySize(s string) (int64, error) {
	v, unit, err := splitNumber("memory size", s)
	if err != nil {
		return 0, err
	}
	mult := int64(1)
	if unit != "" {
		m, ok := memoryUnits[unit]
		if !ok {
			return 0, fmt.Errorf("%w: memory size %q: unknown unit %q (use b, kb, mb, gb or tb)", ErrInvalidOption, s, unit)
		}
		mult = m
	}
	if v > math.MaxInt64/mult {
		return 0, fmt.Errorf("%w: memory size %q overflows 64 bits", ErrInvalidOption, s)
	}
	return v * mult, nil
}

// durationUnits are TimeUtils.TimeUnit's labels (singular and plural).
var durationUnits = map[string]time.Duration{
	"d": 24 * time.Hour, "day": 24 * time.Hour, "days": 24 * time.Hour,
	"h": time.Hour, "hour": time.Hour, "hours": time.Hour,
	"min": time.Minute, "m": time.Minute, "minute": time.Minute, "minutes": time.Minute,
	"s": time.Second, "sec": time.Second, "secs": time.Second, "second": time.Second, "seconds": time.Second,
	"ms": time.Millisecond, "milli": time.Millisecond, "millis": time.Millisecond,
	"millisecond": time.Millisecond, "milliseconds": time.Millisecond,
	"µs": time.Microsecond, "micro": time.Microsecond, "micros": time.Microsecond,
	"microsecond": time.Microsecond, "microseconds": time.Microsecond,
	"ns": time.Nanosecond, "nano": time.Nanosecond, "nanos": time.Nanosecond,
	"nanosecond": time.Nanosecond, "nanoseconds": time.Nanosecond,
}

// ParseDuration parses a Paimon duration ("1 h", "10 s", "500ms", "1 d",
// "30 min") as apache/paimon
// paimon-api/src/main/java/org/apache/paimon/utils/TimeUtils.java
// parseDuration does: leading digits, optional whitespace and a
// case-insensitive unit label (d/day/days, h/hour/hours, min/m/minute/minutes,
// s/sec/secs/second/seconds, ms/milli/millis/millisecond/milliseconds,
// µs/micro(s)/microsecond(s), ns/nano(s)/nanosecond(s)); no unit means
// milliseconds. Values beyond time.Duration's range (about 292 years), which
// Java can hold, saturate at the maximum Duration. Errors wrap
// ErrInvalidOption.
func ParseDuration(s string) (time.Duration, error) {
	v, unit, err := splitNumber("duration", s)
	if err != nil {
		return 0, err
	}
	d := time.Millisecond
	if unit != "" {
		u, ok := durationUnits[unit]
		if !ok {
			return 0, fmt.Errorf("%w: duration %q: unknown unit %q (use d, h, min, s, ms, µs or ns)", ErrInvalidOption, s, unit)
		}
		d = u
	}
	if v > int64(math.MaxInt64/d) {
		return time.Duration(math.MaxInt64), nil
	}
	return time.Duration(v) * d, nil
}
