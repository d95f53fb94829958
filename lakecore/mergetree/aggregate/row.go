package aggregate

import (
	"fmt"
	"slices"

	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// RowAggregator folds the rows of one primary key, in merge order, into
// one row: AggregateMergeFunction.java. Call Reset before each key, Add for
// each of its rows, then Result. It is not safe for concurrent use.
type RowAggregator struct {
	fields         []types.DataField
	funcs          []Func
	removeOnDelete bool

	row       []any
	seen      bool
	deleteRow bool
}

// NewRowAggregator chooses each field's function as
// AggregateMergeFunction.getAggFuncName does: a sequence field (the
// sequence.field columns, given by the caller) uses last_value, a primary
// key column primary-key (it keeps the incoming value), any other column
// fields.<c>.aggregate-function, else fields.default-aggregate-function,
// else last_non_null_value; each is built by New with the options.
// aggregation.remove-record-on-delete makes a -D replace the row and the
// result a DELETE. Errors are New's, naming the field.
func NewRowAggregator(fields []types.DataField, primaryKeys []string, sequenceFields []string, options map[string]string) (*RowAggregator, error) {
	o := fieldOptions{options: options}
	removeOnDelete, err := o.boolOption(optRemoveOnDelete)
	if err != nil {
		return nil, err
	}
	a := &RowAggregator{fields: fields, funcs: make([]Func, len(fields)), removeOnDelete: removeOnDelete}
	for i, f := range fields {
		fn, err := New(FuncName(f.Name, primaryKeys, sequenceFields, options), f, options)
		if err != nil {
			return nil, fmt.Errorf("aggregation merge engine, field %q: %w", f.Name, err)
		}
		a.funcs[i] = fn
	}
	a.Reset()
	return a, nil
}

// FuncName is the aggregate function Java picks for a field
// (AggregateMergeFunction.getAggFuncName).
func FuncName(field string, primaryKeys, sequenceFields []string, options map[string]string) string {
	switch {
	case slices.Contains(sequenceFields, field):
		return nameLastValue
	case slices.Contains(primaryKeys, field):
		return namePrimaryKey
	}
	if n, ok := options["fields."+field+"."+optAggFunction]; ok {
		return n
	}
	if n, ok := options[optDefaultFunction]; ok {
		return n
	}
	return nameLastNonNullValue
}

// Reset starts a new key: the row is all NULL and every function's state
// is cleared. A row returned by Result stays valid.
func (a *RowAggregator) Reset() {
	a.row = make([]any, len(a.fields))
	for _, f := range a.funcs {
		f.Reset()
	}
	a.seen = false
	a.deleteRow = false
}

// Add folds the next row of the key: an add (+I, +U) through each field's
// Agg, a retraction (-U, -D) through Retract. With
// aggregation.remove-record-on-delete a -D instead replaces the whole row
// with its own values (Java checks NOT NULL fields) and marks the result
// deleted until the next row; the functions' state is not reset, as in
// Java. On error the row is left partly folded: the key cannot be merged.
func (a *RowAggregator) Add(kind kv.RowKind, row []any) error {
	if !kind.Valid() {
		return fmt.Errorf("aggregate: %w: %d", kv.ErrInvalidRowKind, int8(kind))
	}
	if len(row) != len(a.fields) {
		return fmt.Errorf("aggregate: %w: row of %d values for %d fields", ErrInvalidValue, len(row), len(a.fields))
	}
	a.seen = true
	a.deleteRow = a.removeOnDelete && kind == kv.Delete
	if a.deleteRow {
		next := make([]any, len(row))
		for i, v := range row {
			if v == nil && !a.fields[i].Type.Nullable {
				return fmt.Errorf("aggregate: %w: field %q can not be null", ErrInvalidValue, a.fields[i].Name)
			}
			next[i] = v
		}
		a.row = next
		return nil
	}
	retract := kind.IsRetract()
	for i, fn := range a.funcs {
		var v any
		var err error
		if retract {
			v, err = fn.Retract(a.row[i], row[i])
		} else {
			v, err = fn.Agg(a.row[i], row[i])
		}
		if err != nil {
			return fmt.Errorf("aggregate field %q: %w", a.fields[i].Name, err)
		}
		a.row[i] = v
	}
	return nil
}

// Result returns the merged row and its kind: INSERT, or DELETE when the
// last row was a -D under aggregation.remove-record-on-delete
// (AggregateMergeFunction.getResult). Before any Add the row is nil (Java
// fails: there is no result). The row is the aggregator's own and changes
// with the next Add; Reset starts a new one.
func (a *RowAggregator) Result() (row []any, kind kv.RowKind) {
	if !a.seen {
		return nil, kv.Insert
	}
	if a.deleteRow {
		return a.row, kv.Delete
	}
	return a.row, kv.Insert
}
