package paimon

import (
	"fmt"
	"strings"

	"github.com/redpanda-data/benthos/v4/public/service"

	"github.com/benthos-paimon/benthos-paimon/internal/boxes"
	"github.com/benthos-paimon/benthos-paimon/lakecore/kv"
	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
	"github.com/benthos-paimon/benthos-paimon/plugin/internal/cdcformat"
	"github.com/benthos-paimon/benthos-paimon/plugin/internal/rowconv"
)

// messageValues is what one message holds before it becomes rows of a
// schema: in native form the message itself with its row kind; from a CDC
// envelope (cdc_format) its changes; nothing when it is skipped (committed
// before, source_position).
type messageValues struct {
	skip   bool
	native bool
	// truncate marks a message whose row kind is "truncate": every row of
	// the table before it is deleted (see truncation).
	truncate bool
	kind     kv.RowKind // native: the row kind
	changes  []rawChange
	// fields are the column types the envelope gives, for the columns
	// schema evolution adds.
	fields []types.DataField
	// unchanged are the columns unchanged_columns names for the message:
	// kept from the key's current row.
	unchanged []string
}

// rawChange is one change of a CDC envelope: its kind and its column
// values, as rowconv.Converter.Convert takes them.
type rawChange struct {
	kind  kv.RowKind
	value map[string]any
}

// convert converts the message's values with st. added lists the columns
// schema evolution would add; the changes are nil then. The change of a
// message in native form is put in slot (length 1), the message's own
// element of an array the batch allocates once, and its row is boxed from
// the batch's slab: fewer allocations per message.
func (v messageValues) convert(st *writeState, msg *service.Message, slot []change, slab *boxes.Slab) ([]change, []rowconv.NewColumn, error) {
	if v.skip || v.truncate {
		return nil, nil, nil
	}
	if v.native {
		row, added, err := st.converter(v.kind).ConvertMessageBoxed(msg, slab)
		if err != nil || len(added) > 0 {
			return nil, added, err
		}
		slot[0] = change{kind: v.kind, row: row}
		return slot, nil, nil
	}
	out := make([]change, 0, len(v.changes))
	var added []rowconv.NewColumn
	for i, c := range v.changes {
		row, more, err := st.converter(c.kind).Convert(c.value)
		if err != nil {
			if len(v.changes) > 1 {
				return nil, nil, fmt.Errorf("change %d of %d (%s): %w", i+1, len(v.changes), c.kind, err)
			}
			return nil, nil, err
		}
		added = append(added, more...)
		out = append(out, change{kind: c.kind, row: row})
	}
	if len(added) > 0 {
		for i, c := range added {
			if j := types.FieldByName(v.fields, c.Name); j >= 0 {
				added[i].Type = v.fields[j].Type.WithNullable(true)
			}
		}
		return nil, added, nil
	}
	return out, nil, nil
}

// decodeEnvelope reads the changes of a CDC envelope.
func decodeEnvelope(d *cdcformat.Decoder, msg *service.Message) (messageValues, error) {
	data, err := msg.AsBytes()
	if err != nil {
		return messageValues{}, err
	}
	ev, err := d.Decode(data)
	if err != nil {
		return messageValues{}, err
	}
	v := messageValues{changes: make([]rawChange, len(ev.Changes)), fields: ev.Fields}
	for i, c := range ev.Changes {
		v.changes[i] = rawChange{kind: c.Kind, value: c.Row}
	}
	return v, nil
}

// decode reads what every message holds: its changes with cdc_format,
// else its row kind (row_kind, or the operation metadata; +I without
// either). errs[i] is the
// error of a message whose row kind or envelope cannot be read; in native
// form its kind is +I then, which an append table takes (the caller
// decides).
func (k *tableSink) decode(batch service.MessageBatch, skip []bool) ([]messageValues, []error) {
	values := make([]messageValues, len(batch))
	errs := make([]error, len(batch))
	var before *service.MessageBatchBloblangExecutor
	if k.conf.Before != nil {
		before = batch.BloblangExecutor(k.conf.Before)
	}
	var rowKind, unchanged *textOf
	if k.conf.RowKind != nil {
		rowKind = k.conf.RowKind.over(batch)
	}
	if k.conf.UnchangedColumns != nil {
		unchanged = k.conf.UnchangedColumns.over(batch)
	}
	for i, msg := range batch {
		if skip != nil && skip[i] {
			values[i].skip = true
			continue
		}
		if k.decoder != nil {
			values[i], errs[i] = decodeEnvelope(k.decoder, msg)
			continue
		}
		values[i].native = true
		var text string
		if k.conf.RowKind != nil {
			v, err := rowKind.TryString(i)
			if err != nil {
				errs[i] = fmt.Errorf("row_kind: %w", err)
				continue
			}
			text = v
		} else if v, ok := msg.MetaGetMut("operation"); ok {
			text = fmt.Sprint(v)
		}
		if isTruncate(text) {
			values[i].truncate = true
			continue
		}
		kind, err := ParseRowKind(text)
		if err != nil {
			errs[i] = err
			continue
		}
		values[i].kind = kind
		if kind == kv.UpdateAfter && before != nil {
			if values[i], errs[i] = withBefore(before, batch[i], i); errs[i] != nil {
				continue
			}
		}
		if unchanged != nil && (kind == kv.Insert || kind == kv.UpdateAfter) {
			cols, err := unchanged.TryString(i)
			if err != nil {
				errs[i] = fmt.Errorf("%s: %w", fieldUnchanged, err)
				continue
			}
			for _, c := range strings.Split(cols, ",") {
				if c = strings.TrimSpace(c); c != "" {
					values[i].unchanged = append(values[i].unchanged, c)
				}
			}
		}
	}
	return values, errs
}

// isTruncate reports whether a row kind text is the truncate operation
// (pg_cdc's truncate: delete_all), in any case.
func isTruncate(s string) bool {
	return len(s) >= len(rowKindTruncate) && strings.EqualFold(strings.TrimSpace(s), rowKindTruncate)
}

// rowKindTruncate is the row kind, and operation, that empties the table.
const rowKindTruncate = "truncate"

// truncation finds the batch's last truncate message that can take effect
// and returns its index, or -1. The messages before it are superseded: the
// rows they write would be deleted in the same snapshot, so they are not
// converted (values[i].skip; their conversion errors dropped) and count as
// committed with it. A table reads truncate from row_kind, or from the
// operation metadata when it has a primary key; an append table without
// row_kind ignores the operation, so its truncate messages are rows as any
// other message (+I).
func (k *tableSink) truncation(keyed bool, values []messageValues, valueErrs, posErrs []error) int {
	cut := -1
	for i := range values {
		if !values[i].truncate {
			continue
		}
		if !keyed && k.conf.RowKind == nil {
			values[i].truncate, values[i].kind = false, kv.Insert
			continue
		}
		if valueErrs[i] == nil && posErrs[i] == nil {
			cut = i
		}
	}
	for i := 0; i < cut; i++ {
		values[i] = messageValues{skip: true}
		valueErrs[i] = nil
	}
	return cut
}

// withBefore is message i, an update, as a -U of the row the before
// mapping gives and the +U of the message; as the +U alone when the
// mapping gives nothing.
func withBefore(before *service.MessageBatchBloblangExecutor, msg *service.Message, i int) (messageValues, error) {
	native := messageValues{native: true, kind: kv.UpdateAfter}
	res, err := before.Query(i) // Query, not QueryValue: the mapping may read metadata
	if err != nil {
		return native, fmt.Errorf("before: %w", err)
	}
	if res == nil {
		return native, nil // the root deleted: no old row
	}
	old, err := res.AsStructured()
	if err != nil {
		return native, fmt.Errorf("before: %w", err)
	}
	if old == nil {
		return native, nil
	}
	oldRow, ok := old.(map[string]any)
	if !ok {
		return native, fmt.Errorf("before: the mapping gave %T, not an object", old)
	}
	cur, err := msg.AsStructured()
	if err != nil {
		return native, &rowconv.ConvertError{Msg: "message is not valid JSON: " + err.Error(), Err: rowconv.ErrNotObject}
	}
	curRow, ok := cur.(map[string]any)
	if !ok {
		return native, &rowconv.ConvertError{Msg: fmt.Sprintf("message is not a JSON object but %T", cur), Err: rowconv.ErrNotObject}
	}
	return messageValues{changes: []rawChange{{kind: kv.UpdateBefore, value: oldRow}, {kind: kv.UpdateAfter, value: curRow}}}, nil
}
