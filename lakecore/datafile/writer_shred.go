package datafile

import (
	"fmt"

	"github.com/parquet-go/parquet-go"

	"github.com/benthos-paimon/benthos-paimon/lakecore/types"
)

// writeTopLeaf appends the value of a top-level primitive field: NULLs,
// the kinds Write does not convert inline, and every bad value.
//
// A top-level leaf holds exactly one value per row, so its batch has a
// fixed length and the value goes to slot blockRow; a rejected row is
// simply overwritten by the next one.
func (w *Writer) writeTopLeaf(t *topColumn, v any) *valueError {
	slot := &t.values[w.blockRow]
	if v == nil {
		if t.required {
			return valueNullError(t.node)
		}
		*slot = t.null
		return nil
	}
	val, err := w.leafValue(t.node, v)
	if err != nil {
		return err
	}
	if t.def != 0 {
		val = val.Level(0, t.def, t.column)
	}
	*slot = val
	return nil
}

// writeLeaf appends one value of a leaf column with repetition level r.
func (w *Writer) writeLeaf(n *schemaNode, v any, r int) *valueError {
	if v == nil {
		if n.required {
			return valueNullError(n)
		}
		w.batch[n.leaf] = append(w.batch[n.leaf], parquet.Value{}.Level(r, n.defLevel-1, n.leaf))
		return nil
	}
	val, err := w.leafValue(n, v)
	if err != nil {
		return err
	}
	w.batch[n.leaf] = append(w.batch[n.leaf], val.Level(r, n.defLevel, n.leaf))
	return nil
}

// shred appends the values of a nested field (Dremel record shredding, as
// parquet-mr's record consumer does for ParquetRowDataWriter's group
// writers): r is the repetition level of the first value it appends.
func (w *Writer) shred(n *schemaNode, v any, r int) *valueError {
	if n.role == roleLeaf {
		return w.writeLeaf(n, v, r)
	}
	if v == nil {
		if n.required {
			return valueNullError(n)
		}
		w.appendNulls(n, r, n.defLevel-1)
		return nil
	}
	switch n.role {
	case roleRow:
		vals, ok := v.([]any)
		if !ok {
			return valueTypeError(v, n)
		}
		if len(vals) != len(n.children) {
			return &valueError{msg: fmt.Sprintf("got %d values, want %d for %s", len(vals), len(n.children), n.dataType)}
		}
		for i, c := range n.children {
			if err := w.shred(c, vals[i], r); err != nil {
				return err.within(c.name)
			}
		}
	case roleList:
		vals, ok := v.([]any)
		if !ok {
			return valueTypeError(v, n)
		}
		rep := n.children[0]
		if len(vals) == 0 {
			w.appendNulls(n, r, n.defLevel)
			return nil
		}
		elem := rep.children[0]
		for i, e := range vals {
			if i > 0 {
				r = rep.repLevel
			}
			if err := w.shred(elem, e, r); err != nil {
				return err.at(i)
			}
		}
	case roleMap:
		m, ok := v.(types.Map)
		if !ok {
			return valueTypeError(v, n)
		}
		if len(m.Keys) != len(m.Values) {
			return &valueError{msg: fmt.Sprintf("map has %d keys and %d values", len(m.Keys), len(m.Values))}
		}
		rep := n.children[0]
		if len(m.Keys) == 0 {
			w.appendNulls(n, r, n.defLevel)
			return nil
		}
		key, val := rep.children[0], rep.children[1]
		for i := range m.Keys {
			if i > 0 {
				r = rep.repLevel
			}
			if m.Keys[i] == nil {
				// ParquetRowDataWriter.MapWriter: "Parquet does not support null keys in maps."
				return (&valueError{msg: "null map key (Parquet map keys are required)"}).at(i)
			}
			if err := w.shred(key, m.Keys[i], r); err != nil {
				return err.within(parquetMapKey).at(i)
			}
			if err := w.shred(val, m.Values[i], r); err != nil {
				return err.within(parquetMapValue).at(i)
			}
		}
	}
	return nil
}

// appendNulls appends a NULL at definition level d to every leaf under n.
func (w *Writer) appendNulls(n *schemaNode, r, d int) {
	for leaf := n.firstLeaf; leaf < n.endLeaf; leaf++ {
		w.batch[leaf] = append(w.batch[leaf], parquet.Value{}.Level(r, d, leaf))
	}
}
