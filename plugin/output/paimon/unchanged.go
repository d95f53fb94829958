package paimon

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/benthos-paimon/benthos-paimon/lakecore/binrow"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/mergetree"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// fillUnchanged sets the unchanged_columns of each insert and update of
// the batch to the values of its key's current row: the key's last
// insert or update earlier in the batch (none after a delete), else the
// table's latest snapshot through a point lookup (lakecore.Table.Lookup),
// unless the batch truncates the table (truncated): then a key not written
// earlier in the batch has no row.
//
// The snapshot is current because write waits for its commit and a
// primary-key table takes one batch at a time (max_in_flight 1), so every
// earlier batch of this output is in it. A message whose columns cannot be
// kept (no such column, no row for the key, a merge engine that does not
// replace rows) fails alone; a lookup that fails to read the table fails
// the batch (returned), as storage errors do elsewhere.
func (k *tableSink) fillUnchanged(ctx context.Context, st *writeState, values []messageValues, changes [][]change, msgErrs []error, truncated bool) error {
	wanted := false
	for i := range values {
		if len(values[i].unchanged) > 0 && msgErrs[i] == nil {
			wanted = true
			break
		}
	}
	if !wanted {
		return nil
	}
	s := st.schema
	failAll := func(why string) {
		for i := range values {
			if len(values[i].unchanged) > 0 && msgErrs[i] == nil {
				msgErrs[i], changes[i] = fmt.Errorf("%s %s: %s", fieldUnchanged, strings.Join(values[i].unchanged, ","), why), nil
			}
		}
	}
	if !st.keyed {
		failAll(fmt.Sprintf("table %s has no primary key to find the current row by", k.conf.Table))
		return nil
	}
	mode, err := mergetree.ParseMode(s.Options)
	if err != nil {
		return err
	}
	switch mode.Name {
	case mergetree.EnginePartialUpdate:
		return nil // a null keeps the old value
	case mergetree.EngineDeduplicate:
	default:
		failAll(fmt.Sprintf("merge-engine %s does not replace rows, so there is no current row to keep values from", mode.Name))
		return nil
	}
	pkIdx, err := kv.FieldIndexes(s.Fields, s.PrimaryKeys)
	if err != nil {
		return err
	}
	pkTypes := make([]types.DataType, len(pkIdx))
	for i, j := range pkIdx {
		pkTypes[i] = s.Fields[j].Type
	}
	keyOf := func(row []any) ([]any, string, error) {
		key := make([]any, len(pkIdx))
		for i, j := range pkIdx {
			key[i] = row[j]
		}
		b, err := binrow.Encode(pkTypes, key)
		return key, string(b), err
	}
	current := map[string][]any{} // key -> its row after the batch's changes so far; nil: deleted
	for i := range changes {
		if msgErrs[i] != nil {
			continue
		}
		for _, c := range changes[i] {
			key, id, err := keyOf(c.row)
			if err != nil {
				return fmt.Errorf("%s: encode the key of message %d: %w", fieldUnchanged, i, err)
			}
			if cols := values[i].unchanged; len(cols) > 0 && (c.kind == kv.Insert || c.kind == kv.UpdateAfter) {
				if err := k.keepColumns(ctx, s.Fields, cols, c.row, key, id, current, truncated); err != nil {
					var ke *keepError
					if !errors.As(err, &ke) {
						return err
					}
					msgErrs[i], changes[i] = ke, nil
					break
				}
			}
			switch {
			case c.kind == kv.Insert || c.kind == kv.UpdateAfter:
				current[id] = c.row
			case c.kind == kv.Delete && !mode.IgnoreDelete:
				current[id] = nil
			}
		}
	}
	return nil
}

// keepError is a message's own failure to keep its columns.
type keepError struct{ msg string }

func (e *keepError) Error() string { return e.msg }

// keepColumns copies cols of the key's current row into row; truncated:
// only a row written earlier in the batch is current.
func (k *tableSink) keepColumns(ctx context.Context, fields []types.DataField, cols []string, row, key []any, id string, current map[string][]any, truncated bool) error {
	idx := make([]int, len(cols))
	for n, c := range cols {
		if idx[n] = types.FieldByName(fields, c); idx[n] < 0 {
			return &keepError{fmt.Sprintf("%s: %s is not a column of table %s", fieldUnchanged, c, k.conf.Table)}
		}
	}
	base, seen := current[id]
	if !seen && !truncated {
		found, err := k.tbl.Lookup(ctx, 0, key)
		if err != nil {
			return fmt.Errorf("%s: look up key %v in table %s: %w", fieldUnchanged, key, k.conf.Table, err)
		}
		if found != nil {
			// Lookup gives the row in the table's schema, which may have
			// columns this batch's schema lacks or orders them otherwise.
			ts := k.tbl.Schema().Fields
			base = make([]any, len(fields))
			for j, f := range fields {
				if x := types.FieldByName(ts, f.Name); x >= 0 && x < len(found) {
					base[j] = found[x]
				}
			}
		}
		current[id] = base
	}
	if base == nil {
		return &keepError{fmt.Sprintf("%s %s: key %v has no row in table %s to keep them from", fieldUnchanged, strings.Join(cols, ","), key, k.conf.Table)}
	}
	for _, j := range idx {
		row[j] = base[j]
	}
	return nil
}
