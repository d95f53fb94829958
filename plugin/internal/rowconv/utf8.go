package rowconv

import (
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// Invalid UTF-8.
//
// JSON parsers, Benthos' included, replace invalid UTF-8 inside strings
// with U+FFFD without an error, so a message whose bytes are not UTF-8
// would be stored altered. Checking the bytes of every message costs a pass
// over each (and, for messages that only hold a structured value, a
// serialisation); instead the converted row is checked for U+FFFD, which
// valid data rarely holds, and only then are the message's bytes checked.

// checkUTF8 returns a *ConvertError when row holds a string with U+FFFD and
// the message's bytes are not valid UTF-8.
func (c *Converter) checkUTF8(msg *service.Message, row []any) error {
	i := replacedField(row)
	if i < 0 {
		return nil
	}
	raw, err := msg.AsBytes()
	if err != nil || utf8.Valid(raw) {
		return nil // U+FFFD was in the data itself
	}
	return &ConvertError{Path: c.fields[i].Name, Err: ErrInvalidValue,
		Msg: fmt.Sprintf("the message is not valid UTF-8 (invalid byte at offset %d); the JSON parser replaced such bytes with U+FFFD", invalidOffset(raw))}
}

// replacedField returns the index of the first column whose value holds a
// string with U+FFFD, or -1.
func replacedField(row []any) int {
	for i, v := range row {
		if hasReplacement(v) {
			return i
		}
	}
	return -1
}

func hasReplacement(v any) bool {
	switch x := v.(type) {
	case string:
		return strings.ContainsRune(x, utf8.RuneError)
	case []any: // ARRAY, MULTISET elements, ROW fields
		for _, e := range x {
			if hasReplacement(e) {
				return true
			}
		}
	case types.Map:
		return hasReplacement(x.Keys) || hasReplacement(x.Values)
	}
	return false
}

// invalidOffset returns the offset of the first byte of b that is not part
// of valid UTF-8.
func invalidOffset(b []byte) int {
	for i := 0; i < len(b); {
		r, n := utf8.DecodeRune(b[i:])
		if r == utf8.RuneError && n == 1 {
			return i
		}
		i += n
	}
	return len(b)
}
