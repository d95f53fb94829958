package rowconv

import (
	"errors"
	"fmt"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// dateTimeText is a date or date-time read from text.
type dateTimeText struct {
	year, month, day int
	hour, min, sec   int
	nanos            int // nanoseconds of the second
	hasTime          bool
	offsetSec        int // UTC offset in seconds, when hasOffset
	hasOffset        bool
}

var (
	errDateSyntax = errors.New("expected YYYY-MM-DD")
	errTimeSyntax = errors.New("expected HH:MM[:SS[.fraction]]")
)

// parseDateTimeText reads RFC 3339 text and its common relatives:
//
//	YYYY-MM-DD
//	YYYY-MM-DD(T|t| )HH:MM[:SS[.f{1,9}]][Z|z|±HH:MM|±HHMM|±HH]
//
// Without an offset the text is a wall clock; callers read it as UTC.
func parseDateTimeText(s string) (dateTimeText, error) {
	var t dateTimeText
	var err error
	if t.year, t.month, t.day, err = parseDatePart(s); err != nil {
		return t, err
	}
	rest := s[10:]
	if rest == "" {
		return t, nil
	}
	if c := rest[0]; c != 'T' && c != 't' && c != ' ' {
		return t, errors.New("expected 'T' or a space after the date")
	}
	rest = rest[1:]
	n, err := parseClock(rest, &t.hour, &t.min, &t.sec, &t.nanos)
	if err != nil {
		return t, err
	}
	t.hasTime = true
	rest = rest[n:]
	if rest == "" {
		return t, nil
	}
	off, err := parseOffset(rest)
	if err != nil {
		return t, err
	}
	t.offsetSec, t.hasOffset = off, true
	return t, nil
}

// parseDatePart reads YYYY-MM-DD at the start of s and validates the day.
func parseDatePart(s string) (y, m, d int, err error) {
	if len(s) < 10 || s[4] != '-' || s[7] != '-' {
		return 0, 0, 0, errDateSyntax
	}
	var ok1, ok2, ok3 bool
	y, ok1 = digitsAt(s, 0, 4)
	m, ok2 = digitsAt(s, 5, 2)
	d, ok3 = digitsAt(s, 8, 2)
	if !ok1 || !ok2 || !ok3 {
		return 0, 0, 0, errDateSyntax
	}
	if m < 1 || m > 12 {
		return 0, 0, 0, fmt.Errorf("month %d out of range", m)
	}
	if d < 1 || d > types.DaysInMonth(y, m) {
		return 0, 0, 0, fmt.Errorf("day %d out of range for %04d-%02d", d, y, m)
	}
	return y, m, d, nil
}

// parseClock reads HH:MM[:SS[.f{1,9}]] at the start of s and returns the
// number of bytes read.
func parseClock(s string, h, mi, sec, nanos *int) (int, error) {
	if len(s) < 5 || s[2] != ':' {
		return 0, errTimeSyntax
	}
	var ok1, ok2 bool
	*h, ok1 = digitsAt(s, 0, 2)
	*mi, ok2 = digitsAt(s, 3, 2)
	if !ok1 || !ok2 {
		return 0, errTimeSyntax
	}
	n := 5
	*sec, *nanos = 0, 0
	if n < len(s) && s[n] == ':' {
		var ok bool
		if *sec, ok = digitsAt(s, n+1, 2); !ok {
			return 0, errTimeSyntax
		}
		n += 3
		if n < len(s) && s[n] == '.' {
			n++
			start := n
			for n < len(s) && s[n] >= '0' && s[n] <= '9' {
				n++
			}
			digits := n - start
			if digits == 0 {
				return 0, errors.New("expected digits after '.'")
			}
			if digits > 9 {
				return 0, errors.New("more than 9 fraction digits")
			}
			f, _ := digitsAt(s, start, digits)
			for i := digits; i < 9; i++ {
				f *= 10
			}
			*nanos = f
		}
	}
	if *h > 23 || *mi > 59 || *sec > 59 {
		return 0, fmt.Errorf("time %02d:%02d:%02d out of range", *h, *mi, *sec)
	}
	return n, nil
}

// parseOffset reads Z, z, ±HH:MM, ±HHMM or ±HH, which must be all of s.
func parseOffset(s string) (int, error) {
	if s == "Z" || s == "z" {
		return 0, nil
	}
	if s[0] != '+' && s[0] != '-' {
		return 0, fmt.Errorf("unexpected %q after the time", s)
	}
	var hh, mm int
	var ok bool
	switch len(s) {
	case 3:
		hh, ok = digitsAt(s, 1, 2)
	case 5:
		var ok2 bool
		hh, ok = digitsAt(s, 1, 2)
		mm, ok2 = digitsAt(s, 3, 2)
		ok = ok && ok2
	case 6:
		var ok2 bool
		hh, ok = digitsAt(s, 1, 2)
		mm, ok2 = digitsAt(s, 4, 2)
		ok = ok && ok2 && s[3] == ':'
	}
	if !ok || hh > 23 || mm > 59 {
		return 0, fmt.Errorf("invalid UTC offset %q", s)
	}
	off := hh*3600 + mm*60
	if s[0] == '-' {
		off = -off
	}
	return off, nil
}

// digitsAt reads n decimal digits at s[i:].
func digitsAt(s string, i, n int) (int, bool) {
	if i+n > len(s) {
		return 0, false
	}
	v := 0
	for _, c := range []byte(s[i : i+n]) {
		if c < '0' || c > '9' {
			return 0, false
		}
		v = v*10 + int(c-'0')
	}
	return v, true
}

// Supported range of DATE and TIMESTAMP values: the years 0000 to 9999, the
// years a four-digit RFC 3339 text can spell, so that every value we write
// renders back to text that we read.
var (
	minEpochDay    = types.EpochDay(0, 1, 1)
	maxEpochDay    = types.EpochDay(9999, 12, 31)
	minEpochMillis = minEpochDay * 86400000
	maxEpochMillis = (maxEpochDay+1)*86400000 - 1
)

// epochMillis returns the UTC epoch milliseconds of the text's instant (a
// wall clock without offset is read as UTC) and the nanoseconds within the
// millisecond.
func (t dateTimeText) epochMillis() (int64, int32) {
	ms := types.EpochDay(t.year, t.month, t.day)*86400000 +
		int64(t.hour)*3600000 + int64(t.min)*60000 + int64(t.sec)*1000 +
		int64(t.nanos/1e6) - int64(t.offsetSec)*1000
	return ms, int32(t.nanos % 1e6)
}
