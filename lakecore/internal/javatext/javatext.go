// Package javatext writes values as the Java methods Paimon uses to turn
// them into text: Double.toString and Float.toString, LocalDateTime.toString,
// and DateTimeUtils' formatDate, formatTimestampMillis and formatTimestamp
// (apache/paimon:
// paimon-common/src/main/java/org/apache/paimon/utils/DateTimeUtils.java).
// Partition directory names (lakecore/binrow) and casts to STRING
// (lakecore/datafile) both need them, byte for byte as Java writes them.
package javatext

import (
	"math"
	"strconv"
	"strings"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

const millisPerDay = 86_400_000

// civilFromDays converts days since 1970-01-01 to a proleptic Gregorian
// date, as LocalDate.ofEpochDay does.
func civilFromDays(z int64) (year int64, month, day int) {
	z += 719468
	era := types.FloorDiv(z, 146097)
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	day = int(doy - (153*mp+2)/5 + 1)
	month = int(mp + 3)
	if month > 12 {
		month -= 12
	}
	year = yoe + era*400
	if month <= 2 {
		year++
	}
	return year, month, day
}

// localDateTime splits a Timestamp as Timestamp.toLocalDateTime does:
// the epoch-millis wall clock read as UTC.
func localDateTime(ts types.Timestamp) (year int64, month, day, hour, minute, second, nano int) {
	days := types.FloorDiv(ts.Millis, millisPerDay)
	tod := ts.Millis - days*millisPerDay
	year, month, day = civilFromDays(days)
	return year, month, day, int(tod / 3_600_000), int(tod / 60_000 % 60), int(tod / 1000 % 60),
		int(tod%1000)*1_000_000 + int(ts.NanoOfMilli)
}

// FormatLocalDateTime is LocalDateTime.toString, the legacy partition
// name of a TIMESTAMP (Timestamp.toString): "2024-05-30T12:00", with seconds
// only when seconds or nanos are non-zero and the fraction in groups of 3
// digits (3, 6 or 9).
func FormatLocalDateTime(ts types.Timestamp) string {
	year, month, day, hour, minute, second, nano := localDateTime(ts)
	var b strings.Builder
	// LocalDate.toString
	switch abs := max(year, -year); {
	case abs < 1000 && year < 0:
		b.WriteString("-" + strconv.FormatInt(abs+10000, 10)[1:])
	case abs < 1000:
		b.WriteString(strconv.FormatInt(year+10000, 10)[1:])
	default:
		if year > 9999 {
			b.WriteByte('+')
		}
		b.WriteString(strconv.FormatInt(year, 10))
	}
	b.WriteByte('-')
	b.WriteString(pad2(month))
	b.WriteByte('-')
	b.WriteString(pad2(day))
	// LocalTime.toString
	b.WriteByte('T')
	b.WriteString(pad2(hour))
	b.WriteByte(':')
	b.WriteString(pad2(minute))
	if second > 0 || nano > 0 {
		b.WriteByte(':')
		b.WriteString(pad2(second))
		if nano > 0 {
			b.WriteByte('.')
			switch {
			case nano%1_000_000 == 0:
				b.WriteString(strconv.Itoa(nano/1_000_000 + 1000)[1:])
			case nano%1000 == 0:
				b.WriteString(strconv.Itoa(nano/1000 + 1_000_000)[1:])
			default:
				b.WriteString(strconv.Itoa(nano + 1_000_000_000)[1:])
			}
		}
	}
	return b.String()
}

func pad2(n int) string {
	if n < 10 {
		return "0" + strconv.Itoa(n)
	}
	return strconv.Itoa(n)
}

// int4 and int2 are DateTimeUtils.int4 / int2: fixed-width digits taken
// modulo, with Java's truncating int arithmetic (so a negative year yields
// the same odd characters as Java).
func int4(b []byte, i int32) []byte {
	return append(b, byte('0'+(i/1000)%10), byte('0'+(i/100)%10), byte('0'+(i/10)%10), byte('0'+i%10))
}

func int2(b []byte, i int32) []byte {
	return append(b, byte('0'+(i/10)%10), byte('0'+i%10))
}

// FormatDate is DateTimeUtils.formatDate (CAST DATE AS STRING): "yyyy-MM-dd"
// through Calcite's Julian-day arithmetic on Java ints.
func FormatDate(date int32) string {
	j := date + 2440588 + 32044 // EPOCH_JULIAN, then the shift to 4801 BC
	g := j / 146097
	dg := j % 146097
	c := (dg/36524 + 1) * 3 / 4
	dc := dg - c*36524
	b := dc / 1461
	db := dc % 1461
	a := (db/365 + 1) * 3 / 4
	da := db - a*365
	y := g*400 + c*100 + b*4 + a
	m := (da*5+308)/153 - 2
	d := da - (m+4)*153/5 + 122
	out := make([]byte, 0, 10)
	out = int4(out, y-4800+(m+2)/12)
	out = append(out, '-')
	out = int2(out, (m+2)%12+1)
	out = append(out, '-')
	return string(int2(out, d+1))
}

// FormatTime is DateTimeUtils.formatTimestampMillis (CAST TIME AS
// STRING): "HH:mm:ss" and, for precision > 0, the milliseconds without
// trailing zeros but at least one digit.
func FormatTime(t int32, precision int) string {
	for t < 0 {
		t += millisPerDay
	}
	out := make([]byte, 0, 12)
	out = int2(out, t/3_600_000)
	out = append(out, ':')
	out = int2(out, t%3_600_000/60_000)
	out = append(out, ':')
	out = int2(out, t%60_000/1000)
	if precision > 0 {
		out = append(out, '.')
		for ms := t % 1000; precision > 0; precision-- {
			out = append(out, byte('0'+ms/100))
			if ms = ms % 100 * 10; ms == 0 {
				break
			}
		}
	}
	return string(out)
}

// FormatTimestamp is DateTimeUtils.formatTimestamp (CAST TIMESTAMP AS
// STRING): "yyyy-MM-dd HH:mm:ss" plus the nanoseconds with trailing zeros
// trimmed, but never shorter than precision digits.
func FormatTimestamp(ts types.Timestamp, precision int) string {
	year, month, day, hour, minute, second, nano := localDateTime(ts)
	out := make([]byte, 0, 29)
	out = int4(out, int32(year))
	out = append(out, '-')
	out = int2(out, int32(month))
	out = append(out, '-')
	out = int2(out, int32(day))
	out = append(out, ' ')
	out = int2(out, int32(hour))
	out = append(out, ':')
	out = int2(out, int32(minute))
	out = append(out, ':')
	out = int2(out, int32(second))
	frac := strconv.Itoa(nano + 1_000_000_000)[1:]
	for len(frac) > precision && frac[len(frac)-1] == '0' {
		frac = frac[:len(frac)-1]
	}
	if frac != "" {
		out = append(append(out, '.'), frac...)
	}
	return string(out)
}

// FormatDouble is Double.toString as specified since JDK 19
// (Raffaello Giulietti's shortest decimal): the shortest decimal that rounds
// to f, but at least 2 significant digits when the shortest has one (so
// Double.MIN_VALUE is 4.9E-324), plain notation for 1e-3 <= |f| < 1e7
// ("100.0", "0.001") and computerized scientific notation otherwise
// ("1.0E7", "1.0E-4"). JDK 18 and older differ for a few values whose old
// output was not the shortest.
func FormatDouble(f float64) string { return formatFloating(f, 64) }

// FormatFloat is Float.toString, by the same rules as FormatDouble
// for float32 (Float.MIN_VALUE is 1.4E-45).
func FormatFloat(f float32) string { return formatFloating(float64(f), 32) }

func formatFloating(f float64, bitSize int) string {
	switch {
	case math.IsNaN(f):
		return "NaN"
	case math.IsInf(f, 1):
		return "Infinity"
	case math.IsInf(f, -1):
		return "-Infinity"
	case f == 0:
		if math.Signbit(f) {
			return "-0.0"
		}
		return "0.0"
	}
	digits, exp := decimalDigits(strconv.FormatFloat(f, 'e', -1, bitSize))
	if len(digits) == 1 {
		// Of the decimals of length 1 or 2 that round to f, Java takes the
		// closest: the correctly rounded 2-digit form, if it rounds back.
		s := strconv.FormatFloat(f, 'e', 1, bitSize)
		if back, err := strconv.ParseFloat(s, bitSize); err == nil && back == f {
			digits, exp = decimalDigits(s)
		}
	}
	digits = strings.TrimRight(digits, "0")
	if digits == "" {
		digits = "0"
	}
	var b strings.Builder
	if f < 0 {
		b.WriteByte('-')
	}
	switch {
	case exp >= 0 && exp < 7:
		if len(digits) <= exp+1 {
			b.WriteString(digits)
			b.WriteString(strings.Repeat("0", exp+1-len(digits)))
			b.WriteString(".0")
		} else {
			b.WriteString(digits[:exp+1])
			b.WriteByte('.')
			b.WriteString(digits[exp+1:])
		}
	case exp < 0 && exp >= -3:
		b.WriteString("0.")
		b.WriteString(strings.Repeat("0", -exp-1))
		b.WriteString(digits)
	default:
		b.WriteByte(digits[0])
		b.WriteByte('.')
		if len(digits) > 1 {
			b.WriteString(digits[1:])
		} else {
			b.WriteByte('0')
		}
		b.WriteByte('E')
		b.WriteString(strconv.Itoa(exp))
	}
	return b.String()
}

// decimalDigits splits Go's "-d.ddde±XX" into its significant digits and
// the exponent of the first digit.
func decimalDigits(s string) (string, int) {
	s = strings.TrimPrefix(s, "-")
	mant, e, _ := strings.Cut(s, "e")
	exp, _ := strconv.Atoi(e)
	return strings.Replace(mant, ".", "", 1), exp
}
