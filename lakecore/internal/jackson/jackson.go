// Package jackson writes JSON byte for byte as Java Paimon does: Jackson's
// ObjectMapper with its DefaultPrettyPrinter (JsonSerdeUtil.toJson in
// apache/paimon: paimon-api/src/main/java/org/apache/paimon/utils/JsonSerdeUtil.java).
//
// The layout, from Jackson's DefaultPrettyPrinter with its default indenters
// (objects: DefaultIndenter, two spaces and "\n"; arrays: FixedSpaceIndenter,
// one space):
//
//	{
//	  "version" : 3,
//	  "fields" : [ {
//	    "id" : 0
//	  }, {
//	    "id" : 1
//	  } ],
//	  "keys" : [ "a", "b" ],
//	  "empty" : [ ],
//	  "options" : { }
//	}
//
// Only objects indent; an array never adds a level. There is no trailing
// newline. Strings are escaped as Jackson's default character escapes do:
// '"', '\\', the short forms \b \t \n \f \r, other control characters as
// \u00XX with upper-case hex, and everything else (including '/', '<', '>',
// '&' and non-ASCII) written as UTF-8.
package jackson

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// Pretty re-indents one JSON value the way Jackson's DefaultPrettyPrinter
// writes it. Key order and number literals are kept exactly; strings are
// re-escaped with Jackson's rules. Invalid JSON, or trailing data after the
// value, is an error.
func Pretty(data []byte) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	out := make([]byte, 0, len(data)+len(data)/2)
	tok, err := dec.Token()
	if err != nil {
		return nil, fmt.Errorf("jackson pretty print: %w", err)
	}
	out, err = writeValue(dec, out, tok, 0)
	if err != nil {
		return nil, fmt.Errorf("jackson pretty print: %w", err)
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("jackson pretty print: trailing data after the JSON value")
	}
	return out, nil
}

// Marshal encodes v with encoding/json and prints it with Pretty. Use it for
// values whose encoding/json key order already is Java's.
func Marshal(v any) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return Pretty(b)
}

func indent(out []byte, level int) []byte {
	out = append(out, '\n')
	for i := 0; i < level; i++ {
		out = append(out, ' ', ' ')
	}
	return out
}

// writeValue writes the value that starts with tok. level is the number of
// enclosing objects: DefaultPrettyPrinter counts object nesting only,
// because the array indenter is inline.
func writeValue(dec *json.Decoder, out []byte, tok json.Token, level int) ([]byte, error) {
	var err error
	switch v := tok.(type) {
	case json.Delim:
		switch v {
		case '{':
			out = append(out, '{')
			n := 0
			for dec.More() {
				key, err := objectKey(dec)
				if err != nil {
					return nil, err
				}
				if n > 0 {
					out = append(out, ',')
				}
				out = indent(out, level+1)
				out = AppendString(out, key)
				out = append(out, " : "...)
				vt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				if out, err = writeValue(dec, out, vt, level+1); err != nil {
					return nil, err
				}
				n++
			}
			if _, err := dec.Token(); err != nil { // '}'
				return nil, err
			}
			if n > 0 {
				out = indent(out, level)
			} else {
				out = append(out, ' ')
			}
			return append(out, '}'), nil
		case '[':
			out = append(out, '[')
			n := 0
			for dec.More() {
				if n > 0 {
					out = append(out, ',')
				}
				out = append(out, ' ')
				vt, err := dec.Token()
				if err != nil {
					return nil, err
				}
				if out, err = writeValue(dec, out, vt, level); err != nil {
					return nil, err
				}
				n++
			}
			if _, err := dec.Token(); err != nil { // ']'
				return nil, err
			}
			return append(out, ' ', ']'), nil
		default:
			return nil, fmt.Errorf("unexpected %q", rune(v))
		}
	case string:
		return AppendString(out, v), nil
	case json.Number:
		return append(out, v...), nil
	case bool:
		if v {
			return append(out, "true"...), nil
		}
		return append(out, "false"...), nil
	case nil:
		return append(out, "null"...), nil
	default:
		err = fmt.Errorf("unexpected token %T", tok)
	}
	return nil, err
}

// objectKey reads the next key of an object.
func objectKey(dec *json.Decoder) (string, error) {
	kt, err := dec.Token()
	if err != nil {
		return "", err
	}
	key, ok := kt.(string)
	if !ok {
		return "", fmt.Errorf("object key is %T", kt)
	}
	return key, nil
}

const hexUpper = "0123456789ABCDEF"

// AppendString appends s as a JSON string literal escaped as Jackson escapes
// it by default (CharTypes.sOutputEscapes128 with upper-case hex). s should
// be valid UTF-8; it is copied through unchanged otherwise.
func AppendString(dst []byte, s string) []byte {
	dst = append(dst, '"')
	start := 0
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c >= 0x20 && c != '"' && c != '\\' {
			continue
		}
		dst = append(dst, s[start:i]...)
		switch c {
		case '"':
			dst = append(dst, '\\', '"')
		case '\\':
			dst = append(dst, '\\', '\\')
		case '\b':
			dst = append(dst, '\\', 'b')
		case '\t':
			dst = append(dst, '\\', 't')
		case '\n':
			dst = append(dst, '\\', 'n')
		case '\f':
			dst = append(dst, '\\', 'f')
		case '\r':
			dst = append(dst, '\\', 'r')
		default:
			dst = append(dst, '\\', 'u', '0', '0', hexUpper[c>>4], hexUpper[c&0xF])
		}
		start = i + 1
	}
	dst = append(dst, s[start:]...)
	return append(dst, '"')
}

// Object builds a compact JSON object with keys in the order they are
// added, for serializers that must follow Java's field order. Print the
// result with Pretty.
type Object struct {
	buf []byte
	n   int
}

func (o *Object) key(k string) {
	if o.n == 0 {
		o.buf = append(o.buf, '{')
	} else {
		o.buf = append(o.buf, ',')
	}
	o.n++
	o.buf = AppendString(o.buf, k)
	o.buf = append(o.buf, ':')
}

// Raw adds a key whose value is already-encoded JSON.
func (o *Object) Raw(k string, raw []byte) { o.key(k); o.buf = append(o.buf, raw...) }

// String adds a string value.
func (o *Object) String(k, v string) { o.key(k); o.buf = AppendString(o.buf, v) }

// Int adds an integer value.
func (o *Object) Int(k string, v int64) {
	o.key(k)
	o.buf = fmt.Appendf(o.buf, "%d", v)
}

// Null adds a null value.
func (o *Object) Null(k string) { o.key(k); o.buf = append(o.buf, "null"...) }

// Bytes returns the object's compact encoding ("{}" when empty).
func (o *Object) Bytes() []byte {
	if o.n == 0 {
		return []byte("{}")
	}
	return append(o.buf[:len(o.buf):len(o.buf)], '}')
}

// Member is one key and its raw value in a JSON object.
type Member struct {
	Key   string
	Value json.RawMessage
}

// Members splits a JSON object into its members in document order. A key
// that appears twice keeps its first position and its last value, as
// Jackson's ObjectNode does. It fails unless data is a single JSON object.
func Members(data []byte) ([]Member, error) {
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.UseNumber()
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	if d, ok := tok.(json.Delim); !ok || d != '{' {
		return nil, errors.New("not a JSON object")
	}
	var ms []Member
	pos := map[string]int{}
	for dec.More() {
		key, err := objectKey(dec)
		if err != nil {
			return nil, err
		}
		var raw json.RawMessage
		if err := dec.Decode(&raw); err != nil {
			return nil, err
		}
		if i, dup := pos[key]; dup {
			ms[i].Value = raw
			continue
		}
		pos[key] = len(ms)
		ms = append(ms, Member{Key: key, Value: raw})
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("trailing data after the JSON object")
	}
	return ms, nil
}
