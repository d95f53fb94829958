package rowconv

import (
	"encoding/json"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
	"unsafe"

	"github.com/benthos-paimon/benthos-paimon/internal/boxes"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// Raw JSON straight to a row.
//
// A message that is still the bytes an input read is converted from those
// bytes in one pass: no map[string]any, no json.Number per field. The pass
// handles the shapes common in event streams (an object of scalar values,
// each a string, number, boolean or null) and declines everything else: a
// nested value for a column, a duplicate or (with unknown_fields: error,
// or schema evolution) unknown key, invalid UTF-8, any syntax error, any
// value its column's conversion rejects. A declined message takes the
// structured path (AsStructured, then Convert), which gives today's row or
// today's error, so the errors stay those of Convert. Where it does not
// decline, it gives exactly the row Convert gives for the same bytes
// parsed by Benthos (FuzzRawMatchesStructured checks this): every value is
// converted by the same functions, from the same json.Number text or
// decoded string.
//
// Given a slab (nil: the heap), the pass puts the row and its numbers, strings, decimals
// and timestamps in the slab's arrays (internal/boxes) instead of one heap
// allocation each: the values are the same, as any comparison or type
// switch sees them.

// maxSkipDepth bounds the nesting of the values of ignored fields the pass
// skips; deeper ones are declined (encoding/json's own limit is 10,000).
const maxSkipDepth = 100

// rawDecoder is the state of one pass over a message's bytes.
type rawDecoder struct {
	b   []byte
	i   int
	buf []byte // unescaped string bytes
}

// convertRaw converts the JSON bytes of a message into a row; ok is false
// when it declines (see above), and the caller must then convert the
// message the structured way.
func (c *Converter) convertRaw(raw []byte, slab *boxes.Slab) (row []any, ok bool) {
	d := rawDecoder{b: raw}
	d.skipSpace()
	if !d.consume('{') {
		return nil, false
	}
	row = slab.Anys(len(c.fields))
	// seen marks the columns given, to find duplicates and missing ones;
	// schemas beyond 64 columns use the slice.
	var seen uint64
	var seenBig []bool
	if len(c.fields) > 64 {
		seenBig = make([]bool, len(c.fields))
	}
	ignoreUnknown := c.opts.UnknownFields == UnknownFieldsIgnore && !c.opts.SchemaEvolution
	d.skipSpace()
	if !d.consume('}') {
		for {
			d.skipSpace()
			key, ok := d.key()
			if !ok {
				return nil, false
			}
			d.skipSpace()
			if !d.consume(':') {
				return nil, false
			}
			d.skipSpace()
			col, known := c.index[key]
			if !known {
				if !ignoreUnknown || !d.skipValue(0) {
					return nil, false
				}
			} else {
				if seenBig != nil {
					if seenBig[col] {
						return nil, false
					}
					seenBig[col] = true
				} else {
					if seen&(1<<col) != 0 {
						return nil, false
					}
					seen |= 1 << col
				}
				v, ok := c.rawValue(&d, c.fields[col].Type, slab)
				if !ok {
					return nil, false
				}
				row[col] = v
			}
			d.skipSpace()
			if d.consume(',') {
				continue
			}
			if d.consume('}') {
				break
			}
			return nil, false
		}
	}
	d.skipSpace()
	if d.i != len(d.b) {
		return nil, false // more than one document, or trailing garbage
	}
	for i := range c.fields {
		given := seen&(1<<i) != 0
		if seenBig != nil {
			given = seenBig[i]
		}
		if !given && !c.fields[i].Type.Nullable {
			return nil, false // missing: Convert names it
		}
	}
	return row, true
}

// rawValue reads the value at the decoder's position and converts it to t,
// boxing it from slab where one is given.
func (c *Converter) rawValue(d *rawDecoder, t types.DataType, slab *boxes.Slab) (any, bool) {
	if d.i >= len(d.b) {
		return nil, false
	}
	switch ch := d.b[d.i]; {
	case ch == '"':
		start := d.i + 1
		s, escaped, ok := d.str()
		if !ok {
			return nil, false
		}
		switch t.Kind {
		case types.KindChar, types.KindVarChar:
			// The scan checked the UTF-8; convString counts the characters.
			if escaped {
				if t.Length < types.MaxLength && utf8.RuneCountInString(s) > t.Length {
					return nil, false
				}
				return s, true
			}
			b := d.b[start : d.i-1]
			if t.Length < types.MaxLength && utf8.RuneCount(b) > t.Length {
				return nil, false
			}
			return slab.String(b), true
		}
		if !escaped {
			// Not retained by the conversions below but BYTES, which
			// decodes into new bytes.
			s = unsafe.String(unsafe.SliceData(d.b[start:]), d.i-1-start)
		}
		switch t.Kind {
		case types.KindDecimal:
			v, reason := decimalFromText(t, trimSpace(s), slab)
			return v, reason == ""
		case types.KindTimestamp, types.KindLocalZonedTimestamp:
			if s := trimSpace(s); isDateText(s) {
				v, err := timestampFromText(t, s)
				if err != nil {
					return nil, false
				}
				return slab.Timestamp(v), true
			}
		}
		v, err := c.value(t, s, true)
		return v, err == nil
	case ch == '-' || (ch >= '0' && ch <= '9'):
		text, ok := d.number()
		if !ok {
			return nil, false
		}
		switch t.Kind {
		case types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt:
			if n, err := strconv.ParseInt(text, 10, 64); err == nil {
				r := intRanges[t.Kind]
				if n < r[0] || n > r[1] {
					return nil, false
				}
				switch t.Kind {
				case types.KindTinyInt:
					return int8(n), true
				case types.KindSmallInt:
					return int16(n), true
				case types.KindInt:
					return slab.Int32(int32(n)), true
				}
				return slab.Int64(n), true
			}
		case types.KindDecimal:
			v, reason := decimalFromText(t, text, slab)
			return v, reason == ""
		case types.KindChar, types.KindVarChar:
			// convString keeps the number's text: copy it out of the message.
			text = strings.Clone(text)
		}
		v, err := c.value(t, json.Number(text), true)
		return v, err == nil
	case ch == 't' || ch == 'f':
		b, ok := d.boolean()
		if !ok {
			return nil, false
		}
		v, err := c.value(t, b, true)
		return v, err == nil
	case ch == 'n':
		if !d.literal("null") || !t.Nullable {
			return nil, false
		}
		return nil, true
	}
	return nil, false // object or array: the structured path
}

func (d *rawDecoder) skipSpace() {
	for d.i < len(d.b) {
		switch d.b[d.i] {
		case ' ', '\t', '\n', '\r':
			d.i++
		default:
			return
		}
	}
}

func (d *rawDecoder) consume(c byte) bool {
	if d.i < len(d.b) && d.b[d.i] == c {
		d.i++
		return true
	}
	return false
}

func (d *rawDecoder) literal(s string) bool {
	if len(d.b)-d.i < len(s) || string(d.b[d.i:d.i+len(s)]) != s {
		return false
	}
	d.i += len(s)
	return true
}

func (d *rawDecoder) boolean() (bool, bool) {
	if d.literal("true") {
		return true, true
	}
	return false, d.literal("false")
}

// key reads an object key. The string shares the message's bytes or the
// decoder's buffer: it is only looked up, never kept.
func (d *rawDecoder) key() (string, bool) {
	if d.i >= len(d.b) || d.b[d.i] != '"' {
		return "", false
	}
	start := d.i + 1
	s, escaped, ok := d.str()
	if !ok {
		return "", false
	}
	if !escaped {
		return unsafe.String(unsafe.SliceData(d.b[start:]), d.i-1-start), true
	}
	return s, true
}

// str reads a JSON string at the decoder's position (its opening quote).
// Without escapes it returns escaped false and no string: the caller takes
// the bytes between the quotes. It declines invalid UTF-8 (which
// encoding/json would replace with U+FFFD), control characters and escaped
// surrogates that are not a valid pair (also replaced by encoding/json).
func (d *rawDecoder) str() (s string, escaped, ok bool) {
	d.i++ // the quote
	start := d.i
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			return "", false, true
		case c == '\\':
			return d.escapedStr(start)
		case c < 0x20:
			return "", false, false
		case c < utf8.RuneSelf:
			d.i++
		default:
			r, n := utf8.DecodeRune(d.b[d.i:])
			if r == utf8.RuneError && n == 1 {
				return "", false, false
			}
			d.i += n
		}
	}
	return "", false, false
}

// escapedStr continues str from the first backslash, unescaping into buf.
func (d *rawDecoder) escapedStr(start int) (string, bool, bool) {
	d.buf = append(d.buf[:0], d.b[start:d.i]...)
	for d.i < len(d.b) {
		c := d.b[d.i]
		switch {
		case c == '"':
			d.i++
			return string(d.buf), true, true
		case c == '\\':
			if d.i+1 >= len(d.b) {
				return "", false, false
			}
			e := d.b[d.i+1]
			d.i += 2
			switch e {
			case '"', '\\', '/':
				d.buf = append(d.buf, e)
			case 'b':
				d.buf = append(d.buf, '\b')
			case 'f':
				d.buf = append(d.buf, '\f')
			case 'n':
				d.buf = append(d.buf, '\n')
			case 'r':
				d.buf = append(d.buf, '\r')
			case 't':
				d.buf = append(d.buf, '\t')
			case 'u':
				r, ok := d.hex4()
				if !ok {
					return "", false, false
				}
				if utf16.IsSurrogate(r) {
					if !d.literal(`\u`) {
						return "", false, false
					}
					r2, ok := d.hex4()
					if !ok {
						return "", false, false
					}
					if r = utf16.DecodeRune(r, r2); r == utf8.RuneError {
						return "", false, false
					}
				}
				d.buf = utf8.AppendRune(d.buf, r)
			default:
				return "", false, false
			}
		case c < 0x20:
			return "", false, false
		case c < utf8.RuneSelf:
			d.buf = append(d.buf, c)
			d.i++
		default:
			r, n := utf8.DecodeRune(d.b[d.i:])
			if r == utf8.RuneError && n == 1 {
				return "", false, false
			}
			d.buf = append(d.buf, d.b[d.i:d.i+n]...)
			d.i += n
		}
	}
	return "", false, false
}

func (d *rawDecoder) hex4() (rune, bool) {
	if len(d.b)-d.i < 4 {
		return 0, false
	}
	var r rune
	for _, c := range d.b[d.i : d.i+4] {
		switch {
		case c >= '0' && c <= '9':
			r = r<<4 | rune(c-'0')
		case c >= 'a' && c <= 'f':
			r = r<<4 | rune(c-'a'+10)
		case c >= 'A' && c <= 'F':
			r = r<<4 | rune(c-'A'+10)
		default:
			return 0, false
		}
	}
	d.i += 4
	return r, true
}

// number reads a JSON number (RFC 8259 grammar) and returns its text,
// which shares the message's bytes.
func (d *rawDecoder) number() (string, bool) {
	start := d.i
	d.consume('-')
	switch {
	case d.consume('0'):
	case d.i < len(d.b) && d.b[d.i] >= '1' && d.b[d.i] <= '9':
		d.digits()
	default:
		return "", false
	}
	if d.consume('.') {
		if d.digits() == 0 {
			return "", false
		}
	}
	if d.consume('e') || d.consume('E') {
		if !d.consume('+') {
			d.consume('-')
		}
		if d.digits() == 0 {
			return "", false
		}
	}
	return unsafe.String(unsafe.SliceData(d.b[start:]), d.i-start), true
}

func (d *rawDecoder) digits() int {
	start := d.i
	for d.i < len(d.b) && d.b[d.i] >= '0' && d.b[d.i] <= '9' {
		d.i++
	}
	return d.i - start
}

// skipValue checks and skips any JSON value (an ignored field's).
func (d *rawDecoder) skipValue(depth int) bool {
	if d.i >= len(d.b) || depth > maxSkipDepth {
		return false
	}
	switch ch := d.b[d.i]; {
	case ch == '"':
		_, _, ok := d.str()
		return ok
	case ch == '-' || (ch >= '0' && ch <= '9'):
		_, ok := d.number()
		return ok
	case ch == 't' || ch == 'f':
		_, ok := d.boolean()
		return ok
	case ch == 'n':
		return d.literal("null")
	case ch == '[':
		d.i++
		d.skipSpace()
		if d.consume(']') {
			return true
		}
		for {
			d.skipSpace()
			if !d.skipValue(depth + 1) {
				return false
			}
			d.skipSpace()
			if d.consume(']') {
				return true
			}
			if !d.consume(',') {
				return false
			}
		}
	case ch == '{':
		d.i++
		d.skipSpace()
		if d.consume('}') {
			return true
		}
		for {
			d.skipSpace()
			if _, _, ok := d.str0(); !ok {
				return false
			}
			d.skipSpace()
			if !d.consume(':') {
				return false
			}
			d.skipSpace()
			if !d.skipValue(depth + 1) {
				return false
			}
			d.skipSpace()
			if d.consume('}') {
				return true
			}
			if !d.consume(',') {
				return false
			}
		}
	}
	return false
}

// str0 is str for a value that must start with a quote.
func (d *rawDecoder) str0() (string, bool, bool) {
	if d.i >= len(d.b) || d.b[d.i] != '"' {
		return "", false, false
	}
	return d.str()
}
