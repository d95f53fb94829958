package binrow

import "errors"

// Sentinel errors of the package. Every error returned by this package wraps
// exactly one of them, so callers can branch with errors.Is.
var (
	// ErrCorrupt is wrapped by Decode and Deserialize when the bytes are not a
	// well-formed BinaryRow for the given types: a region too short, an offset
	// or length outside its section, an inline length above 7, a negative
	// element count, a decimal that does not fit its precision, and so on.
	ErrCorrupt = errors.New("corrupt binary row")

	// ErrArityMismatch is wrapped when the number of values (Encode) or the
	// serialized arity prefix (Deserialize) differs from the number of field
	// types.
	ErrArityMismatch = errors.New("binary row arity mismatch")

	// ErrInvalidValue is wrapped when a Go value does not have the Go type
	// lakecore uses for its Paimon type (see lakecore/types), or does not fit
	// the type: a DECIMAL beyond its precision, nanoseconds outside 0..999999,
	// a MAP whose key and value slices differ in length.
	ErrInvalidValue = errors.New("invalid value for data type")

	// ErrUnsupportedType is wrapped when a type cannot be handled: a malformed
	// nested type without its element, key or value type, or a partition key
	// whose type has no stable directory name (BINARY in legacy mode, ARRAY,
	// MAP, MULTISET, ROW).
	ErrUnsupportedType = errors.New("unsupported data type")

	// ErrInvalidPartition is wrapped by PartitionPath when a partition key
	// name or a partition value string is empty, which Java rejects
	// (PartitionPathUtils.escapePathName).
	ErrInvalidPartition = errors.New("invalid partition")
)
