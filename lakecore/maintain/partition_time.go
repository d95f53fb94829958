package maintain

import (
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// This file reads a time out of partition values as Java's
// PartitionTimeExtractor does (apache/paimon 1.4:
// paimon-core/src/main/java/org/apache/paimon/partition/PartitionTimeExtractor.java),
// including the subset of java.time.format.DateTimeFormatter patterns that
// partition values use. Times are LocalDateTime values: wall clocks without
// a zone, represented as time.Time in UTC.

// errUnparseable is a value that does not match the formatter
// (DateTimeParseException).
var errUnparseable = errors.New("does not parse")

// timeExtractor is PartitionTimeExtractor.
type timeExtractor struct {
	pattern   string          // partition.timestamp-pattern; "" = the first value
	formatter *javaTimeFormat // partition.timestamp-formatter; nil = the lenient default
}

func newTimeExtractor(pattern, formatter string) (*timeExtractor, error) {
	x := &timeExtractor{pattern: pattern}
	if formatter != "" {
		f, err := compileJavaTimeFormat(formatter)
		if err != nil {
			return nil, fmt.Errorf("%w: partition.timestamp-formatter %q: %v", ErrInvalidOptions, formatter, err)
		}
		x.formatter = f
	}
	return x, nil
}

// extract returns the time of a partition. values are Java's toString of
// the partition values (nil for NULL), keys the partition key names. The
// error says why a partition has no time.
func (x *timeExtractor) extract(keys []string, values []*string) (time.Time, error) {
	var s string
	if x.pattern == "" {
		if len(values) == 0 || values[0] == nil {
			return time.Time{}, errNullValue
		}
		s = *values[0]
	} else {
		s = x.pattern
		// String.replaceAll("\\$" + key, value) for every key in order.
		for i, k := range keys {
			if values[i] == nil {
				return time.Time{}, errNullValue
			}
			s = strings.ReplaceAll(s, "$"+k, *values[i])
		}
	}
	var t time.Time
	var err error
	if x.formatter == nil {
		t, err = parseDefaultPartitionTime(s)
	} else {
		t, err = x.formatter.parse(s)
	}
	if err != nil {
		return time.Time{}, fmt.Errorf("%q %w", s, err)
	}
	return t, nil
}

var errNullValue = errors.New("contains a NULL value")

// parseDefaultPartitionTime parses with PartitionTimeExtractor's default
// formatters, yyyy-M-d[ H:m:s[.fraction]] resolved LENIENT: 1-10 digit
// year, 1-2 digit month, day, hour, minute and second, 1-9 fraction
// digits; out-of-range fields roll over (month 13 is January of the next
// year); a date alone means midnight.
func parseDefaultPartitionTime(s string) (time.Time, error) {
	p := &numScanner{s: s}
	neg := p.lit("-")
	year, ok := p.digits(1, 10)
	if !ok || !p.lit("-") {
		return time.Time{}, errUnparseable
	}
	month, ok1 := p.digits(1, 2)
	ok2 := p.lit("-")
	day, ok3 := p.digits(1, 2)
	if !ok1 || !ok2 || !ok3 {
		return time.Time{}, errUnparseable
	}
	var hour, minute, second, nanos int64
	if save := p.pos; p.lit(" ") {
		h, ok1 := p.digits(1, 2)
		ok2 := p.lit(":")
		m, ok3 := p.digits(1, 2)
		ok4 := p.lit(":")
		sec, ok5 := p.digits(1, 2)
		if ok1 && ok2 && ok3 && ok4 && ok5 {
			hour, minute, second = h, m, sec
			if save2 := p.pos; p.lit(".") {
				if f, n, ok := p.fraction(1, 9); ok {
					nanos = f * types.Pow10(9-n)
				} else {
					p.pos = save2
				}
			}
		} else {
			p.pos = save
		}
	}
	if p.pos != len(s) {
		return time.Time{}, errUnparseable
	}
	if neg {
		year = -year
	}
	if year < -999_999_999 || year > 999_999_999 {
		return time.Time{}, errUnparseable
	}
	// LENIENT: LocalDate.of(y, 1, 1).plusMonths(m - 1).plusDays(d - 1),
	// plus the time of day as a duration.
	t := time.Date(int(year), time.January, 1, 0, 0, 0, 0, time.UTC).AddDate(0, int(month)-1, 0).AddDate(0, 0, int(day)-1)
	return t.Add(time.Duration(hour)*time.Hour + time.Duration(minute)*time.Minute + time.Duration(second)*time.Second + time.Duration(nanos)), nil
}

// numScanner reads a string left to right.
type numScanner struct {
	s   string
	pos int
}

func (p *numScanner) lit(l string) bool {
	if strings.HasPrefix(p.s[p.pos:], l) {
		p.pos += len(l)
		return true
	}
	return false
}

// digits reads between lo and hi ASCII digits, greedily.
func (p *numScanner) digits(lo, hi int) (int64, bool) {
	n, v := 0, int64(0)
	for p.pos+n < len(p.s) && n < hi && p.s[p.pos+n] >= '0' && p.s[p.pos+n] <= '9' {
		v = v*10 + int64(p.s[p.pos+n]-'0')
		n++
	}
	if n < lo {
		return 0, false
	}
	p.pos += n
	return v, true
}

// fraction reads lo..hi digits and returns them with their count.
func (p *numScanner) fraction(lo, hi int) (int64, int, bool) {
	start := p.pos
	v, ok := p.digits(lo, hi)
	return v, p.pos - start, ok
}

// ---------------------------------------------------------------------------
// A java.time DateTimeFormatter.ofPattern(pattern, Locale.ROOT) subset:
// parsing with the SMART resolver, as LocalDateTime.parse (falling back to
// LocalDate.parse at midnight) does in PartitionTimeExtractor.

type fieldKind int

const (
	fYear      fieldKind = iota // u: proleptic year
	fYearOfEra                  // y: year of the common era, >= 1
	fYearReduced
	fMonth
	fDay
	fDayOfYear
	fHour      // H: 0-23
	fClockHour // k: 1-24
	fHourAmPm  // K: 0-11
	fClockAmPm // h: 1-12
	fMinute
	fSecond
	fFraction
	fMonthText
	fAmPm
	fDayOfWeek
	fLiteral
	fOptional
	numKinds
)

// fmtElem is one element of a compiled pattern.
type fmtElem struct {
	kind     fieldKind
	min, max int    // digit widths of a numeric field
	text     string // literal
	sub      []fmtElem
	// subsequent is the width reserved for the fixed-width numeric fields
	// directly after this one (adjacent value parsing).
	subsequent int
}

func (e *fmtElem) numeric() bool { return e.kind <= fFraction }
func (e *fmtElem) fixed() bool   { return e.numeric() && e.min == e.max }

// javaTimeFormat is a compiled pattern.
type javaTimeFormat struct {
	elems []fmtElem
}

func compileJavaTimeFormat(pattern string) (*javaTimeFormat, error) {
	elems, rest, err := compileElems(pattern, 0)
	if err != nil {
		return nil, err
	}
	if rest != len(pattern) {
		return nil, fmt.Errorf("unbalanced ']' at %d", rest)
	}
	return &javaTimeFormat{elems: elems}, nil
}

// compileElems compiles pattern from i until the end or a ']' closing an
// optional section, returning the index after what it consumed.
func compileElems(pattern string, depth int) ([]fmtElem, int, error) {
	var out []fmtElem
	i := 0
	for i < len(pattern) {
		c := pattern[i]
		switch {
		case c == '\'':
			j := i + 1
			var lit strings.Builder
			for {
				if j >= len(pattern) {
					return nil, 0, fmt.Errorf("unterminated quote at %d", i)
				}
				if pattern[j] == '\'' {
					if j+1 < len(pattern) && pattern[j+1] == '\'' {
						lit.WriteByte('\'')
						j += 2
						continue
					}
					break
				}
				lit.WriteByte(pattern[j])
				j++
			}
			if j == i+1 {
				out = append(out, fmtElem{kind: fLiteral, text: "'"}) // '' is a quote
			} else {
				out = append(out, fmtElem{kind: fLiteral, text: lit.String()})
			}
			i = j + 1
		case c == '[':
			sub, n, err := compileElems(pattern[i+1:], depth+1)
			if err != nil {
				return nil, 0, err
			}
			if i+1+n >= len(pattern) || pattern[i+1+n] != ']' {
				// An optional section left open runs to the end.
				out = append(out, fmtElem{kind: fOptional, sub: sub})
				i = len(pattern)
				continue
			}
			out = append(out, fmtElem{kind: fOptional, sub: sub})
			i += n + 2
		case c == ']':
			if depth == 0 {
				return nil, 0, fmt.Errorf("']' without '[' at %d", i)
			}
			return linkAdjacent(out), i, nil
		case c == '{' || c == '}' || c == '#':
			return nil, 0, fmt.Errorf("reserved character %q", c)
		case (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'):
			n := 1
			for i+n < len(pattern) && pattern[i+n] == c {
				n++
			}
			e, err := letterElem(c, n)
			if err != nil {
				return nil, 0, err
			}
			out = append(out, e)
			i += n
		default:
			out = append(out, fmtElem{kind: fLiteral, text: string(c)})
			i++
		}
	}
	return linkAdjacent(out), i, nil
}

// letterElem maps a run of n pattern letters c to a field, as
// DateTimeFormatterBuilder.parseField does.
func letterElem(c byte, n int) (fmtElem, error) {
	num := func(k fieldKind) (fmtElem, error) {
		switch n {
		case 1:
			return fmtElem{kind: k, min: 1, max: 19}, nil
		case 2:
			return fmtElem{kind: k, min: 2, max: 2}, nil
		}
		return fmtElem{}, fmt.Errorf("too many pattern letters: %s", strings.Repeat(string(c), n))
	}
	switch c {
	case 'y', 'u':
		k := fYear
		if c == 'y' {
			k = fYearOfEra
		}
		switch {
		case n == 2:
			return fmtElem{kind: fYearReduced, min: 2, max: 2}, nil
		case n == 1:
			return fmtElem{kind: k, min: 1, max: 19}, nil
		default:
			return fmtElem{kind: k, min: n, max: 19}, nil
		}
	case 'M', 'L':
		switch n {
		case 1, 2:
			return num(fMonth)
		case 3, 4:
			// Locale.ROOT has no full names: MMMM prints "Jan" too.
			return fmtElem{kind: fMonthText}, nil
		}
	case 'd':
		return num(fDay)
	case 'D':
		switch n {
		case 1:
			return fmtElem{kind: fDayOfYear, min: 1, max: 19}, nil
		case 2:
			return fmtElem{kind: fDayOfYear, min: 2, max: 3}, nil
		case 3:
			return fmtElem{kind: fDayOfYear, min: 3, max: 3}, nil
		}
	case 'H':
		return num(fHour)
	case 'k':
		return num(fClockHour)
	case 'K':
		return num(fHourAmPm)
	case 'h':
		return num(fClockAmPm)
	case 'm':
		return num(fMinute)
	case 's':
		return num(fSecond)
	case 'S':
		return fmtElem{kind: fFraction, min: n, max: n}, nil
	case 'a':
		if n == 1 {
			return fmtElem{kind: fAmPm}, nil
		}
	case 'E':
		if n <= 4 { // Locale.ROOT: EEEE prints "Mon" too
			return fmtElem{kind: fDayOfWeek}, nil
		}
	}
	return fmtElem{}, fmt.Errorf("pattern letters %q are not supported", strings.Repeat(string(c), n))
}

// linkAdjacent sets the width each variable-width numeric field leaves to
// the fixed-width numeric fields that directly follow it
// (DateTimeFormatterBuilder.appendValue's adjacent value parsing).
func linkAdjacent(elems []fmtElem) []fmtElem {
	base := -1
	for i := range elems {
		e := &elems[i]
		switch {
		case e.numeric() && base >= 0 && e.fixed():
			elems[base].subsequent += e.max
		case e.numeric() && e.kind != fFraction:
			base = i
		default:
			base = -1
		}
	}
	return elems
}

// parsed holds the field values read from a string.
type parsed struct {
	set [numKinds]bool
	v   [numKinds]int64
}

func (p *parsed) put(k fieldKind, v int64) bool {
	if p.set[k] && p.v[k] != v {
		return false // conflicting values of one field
	}
	p.set[k], p.v[k] = true, v
	return true
}

// The texts of Locale.ROOT (JDK 17 CLDR data), where full and short names
// are the same.
var (
	monthNames = []string{"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"}
	dayNames   = []string{"Mon", "Tue", "Wed", "Thu", "Fri", "Sat", "Sun"}
	ampmNames  = []string{"AM", "PM"}
)

// parseElems parses s from pos; it returns the new position or -1.
func parseElems(elems []fmtElem, s string, pos int, p *parsed) int {
	for i := range elems {
		e := &elems[i]
		switch e.kind {
		case fLiteral:
			if !strings.HasPrefix(s[pos:], e.text) {
				return -1
			}
			pos += len(e.text)
		case fOptional:
			saved := *p
			if n := parseElems(e.sub, s, pos, p); n >= 0 {
				pos = n
			} else {
				*p = saved
			}
		case fMonthText, fDayOfWeek, fAmPm:
			names := dayNames
			switch e.kind {
			case fAmPm:
				names = ampmNames
			case fMonthText:
				names = monthNames
			}
			found := -1
			for j, n := range names {
				if strings.HasPrefix(s[pos:], n) {
					found = j
					break
				}
			}
			if found < 0 {
				return -1
			}
			pos += len(names[found])
			k, v := e.kind, int64(found)
			if k == fMonthText {
				k, v = fMonth, v+1
			}
			if !p.put(k, v) {
				return -1
			}
		default:
			// Count the digits there are, then leave the reserved width
			// to the adjacent fixed-width fields.
			n := 0
			for pos+n < len(s) && s[pos+n] >= '0' && s[pos+n] <= '9' {
				n++
			}
			width := min(n, e.max)
			if e.subsequent > 0 {
				width = max(e.min, min(e.max, n-e.subsequent))
			}
			if width < e.min || width > n || width > 18 {
				return -1
			}
			var v int64
			for _, d := range s[pos : pos+width] {
				v = v*10 + int64(d-'0')
			}
			k := e.kind
			switch k {
			case fYearReduced:
				k, v = fYearOfEra, 2000+v
			case fFraction:
				v *= types.Pow10(9 - width)
			}
			if !p.put(k, v) {
				return -1
			}
			pos += width
		}
	}
	return pos
}

// parse parses s completely and resolves it SMART into a LocalDateTime, or
// a LocalDate at midnight when the string has a date but no time.
func (f *javaTimeFormat) parse(s string) (time.Time, error) {
	var p parsed
	if n := parseElems(f.elems, s, 0, &p); n != len(s) {
		return time.Time{}, errUnparseable
	}
	if p.set[fYearOfEra] {
		// SMART without an era: the common era, from year 1.
		if p.v[fYearOfEra] < 1 || !p.put(fYear, p.v[fYearOfEra]) {
			return time.Time{}, errUnparseable
		}
	}
	if !p.set[fYear] {
		return time.Time{}, errUnparseable
	}
	year := p.v[fYear]
	if year < -999_999_999 || year > 999_999_999 {
		return time.Time{}, errUnparseable
	}
	var date time.Time
	switch {
	case p.set[fMonth] && p.set[fDay]:
		m, d := p.v[fMonth], p.v[fDay]
		if m < 1 || m > 12 || d < 1 || d > 31 {
			return time.Time{}, errUnparseable
		}
		// SMART: a day past the month's end becomes its last day.
		last := time.Date(int(year), time.Month(m)+1, 0, 0, 0, 0, 0, time.UTC).Day()
		date = time.Date(int(year), time.Month(m), int(min(d, int64(last))), 0, 0, 0, 0, time.UTC)
		if p.set[fDayOfYear] && int64(date.YearDay()) != p.v[fDayOfYear] {
			return time.Time{}, errUnparseable
		}
	case p.set[fDayOfYear] && !p.set[fMonth] && !p.set[fDay]:
		doy := p.v[fDayOfYear]
		days := int64(time.Date(int(year), time.December, 31, 0, 0, 0, 0, time.UTC).YearDay())
		if doy < 1 || doy > days {
			return time.Time{}, errUnparseable
		}
		date = time.Date(int(year), time.January, int(doy), 0, 0, 0, 0, time.UTC)
	default:
		return time.Time{}, errUnparseable
	}
	if p.set[fDayOfWeek] && int64((int(date.Weekday())+6)%7) != p.v[fDayOfWeek] {
		return time.Time{}, errUnparseable // Parsed.crossCheck
	}

	// The hour of day, from H, k, or K/h with a.
	hour, hasHour := int64(0), false
	if p.set[fHour] {
		hour, hasHour = p.v[fHour], true
	}
	if p.set[fClockHour] {
		ch := p.v[fClockHour]
		if ch > 24 { // SMART accepts 0 as well as 1-24
			return time.Time{}, errUnparseable
		}
		if ch == 24 {
			ch = 0
		}
		if hasHour && hour != ch {
			return time.Time{}, errUnparseable
		}
		hour, hasHour = ch, true
	}
	if p.set[fAmPm] && (p.set[fHourAmPm] || p.set[fClockAmPm]) {
		hap := p.v[fHourAmPm]
		if p.set[fClockAmPm] {
			ch := p.v[fClockAmPm]
			if ch < 1 || ch > 12 {
				return time.Time{}, errUnparseable
			}
			if ch == 12 {
				ch = 0
			}
			if p.set[fHourAmPm] && hap != ch {
				return time.Time{}, errUnparseable
			}
			hap = ch
		}
		if hap < 0 || hap > 11 {
			return time.Time{}, errUnparseable
		}
		h := p.v[fAmPm]*12 + hap
		if hasHour && hour != h {
			return time.Time{}, errUnparseable
		}
		hour, hasHour = h, true
	}
	if !hasHour {
		// No time of day: LocalDateTime.parse fails and
		// LocalDate.parse gives the date at midnight.
		return date, nil
	}
	minute, second, nanos := p.v[fMinute], p.v[fSecond], p.v[fFraction]
	// Parsed.resolveTimeLenient: missing smaller fields default to zero
	// unless a smaller one is present without the larger.
	if (!p.set[fMinute] && (p.set[fSecond] || p.set[fFraction])) || (p.set[fMinute] && !p.set[fSecond] && p.set[fFraction]) {
		return date, nil
	}
	if minute < 0 || minute > 59 || second < 0 || second > 59 {
		return time.Time{}, errUnparseable
	}
	if hour == 24 && minute == 0 && second == 0 && nanos == 0 {
		return date.AddDate(0, 0, 1), nil // SMART: 24:00 is the end of the day
	}
	if hour < 0 || hour > 23 {
		return time.Time{}, errUnparseable
	}
	return date.Add(time.Duration(hour)*time.Hour + time.Duration(minute)*time.Minute + time.Duration(second)*time.Second + time.Duration(nanos)), nil
}
