package rowconv

import (
	"errors"
	"strings"
)

// Sentinel errors wrapped by every *ConvertError, for callers that branch on
// the kind of failure (metrics by reason, dead-letter routing).
var (
	// ErrInvalidValue: a value cannot be converted to its column's type
	// (wrong JSON type, out of range, bad text, too long, ...).
	ErrInvalidValue = errors.New("invalid value")
	// ErrNotNull: a NOT NULL column (or element, key or nested field) was
	// given null or is missing.
	ErrNotNull = errors.New("null value for a NOT NULL column")
	// ErrUnknownField: the message has a field that is not a column and
	// unknown_fields is "error" (or a new column cannot be added).
	ErrUnknownField = errors.New("unknown field")
	// ErrNotObject: the message is not a JSON object.
	ErrNotObject = errors.New("message is not a JSON object")
)

// ConvertError is the error of converting one message into a row. It names
// the field by its path (top-level column name, then ".name" for ROW fields,
// "[i]" for array elements and "[key]" for map entries) and says what value
// could not become what type, for example:
//
//	field "amount": cannot convert string "abc" to DECIMAL(10, 2): not a decimal number
//
// Err is one of the sentinel errors above; errors.Is works through Unwrap.
type ConvertError struct {
	// Path of the offending field; empty when the message as a whole is at
	// fault (not JSON, not an object).
	Path string
	// Msg says what went wrong, without the path.
	Msg string
	// Err is ErrInvalidValue, ErrNotNull, ErrUnknownField or ErrNotObject.
	Err error
}

// Error returns `field "<path>": <msg>`, or only the message without a path.
func (e *ConvertError) Error() string {
	if e.Path == "" {
		return e.Msg
	}
	return `field "` + e.Path + `": ` + e.Msg
}

// Unwrap returns the sentinel error.
func (e *ConvertError) Unwrap() error { return e.Err }

// prefixPath puts seg in front of the error's path. Paths are assembled on
// the way out of the recursion so the success path never builds strings.
func prefixPath(err error, seg string) error {
	var ce *ConvertError
	if errors.As(err, &ce) {
		switch {
		case ce.Path == "":
			ce.Path = seg
		case strings.HasPrefix(ce.Path, "["):
			ce.Path = seg + ce.Path
		default:
			ce.Path = seg + "." + ce.Path
		}
	}
	return err
}
