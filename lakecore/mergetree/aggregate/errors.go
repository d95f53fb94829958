package aggregate

import "errors"

var (
	// ErrUnsupportedFunction is wrapped by New for a function name Java does
	// not ship, or one lakecore cannot reproduce exactly (see the package
	// doc), and by a Func at run time when Java's result cannot be
	// reproduced. The merge engine cannot honour the table's options.
	ErrUnsupportedFunction = errors.New("unsupported aggregate function")

	// ErrInvalidType is wrapped where Java's factory (or, for max, min and
	// merge_map_with_keytime, Java at run time) rejects the field's type.
	ErrInvalidType = errors.New("invalid type for aggregate function")

	// ErrInvalidOption is wrapped for an option value Java rejects: a
	// boolean that is not true/false, a count-limit that is not an int, a
	// nested-key or ts-field naming no field, or ignore-retract together
	// with aggregation.remove-record-on-delete.
	ErrInvalidOption = errors.New("invalid aggregation option")

	// ErrRetractUnsupported is wrapped by Retract of a function Java cannot
	// retract (Java throws UnsupportedOperationException); set
	// fields.<f>.ignore-retract=true to skip retractions instead.
	ErrRetractUnsupported = errors.New("aggregate function does not support retraction")

	// ErrInvalidValue is wrapped when a value is not the Go value of the
	// field's type, or Java's arithmetic throws (integer division by zero,
	// a non-terminating DECIMAL quotient in product's retraction), or a NOT
	// NULL field is NULL in a row that aggregation.remove-record-on-delete
	// keeps.
	ErrInvalidValue = errors.New("invalid value for aggregate function")
)
