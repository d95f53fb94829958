// Package kv holds the layout of the files of primary-key tables: the row
// kinds of a change, the system fields a KeyValue data file adds in front
// of the table's columns (_KEY_<pk>, _SEQUENCE_NUMBER, _VALUE_KIND) with
// their field ids, and Java's key comparator (paimon-pk.md §1).
//
// It mirrors apache/paimon: paimon-api/.../types/RowKind.java,
// paimon-api/.../table/SpecialFields.java and paimon-core/.../KeyValue.java.
package kv

import (
	"errors"
	"fmt"
)

// RowKind is the kind of change a row of a primary-key table stands for,
// stored as the _VALUE_KIND byte (RowKind.toByteValue).
type RowKind int8

// The row kinds, with Java's byte values.
const (
	// Insert (+I) adds a row for its key.
	Insert RowKind = 0
	// UpdateBefore (-U) retracts the previous row of a key that an
	// UpdateAfter follows.
	UpdateBefore RowKind = 1
	// UpdateAfter (+U) is the new row of an updated key.
	UpdateAfter RowKind = 2
	// Delete (-D) removes the row of its key.
	Delete RowKind = 3
)

// ErrInvalidRowKind is wrapped for a row kind byte or text that is none of
// +I, -U, +U and -D.
var ErrInvalidRowKind = errors.New("invalid row kind")

// String returns the short form Paimon and Flink print: +I, -U, +U or -D.
func (k RowKind) String() string {
	switch k {
	case Insert:
		return "+I"
	case UpdateBefore:
		return "-U"
	case UpdateAfter:
		return "+U"
	case Delete:
		return "-D"
	}
	return fmt.Sprintf("RowKind(%d)", int8(k))
}

// IsRetract reports whether k withdraws a row (-U or -D), as
// RowKind.isRetract.
func (k RowKind) IsRetract() bool { return k == UpdateBefore || k == Delete }

// IsAdd reports whether k adds a row (+I or +U).
func (k RowKind) IsAdd() bool { return k == Insert || k == UpdateAfter }

// Valid reports whether k is one of the four row kinds.
func (k RowKind) Valid() bool { return k >= Insert && k <= Delete }

// RowKindFromByte returns the row kind of a _VALUE_KIND byte, wrapping
// ErrInvalidRowKind for any other value (KeyValueSerializer.fromRow throws).
func RowKindFromByte(b int8) (RowKind, error) {
	k := RowKind(b)
	if !k.Valid() {
		return 0, fmt.Errorf("%w: _VALUE_KIND %d", ErrInvalidRowKind, b)
	}
	return k, nil
}

// ParseRowKind parses the short form (+I, -U, +U, -D), wrapping
// ErrInvalidRowKind for anything else.
func ParseRowKind(s string) (RowKind, error) {
	switch s {
	case "+I":
		return Insert, nil
	case "-U":
		return UpdateBefore, nil
	case "+U":
		return UpdateAfter, nil
	case "-D":
		return Delete, nil
	}
	return 0, fmt.Errorf("%w: %q (want +I, -U, +U or -D)", ErrInvalidRowKind, s)
}
