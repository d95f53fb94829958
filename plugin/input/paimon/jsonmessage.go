package paimon

import (
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"math"
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/internal/boxes"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
	"github.com/benthos-paimon/benthos-paimon/plugin/internal/rowconv"
)

// JSON messages (message_format: json).
//
// A row becomes a message whose bytes are the JSON text its structured
// message (messageBuilder.message) would serialise to when an output asks
// for its bytes: Benthos encodes a structured value with encoding/json,
// HTML escaping off, so object keys come sorted bytewise, floats in
// encoding/json's ES6 form, strings escaped as encoding/json escapes them.
// The scalar values common in event rows are written directly; nested
// values (ARRAY, MAP, MULTISET, ROW) are rendered as in structured mode and
// encoded with encoding/json itself. TestJSONMessageMatchesStructured pins
// the equality for every type.

// jsonChunk is the size of the byte arrays JSON messages share: a
// message's bytes are a slice of one (capacity cut to its length), so that
// a batch's messages cost one allocation per chunk, not one each.
const jsonChunk = 64 << 10

// jsonKeys returns, for fields, the column indexes in the order
// encoding/json writes a map's keys (bytewise) and each key encoded with
// its colon.
func jsonKeys(fields []types.DataField) (order []int, keys [][]byte) {
	order = make([]int, len(fields))
	for i := range order {
		order[i] = i
	}
	slices.SortFunc(order, func(a, b int) int { return strings.Compare(fields[a].Name, fields[b].Name) })
	keys = make([][]byte, len(fields))
	for i, f := range fields {
		keys[i] = append(appendJSONString(nil, f.Name), ':')
	}
	return order, keys
}

// rowScratch is what one goroutine's rendering reuses between rows: the
// slab of per-row boxes, the current chunk of JSON bytes, and an
// encoding/json encoder for nested values. The zero value is ready for
// use; it is not safe for concurrent use.
type rowScratch struct {
	slab  boxes.Slab
	chunk []byte
	buf   bytes.Buffer
	enc   *json.Encoder
}

// jsonMessage renders row (values in fields order, as many as fields:
// message checks) as a JSON message with metadata mv and position pos;
// errors are those of message.
func (b *messageBuilder) jsonMessage(row []any, mv *metaValues, pos int64, kind kv.RowKind, s *rowScratch) (*service.Message, error) {
	if cap(s.chunk)-len(s.chunk) < jsonChunk/16 {
		s.chunk = make([]byte, 0, jsonChunk)
	}
	start := len(s.chunk)
	out := append(s.chunk, '{')
	for n, i := range b.order {
		if n > 0 {
			out = append(out, ',')
		}
		out = append(out, b.keys[i]...)
		var err error
		if out, err = b.appendValue(out, &b.fields[i], row[i], s); err != nil {
			return nil, fmt.Errorf("render field %q: %w", b.fields[i].Name, err)
		}
	}
	out = append(out, '}')
	// A chunk that grew in append was copied; earlier messages keep the
	// old array, the rest of the batch uses the new one.
	s.chunk = out
	msg := mv.newMessage(pos, kind, &s.slab)
	msg.SetBytes(out[start:len(out):len(out)])
	return msg, nil
}

// appendValue appends v, a value of field f, as JSON.
func (b *messageBuilder) appendValue(out []byte, f *types.DataField, v any, s *rowScratch) ([]byte, error) {
	if v == nil {
		return append(out, "null"...), nil
	}
	switch f.Type.Kind {
	case types.KindChar, types.KindVarChar:
		if str, ok := v.(string); ok {
			return appendJSONString(out, str), nil
		}
	case types.KindBoolean:
		if x, ok := v.(bool); ok {
			return strconv.AppendBool(out, x), nil
		}
	case types.KindTinyInt, types.KindSmallInt, types.KindInt, types.KindBigInt:
		if i, ok := types.SignedInt(v); ok {
			return strconv.AppendInt(out, i, 10), nil
		}
	case types.KindDouble:
		if x, ok := v.(float64); ok && !math.IsNaN(x) && !math.IsInf(x, 0) {
			return appendJSONFloat(out, x), nil
		}
	case types.KindTimestamp, types.KindLocalZonedTimestamp:
		if ts, ok := v.(types.Timestamp); ok {
			out = append(out, '"')
			if o, ok := appendTimestamp(out, ts, f.Type.Precision, f.Type.Kind == types.KindLocalZonedTimestamp); ok {
				return append(o, '"'), nil
			}
			out = out[:len(out)-1]
		}
	case types.KindBinary, types.KindVarBinary:
		if x, ok := v.([]byte); ok {
			out = append(out, '"')
			return append(base64.StdEncoding.AppendEncode(out, x), '"'), nil
		}
	}
	r, err := rowconv.RenderValue(f.Type, v)
	if err != nil {
		return out, err
	}
	switch r := r.(type) {
	case string: // DECIMAL, DATE, TIME, the rest of the timestamps, NaN and the infinities
		return appendJSONString(out, r), nil
	case float64: // FLOAT
		return appendJSONFloat(out, r), nil
	}
	// Nested values: encoding/json itself, as Benthos serialises them.
	if s.enc == nil {
		s.enc = json.NewEncoder(&s.buf)
		s.enc.SetEscapeHTML(false)
	}
	s.buf.Reset()
	if err := s.enc.Encode(r); err != nil {
		return out, err
	}
	return append(out, bytes.TrimSuffix(s.buf.Bytes(), []byte("\n"))...), nil
}

// appendJSONFloat appends a finite f as encoding/json writes a float64
// (ES6 number form: exponent below 1e-6 and from 1e21, no padded
// exponent digits).
func appendJSONFloat(out []byte, f float64) []byte {
	format := byte('f')
	if abs := math.Abs(f); abs != 0 && (abs < 1e-6 || abs >= 1e21) {
		format = 'e'
	}
	out = strconv.AppendFloat(out, f, format, -1, 64)
	if format == 'e' {
		if n := len(out); n >= 4 && out[n-4] == 'e' && out[n-3] == '-' && out[n-2] == '0' {
			out[n-2] = out[n-1]
			out = out[:n-1]
		}
	}
	return out
}

const hexDigits = "0123456789abcdef"

// appendJSONString appends src quoted as encoding/json quotes a string
// with HTML escaping off: '"' and '\\' and control characters escaped
// (\b \f \n \r \t short), invalid UTF-8 bytes as \ufffd, U+2028 and
// U+2029 escaped; everything else as is.
func appendJSONString(out []byte, src string) []byte {
	out = append(out, '"')
	start := 0
	for i := 0; i < len(src); {
		if c := src[i]; c < utf8.RuneSelf {
			if c >= 0x20 && c != '"' && c != '\\' {
				i++
				continue
			}
			out = append(out, src[start:i]...)
			switch c {
			case '\\', '"':
				out = append(out, '\\', c)
			case '\b':
				out = append(out, '\\', 'b')
			case '\f':
				out = append(out, '\\', 'f')
			case '\n':
				out = append(out, '\\', 'n')
			case '\r':
				out = append(out, '\\', 'r')
			case '\t':
				out = append(out, '\\', 't')
			default:
				out = append(out, '\\', 'u', '0', '0', hexDigits[c>>4], hexDigits[c&0xF])
			}
			i++
			start = i
			continue
		}
		r, size := utf8.DecodeRuneInString(src[i:])
		if r == utf8.RuneError && size == 1 {
			out = append(out, src[start:i]...)
			out = append(out, `\ufffd`...)
			i++
			start = i
			continue
		}
		if r == '\u2028' || r == '\u2029' {
			out = append(out, src[start:i]...)
			out = append(out, '\\', 'u', '2', '0', '2', hexDigits[r&0xF])
			i += size
			start = i
			continue
		}
		i += size
	}
	out = append(out, src[start:]...)
	return append(out, '"')
}
