//go:build interop

package interop

import (
	"encoding/base64"
	"fmt"
	"math"
	"sort"
	"strconv"
	"strings"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// The canonical JSON form of README.md "Canonical JSON", in Go: one line per
// row, an object keyed by column name in schema order, no spaces.

// canonicalRow renders one row of Go values (lakecore/types) as a canonical
// line.
func canonicalRow(fields []types.DataField, row []any) (string, error) {
	if len(row) != len(fields) {
		return "", fmt.Errorf("row has %d values for %d columns", len(row), len(fields))
	}
	var b strings.Builder
	err := writeObject(&b, len(fields), func(i int) string { return fields[i].Name }, func(i int) error {
		if err := canonicalValue(&b, fields[i].Type, row[i]); err != nil {
			return fmt.Errorf("column %q: %w", fields[i].Name, err)
		}
		return nil
	})
	return b.String(), err
}

// writeObject writes a canonical JSON object of n members, in order: the
// name of member i is name(i), its value what value(i) writes to b.
func writeObject(b *strings.Builder, n int, name func(int) string, value func(int) error) error {
	b.WriteByte('{')
	for i := range n {
		if i > 0 {
			b.WriteByte(',')
		}
		quote(b, name(i))
		b.WriteByte(':')
		if err := value(i); err != nil {
			return err
		}
	}
	b.WriteByte('}')
	return nil
}

// canonicalRows renders rows and sorts the lines by code point.
func canonicalRows(fields []types.DataField, rows [][]any) ([]string, error) {
	out := make([]string, len(rows))
	for i, r := range rows {
		l, err := canonicalRow(fields, r)
		if err != nil {
			return nil, fmt.Errorf("row %d: %w", i, err)
		}
		out[i] = l
	}
	sortCodePoints(out)
	return out, nil
}

func canonicalValue(b *strings.Builder, t types.DataType, v any) error {
	if v == nil {
		b.WriteString("null")
		return nil
	}
	bad := func() error { return fmt.Errorf("Go value %T (%v) for %s", v, v, t) }
	switch t.Kind {
	case types.KindBoolean:
		x, ok := v.(bool)
		if !ok {
			return bad()
		}
		b.WriteString(strconv.FormatBool(x))
	case types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt:
		var n int64
		switch x := v.(type) {
		case int8:
			n = int64(x)
		case int16:
			n = int64(x)
		case int32:
			n = int64(x)
		case int64:
			n = x
		default:
			return bad()
		}
		b.WriteString(strconv.FormatInt(n, 10))
	case types.KindFloat:
		x, ok := v.(float32)
		if !ok {
			return bad()
		}
		b.WriteString(canonicalFloat(float64(x), 32))
	case types.KindDouble:
		x, ok := v.(float64)
		if !ok {
			return bad()
		}
		b.WriteString(canonicalFloat(x, 64))
	case types.KindDecimal:
		x, ok := v.(types.Decimal)
		if !ok {
			return bad()
		}
		s, err := decimalText(x, t.Scale)
		if err != nil {
			return err
		}
		quote(b, s)
	case types.KindChar, types.KindVarChar:
		x, ok := v.(string)
		if !ok {
			return bad()
		}
		quote(b, x)
	case types.KindBinary, types.KindVarBinary:
		x, ok := v.([]byte)
		if !ok {
			return bad()
		}
		quote(b, base64.StdEncoding.EncodeToString(x))
	case types.KindDate:
		x, ok := v.(types.Date)
		if !ok {
			return bad()
		}
		y, m, d := civil(int64(x))
		quote(b, fmt.Sprintf("%04d-%02d-%02d", y, m, d))
	case types.KindTime:
		x, ok := v.(types.Time)
		if !ok {
			return bad()
		}
		ms := int64(x)
		quote(b, fmt.Sprintf("%02d:%02d:%02d.%03d", ms/3600000, ms/60000%60, ms/1000%60, ms%1000))
	case types.KindTimestamp, types.KindLocalZonedTimestamp:
		x, ok := v.(types.Timestamp)
		if !ok {
			return bad()
		}
		quote(b, timestampText(x, t.Kind == types.KindLocalZonedTimestamp))
	case types.KindArray:
		x, ok := v.([]any)
		if !ok {
			return bad()
		}
		b.WriteByte('[')
		for i, e := range x {
			if i > 0 {
				b.WriteByte(',')
			}
			if err := canonicalValue(b, *t.Element, e); err != nil {
				return fmt.Errorf("element %d: %w", i, err)
			}
		}
		b.WriteByte(']')
	case types.KindMap, types.KindMultiset:
		x, ok := v.(types.Map)
		if !ok || len(x.Keys) != len(x.Values) {
			return bad()
		}
		kt, vt := t.Key, t.Value
		if t.Kind == types.KindMultiset {
			it := types.IntType().NotNull()
			kt, vt = t.Element, &it
		}
		type pair struct{ k, v string }
		pairs := make([]pair, len(x.Keys))
		for i := range x.Keys {
			var kb, vb strings.Builder
			if err := canonicalValue(&kb, *kt, x.Keys[i]); err != nil {
				return fmt.Errorf("key %d: %w", i, err)
			}
			if err := canonicalValue(&vb, *vt, x.Values[i]); err != nil {
				return fmt.Errorf("value %d: %w", i, err)
			}
			pairs[i] = pair{kb.String(), vb.String()}
		}
		// by the canonical text of the key, then of the value (code points)
		sort.Slice(pairs, func(i, j int) bool {
			if pairs[i].k != pairs[j].k {
				return pairs[i].k < pairs[j].k
			}
			return pairs[i].v < pairs[j].v
		})
		b.WriteByte('[')
		for i, p := range pairs {
			if i > 0 {
				b.WriteByte(',')
			}
			b.WriteByte('[')
			b.WriteString(p.k)
			b.WriteByte(',')
			b.WriteString(p.v)
			b.WriteByte(']')
		}
		b.WriteByte(']')
	case types.KindRow:
		x, ok := v.([]any)
		if !ok || len(x) != len(t.Fields) {
			return bad()
		}
		return writeObject(b, len(x), func(i int) string { return t.Fields[i].Name }, func(i int) error {
			if err := canonicalValue(b, t.Fields[i].Type, x[i]); err != nil {
				return fmt.Errorf("field %q: %w", t.Fields[i].Name, err)
			}
			return nil
		})
	default:
		return fmt.Errorf("no canonical form for %s", t)
	}
	return nil
}

// quote writes s as a JSON string the way Python's json.dumps(ensure_ascii=
// False) does: \" \\ \b \f \n \r \t, other characters below U+0020 as
// \u00xx (lower-case hex), everything else literal (including U+2028,
// which encoding/json would escape).
func quote(b *strings.Builder, s string) {
	b.WriteByte('"')
	for _, r := range s {
		switch r {
		case '"':
			b.WriteString(`\"`)
		case '\\':
			b.WriteString(`\\`)
		case '\b':
			b.WriteString(`\b`)
		case '\f':
			b.WriteString(`\f`)
		case '\n':
			b.WriteString(`\n`)
		case '\r':
			b.WriteString(`\r`)
		case '\t':
			b.WriteString(`\t`)
		default:
			if r < 0x20 {
				fmt.Fprintf(b, `\u%04x`, r)
			} else {
				b.WriteRune(r)
			}
		}
	}
	b.WriteByte('"')
}

// decimalText is the plain text of d with exactly scale fraction digits (the
// column's scale); a value that needs rounding is an error.
func decimalText(d types.Decimal, scale int) (string, error) {
	if d.Unscaled == nil {
		return "", fmt.Errorf("decimal without an unscaled value")
	}
	if d.Scale != scale {
		r, err := types.DecimalFromRat(d.Rat(), 1000, scale)
		if err != nil {
			return "", err
		}
		d = r
	}
	return d.String(), nil
}

// civil returns the proleptic Gregorian date of a day count since 1970-01-01
// (H. Hinnant's days_from_civil inverse), as java.time.LocalDate does.
func civil(days int64) (y int64, m, d int) {
	z := days + 719468
	era := z / 146097
	if z < 0 && z%146097 != 0 {
		era--
	}
	doe := z - era*146097
	yoe := (doe - doe/1460 + doe/36524 - doe/146096) / 365
	y = yoe + era*400
	doy := doe - (365*yoe + yoe/4 - yoe/100)
	mp := (5*doy + 2) / 153
	d = int(doy - (153*mp+2)/5 + 1)
	if mp < 10 {
		m = int(mp + 3)
	} else {
		m = int(mp - 9)
	}
	if m <= 2 {
		y++
	}
	return y, m, d
}

func floorDivMod(a, b int64) (q, r int64) {
	q, r = a/b, a%b
	if r != 0 && (r < 0) != (b < 0) {
		q--
		r += b
	}
	return q, r
}

// timestampText is YYYY-MM-DDTHH:MM:SS.nnnnnnnnn, plus Z for LTZ.
func timestampText(ts types.Timestamp, ltz bool) string {
	sec, ms := floorDivMod(ts.Millis, 1000)
	days, sod := floorDivMod(sec, 86400)
	y, m, d := civil(days)
	s := fmt.Sprintf("%04d-%02d-%02dT%02d:%02d:%02d.%09d", y, m, d, sod/3600, sod/60%60, sod%60, ms*1_000_000+int64(ts.NanoOfMilli))
	if ltz {
		s += "Z"
	}
	return s
}

// canonicalFloat renders a FLOAT (bits 32) or DOUBLE (bits 64) as Java's
// Float/Double.toString specified since JDK 19: the shortest decimal that
// rounds to the value, the closest of those; when that has one digit, the
// closest of the one- or two-digit decimals; plain for 1e-3 <= |v| < 1e7
// with at least one fraction digit, else computerized scientific notation
// (d.dddE[-]n). NaN and the infinities are JSON strings.
func canonicalFloat(v float64, bits int) string {
	switch {
	case math.IsNaN(v):
		return `"NaN"`
	case math.IsInf(v, 1):
		return `"Infinity"`
	case math.IsInf(v, -1):
		return `"-Infinity"`
	case v == 0:
		if math.Signbit(v) {
			return "-0.0"
		}
		return "0.0"
	}
	digits, exp := floatDigits(v, bits, -1)
	if len(digits) == 1 {
		// Java prefers a closer two-digit decimal (4.9E-324, not 5.0E-324)
		if d2, e2 := floatDigits(v, bits, 1); roundTrips(d2, e2, v, bits) {
			digits, exp = strings.TrimRight(d2, "0"), e2
			if digits == "" {
				digits = "0"
			}
		}
	}
	var b strings.Builder
	if v < 0 {
		b.WriteByte('-')
	}
	if exp >= -3 && exp < 7 {
		if exp >= 0 {
			if len(digits) <= exp+1 {
				b.WriteString(digits)
				b.WriteString(strings.Repeat("0", exp+1-len(digits)))
				b.WriteString(".0")
			} else {
				b.WriteString(digits[:exp+1])
				b.WriteByte('.')
				b.WriteString(digits[exp+1:])
			}
		} else {
			b.WriteString("0.")
			b.WriteString(strings.Repeat("0", -exp-1))
			b.WriteString(digits)
		}
		return b.String()
	}
	b.WriteByte(digits[0])
	b.WriteByte('.')
	if len(digits) > 1 {
		b.WriteString(digits[1:])
	} else {
		b.WriteByte('0')
	}
	b.WriteByte('E')
	b.WriteString(strconv.Itoa(exp))
	return b.String()
}

// floatDigits returns the significant digits of |v| (without trailing zeros
// for the shortest form) and the decimal exponent of the first one:
// |v| ~ d.ddd x 10^exp. prec -1 is the shortest round-tripping form.
func floatDigits(v float64, bits, prec int) (string, int) {
	s := strconv.FormatFloat(math.Abs(v), 'e', prec, bits) // d.ddde±XX
	mant, e, _ := strings.Cut(s, "e")
	exp, _ := strconv.Atoi(e)
	return strings.Replace(mant, ".", "", 1), exp
}

func roundTrips(digits string, exp int, v float64, bits int) bool {
	s := digits[:1] + "." + digits[1:] + "e" + strconv.Itoa(exp)
	f, err := strconv.ParseFloat(s, bits)
	if err != nil {
		return false
	}
	return f == math.Abs(v)
}
