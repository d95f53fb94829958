package cdcformat

import (
	"errors"
	"fmt"
)

// ErrInvalidEnvelope is wrapped by every error Decode returns: the message is
// not a well-formed envelope of its format (not JSON, a required field
// missing or of the wrong JSON type, an unknown operation, a value its schema
// type cannot decode). Such a message will never decode; callers route it to
// a dead-letter path rather than retry it.
var ErrInvalidEnvelope = errors.New("invalid CDC envelope")

// EnvelopeError says which part of an envelope is wrong, for example:
//
//	debezium-json: field "payload.op": unknown operation "x"
//
// It wraps ErrInvalidEnvelope.
type EnvelopeError struct {
	Format Format
	// Field is the path of the offending field ("payload.after.price",
	// "data[1]"); empty when the message as a whole is at fault.
	Field string
	// Reason says what is wrong, without the path.
	Reason string
}

func (e *EnvelopeError) Error() string {
	if e.Field == "" {
		return string(e.Format) + ": " + e.Reason
	}
	return fmt.Sprintf("%s: field %q: %s", e.Format, e.Field, e.Reason)
}

// Unwrap returns ErrInvalidEnvelope.
func (e *EnvelopeError) Unwrap() error { return ErrInvalidEnvelope }

func envErr(f Format, field, format string, args ...any) error {
	return &EnvelopeError{Format: f, Field: field, Reason: fmt.Sprintf(format, args...)}
}
