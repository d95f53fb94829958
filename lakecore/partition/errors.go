package partition

import "errors"

// ErrInvalidFilter is wrapped by every error about a filter itself: a key
// that is not a partition key, a value that does not convert to the key's
// type, a filter of the wrong shape. The message names the field or flag,
// the key and the value; test with errors.Is.
var ErrInvalidFilter = errors.New("invalid partition filter")

// invalidFilter is an error whose message is said in full by msg and which
// wraps ErrInvalidFilter (and the cause, if any) without repeating it.
type invalidFilter struct {
	msg   string
	cause error
}

func (e *invalidFilter) Error() string { return e.msg }

func (e *invalidFilter) Unwrap() []error {
	if e.cause == nil {
		return []error{ErrInvalidFilter}
	}
	return []error{ErrInvalidFilter, e.cause}
}
